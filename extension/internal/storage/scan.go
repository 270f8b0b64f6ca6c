package storage

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/ducklake"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
)

// Rowid, as a projected column, is DuckDB's rowid virtual column: the row's
// index in the table at the transaction's head, and past those the
// transaction's own inserted rows (ducklake.Changes): stable for the whole
// transaction.
const Rowid = -1

// Op is a filter's comparison. The values are pinned: MORAINE_FILTER_* of
// cshim/moraine.h.
type Op int32

const (
	OpEq        Op = 1
	OpNe        Op = 2
	OpLt        Op = 3
	OpLe        Op = 4
	OpGt        Op = 5
	OpGe        Op = 6
	OpIsNull    Op = 7
	OpIsNotNull Op = 8
)

// Filter is a predicate on one column that the scan may use to skip rows:
// column <op> value, value an int64, uint64, string or bool (nil for the
// NULL tests). Filters are hints: DuckDB still applies its own filter to
// what a scan returns, so a scan keeps every row it cannot decide.
type Filter struct {
	Column int
	Op     Op
	Value  any
}

// Scan reads one table's rows as the transaction sees them, projected and
// filtered, in batches.
type Scan struct {
	table   *ducklake.Table
	rows    ducklake.RowSet
	cols    []int
	filters []Filter
	next    int
}

// Scan starts reading the named table: its rows at the transaction's head
// with the transaction's own changes, as they are when the scan starts
// (later writes of the transaction do not reach it, so a statement reading
// and writing one table reads it once). cols lists the columns to return,
// by index in the table (Rowid for the rowid); filters name columns by
// index in the table too.
func (t *Txn) Scan(name string, cols []int, filters []Filter) (*Scan, error) {
	table := t.changes.Lookup(name)
	if table == nil {
		return nil, &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("table %q does not exist in this transaction's view of the lake", name)}
	}
	for _, c := range cols {
		if c != Rowid && (c < 0 || c >= len(table.Columns)) {
			return nil, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("scan of %s: no column number %d (it has %d)", table.Name, c, len(table.Columns))}
		}
	}
	for _, f := range filters {
		if f.Column < 0 || f.Column >= len(table.Columns) {
			return nil, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("filter on %s: no column number %d", table.Name, f.Column)}
		}
		if f.Op < OpEq || f.Op > OpIsNotNull {
			return nil, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("filter on %s: unknown operator %d", table.Name, f.Op)}
		}
	}
	rows, err := t.changes.Rows(table)
	if err != nil {
		return nil, err
	}
	return &Scan{table: table, rows: rows, cols: cols, filters: filters}, nil
}

// Next returns up to max of the next rows that pass the filters, as a
// table in the C ABI's types (see sqlfn.Table); zero rows at the end. Each
// column's type is chosen from its cells: BIGINT for int64 cells, VARCHAR
// for strings, DUCKDB for ducklake.Encoded, and so on; a column whose cells
// differ in type is VARCHAR of their text (the C++ side casts every column
// to its declared type). Encoded cells have no text here, so a batch ends
// before a row whose cell would put Encoded and other cells in one column.
func (s *Scan) Next(max int) *sqlfn.Table {
	if max <= 0 {
		max = 2048
	}
	out := &sqlfn.Table{Columns: make([]sqlfn.Column, len(s.cols))}
	held := make([]batchColumn, len(s.cols))
	types := make([]sqlfn.Type, len(s.cols)) // admit's scratch
	for s.next < s.rows.Len() && len(out.Rows) < max {
		id, row := s.rows.Row(s.next)
		if !s.keep(row) {
			s.next++
			continue
		}
		cells := make([]any, len(s.cols))
		for j, c := range s.cols {
			if c == Rowid {
				cells[j] = id
			} else {
				cells[j] = row[c]
			}
		}
		if !admit(held, types, cells) {
			break // the row starts the next batch
		}
		s.next++
		out.Rows = append(out.Rows, cells)
	}
	for j, c := range s.cols {
		name := "rowid"
		if c != Rowid {
			name = s.table.Columns[c].Name
		}
		typ := held[j].typ
		switch {
		case held[j].mixed:
			typ = carrier(out.Rows, j)
		case typ == sqlfn.TypeNull:
			typ = sqlfn.TypeBigint // all NULL: any type does
		}
		out.Columns[j] = sqlfn.Column{Name: name, Type: typ}
	}
	return out
}

