package sqlfn

import (
	"context"
	"slices"
	"strings"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/ducklake"
)

// The ducklake_* metadata tables, as table functions
// moraine_ducklake_<table>(lake [, snapshot := S]).
//
// Without snapshot they list every version of every row, as DuckLake's own
// metadata tables keep them (begin_snapshot/end_snapshot); with snapshot S
// they list the rows as they stood at S (versions with begin <= S and end
// NULL or after S, the end shown as NULL). See core.Dump.

// snapshotParam is the time-travel parameter of every metadata function.
var snapshotParam = Param{Name: "snapshot", Type: TypeBigint, Doc: "time travel: the rows as they stood at this snapshot id"}

// dumpOf reads the lake's dump for a metadata function's arguments.
func dumpOf(ctx context.Context, in *Instance, a *Args) (*core.Dump, error) {
	l, err := a.lake(in)
	if err != nil {
		return nil, err
	}
	at, ok, err := a.namedU64("snapshot")
	if err != nil {
		return nil, err
	}
	if ok {
		return l.Catalog.DumpAt(ctx, core.SnapshotID(at))
	}
	return l.Catalog.Dump(ctx)
}

// checkSnapshotArg validates the lake name and snapshot := at bind.
func checkSnapshotArg(a *Args) error {
	if _, err := a.str(0); err != nil {
		return err
	}
	_, _, err := a.namedU64("snapshot")
	return err
}

// metaTable is one metadata table function: fixed columns, rows from a dump.
type metaTable struct {
	table   string // ducklake_<table>
	doc     string
	columns []Column
	rows    func(d *core.Dump) [][]any
}

func (m metaTable) function() *Function {
	return &Function{
		Name:    "moraine_" + m.table,
		Doc:     m.doc,
		Params:  []Param{{Name: "lake", Type: TypeVarchar, Doc: "an attached lake"}},
		Named:   []Param{snapshotParam},
		Columns: m.columns,
		check:   checkSnapshotArg,
		run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
			d, err := dumpOf(ctx, in, a)
			if err != nil {
				return nil, err
			}
			return &Table{Columns: m.columns, Rows: m.rows(d)}, nil
		},
	}
}

func cols(spec string) []Column {
	var out []Column
	for _, f := range strings.Split(spec, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(f), " ")
		var t Type
		switch typ {
		case "U":
			t = TypeUbigint
		case "I":
			t = TypeBigint
		case "T":
			t = TypeVarchar
		case "B":
			t = TypeBoolean
		case "TS":
			t = TypeTimestampTZ
		default:
			panic("sqlfn: bad column spec " + f)
		}
		out = append(out, Column{Name: name, Type: t})
	}
	return out
}

func end(v core.Versioned) any { return optU64(v.End) }

