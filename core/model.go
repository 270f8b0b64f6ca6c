package core

import (
	"time"

	"github.com/google/uuid"
)

// Typed ids. Catalog ids (schemas, tables, views, columns' tables,
// partitions, mappings, macros, sorts) come from a snapshot's
// NextCatalogID; file ids (data and delete files) from NextFileID. Column
// ids are per table.
type (
	SnapshotID   uint64
	SchemaID     uint64
	TableID      uint64
	ViewID       uint64
	ColumnID     uint64
	DataFileID   uint64
	DeleteFileID uint64
	PartitionID  uint64
	MappingID    uint64
	SortID       uint64
	MacroID      uint64
)

// Versioned is embedded by every entity that has DuckLake begin/end
// snapshots. End is nil while the version is live ("end_snapshot IS NULL").
type Versioned struct {
	Begin SnapshotID
	End   *SnapshotID
}

// Live reports whether the version is current.
func (v Versioned) Live() bool { return v.End == nil }

// VisibleAt reports whether the version exists at snapshot s.
func (v Versioned) VisibleAt(s SnapshotID) bool {
	return v.Begin <= s && (v.End == nil || s < *v.End)
}

// Snapshot is one row of ducklake_snapshot joined with
// ducklake_snapshot_changes.
type Snapshot struct {
	ID              SnapshotID
	Time            time.Time
	SchemaVersion   uint64
	NextCatalogID   uint64
	NextFileID      uint64
	ChangesMade     string // DuckLake's grammar, e.g. `created_table:"main"."t",inserted_into_table:3`
	Author          *string
	CommitMessage   *string
	CommitExtraInfo *string
	// SchemaChangedTables lists tables whose shape changed (moraine-internal).
	SchemaChangedTables []TableID
	// DeletedDataFiles are the data files a delete targeted
	// (moraine-internal, for conflict classification; empty = whole table).
	DeletedDataFiles []DataFileID
}

// Schema is ducklake_schema.
type Schema struct {
	ID SchemaID
	Versioned
	UUID           uuid.UUID
	Name           string
	Path           string
	PathIsRelative bool
}

// Table is ducklake_table.
type Table struct {
	ID TableID
	Versioned
	UUID           uuid.UUID
	SchemaID       SchemaID
	Name           string
	Path           string
	PathIsRelative bool
}

// View is ducklake_view.
type View struct {
	ID ViewID
	Versioned
	UUID          uuid.UUID
	SchemaID      SchemaID
	Name          string
	Dialect       string
	SQL           string
	ColumnAliases string
}

// Column is ducklake_column; nested types have child columns whose Parent
// is set. Type is a DuckLake type string ("int64", "varchar", "struct",
// "list", "decimal(10,2)", ...).
type Column struct {
	TableID TableID
	ID      ColumnID
	Versioned
	Order               uint64
	Name                string
	Type                string
	InitialDefault      *string
	DefaultValue        *string
	NullsAllowed        bool
	Parent              *ColumnID
	DefaultValueType    *string
	DefaultValueDialect *string
	// Tags are ducklake_column_tag rows for this column.
	Tags []TagEntry
}

// PartitionValue is ducklake_file_partition_value for one key index.
type PartitionValue struct {
	KeyIndex uint64
	Value    string
}

// DataFile is ducklake_data_file (with its partition values).
type DataFile struct {
	TableID TableID
	ID      DataFileID
	Versioned
	FileOrder       *uint64 // nil: NULL (DuckLake writes NULL)
	Path            string
	PathIsRelative  bool
	Format          string // "parquet"
	RecordCount     uint64
	FileSizeBytes   uint64
	FooterSize      *uint64 // nil: NULL
	RowIDStart      *uint64 // nil: NULL
	PartitionID     *PartitionID
	EncryptionKey   *string
	PartialFileInfo *string // DuckLake 0.3's partial_file_info
	PartialMax      *uint64 // DuckLake 1.0's partial_max (format 13+)
	MappingID       *MappingID
	PartitionValues []PartitionValue
}