// batchColumn is what a batch column holds so far.
type batchColumn struct {
	typ   sqlfn.Type // the type of its first non-NULL cell; TypeNull while only NULLs
	mixed bool       // it holds cells of more than one type (never DUCKDB)
}

// admit reports whether a row's cells can join the batch without mixing
// Encoded (DUCKDB) and other cells in one column, and records their types
// in held if so. types is scratch of len(cells).
func admit(held []batchColumn, types []sqlfn.Type, cells []any) bool {
	for j, c := range cells {
		t := cellType(c)
		types[j] = t
		if h := held[j].typ; t != sqlfn.TypeNull && h != sqlfn.TypeNull && (t == sqlfn.TypeDuckDB) != (h == sqlfn.TypeDuckDB) {
			return false
		}
	}
	for j, t := range types {
		switch h := &held[j]; {
		case t == sqlfn.TypeNull:
		case h.typ == sqlfn.TypeNull:
			h.typ = t
		case h.typ != t:
			h.mixed = true
		}
	}
	return true
}

// carrier picks the wire type of column j and converts cells that do not
// fit it to text (Next calls it for the columns whose cells differ in
// type only).
func carrier(rows [][]any, j int) sqlfn.Type {
	var typ sqlfn.Type
	mixed := false
	for _, r := range rows {
		t := cellType(r[j])
		if t == sqlfn.TypeNull {
			continue
		}
		if typ == sqlfn.TypeNull {
			typ = t
		} else if typ != t {
			mixed = true
		}
	}
	if typ == sqlfn.TypeNull {
		return sqlfn.TypeBigint // all NULL: any type does
	}
	if !mixed {
		return typ
	}
	for _, r := range rows {
		if r[j] != nil {
			r[j] = cellText(r[j])
		}
	}
	return sqlfn.TypeVarchar
}

func cellType(v any) sqlfn.Type {
	switch v.(type) {
	case nil:
		return sqlfn.TypeNull
	case int64:
		return sqlfn.TypeBigint
	case uint64:
		return sqlfn.TypeUbigint
	case float64:
		return sqlfn.TypeDouble
	case bool:
		return sqlfn.TypeBoolean
	case string:
		return sqlfn.TypeVarchar
	case []byte:
		return sqlfn.TypeBlob
	case time.Time:
		return sqlfn.TypeTimestampTZ
	case ducklake.Encoded:
		return sqlfn.TypeDuckDB
	}
	panic(fmt.Sprintf("storage: a cell of type %T", v))
}

// cellText is a cell as text DuckDB casts back to the cell's value.
func cellText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999-07")
	}
	return fmt.Sprint(v)
}

// keep reports whether a row may pass every filter: false only when one
// filter certainly rejects it.
func (s *Scan) keep(row []any) bool {
	for _, f := range s.filters {
		if rejects(f, row[f.Column]) {
			return false
		}
	}
	return true
}

func rejects(f Filter, cell any) bool {
	switch f.Op {
	case OpIsNull:
		return cell != nil
	case OpIsNotNull:
		return cell == nil
	}
	if cell == nil || f.Value == nil {
		return true // a comparison with NULL is never true
	}
	c, ok := compare(cell, f.Value)
	if !ok {
		return false // undecidable here: leave it to DuckDB
	}
	switch f.Op {
	case OpEq:
		return c != 0
	case OpNe:
		return c == 0
	case OpLt:
		return c >= 0
	case OpLe:
		return c > 0
	case OpGt:
		return c <= 0
	case OpGe:
		return c < 0
	}
	return false
}

// compare orders a cell and a filter value of comparable kinds.
func compare(cell, value any) (int, bool) {
	switch a := cell.(type) {
	case int64:
		switch b := value.(type) {
		case int64:
			return cmp.Compare(a, b), true
		case uint64:
			if b > math.MaxInt64 {
				return -1, true
			}
			return cmp.Compare(a, int64(b)), true
		}
	case uint64:
		switch b := value.(type) {
		case uint64:
			return cmp.Compare(a, b), true
		case int64:
			if b < 0 {
				return 1, true
			}
			return cmp.Compare(a, uint64(b)), true
		}
	case string:
		if b, ok := value.(string); ok {
			return strings.Compare(a, b), true
		}
	case bool:
		if b, ok := value.(bool); ok {
			switch {
			case a == b:
				return 0, true
			case !a:
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}
