// Package sqlfn is the extension's SQL surface, in Go and free of cgo: the
// table functions (their parameters, result columns and what they do), the
// lakes attached to each DuckDB database, and the values that cross the
// boundary. The C shim registers every Function with DuckDB generically and
// calls Bind and Execute through the exported C functions of package main;
// it holds no knowledge of any single function.
//
// A function runs in two steps. Bind checks the arguments and fixes the
// result columns; it must not change anything, because DuckDB may bind a
// query more than once (DuckDB 2.0 binds table functions twice). Execute
// does the work (attaching, committing, reading) once per execution and
// returns the rows. A function whose result columns depend on what it reads
// (moraine_ducklake_inlined_data) reads at bind and hands that result to
// the first execution.
package sqlfn

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type is a parameter, value or result column type. The values are pinned:
// they are MORAINE_TYPE_* of cshim/moraine.h.
type Type int32

const (
	TypeNull        Type = 0  // a SQL NULL (values only)
	TypeBoolean     Type = 1  // BOOLEAN
	TypeBigint      Type = 2  // BIGINT and the narrower signed integers
	TypeUbigint     Type = 3  // UBIGINT and the narrower unsigned integers
	TypeDouble      Type = 4  // DOUBLE, FLOAT
	TypeVarchar     Type = 5  // VARCHAR
	TypeBlob        Type = 6  // BLOB
	TypeTimestampTZ Type = 7  // TIMESTAMP WITH TIME ZONE (results only), microseconds
	TypeList        Type = 8  // LIST (values only)
	TypeStruct      Type = 9  // STRUCT (values only)
	TypeOther       Type = 10 // any other type, as its text (values only)
	TypeAny         Type = 11 // a parameter taking any type
	TypeAbsent      Type = 12 // a named parameter the call did not give (values only)
	TypeDuckDB      Type = 13 // any DuckDB type in DuckDB's binary serialization (the storage extension's values and scans)
)

var typeNames = map[Type]string{
	TypeNull: "NULL", TypeBoolean: "BOOLEAN", TypeBigint: "BIGINT", TypeUbigint: "UBIGINT", TypeDouble: "DOUBLE",
	TypeVarchar: "VARCHAR", TypeBlob: "BLOB", TypeTimestampTZ: "TIMESTAMP WITH TIME ZONE", TypeList: "LIST",
	TypeStruct: "STRUCT", TypeOther: "OTHER", TypeAny: "ANY", TypeAbsent: "ABSENT", TypeDuckDB: "DUCKDB",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type(%d)", int32(t))
}

// Value is one argument as DuckDB handed it. Exactly the field of its Type
// is meaningful: Bool, Int (BIGINT, and TIMESTAMP_TZ in microseconds), Uint
// (UBIGINT), Double, Str (VARCHAR, and the text of OTHER), Bytes (BLOB and
// DUCKDB), Children (LIST elements, STRUCT fields) with Names (STRUCT field
// names).
type Value struct {
	Type Type
	// TypeName is DuckDB's name for the value's type when it is not one of
	// ours (OTHER), for messages; "" otherwise.
	TypeName string
	Bool     bool
	Int      int64
	Uint     uint64
	Double   float64
	Str      string
	Bytes    []byte
	Children []Value
	Names    []string
}

// IsNull reports a SQL NULL (or an absent named parameter).
func (v Value) IsNull() bool { return v.Type == TypeNull || v.Type == TypeAbsent }

// Scalar returns the value as a Go scalar for option parsing: bool, int64,
// uint64, float64, string (VARCHAR and OTHER), []byte, or nil for NULL. LIST
// and STRUCT values give their SQL text.
func (v Value) Scalar() any {
	switch v.Type {
	case TypeBoolean:
		return v.Bool
	case TypeBigint:
		return v.Int
	case TypeUbigint:
		return v.Uint
	case TypeDouble:
		return v.Double
	case TypeVarchar:
		return v.Str
	case TypeOther:
		// Numbers of other types read as numbers (so messages show 1.5,
		// not '1.5'); the rest as their text.
		switch v.TypeName {
		case "DECIMAL", "FLOAT":
			if f, err := strconv.ParseFloat(v.Str, 64); err == nil {
				return f
			}
		case "HUGEINT", "UHUGEINT", "BIGNUM":
			if n, err := strconv.ParseInt(v.Str, 10, 64); err == nil {
				return n
			}
			if n, err := strconv.ParseUint(v.Str, 10, 64); err == nil {
				return n
			}
		}
		return v.Str
	case TypeBlob:
		return v.Bytes
	case TypeList, TypeStruct:
		return v.SQL()
	}
	return nil
}

