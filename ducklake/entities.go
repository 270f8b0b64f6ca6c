package ducklake

// entities.go reads DuckLake's rows back into the catalog model: the
// inverse of rows.go, one function per entity, from the rows of the tables
// the entity spans. Every value is checked against its column (a cell of
// the wrong type, a negative id) and a bad row is refused naming its table
// and column.

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
)

// row reads the cells of one row of a metadata table by column name.
type row struct {
	t     *Table
	cells []any
	err   *error // the first error of this row, set once
}

func rowOf(t *Table, cells []any, err *error) row { return row{t: t, cells: cells, err: err} }

func (r row) fail(col, format string, args ...any) {
	if *r.err == nil {
		*r.err = &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%s.%s: %s", r.t.Name, col, fmt.Sprintf(format, args...))}
	}
}

func (r row) cell(col string) any {
	i := r.t.ColumnIndex(col)
	if i < 0 || i >= len(r.cells) {
		r.fail(col, "no such column")
		return nil
	}
	return r.cells[i]
}

// optU is a BIGINT id or counter column, nil for NULL.
func (r row) optU(col string) *uint64 {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case int64:
		if v < 0 {
			r.fail(col, "%d is negative", v)
			return nil
		}
		u := uint64(v)
		return &u
	case uint64:
		return &v
	default:
		r.fail(col, "a %T where a BIGINT belongs", v)
		return nil
	}
}

func (r row) u(col string) uint64 {
	if p := r.optU(col); p != nil {
		return *p
	}
	if r.cell(col) == nil {
		r.fail(col, "is NULL")
	}
	return 0
}

func (r row) optS(col string) *string {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		r.fail(col, "a %T where a VARCHAR belongs", v)
		return nil
	}
}

func (r row) s(col string) string {
	if p := r.optS(col); p != nil {
		return *p
	}
	return ""
}

func (r row) optB(col string) *bool {
	switch v := r.cell(col).(type) {
	case nil:
		return nil
	case bool:
		return &v
	default:
		r.fail(col, "a %T where a BOOLEAN belongs", v)
		return nil
	}
}

func (r row) b(col string) bool {
	if p := r.optB(col); p != nil {
		return *p
	}
	return false
}

func (r row) time(col string) time.Time {
	switch v := r.cell(col).(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return v.UTC()
	default:
		r.fail(col, "a %T where a TIMESTAMP WITH TIME ZONE belongs", v)
		return time.Time{}
	}
}

func (r row) uuid(col string) uuid.UUID {
	s := r.optS(col)
	if s == nil {
		return uuid.Nil
	}
	u, err := uuid.Parse(*s)
	if err != nil {
		r.fail(col, "%q is not a UUID", *s)
	}
	return u
}

// versioned reads begin_snapshot and end_snapshot.
func (r row) versioned() core.Versioned {
	v := core.Versioned{Begin: core.SnapshotID(r.u("begin_snapshot"))}
	if e := r.optU("end_snapshot"); e != nil {
		id := core.SnapshotID(*e)
		v.End = &id
	}
	return v
}

// optional reads a column only one of the specs has (spec.go): NULL when
// the row's table is of a spec without it.
func optional[T any](r row, col string, get func(string) *T) *T {
	if r.t.ColumnIndex(col) < 0 {
		return nil
	}
	return get(col)
}

func optID[T ~uint64](p *uint64) *T {
	if p == nil {
		return nil
	}
	v := T(*p)
	return &v
}

// The entities, each from its rows.

func snapshotOf(snap, changes row) core.Snapshot {
	s := core.Snapshot{ID: core.SnapshotID(snap.u("snapshot_id")), Time: snap.time("snapshot_time"),
		SchemaVersion: snap.u("schema_version"), NextCatalogID: snap.u("next_catalog_id"), NextFileID: snap.u("next_file_id")}
	if changes.cells != nil {
		s.ChangesMade = changes.s("changes_made")
		s.Author, s.CommitMessage, s.CommitExtraInfo = changes.optS("author"), changes.optS("commit_message"), changes.optS("commit_extra_info")
	}
	return s
}