// DeleteFile is ducklake_delete_file.
type DeleteFile struct {
	TableID TableID
	ID      DeleteFileID
	Versioned
	DataFileID     DataFileID
	Path           string
	PathIsRelative bool
	Format         string
	DeleteCount    uint64
	FileSizeBytes  uint64
	FooterSize     *uint64 // nil: NULL
	EncryptionKey  *string
	PartialMax     *uint64 // DuckLake 1.0's partial_max (format 13+)
}

// TableStats is ducklake_table_stats (unversioned: overwritten in place).
type TableStats struct {
	TableID       TableID
	RecordCount   uint64
	NextRowID     uint64
	FileSizeBytes uint64
}

// TableColumnStats is ducklake_table_column_stats (unversioned).
type TableColumnStats struct {
	TableID      TableID
	ColumnID     ColumnID
	ContainsNull *bool
	ContainsNaN  *bool
	MinValue     *string
	MaxValue     *string
	ExtraStats   *string
}

// FileColumnStats is ducklake_file_column_stats (unversioned; removed with
// its file's history).
type FileColumnStats struct {
	TableID         TableID
	DataFileID      DataFileID
	ColumnID        ColumnID
	ColumnSizeBytes *uint64
	ValueCount      *uint64
	NullCount       *uint64
	MinValue        *string
	MaxValue        *string
	ContainsNaN     *bool
	ExtraStats      *string
}

// FileVariantStats is ducklake_file_variant_stats for one VARIANT column
// of one data file (DuckLake 1.0): the statistics of each shredded path,
// by variant path.
type FileVariantStats struct {
	TableID    TableID
	DataFileID DataFileID
	ColumnID   ColumnID
	Paths      []VariantPathStats
}

// VariantPathStats is one ducklake_file_variant_stats row: the statistics
// of one path of a VARIANT column, and the type it was shredded as.
type VariantPathStats struct {
	VariantPath     string
	ShreddedType    *string
	ColumnSizeBytes *uint64
	ValueCount      *uint64
	NullCount       *uint64
	MinValue        *string
	MaxValue        *string
	ContainsNaN     *bool
	ExtraStats      *string
}

// SchemaVersion is ducklake_schema_versions: table's shape changed at
// BeginSnapshot to SchemaVersion.
type SchemaVersion struct {
	TableID       TableID
	BeginSnapshot SnapshotID
	SchemaVersion uint64
}

// TagEntry is one key/value tag with its own lifetime (ducklake_tag,
// ducklake_column_tag).
type TagEntry struct {
	Versioned
	Key   string
	Value string
}

// Tags is every tag of one object (schema, table or view id): ducklake_tag.
type Tags struct {
	ObjectID uint64
	Entries  []TagEntry
}

// OptionScope is ducklake_metadata's scope.
type OptionScope uint8

const (
	ScopeGlobal OptionScope = 0
	ScopeSchema OptionScope = 1
	ScopeTable  OptionScope = 2
)

func (s OptionScope) String() string {
	switch s {
	case ScopeSchema:
		return "schema"
	case ScopeTable:
		return "table"
	}
	return ""
}

// Options is every ducklake_metadata row of one scope.
type Options struct {
	Scope   OptionScope
	ScopeID uint64
	Values  map[string]string
}

// PartitionColumn is ducklake_partition_column.
type PartitionColumn struct {
	KeyIndex  uint64
	ColumnID  ColumnID
	Transform string // "identity", "year", "month", "day", "hour", ...
}

// Partition is ducklake_partition_info with its columns.
type Partition struct {
	TableID TableID
	ID      PartitionID
	Versioned
	Columns []PartitionColumn
}

// SortExpression is ducklake_sort_expression.
type SortExpression struct {
	Index      uint64
	Expression string
	Dialect    string
	Direction  string // "ASC" / "DESC"
	NullOrder  string // "NULLS_FIRST" / "NULLS_LAST"
}

