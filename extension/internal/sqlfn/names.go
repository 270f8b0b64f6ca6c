package sqlfn

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// parseQualified reads a table reference: table, schema.table, with
// optional double quotes ("my schema"."t", "" for a quote). The schema
// defaults to main.
func parseQualified(s string) (schema, table string, err error) {
	parts, err := splitIdents(s)
	if err != nil {
		return "", "", err
	}
	switch len(parts) {
	case 1:
		return "main", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", errorf(core.InvalidArgument, "%s is not a table name (table or schema.table)", quote(s))
}

// splitIdents splits a dotted name into identifiers.
func splitIdents(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '"' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote = !inQuote
		case c == '.' && !inQuote:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, errorf(core.InvalidArgument, "unterminated quote in %s", quote(s))
	}
	parts = append(parts, cur.String())
	for _, p := range parts {
		if p == "" {
			return nil, errorf(core.InvalidArgument, "%s has an empty name part", quote(s))
		}
	}
	return parts, nil
}

// A column spec for moraine_create_table and moraine_add_column:
//
//	name TYPE [NOT NULL | NULL], ...
//
// TYPE is a DuckDB type name (BIGINT, VARCHAR, DECIMAL(10,2), ...) or a
// DuckLake one (int64, varchar, decimal(10,2), ...); nested types are not
// supported.

// sqlTypes maps DuckDB type names (and DuckLake's own) to DuckLake types.
var sqlTypes = map[string]string{
	"boolean": "boolean", "bool": "boolean", "logical": "boolean",
	"tinyint": "int8", "int1": "int8", "int8": "int8",
	"smallint": "int16", "int2": "int16", "short": "int16", "int16": "int16",
	"integer": "int32", "int": "int32", "int4": "int32", "signed": "int32", "int32": "int32",
	"bigint": "int64", "long": "int64", "int64": "int64",
	"hugeint": "int128", "int128": "int128",
	"utinyint": "uint8", "uint8": "uint8",
	"usmallint": "uint16", "uint16": "uint16",
	"uinteger": "uint32", "uint32": "uint32",
	"ubigint": "uint64", "uint64": "uint64",
	"uhugeint": "uint128", "uint128": "uint128",
	"float": "float32", "real": "float32", "float4": "float32", "float32": "float32",
	"double": "float64", "float8": "float64", "float64": "float64",
	"varchar": "varchar", "text": "varchar", "string": "varchar", "char": "varchar", "bpchar": "varchar",
	"blob": "blob", "bytea": "blob", "binary": "blob", "varbinary": "blob",
	"date": "date", "time": "time", "timetz": "timetz",
	"timestamp": "timestamp", "datetime": "timestamp", "timestamptz": "timestamptz",
	"timestamp with time zone": "timestamptz", "timestamp_s": "timestamp_s", "timestamp_ms": "timestamp_ms",
	"timestamp_ns": "timestamp_ns", "interval": "interval", "uuid": "uuid", "json": "json",
}

var decimalRE = regexp.MustCompile(`^(?i)(decimal|numeric)\s*(\(\s*(\d+)\s*(,\s*(\d+)\s*)?\))?$`)

// ducklakeType maps a type name to DuckLake's vocabulary.
func ducklakeType(name string) (string, error) {
	n := strings.ToLower(strings.Join(strings.Fields(name), " "))
	if t, ok := sqlTypes[n]; ok {
		return t, nil
	}
	if m := decimalRE.FindStringSubmatch(n); m != nil {
		width, scale := 18, 3
		if m[3] != "" {
			width, _ = strconv.Atoi(m[3])
			scale = 0
			if m[5] != "" {
				scale, _ = strconv.Atoi(m[5])
			}
		}
		if width < 1 || width > 38 || scale > width {
			return "", errorf(core.InvalidArgument, "%s: DECIMAL width must be 1 to 38 and the scale at most the width", quote(name))
		}
		return fmt.Sprintf("decimal(%d,%d)", width, scale), nil
	}
	if strings.ContainsAny(n, "[(") || strings.HasPrefix(n, "struct") || strings.HasPrefix(n, "map") || strings.HasPrefix(n, "list") || strings.HasPrefix(n, "union") {
		return "", errorf(core.Unsupported, "type %s: nested types are not supported here (scalar types only)", quote(name))
	}
	return "", errorf(core.InvalidArgument, "unknown type %s (accepted: BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, HUGEINT, UTINYINT, USMALLINT, UINTEGER, UBIGINT, FLOAT, DOUBLE, DECIMAL(w,s), VARCHAR, BLOB, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL, UUID, JSON, or DuckLake's names such as int64)", quote(name))
}

// splitTopLevel splits s at commas outside parentheses and quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseColumns reads a column spec.
func parseColumns(spec string) ([]core.ColumnDef, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errorf(core.InvalidArgument, "the column list is empty (expected e.g. 'id BIGINT NOT NULL, name VARCHAR')")
	}
	var defs []core.ColumnDef
	seen := map[string]bool{}
	for _, part := range splitTopLevel(spec) {
		def, err := parseColumn(part)
		if err != nil {
			return nil, err
		}
		if seen[strings.ToLower(def.Name)] {
			return nil, errorf(core.InvalidArgument, "column %s appears twice", quote(def.Name))
		}
		seen[strings.ToLower(def.Name)] = true
		defs = append(defs, def)
	}
	return defs, nil
}

func parseColumn(part string) (core.ColumnDef, error) {
	s := strings.TrimSpace(part)
	var name string
	if strings.HasPrefix(s, `"`) {
		i := 1
		var b strings.Builder
		for ; i < len(s); i++ {
			if s[i] == '"' {
				if i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return core.ColumnDef{}, errorf(core.InvalidArgument, "unterminated quote in column %s", quote(s))
		}
		name, s = b.String(), strings.TrimSpace(s[i+1:])
	} else {
		f := strings.Fields(s)
		if len(f) == 0 {
			return core.ColumnDef{}, errorf(core.InvalidArgument, "an empty column in the column list")
		}
		name = f[0]
		s = strings.TrimSpace(s[len(f[0]):])
	}
	nullable := true
	upper := strings.ToUpper(s)
	switch {
	case strings.HasSuffix(upper, " NOT NULL"):
		nullable, s = false, strings.TrimSpace(s[:len(s)-len(" NOT NULL")])
	case strings.HasSuffix(upper, " NULL"):
		s = strings.TrimSpace(s[:len(s)-len(" NULL")])
	}
	if name == "" || s == "" {
		return core.ColumnDef{}, errorf(core.InvalidArgument, "column %s: expected 'name TYPE [NOT NULL]'", quote(strings.TrimSpace(part)))
	}
	typ, err := ducklakeType(s)
	if err != nil {
		return core.ColumnDef{}, withContext(err, "column %s", quote(name))
	}
	return core.ColumnDef{Name: name, Type: typ, NullsAllowed: &nullable}, nil
}

// outType is the result type an inlined value of a DuckLake type is read
// back as: integers as BIGINT/UBIGINT, floats as DOUBLE, BOOLEAN, BLOB, and
// everything else as its text (VARCHAR).
func outType(ducklake string) Type {
	switch strings.ToLower(ducklake) {
	case "int8", "int16", "int32", "int64":
		return TypeBigint
	case "uint8", "uint16", "uint32", "uint64":
		return TypeUbigint
	case "float32", "float64":
		return TypeDouble
	case "boolean":
		return TypeBoolean
	case "blob":
		return TypeBlob
	}
	return TypeVarchar
}
