// Package ducklake is the moraine catalog seen as DuckLake's metadata
// tables, in either catalog specification moraine serves (Spec: 0.3's 22
// ducklake_* tables, which DuckDB 1.4's DuckLake creates at its first
// ATTACH, or 1.0's 28, DuckDB 1.5's), the
// ducklake_inlined_data_<table>_<schema version> tables and, on a 1.0
// lake, the ducklake_inlined_delete_<table> tables, with exactly the
// column names and DuckDB types of DuckLake's metadata-SQL contracts
// (../shared/ducklake/metadata-sql-contract.txt for 0.3,
// docs/ducklake-sql/contract-1.0.txt for 1.0), and their rows read from a
// core.Dump (View; a lake is served as the version it records, a lake
// recording none as the caller's fallback). Writes (Changes, Commit) take
// either spec's tables.
//
// It also holds a transaction's writes to those tables: Changes is the
// write overlay over the View the transaction pinned (deletes, updates and
// inserts by rowid, NOT NULL and the primary keys enforced; CREATE and
// DROP of inlined tables; ALTER TABLE ADD/DROP COLUMN of metadata tables,
// as DuckLake 1.0's migration of a 0.3 lake sends it: alter.go), and Commit
// lands it as one core commit through core's row-level entry point
// (core.Catalog.BeginRows, which is all it asks of a RowsCatalog), returning
// the view the commit leaves.
//
// The DuckDB storage extension (cshim/storage, through extension/) serves
// DuckLake from this package: it lists a View's tables to DuckDB, scans
// their rows, and hands DuckDB's writes to Changes and Commit. The package
// owns the mapping between DuckLake's rows and the catalog model. It must
// not depend on DuckDB itself (its library or C++ API; only the property
// test runs DuckDB, through duckdb-go), cgo or the C ABI, and it never
// opens a store: it reads a Dump and commits through a RowsCatalog.
package ducklake

import (
	"slices"
	"strconv"
	"strings"
)

// DuckDB type names of the metadata tables' columns.
const (
	TypeBigint      = "BIGINT"
	TypeVarchar     = "VARCHAR"
	TypeBoolean     = "BOOLEAN"
	TypeUUID        = "UUID"
	TypeTimestampTZ = "TIMESTAMP WITH TIME ZONE"
)

// Column is one column of a table: its name, its DuckDB type (as DuckDB's
// parser reads it) and whether it is NOT NULL.
type Column struct {
	Name    string
	Type    string
	NotNull bool
}

// Table describes one table DuckLake sees in the metadata catalog.
type Table struct {
	Name    string
	Columns []Column
	// PrimaryKey is the index of the PRIMARY KEY column, -1 for none
	// (DuckLake's tables have single-column keys only).
	PrimaryKey int
	// Inlined is set for a ducklake_inlined_data_<table>_<version> table.
	Inlined *InlinedTable
	// InlinedDeletes is set for a ducklake_inlined_delete_<table> table
	// (DuckLake 1.0's deletion inlining).
	InlinedDeletes *InlinedDeleteTable

	// index maps each lower-cased column name to its index; only the
	// metadata tables (spec) have it.
	index map[string]int
	// fields maps each column to its place in the table's rows as the
	// builders make them (spec.go); spec is the Spec the table is of.
	// Only the metadata tables have them.
	fields []int
	spec   *Spec
}

// InlinedTable identifies an inlined-data table.
type InlinedTable struct {
	TableID       uint64
	SchemaVersion uint64
}

// InlinedDeleteTable identifies ducklake_inlined_delete_<table>: the rows
// of the table's data files deleted without a delete file.
type InlinedDeleteTable struct {
	TableID uint64
}

// ColumnIndex returns the index of the named column (case-insensitive, as
// DuckDB resolves names), or -1.
func (t *Table) ColumnIndex(name string) int {
	if i, ok := t.index[strings.ToLower(name)]; ok && strings.EqualFold(t.Columns[i].Name, name) {
		return i
	}
	// No index, or not found by its lower case: decide by case folding
	// (the two differ on a few non-ASCII letters, such as U+017F for s).
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// spec builds a table from "name TYPE[ PK| NN], ...", TYPE one of B(IGINT),
// V(ARCHAR), BOOL, UUID, TSTZ.
func spec(name, columns string) *Table {
	t := &Table{Name: name, PrimaryKey: -1}
	for i, f := range strings.Split(columns, ",") {
		parts := strings.Fields(f)
		c := Column{Name: parts[0]}
		switch parts[1] {
		case "B":
			c.Type = TypeBigint
		case "V":
			c.Type = TypeVarchar
		case "BOOL":
			c.Type = TypeBoolean
		case "UUID":
			c.Type = TypeUUID
		case "TSTZ":
			c.Type = TypeTimestampTZ
		default:
			panic("ducklake: bad column spec " + f)
		}
		for _, flag := range parts[2:] {
			switch flag {
			case "PK":
				t.PrimaryKey = i
			case "NN":
				c.NotNull = true
			default:
				panic("ducklake: bad column flag " + f)
			}
		}
		t.Columns = append(t.Columns, c)
	}
	t.index = make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		if _, dup := t.index[strings.ToLower(c.Name)]; dup {
			panic("ducklake: column " + c.Name + " given twice in " + name)
		}
		t.index[strings.ToLower(c.Name)] = i
	}
	return t
}