// Sort is ducklake_sort_info with its expressions.
type Sort struct {
	TableID TableID
	ID      SortID
	Versioned
	Expressions []SortExpression
}

// MacroParameter is one ducklake_macro_parameters row of an
// implementation; ColumnID is its position.
type MacroParameter struct {
	ColumnID         uint64
	Name             string
	Type             string  // "unknown" when untyped
	DefaultValue     *string // SQL text; DuckLake writes 'NULL' for none
	DefaultValueType *string
}

// MacroImpl is one ducklake_macro_impl row (an overload) with its
// parameters.
type MacroImpl struct {
	ID         uint64
	Dialect    string // "duckdb"
	SQL        string
	Type       string // "scalar" or "table"
	Parameters []MacroParameter
}

// Macro is ducklake_macro with its implementations (format 13+). Macros
// are named within their schema, apart from tables and views.
type Macro struct {
	ID MacroID
	Versioned
	SchemaID SchemaID
	Name     string
	Impls    []MacroImpl
}

// NameMapping is ducklake_name_mapping.
type NameMapping struct {
	ColumnID      ColumnID
	SourceName    string
	TargetFieldID uint64
	ParentColumn  *ColumnID
	IsPartition   bool
}

// Mapping is ducklake_column_mapping with its name mappings (immutable).
type Mapping struct {
	TableID TableID
	ID      MappingID
	Type    string
	Names   []NameMapping
}

// GcFile is ducklake_files_scheduled_for_deletion.
type GcFile struct {
	DataFileID     DataFileID
	Path           string
	PathIsRelative bool
	ScheduleStart  time.Time
}

// Value is one cell of an inlined row. Exactly one field is set; all nil
// means NULL. DuckDB holds a value of any DuckDB type in DuckDB's own
// binary serialization, as the storage extension hands over the types the
// others cannot carry exactly (DECIMAL, HUGEINT, nested types, ...); the
// catalog stores it as given and never looks inside.
type Value struct {
	Int    *int64
	Uint   *uint64
	Float  *float64
	Bool   *bool
	String *string
	Bytes  []byte
	DuckDB []byte
}

// IsNull reports whether the cell is NULL.
func (v Value) IsNull() bool {
	return v.Int == nil && v.Uint == nil && v.Float == nil && v.Bool == nil && v.String == nil && v.Bytes == nil && v.DuckDB == nil
}

// InlinedRow is one row of ducklake_inlined_data_<table>_<schema_version>:
// a row id, its lifetime and its values in column order.
type InlinedRow struct {
	RowID uint64
	Versioned
	Values []Value
}

// InlinedColumn is a column of an inlined-data table as DuckLake declared
// it: its name and DuckDB type.
type InlinedColumn struct {
	Name string
	Type string
}

// InlinedTable is ducklake_inlined_data_<table>_<schema version> as DuckLake
// created it: the table's name and its columns after row_id,
// begin_snapshot and end_snapshot, with their DuckDB types; Listed is set
// when ducklake_inlined_data_tables holds its row. Lakes the Go API wrote
// have none: their inlined tables follow the table's columns.
type InlinedTable struct {
	TableID       TableID
	SchemaVersion uint64
	Name          string
	Columns       []InlinedColumn
	Listed        bool
}

// InlinedDeleteTable is ducklake_inlined_delete_<table> as DuckLake 1.0
// created it: the table deletes of rows of TableID's data files are
// inlined into (deletion inlining) instead of delete files.
type InlinedDeleteTable struct {
	TableID TableID
	Name    string
}

// InlinedFileDelete is one row of ducklake_inlined_delete_<table>: row
// RowID of data file DataFileID, deleted at snapshot Begin.
type InlinedFileDelete struct {
	TableID    TableID
	DataFileID DataFileID
	RowID      uint64
	Begin      SnapshotID
}

// InlinedRows groups a table's inlined rows written under one schema
// version (the columns the values follow).
type InlinedRows struct {
	TableID       TableID
	SchemaVersion uint64
	Rows          []InlinedRow
}