func schemaOf(r row) core.Schema {
	return core.Schema{ID: core.SchemaID(r.u("schema_id")), Versioned: r.versioned(), UUID: r.uuid("schema_uuid"),
		Name: r.s("schema_name"), Path: r.s("path"), PathIsRelative: r.b("path_is_relative")}
}

func tableOf(r row) core.Table {
	return core.Table{ID: core.TableID(r.u("table_id")), Versioned: r.versioned(), UUID: r.uuid("table_uuid"),
		SchemaID: core.SchemaID(r.u("schema_id")), Name: r.s("table_name"), Path: r.s("path"), PathIsRelative: r.b("path_is_relative")}
}

func viewOf(r row) core.View {
	return core.View{ID: core.ViewID(r.u("view_id")), Versioned: r.versioned(), UUID: r.uuid("view_uuid"),
		SchemaID: core.SchemaID(r.u("schema_id")), Name: r.s("view_name"), Dialect: r.s("dialect"), SQL: r.s("sql"), ColumnAliases: r.s("column_aliases")}
}

func columnOf(r row) core.Column {
	return core.Column{TableID: core.TableID(r.u("table_id")), ID: core.ColumnID(r.u("column_id")), Versioned: r.versioned(),
		Order: r.u("column_order"), Name: r.s("column_name"), Type: r.s("column_type"), InitialDefault: r.optS("initial_default"),
		DefaultValue: r.optS("default_value"), NullsAllowed: r.b("nulls_allowed"), Parent: optID[core.ColumnID](r.optU("parent_column")),
		DefaultValueType: optional(r, "default_value_type", r.optS), DefaultValueDialect: optional(r, "default_value_dialect", r.optS)}
}

func tagOf(r row) core.TagEntry {
	return core.TagEntry{Versioned: r.versioned(), Key: r.s("key"), Value: r.s("value")}
}

func dataFileOf(r row) core.DataFile {
	return core.DataFile{TableID: core.TableID(r.u("table_id")), ID: core.DataFileID(r.u("data_file_id")), Versioned: r.versioned(),
		FileOrder: r.optU("file_order"), Path: r.s("path"), PathIsRelative: r.b("path_is_relative"), Format: r.s("file_format"),
		RecordCount: r.u("record_count"), FileSizeBytes: r.u("file_size_bytes"), FooterSize: r.optU("footer_size"), RowIDStart: r.optU("row_id_start"),
		PartitionID: optID[core.PartitionID](r.optU("partition_id")), EncryptionKey: r.optS("encryption_key"),
		PartialFileInfo: optional(r, "partial_file_info", r.optS), PartialMax: optional(r, "partial_max", r.optU),
		MappingID: optID[core.MappingID](r.optU("mapping_id"))}
}

func partitionValueOf(r row) core.PartitionValue {
	return core.PartitionValue{KeyIndex: r.u("partition_key_index"), Value: r.s("partition_value")}
}

func deleteFileOf(r row) core.DeleteFile {
	return core.DeleteFile{TableID: core.TableID(r.u("table_id")), ID: core.DeleteFileID(r.u("delete_file_id")), Versioned: r.versioned(),
		DataFileID: core.DataFileID(r.u("data_file_id")), Path: r.s("path"), PathIsRelative: r.b("path_is_relative"), Format: r.s("format"),
		DeleteCount: r.u("delete_count"), FileSizeBytes: r.u("file_size_bytes"), FooterSize: r.optU("footer_size"), EncryptionKey: r.optS("encryption_key"),
		PartialMax: optional(r, "partial_max", r.optU)}
}