func metadataFunctions() []*Function {
	tables := []metaTable{
		{"ducklake_snapshot", "ducklake_snapshot: one row per snapshot.",
			cols("snapshot_id U, snapshot_time TS, schema_version U, next_catalog_id U, next_file_id U"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.Snapshots {
					rows = append(rows, []any{uint64(s.ID), s.Time, s.SchemaVersion, s.NextCatalogID, s.NextFileID})
				}
				return rows
			}},
		{"ducklake_snapshot_changes", "ducklake_snapshot_changes: what each snapshot changed, in DuckLake's changes_made grammar.",
			cols("snapshot_id U, changes_made T, author T, commit_message T, commit_extra_info T"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.Snapshots {
					rows = append(rows, []any{uint64(s.ID), s.ChangesMade, optString(s.Author), optString(s.CommitMessage), optString(s.CommitExtraInfo)})
				}
				return rows
			}},
		{"ducklake_schema", "ducklake_schema: every version of every schema.",
			cols("schema_id U, schema_uuid T, begin_snapshot U, end_snapshot U, schema_name T, path T, path_is_relative B"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.Schemas {
					rows = append(rows, []any{uint64(s.ID), s.UUID.String(), uint64(s.Begin), end(s.Versioned), s.Name, s.Path, s.PathIsRelative})
				}
				return rows
			}},
		{"ducklake_table", "ducklake_table: every version of every table.",
			cols("table_id U, table_uuid T, begin_snapshot U, end_snapshot U, schema_id U, table_name T, path T, path_is_relative B"),
			func(d *core.Dump) (rows [][]any) {
				for _, t := range d.Tables {
					rows = append(rows, []any{uint64(t.ID), t.UUID.String(), uint64(t.Begin), end(t.Versioned), uint64(t.SchemaID), t.Name, t.Path, t.PathIsRelative})
				}
				return rows
			}},
		{"ducklake_view", "ducklake_view: every version of every view.",
			cols("view_id U, view_uuid T, begin_snapshot U, end_snapshot U, schema_id U, view_name T, dialect T, sql T, column_aliases T"),
			func(d *core.Dump) (rows [][]any) {
				for _, v := range d.Views {
					rows = append(rows, []any{uint64(v.ID), v.UUID.String(), uint64(v.Begin), end(v.Versioned), uint64(v.SchemaID), v.Name, v.Dialect, v.SQL, v.ColumnAliases})
				}
				return rows
			}},
		{"ducklake_column", "ducklake_column: every version of every column (nested children have parent_column).",
			cols("column_id U, begin_snapshot U, end_snapshot U, table_id U, column_order U, column_name T, column_type T, initial_default T, default_value T, nulls_allowed B, parent_column U, default_value_type T, default_value_dialect T"),
			func(d *core.Dump) (rows [][]any) {
				for _, c := range d.Columns {
					rows = append(rows, []any{uint64(c.ID), uint64(c.Begin), end(c.Versioned), uint64(c.TableID), c.Order, c.Name, c.Type,
						optString(c.InitialDefault), optString(c.DefaultValue), c.NullsAllowed, optU64(c.Parent), optString(c.DefaultValueType), optString(c.DefaultValueDialect)})
				}
				return rows
			}},
		{"ducklake_data_file", "ducklake_data_file: every version of every data file.",
			cols("data_file_id U, table_id U, begin_snapshot U, end_snapshot U, file_order U, path T, path_is_relative B, file_format T, record_count U, file_size_bytes U, footer_size U, row_id_start U, partition_id U, encryption_key T, partial_file_info T, mapping_id U"),
			func(d *core.Dump) (rows [][]any) {
				for _, f := range d.DataFiles {
					rows = append(rows, []any{uint64(f.ID), uint64(f.TableID), uint64(f.Begin), end(f.Versioned), optU64(f.FileOrder), f.Path, f.PathIsRelative, f.Format,
						f.RecordCount, f.FileSizeBytes, optU64(f.FooterSize), optU64(f.RowIDStart), optU64(f.PartitionID), optString(f.EncryptionKey), optString(f.PartialFileInfo), optU64(f.MappingID)})
				}
				return rows
			}},
		{"ducklake_delete_file", "ducklake_delete_file: every version of every delete file.",
			cols("delete_file_id U, table_id U, begin_snapshot U, end_snapshot U, data_file_id U, path T, path_is_relative B, format T, delete_count U, file_size_bytes U, footer_size U, encryption_key T"),
			func(d *core.Dump) (rows [][]any) {
				for _, f := range d.DeleteFiles {
					rows = append(rows, []any{uint64(f.ID), uint64(f.TableID), uint64(f.Begin), end(f.Versioned), uint64(f.DataFileID), f.Path, f.PathIsRelative, f.Format,
						f.DeleteCount, f.FileSizeBytes, optU64(f.FooterSize), optString(f.EncryptionKey)})
				}
				return rows
			}},
		{"ducklake_table_stats", "ducklake_table_stats: per-table statistics (current values; not versioned).",
			cols("table_id U, record_count U, next_row_id U, file_size_bytes U"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.TableStats {
					rows = append(rows, []any{uint64(s.TableID), s.RecordCount, s.NextRowID, s.FileSizeBytes})
				}
				return rows
			}},
		{"ducklake_table_column_stats", "ducklake_table_column_stats: per-column statistics (current values; not versioned).",
			cols("table_id U, column_id U, contains_null B, contains_nan B, min_value T, max_value T, extra_stats T"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.TableColumnStats {
					rows = append(rows, []any{uint64(s.TableID), uint64(s.ColumnID), optBool(s.ContainsNull), optBool(s.ContainsNaN), optString(s.MinValue), optString(s.MaxValue), optString(s.ExtraStats)})
				}
				return rows
			}},
		{"ducklake_file_column_stats", "ducklake_file_column_stats: per-file column statistics.",
			cols("data_file_id U, table_id U, column_id U, column_size_bytes U, value_count U, null_count U, min_value T, max_value T, contains_nan B, extra_stats T"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.FileColumnStats {
					rows = append(rows, []any{uint64(s.DataFileID), uint64(s.TableID), uint64(s.ColumnID), optU64(s.ColumnSizeBytes), optU64(s.ValueCount), optU64(s.NullCount),
						optString(s.MinValue), optString(s.MaxValue), optBool(s.ContainsNaN), optString(s.ExtraStats)})
				}
				return rows
			}},
		{"ducklake_schema_versions", "ducklake_schema_versions: the schema version each table's shape changed to, by snapshot.",
			cols("begin_snapshot U, schema_version U, table_id U"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.SchemaVersions {
					rows = append(rows, []any{uint64(s.BeginSnapshot), s.SchemaVersion, uint64(s.TableID)})
				}
				return rows
			}},
		{"ducklake_metadata", "ducklake_metadata: the catalog's options (global, per schema, per table).",
			cols("key T, value T, scope T, scope_id U"),
			func(d *core.Dump) (rows [][]any) {
				for _, o := range d.Options {
					var scope, scopeID any
					if o.Scope != core.ScopeGlobal {
						scope, scopeID = o.Scope.String(), o.ScopeID
					}
					keys := make([]string, 0, len(o.Values))
					for k := range o.Values {
						keys = append(keys, k)
					}
					slices.Sort(keys)
					for _, k := range keys {
						rows = append(rows, []any{k, o.Values[k], scope, scopeID})
					}
				}
				return rows
			}},
		{"ducklake_tag", "ducklake_tag: every version of every tag of a schema, table or view.",
			cols("object_id U, begin_snapshot U, end_snapshot U, key T, value T"),
			func(d *core.Dump) (rows [][]any) {
				for _, t := range d.Tags {
					for _, e := range t.Entries {
						rows = append(rows, []any{t.ObjectID, uint64(e.Begin), end(e.Versioned), e.Key, e.Value})
					}
				}
				return rows
			}},
		{"ducklake_column_tag", "ducklake_column_tag: every version of every column tag.",
			cols("table_id U, column_id U, begin_snapshot U, end_snapshot U, key T, value T"),
			func(d *core.Dump) (rows [][]any) {
				for _, c := range d.Columns {
					for _, e := range c.Tags {
						rows = append(rows, []any{uint64(c.TableID), uint64(c.ID), uint64(e.Begin), end(e.Versioned), e.Key, e.Value})
					}
				}
				return rows
			}},
		{"ducklake_partition_info", "ducklake_partition_info: every version of every table's partitioning.",
			cols("partition_id U, table_id U, begin_snapshot U, end_snapshot U"),
			func(d *core.Dump) (rows [][]any) {
				for _, p := range d.Partitions {
					rows = append(rows, []any{uint64(p.ID), uint64(p.TableID), uint64(p.Begin), end(p.Versioned)})
				}
				return rows
			}},
		{"ducklake_partition_column", "ducklake_partition_column: the columns of each partitioning.",
			cols("partition_id U, table_id U, partition_key_index U, column_id U, transform T"),
			func(d *core.Dump) (rows [][]any) {
				for _, p := range d.Partitions {
					for _, c := range p.Columns {
						rows = append(rows, []any{uint64(p.ID), uint64(p.TableID), c.KeyIndex, uint64(c.ColumnID), c.Transform})
					}
				}
				return rows
			}},
		{"ducklake_file_partition_value", "ducklake_file_partition_value: the partition values of each data file.",
			cols("data_file_id U, table_id U, partition_key_index U, partition_value T"),
			func(d *core.Dump) (rows [][]any) {
				for _, f := range d.DataFiles {
					for _, v := range f.PartitionValues {
						rows = append(rows, []any{uint64(f.ID), uint64(f.TableID), v.KeyIndex, v.Value})
					}
				}
				return rows
			}},
		{"ducklake_sort_info", "ducklake_sort_info: every version of every table's sort order.",
			cols("sort_id U, table_id U, begin_snapshot U, end_snapshot U"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.Sorts {
					rows = append(rows, []any{uint64(s.ID), uint64(s.TableID), uint64(s.Begin), end(s.Versioned)})
				}
				return rows
			}},
		{"ducklake_sort_expression", "ducklake_sort_expression: the expressions of each sort order.",
			cols("sort_id U, table_id U, sort_key_index U, expression T, dialect T, sort_direction T, null_order T"),
			func(d *core.Dump) (rows [][]any) {
				for _, s := range d.Sorts {
					for _, e := range s.Expressions {
						rows = append(rows, []any{uint64(s.ID), uint64(s.TableID), e.Index, e.Expression, e.Dialect, e.Direction, e.NullOrder})
					}
				}
				return rows
			}},
		{"ducklake_column_mapping", "ducklake_column_mapping: column mappings of imported files.",
			cols("mapping_id U, table_id U, type T"),
			func(d *core.Dump) (rows [][]any) {
				for _, m := range d.Mappings {
					rows = append(rows, []any{uint64(m.ID), uint64(m.TableID), m.Type})
				}
				return rows
			}},
		{"ducklake_name_mapping", "ducklake_name_mapping: the names of each column mapping.",
			cols("mapping_id U, column_id U, source_name T, target_field_id U, parent_column U, is_partition B"),
			func(d *core.Dump) (rows [][]any) {
				for _, m := range d.Mappings {
					for _, n := range m.Names {
						rows = append(rows, []any{uint64(m.ID), uint64(n.ColumnID), n.SourceName, n.TargetFieldID, optU64(n.ParentColumn), n.IsPartition})
					}
				}
				return rows
			}},
		{"ducklake_files_scheduled_for_deletion", "ducklake_files_scheduled_for_deletion: files waiting for cleanup.",
			cols("data_file_id U, path T, path_is_relative B, schedule_start TS"),
			func(d *core.Dump) (rows [][]any) {
				for _, g := range d.GcFiles {
					rows = append(rows, []any{uint64(g.DataFileID), g.Path, g.PathIsRelative, g.ScheduleStart})
				}
				return rows
			}},
		{"ducklake_inlined_data_tables", "ducklake_inlined_data_tables: the tables holding inlined rows, one per table and schema version.",
			cols("table_id U, table_name T, schema_version U"),
			func(d *core.Dump) (rows [][]any) {
				for _, g := range d.Inlined {
					rows = append(rows, []any{uint64(g.TableID), ducklake.InlinedTableName(uint64(g.TableID), g.SchemaVersion), g.SchemaVersion})
				}
				return rows
			}},
	}
	var out []*Function
	for _, m := range tables {
		out = append(out, m.function())
	}
	out = append(out, inlinedDataFunction())
	return out
}