// The metadata tables, in the order DuckLake 0.3 creates them.
var metadataTables = []*Table{
	spec("ducklake_metadata", "key V NN, value V NN, scope V, scope_id B"),
	spec("ducklake_snapshot", "snapshot_id B PK, snapshot_time TSTZ, schema_version B, next_catalog_id B, next_file_id B"),
	spec("ducklake_snapshot_changes", "snapshot_id B PK, changes_made V, author V, commit_message V, commit_extra_info V"),
	spec("ducklake_schema", "schema_id B PK, schema_uuid UUID, begin_snapshot B, end_snapshot B, schema_name V, path V, path_is_relative BOOL"),
	spec("ducklake_table", "table_id B, table_uuid UUID, begin_snapshot B, end_snapshot B, schema_id B, table_name V, path V, path_is_relative BOOL"),
	spec("ducklake_view", "view_id B, view_uuid UUID, begin_snapshot B, end_snapshot B, schema_id B, view_name V, dialect V, sql V, column_aliases V"),
	spec("ducklake_tag", "object_id B, begin_snapshot B, end_snapshot B, key V, value V"),
	spec("ducklake_column_tag", "table_id B, column_id B, begin_snapshot B, end_snapshot B, key V, value V"),
	spec("ducklake_data_file", "data_file_id B PK, table_id B, begin_snapshot B, end_snapshot B, file_order B, path V, path_is_relative BOOL, file_format V, record_count B, file_size_bytes B, footer_size B, row_id_start B, partition_id B, encryption_key V, partial_file_info V, mapping_id B"),
	spec("ducklake_file_column_stats", "data_file_id B, table_id B, column_id B, column_size_bytes B, value_count B, null_count B, min_value V, max_value V, contains_nan BOOL, extra_stats V"),
	spec("ducklake_delete_file", "delete_file_id B PK, table_id B, begin_snapshot B, end_snapshot B, data_file_id B, path V, path_is_relative BOOL, format V, delete_count B, file_size_bytes B, footer_size B, encryption_key V"),
	spec("ducklake_column", "column_id B, begin_snapshot B, end_snapshot B, table_id B, column_order B, column_name V, column_type V, initial_default V, default_value V, nulls_allowed BOOL, parent_column B"),
	spec("ducklake_table_stats", "table_id B, record_count B, next_row_id B, file_size_bytes B"),
	spec("ducklake_table_column_stats", "table_id B, column_id B, contains_null BOOL, contains_nan BOOL, min_value V, max_value V, extra_stats V"),
	spec("ducklake_partition_info", "partition_id B, table_id B, begin_snapshot B, end_snapshot B"),
	spec("ducklake_partition_column", "partition_id B, table_id B, partition_key_index B, column_id B, transform V"),
	spec("ducklake_file_partition_value", "data_file_id B, table_id B, partition_key_index B, partition_value V"),
	spec("ducklake_files_scheduled_for_deletion", "data_file_id B, path V, path_is_relative BOOL, schedule_start TSTZ"),
	spec("ducklake_inlined_data_tables", "table_id B, table_name V, schema_version B"),
	spec("ducklake_column_mapping", "mapping_id B, table_id B, type V"),
	spec("ducklake_name_mapping", "mapping_id B, column_id B, source_name V, target_field_id B, parent_column B, is_partition BOOL"),
	spec("ducklake_schema_versions", "begin_snapshot B, schema_version B"),
}

// MetadataTables returns DuckLake 0.3's 22 metadata tables in creation
// order (Spec03().Tables()). The result is shared: do not modify it.
func MetadataTables() []*Table { return metadataTables }

// InlinedTablePrefix starts the name of every inlined-data table.
const InlinedTablePrefix = "ducklake_inlined_data_"

// InlinedTableName is DuckLake's name for the inlined rows of a table
// written under a schema version.
func InlinedTableName(table, schemaVersion uint64) string {
	return InlinedTablePrefix + strconv.FormatUint(table, 10) + "_" + strconv.FormatUint(schemaVersion, 10)
}

// InlinedDeletePrefix starts the name of every inlined-deletion table.
const InlinedDeletePrefix = "ducklake_inlined_delete_"

// InlinedDeleteTableName is DuckLake 1.0's name for the table holding the
// inlined deletions of a table's data files.
func InlinedDeleteTableName(table uint64) string {
	return InlinedDeletePrefix + strconv.FormatUint(table, 10)
}

// inlinedDeleteColumns are the columns of every inlined-deletion table, as
// DuckLake 1.0 creates it (no constraint).
var inlinedDeleteColumns = []Column{
	{Name: "file_id", Type: TypeBigint},
	{Name: "row_id", Type: TypeBigint},
	{Name: "begin_snapshot", Type: TypeBigint},
}

// inlinedDeleteTable describes ducklake_inlined_delete_<table>.
func inlinedDeleteTable(table uint64) *Table {
	return &Table{Name: InlinedDeleteTableName(table), PrimaryKey: -1, InlinedDeletes: &InlinedDeleteTable{TableID: table},
		Columns: slices.Clone(inlinedDeleteColumns)}
}
