package ducklake

import (
	"fmt"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// duckdbTypes maps DuckLake's base type names (ducklake_column.column_type)
// to DuckDB's, as DuckLake 0.3 reads them (its DuckLakeTypes::FromString).
var duckdbTypes = map[string]string{
	"boolean":      "BOOLEAN",
	"int8":         "TINYINT",
	"int16":        "SMALLINT",
	"int32":        "INTEGER",
	"int64":        "BIGINT",
	"int128":       "HUGEINT",
	"uint8":        "UTINYINT",
	"uint16":       "USMALLINT",
	"uint32":       "UINTEGER",
	"uint64":       "UBIGINT",
	"uint128":      "UHUGEINT",
	"float32":      "FLOAT",
	"float64":      "DOUBLE",
	"time":         "TIME",
	"date":         "DATE",
	"timestamp":    "TIMESTAMP",
	"timestamp_us": "TIMESTAMP",
	"timestamp_ms": "TIMESTAMP_MS",
	"timestamp_ns": "TIMESTAMP_NS",
	"timestamp_s":  "TIMESTAMP_S",
	"timestamptz":  "TIMESTAMP WITH TIME ZONE",
	"timetz":       "TIME WITH TIME ZONE",
	"interval":     "INTERVAL",
	"varchar":      "VARCHAR",
	"blob":         "BLOB",
	"uuid":         "UUID",
	"json":         "JSON",
	"geometry":     "BLOB",
}

// quoteIdent quotes a name for a DuckDB type string (STRUCT field names).
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// columnType is the DuckDB type of a DuckLake column: its base type, or for
// struct, list and map the type built from its child columns (children of
// the same table version, by column order).
func columnType(c core.Column, children func(core.ColumnID) []core.Column) (string, error) {
	t := strings.ToLower(strings.TrimSpace(c.Type))
	if d, ok := duckdbTypes[t]; ok {
		return d, nil
	}
	if strings.HasPrefix(t, "decimal(") && strings.HasSuffix(t, ")") {
		var w, s int
		if _, err := fmt.Sscanf(t, "decimal(%d,%d)", &w, &s); err == nil {
			return fmt.Sprintf("DECIMAL(%d,%d)", w, s), nil
		}
	}
	kids := children(c.ID)
	sub := func(k core.Column) (string, error) { return columnType(k, children) }
	switch t {
	case "struct":
		if len(kids) == 0 {
			return "", fmt.Errorf("column %q is a struct without fields", c.Name)
		}
		fields := make([]string, 0, len(kids))
		for _, k := range kids {
			kt, err := sub(k)
			if err != nil {
				return "", err
			}
			fields = append(fields, quoteIdent(k.Name)+" "+kt)
		}
		return "STRUCT(" + strings.Join(fields, ", ") + ")", nil
	case "list":
		if len(kids) != 1 {
			return "", fmt.Errorf("column %q is a list with %d element columns (want 1)", c.Name, len(kids))
		}
		kt, err := sub(kids[0])
		if err != nil {
			return "", err
		}
		return kt + "[]", nil
	case "map":
		if len(kids) != 2 {
			return "", fmt.Errorf("column %q is a map with %d child columns (want key and value)", c.Name, len(kids))
		}
		kt, err := sub(kids[0])
		if err != nil {
			return "", err
		}
		vt, err := sub(kids[1])
		if err != nil {
			return "", err
		}
		return "MAP(" + kt + ", " + vt + ")", nil
	}
	return "", fmt.Errorf("column %q has type %q, which DuckLake 0.3 does not know", c.Name, c.Type)
}
