package ducklake

// spec.go: DuckLake's catalog specifications (0.3, which DuckDB 1.4
// ships, and 1.0, which DuckDB 1.5 ships): which metadata tables each has,
// with which columns, and how a table's rows are cut from the rows the
// builders of rows.go make.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// Spec is one DuckLake catalog specification: its version (the value of
// ducklake_metadata's version row) and its metadata tables, each exactly
// as DuckLake creates it.
type Spec struct {
	Version string
	tables  []*Table
	byName  map[string]*Table
}

// Tables returns the spec's metadata tables in the order DuckLake creates
// them. The result is shared: do not modify it.
func (s *Spec) Tables() []*Table { return s.tables }

// Table returns the spec's metadata table of that name (case-insensitive,
// as DuckDB resolves names), or nil.
func (s *Spec) Table(name string) *Table {
	if t := s.byName[strings.ToLower(name)]; t != nil && strings.EqualFold(t.Name, name) {
		return t
	}
	// Not found by its lower case: decide by case folding, as DuckDB does
	// (the two differ on a few non-ASCII letters, such as U+017F for s).
	for _, t := range s.tables {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// The tables of DuckLake 1.0 (DuckDB v1.5.5's DuckLake, d8a1881e), in the
// order its first ATTACH creates them (docs/ducklake-sql/contract-1.0.txt).
var tables10 = []*Table{
	spec("ducklake_metadata", "key V NN, value V NN, scope V, scope_id B"),
	spec("ducklake_snapshot", "snapshot_id B PK, snapshot_time TSTZ, schema_version B, next_catalog_id B, next_file_id B"),
	spec("ducklake_snapshot_changes", "snapshot_id B PK, changes_made V, author V, commit_message V, commit_extra_info V"),
	spec("ducklake_schema", "schema_id B PK, schema_uuid UUID, begin_snapshot B, end_snapshot B, schema_name V, path V, path_is_relative BOOL"),
	spec("ducklake_table", "table_id B, table_uuid UUID, begin_snapshot B, end_snapshot B, schema_id B, table_name V, path V, path_is_relative BOOL"),
	spec("ducklake_view", "view_id B, view_uuid UUID, begin_snapshot B, end_snapshot B, schema_id B, view_name V, dialect V, sql V, column_aliases V"),
	spec("ducklake_tag", "object_id B, begin_snapshot B, end_snapshot B, key V, value V"),
	spec("ducklake_column_tag", "table_id B, column_id B, begin_snapshot B, end_snapshot B, key V, value V"),
	spec("ducklake_data_file", "data_file_id B PK, table_id B, begin_snapshot B, end_snapshot B, file_order B, path V, path_is_relative BOOL, file_format V, record_count B, file_size_bytes B, footer_size B, row_id_start B, partition_id B, encryption_key V, mapping_id B, partial_max B"),
	spec("ducklake_file_column_stats", "data_file_id B, table_id B, column_id B, column_size_bytes B, value_count B, null_count B, min_value V, max_value V, contains_nan BOOL, extra_stats V"),
	spec("ducklake_file_variant_stats", "data_file_id B, table_id B, column_id B, variant_path V, shredded_type V, column_size_bytes B, value_count B, null_count B, min_value V, max_value V, contains_nan BOOL, extra_stats V"),
	spec("ducklake_delete_file", "delete_file_id B PK, table_id B, begin_snapshot B, end_snapshot B, data_file_id B, path V, path_is_relative BOOL, format V, delete_count B, file_size_bytes B, footer_size B, encryption_key V, partial_max B"),
	spec("ducklake_column", "column_id B, begin_snapshot B, end_snapshot B, table_id B, column_order B, column_name V, column_type V, initial_default V, default_value V, nulls_allowed BOOL, parent_column B, default_value_type V, default_value_dialect V"),
	spec("ducklake_table_stats", "table_id B, record_count B, next_row_id B, file_size_bytes B"),
	spec("ducklake_table_column_stats", "table_id B, column_id B, contains_null BOOL, contains_nan BOOL, min_value V, max_value V, extra_stats V"),
	spec("ducklake_partition_info", "partition_id B, table_id B, begin_snapshot B, end_snapshot B"),
	spec("ducklake_partition_column", "partition_id B, table_id B, partition_key_index B, column_id B, transform V"),
	spec("ducklake_file_partition_value", "data_file_id B, table_id B, partition_key_index B, partition_value V"),
	spec("ducklake_files_scheduled_for_deletion", "data_file_id B, path V, path_is_relative BOOL, schedule_start TSTZ"),
	spec("ducklake_inlined_data_tables", "table_id B, table_name V, schema_version B"),
	spec("ducklake_column_mapping", "mapping_id B, table_id B, type V"),
	spec("ducklake_name_mapping", "mapping_id B, column_id B, source_name V, target_field_id B, parent_column B, is_partition BOOL"),
	spec("ducklake_schema_versions", "begin_snapshot B, schema_version B, table_id B"),
	spec("ducklake_macro", "schema_id B, macro_id B, macro_name V, begin_snapshot B, end_snapshot B"),
	spec("ducklake_macro_impl", "macro_id B, impl_id B, dialect V, sql V, type V"),
	spec("ducklake_macro_parameters", "macro_id B, impl_id B, column_id B, parameter_name V, parameter_type V, default_value V, default_value_type V"),
	spec("ducklake_sort_info", "sort_id B, table_id B, begin_snapshot B, end_snapshot B"),
	spec("ducklake_sort_expression", "sort_id B, table_id B, sort_key_index B, expression V, dialect V, sort_direction V, null_order V"),
}

// fields are, per metadata table name, its columns over every spec: 0.3's
// in 0.3's order, then what 1.0 adds in 1.0's order. A rows builder
// (rows.go) makes rows in this order; a spec's table takes its columns
// from them (Table.fields).
var fields = func() map[string][]string {
	out := map[string][]string{}
	for _, set := range [][]*Table{metadataTables, tables10} {
		for _, t := range set {
			for _, c := range t.Columns {
				if !slices.Contains(out[t.Name], c.Name) {
					out[t.Name] = append(out[t.Name], c.Name)
				}
			}
		}
	}
	return out
}()

func newSpec(version string, tables []*Table) *Spec {
	s := &Spec{Version: version, tables: tables, byName: map[string]*Table{}}
	for _, t := range tables {
		all := fields[t.Name]
		t.fields = make([]int, len(t.Columns))
		for i, c := range t.Columns {
			t.fields[i] = slices.Index(all, c.Name)
		}
		t.spec = s
		s.byName[strings.ToLower(t.Name)] = t
	}
	return s
}

var (
	spec03 = newSpec("0.3", metadataTables)
	spec10 = newSpec("1.0", tables10)
	specs  = []*Spec{spec03, spec10}
)

// extraTables names, for messages, the tables a lake of the spec holds
// besides its metadata tables.
func (s *Spec) extraTables() string {
	if s == spec03 {
		return "and ducklake_inlined_data_<table id>_<schema version>"
	}
	return "ducklake_inlined_data_<table id>_<schema version> and ducklake_inlined_delete_<table id>"
}

// Spec03 is DuckLake 0.3's specification (DuckDB 1.4's DuckLake).
func Spec03() *Spec { return spec03 }

// Spec10 is DuckLake 1.0's specification (DuckDB 1.5's DuckLake).
func Spec10() *Spec { return spec10 }

// SpecOf returns the specification of a catalog version, or an error
// naming the versions moraine serves.
func SpecOf(version string) (*Spec, error) {
	for _, s := range specs {
		if s.Version == version {
			return s, nil
		}
	}
	var served []string
	for _, s := range specs {
		served = append(served, s.Version)
	}
	return nil, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("the lake's DuckLake catalog version is %q; moraine serves versions %s", version, strings.Join(served, " and "))}
}

// recordedVersion is the DuckLake catalog version a lake records in its
// ducklake_metadata (its global version option), "" for none (a lake the
// Go API wrote).
func recordedVersion(d *core.Dump) string {
	for _, o := range d.Options {
		if o.Scope == core.ScopeGlobal {
			if v, ok := o.Values["version"]; ok {
				return v
			}
		}
	}
	return ""
}

// project cuts a table's rows out of rows in fields order.
func project(rows [][]any, t *Table) [][]any {
	identity := len(t.fields) == len(fields[t.Name])
	for i, f := range t.fields {
		identity = identity && f == i
	}
	if identity {
		return rows
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		p := make([]any, len(t.fields))
		for j, f := range t.fields {
			p[j] = r[f]
		}
		out[i] = p
	}
	return out
}