func fileColumnStatsOf(r row) core.FileColumnStats {
	return core.FileColumnStats{DataFileID: core.DataFileID(r.u("data_file_id")), TableID: core.TableID(r.u("table_id")), ColumnID: core.ColumnID(r.u("column_id")),
		ColumnSizeBytes: r.optU("column_size_bytes"), ValueCount: r.optU("value_count"), NullCount: r.optU("null_count"),
		MinValue: r.optS("min_value"), MaxValue: r.optS("max_value"), ContainsNaN: r.optB("contains_nan"), ExtraStats: r.optS("extra_stats")}
}

func tableStatsOf(r row) core.TableStats {
	return core.TableStats{TableID: core.TableID(r.u("table_id")), RecordCount: r.u("record_count"), NextRowID: r.u("next_row_id"), FileSizeBytes: r.u("file_size_bytes")}
}

func tableColumnStatsOf(r row) core.TableColumnStats {
	return core.TableColumnStats{TableID: core.TableID(r.u("table_id")), ColumnID: core.ColumnID(r.u("column_id")), ContainsNull: r.optB("contains_null"),
		ContainsNaN: r.optB("contains_nan"), MinValue: r.optS("min_value"), MaxValue: r.optS("max_value"), ExtraStats: r.optS("extra_stats")}
}

func partitionOf(info row, cols []row) core.Partition {
	p := core.Partition{TableID: core.TableID(info.u("table_id")), ID: core.PartitionID(info.u("partition_id")), Versioned: info.versioned()}
	for _, c := range cols {
		p.Columns = append(p.Columns, core.PartitionColumn{KeyIndex: c.u("partition_key_index"), ColumnID: core.ColumnID(c.u("column_id")), Transform: c.s("transform")})
	}
	return p
}

func gcFileOf(r row) core.GcFile {
	return core.GcFile{DataFileID: core.DataFileID(r.u("data_file_id")), Path: r.s("path"), PathIsRelative: r.b("path_is_relative"), ScheduleStart: r.time("schedule_start")}
}

func mappingOf(m row, names []row) core.Mapping {
	out := core.Mapping{TableID: core.TableID(m.u("table_id")), ID: core.MappingID(m.u("mapping_id")), Type: m.s("type")}
	for _, n := range names {
		out.Names = append(out.Names, core.NameMapping{ColumnID: core.ColumnID(n.u("column_id")), SourceName: n.s("source_name"),
			TargetFieldID: n.u("target_field_id"), ParentColumn: optID[core.ColumnID](n.optU("parent_column")), IsPartition: n.b("is_partition")})
	}
	return out
}

// scopeOf reads ducklake_metadata's scope columns.
func scopeOf(r row) (core.OptionScope, uint64) {
	s := r.optS("scope")
	if s == nil {
		if id := r.optU("scope_id"); id != nil && *id != 0 {
			r.fail("scope_id", "%d with a NULL scope", *id)
		}
		return core.ScopeGlobal, 0
	}
	var scope core.OptionScope
	switch *s {
	case "schema":
		scope = core.ScopeSchema
	case "table":
		scope = core.ScopeTable
	default:
		r.fail("scope", "%q is not a scope DuckLake writes (NULL, 'schema' or 'table')", *s)
	}
	return scope, r.u("scope_id")
}

// valueOf is an inlined cell as the catalog stores it.
func valueOf(cell any) (core.Value, error) {
	switch v := cell.(type) {
	case nil:
		return core.Value{}, nil
	case int64:
		return core.Value{Int: &v}, nil
	case uint64:
		return core.Value{Uint: &v}, nil
	case float64:
		return core.Value{Float: &v}, nil
	case bool:
		return core.Value{Bool: &v}, nil
	case string:
		return core.Value{String: &v}, nil
	case []byte:
		return core.Value{Bytes: v}, nil
	case Encoded:
		return core.Value{DuckDB: []byte(v)}, nil
	case time.Time:
		// TIMESTAMP WITH TIME ZONE travels as its text; DuckDB casts it back.
		s := v.UTC().Format("2006-01-02 15:04:05.999999-07")
		return core.Value{String: &s}, nil
	}
	return core.Value{}, fmt.Errorf("a %T cell", cell)
}