// SQL renders the value as SQL text, for messages.
func (v Value) SQL() string {
	switch v.Type {
	case TypeNull, TypeAbsent:
		return "NULL"
	case TypeBoolean:
		return strconv.FormatBool(v.Bool)
	case TypeBigint:
		return strconv.FormatInt(v.Int, 10)
	case TypeUbigint:
		return strconv.FormatUint(v.Uint, 10)
	case TypeDouble:
		return strconv.FormatFloat(v.Double, 'g', -1, 64)
	case TypeVarchar:
		return quote(v.Str)
	case TypeOther:
		return quote(v.Str) + "::" + v.TypeName
	case TypeBlob:
		return `'\x` + hex.EncodeToString(v.Bytes) + `'::BLOB`
	case TypeList:
		parts := make([]string, len(v.Children))
		for i, c := range v.Children {
			parts[i] = c.SQL()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case TypeStruct:
		parts := make([]string, len(v.Children))
		for i, c := range v.Children {
			name := ""
			if i < len(v.Names) {
				name = v.Names[i]
			}
			parts[i] = quote(name) + ": " + c.SQL()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "?"
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// typeDesc names a value's type for messages.
func (v Value) typeDesc() string {
	if v.Type == TypeOther && v.TypeName != "" {
		return v.TypeName
	}
	return v.Type.String()
}

// Column is a result column.
type Column struct {
	Name string
	Type Type
}

// Table is a function's result. Each row holds one cell per column: nil
// (NULL) or the column type's Go type: bool, int64, uint64, float64,
// string, []byte, time.Time.
type Table struct {
	Columns []Column
	Rows    [][]any
}

// check verifies every cell against its column (a programming error if
// not; the bridge relies on it).
func (t *Table) check() error {
	for r, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return fmt.Errorf("row %d has %d cells for %d columns", r, len(row), len(t.Columns))
		}
		for c, cell := range row {
			if cell == nil {
				continue
			}
			ok := false
			switch t.Columns[c].Type {
			case TypeBoolean:
				_, ok = cell.(bool)
			case TypeBigint:
				_, ok = cell.(int64)
			case TypeUbigint:
				_, ok = cell.(uint64)
			case TypeDouble:
				_, ok = cell.(float64)
			case TypeVarchar:
				_, ok = cell.(string)
			case TypeBlob:
				_, ok = cell.([]byte)
			case TypeTimestampTZ:
				_, ok = cell.(time.Time)
			}
			if !ok {
				return fmt.Errorf("row %d column %s (%s) holds %T", r, t.Columns[c].Name, t.Columns[c].Type, cell)
			}
		}
	}
	return nil
}

// Cell helpers for building rows from optional model fields.

func optString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func optU64[T ~uint64](p *T) any {
	if p == nil {
		return nil
	}
	return uint64(*p)
}

func optBool(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

// asU64 reads a non-negative integer argument.
func asU64(v Value) (uint64, bool) {
	switch v.Type {
	case TypeBigint:
		if v.Int < 0 {
			return 0, false
		}
		return uint64(v.Int), true
	case TypeUbigint:
		return v.Uint, true
	case TypeDouble:
		if v.Double < 0 || v.Double != math.Trunc(v.Double) || v.Double > math.MaxUint64 {
			return 0, false
		}
		return uint64(v.Double), true
	case TypeVarchar, TypeOther:
		n, err := strconv.ParseUint(strings.TrimSpace(v.Str), 10, 64)
		return n, err == nil
	}
	return 0, false
}
