package ducklake

import (
	"cmp"
	"slices"

	"github.com/moraine-go/moraine/core"
)

// The rows of each metadata table, from a dump, one []any per row in the
// table's column order (cells as View.Rows documents). Ids are BIGINT in
// DuckLake's tables: the catalog's uint64 ids are shown as int64.

func i64[T ~uint64](v T) any { return int64(v) }

func optI64[T ~uint64](v *T) any {
	if v == nil {
		return nil
	}
	return int64(*v)
}

func optStr(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

func optBool(v *bool) any {
	if v == nil {
		return nil
	}
	return *v
}

func end(v core.Versioned) any { return optI64(v.End) }

// createdByDuckLake reports whether DuckLake created the lake (its first
// ATTACH records the catalog version); what rows.go adds for lakes the Go
// API wrote is then left out: the rows are DuckLake's, served as given.
func createdByDuckLake(d *core.Dump) bool { return recordedVersion(d) != "" }

// metadataRows builds each metadata table's rows, in the table's fields
// order (spec.go: 0.3's columns, then 1.0's additions), for the spec the
// lake is served as.
var metadataRows = map[string]func(d *core.Dump, s *Spec) [][]any{
	"ducklake_metadata": func(d *core.Dump, s *Spec) (rows [][]any) {
		if !createdByDuckLake(d) {
			rows = append(rows, []any{"version", s.Version, nil, nil})
		}
		for _, o := range d.Options {
			var scope, scopeID any
			if o.Scope != core.ScopeGlobal {
				scope, scopeID = o.Scope.String(), int64(o.ScopeID)
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
	},
	"ducklake_snapshot": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.Snapshots {
			rows = append(rows, []any{i64(s.ID), s.Time, int64(s.SchemaVersion), int64(s.NextCatalogID), int64(s.NextFileID)})
		}
		return rows
	},
	"ducklake_snapshot_changes": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.Snapshots {
			rows = append(rows, []any{i64(s.ID), s.ChangesMade, optStr(s.Author), optStr(s.CommitMessage), optStr(s.CommitExtraInfo)})
		}
		return rows
	},
	"ducklake_schema": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.Schemas {
			rows = append(rows, []any{i64(s.ID), s.UUID.String(), i64(s.Begin), end(s.Versioned), s.Name, s.Path, s.PathIsRelative})
		}
		return rows
	},
	"ducklake_table": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, t := range d.Tables {
			rows = append(rows, []any{i64(t.ID), t.UUID.String(), i64(t.Begin), end(t.Versioned), i64(t.SchemaID), t.Name, t.Path, t.PathIsRelative})
		}
		return rows
	},
	"ducklake_view": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, v := range d.Views {
			rows = append(rows, []any{i64(v.ID), v.UUID.String(), i64(v.Begin), end(v.Versioned), i64(v.SchemaID), v.Name, v.Dialect, v.SQL, v.ColumnAliases})
		}
		return rows
	},
	"ducklake_tag": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, t := range d.Tags {
			for _, e := range t.Entries {
				rows = append(rows, []any{int64(t.ObjectID), i64(e.Begin), end(e.Versioned), e.Key, e.Value})
			}
		}
		return rows
	},
	"ducklake_column_tag": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, c := range d.Columns {
			for _, e := range c.Tags {
				rows = append(rows, []any{i64(c.TableID), i64(c.ID), i64(e.Begin), end(e.Versioned), e.Key, e.Value})
			}
		}
		return rows
	},
	"ducklake_data_file": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, f := range d.DataFiles {
			rows = append(rows, []any{i64(f.ID), i64(f.TableID), i64(f.Begin), end(f.Versioned), optI64(f.FileOrder), f.Path, f.PathIsRelative, f.Format,
				int64(f.RecordCount), int64(f.FileSizeBytes), optI64(f.FooterSize), optI64(f.RowIDStart), optI64(f.PartitionID), optStr(f.EncryptionKey),
				optStr(f.PartialFileInfo), optI64(f.MappingID), optI64(f.PartialMax)})
		}
		return rows
	},
	"ducklake_file_column_stats": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.FileColumnStats {
			rows = append(rows, []any{i64(s.DataFileID), i64(s.TableID), i64(s.ColumnID), optI64(s.ColumnSizeBytes), optI64(s.ValueCount), optI64(s.NullCount),
				optStr(s.MinValue), optStr(s.MaxValue), optBool(s.ContainsNaN), optStr(s.ExtraStats)})
		}
		return rows
	},
	"ducklake_delete_file": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, f := range d.DeleteFiles {
			rows = append(rows, []any{i64(f.ID), i64(f.TableID), i64(f.Begin), end(f.Versioned), i64(f.DataFileID), f.Path, f.PathIsRelative, f.Format,
				int64(f.DeleteCount), int64(f.FileSizeBytes), optI64(f.FooterSize), optStr(f.EncryptionKey), optI64(f.PartialMax)})
		}
		return rows
	},
	"ducklake_column": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, c := range d.Columns {
			rows = append(rows, []any{i64(c.ID), i64(c.Begin), end(c.Versioned), i64(c.TableID), int64(c.Order), c.Name, c.Type,
				optStr(c.InitialDefault), optStr(c.DefaultValue), c.NullsAllowed, optI64(c.Parent), optStr(c.DefaultValueType), optStr(c.DefaultValueDialect)})
		}
		return rows
	},
	"ducklake_table_stats": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.TableStats {
			rows = append(rows, []any{i64(s.TableID), int64(s.RecordCount), int64(s.NextRowID), int64(s.FileSizeBytes)})
		}
		return rows
	},
	// DuckLake writes column statistics for every column of a table whose
	// table statistics it writes, and reads them with a LEFT JOIN that it
	// takes to always match. A lake written by the Go API may hold table
	// statistics alone: the live columns of a table without any column
	// statistics are served with unknown (NULL) ones, which is what they are.
	"ducklake_table_column_stats": func(d *core.Dump, _ *Spec) (rows [][]any) {
		type key struct{ table, column uint64 }
		have := map[key]bool{}
		for _, s := range d.TableColumnStats {
			have[key{uint64(s.TableID), uint64(s.ColumnID)}] = true
			rows = append(rows, []any{i64(s.TableID), i64(s.ColumnID), optBool(s.ContainsNull), optBool(s.ContainsNaN), optStr(s.MinValue), optStr(s.MaxValue), optStr(s.ExtraStats)})
		}
		if createdByDuckLake(d) {
			return rows // as DuckLake wrote them
		}
		withStats := map[uint64]bool{}
		for _, s := range d.TableStats {
			withStats[uint64(s.TableID)] = true
		}
		for k := range have {
			delete(withStats, k.table) // DuckLake wrote this table's column statistics
		}
		for _, c := range d.Columns {
			k := key{uint64(c.TableID), uint64(c.ID)}
			if c.Live() && withStats[k.table] && !have[k] {
				have[k] = true
				rows = append(rows, []any{i64(c.TableID), i64(c.ID), nil, nil, nil, nil, nil})
			}
		}
		return rows
	},
	"ducklake_partition_info": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, p := range d.Partitions {
			rows = append(rows, []any{i64(p.ID), i64(p.TableID), i64(p.Begin), end(p.Versioned)})
		}
		return rows
	},
	"ducklake_partition_column": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, p := range d.Partitions {
			for _, c := range p.Columns {
				rows = append(rows, []any{i64(p.ID), i64(p.TableID), int64(c.KeyIndex), i64(c.ColumnID), c.Transform})
			}
		}
		return rows
	},
	"ducklake_file_partition_value": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, f := range d.DataFiles {
			for _, v := range f.PartitionValues {
				rows = append(rows, []any{i64(f.ID), i64(f.TableID), int64(v.KeyIndex), v.Value})
			}
		}
		return rows
	},
	"ducklake_files_scheduled_for_deletion": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, g := range d.GcFiles {
			rows = append(rows, []any{i64(g.DataFileID), g.Path, g.PathIsRelative, g.ScheduleStart})
		}
		return rows
	},
	// DuckLake's own rows where it wrote them; for a lake the Go API wrote,
	// one per table and schema version holding inlined rows.
	"ducklake_inlined_data_tables": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, it := range d.InlinedTables {
			if it.Listed {
				rows = append(rows, []any{i64(it.TableID), it.Name, int64(it.SchemaVersion)})
			}
		}
		for _, g := range undeclaredInlined(d) {
			rows = append(rows, []any{i64(g.TableID), InlinedTableName(uint64(g.TableID), g.SchemaVersion), int64(g.SchemaVersion)})
		}
		return rows
	},
	"ducklake_column_mapping": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, m := range d.Mappings {
			rows = append(rows, []any{i64(m.ID), i64(m.TableID), m.Type})
		}
		return rows
	},
	"ducklake_name_mapping": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, m := range d.Mappings {
			for _, n := range m.Names {
				rows = append(rows, []any{i64(m.ID), i64(n.ColumnID), n.SourceName, int64(n.TargetFieldID), optI64(n.ParentColumn), n.IsPartition})
			}
		}
		return rows
	},
	// DuckLake 0.3 records (begin_snapshot, schema_version) whenever a
	// commit changes the schema version, genesis included; 1.0 records
	// (begin_snapshot, schema_version, table_id) per table whose shape
	// changed. The catalog keeps them per table (table 0: a row DuckLake
	// 0.3 wrote, which names none); for 0.3, snapshots give the rest (a
	// drop, say).
	"ducklake_schema_versions": func(d *core.Dump, spec *Spec) (rows [][]any) {
		table := func(id core.TableID) any {
			if id == 0 {
				return nil
			}
			return i64(id)
		}
		if spec != spec03 {
			for _, s := range d.SchemaVersions {
				rows = append(rows, []any{i64(s.BeginSnapshot), int64(s.SchemaVersion), table(s.TableID)})
			}
			return rows
		}
		// Rows DuckLake 0.3 wrote (stored without a table) are served as
		// they are.
		for _, s := range d.SchemaVersions {
			if s.TableID == 0 {
				rows = append(rows, []any{i64(s.BeginSnapshot), int64(s.SchemaVersion), nil})
			}
		}
		if len(rows) > 0 {
			return rows
		}
		type pair struct{ begin, version uint64 }
		seen := map[pair]bool{}
		var pairs []pair
		add := func(p pair) {
			if !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
		for _, s := range d.SchemaVersions {
			add(pair{uint64(s.BeginSnapshot), s.SchemaVersion})
		}
		// Only where the change is certain: genesis, and a version that
		// differs from the snapshot just before (an expired snapshot in
		// between hides where the change happened).
		for i, s := range d.Snapshots {
			if s.ID == 0 || i > 0 && d.Snapshots[i-1].ID+1 == s.ID && s.SchemaVersion != d.Snapshots[i-1].SchemaVersion {
				add(pair{uint64(s.ID), s.SchemaVersion})
			}
		}
		slices.SortFunc(pairs, func(a, b pair) int {
			return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.version, b.version))
		})
		for _, p := range pairs {
			rows = append(rows, []any{int64(p.begin), int64(p.version), nil})
		}
		return rows
	},
	"ducklake_macro": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, m := range d.Macros {
			rows = append(rows, []any{i64(m.SchemaID), i64(m.ID), m.Name, i64(m.Begin), end(m.Versioned)})
		}
		return rows
	},
	// A macro's implementations and parameters are one with its versions:
	// served once per macro id (its latest version's).
	"ducklake_macro_impl": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, m := range latestMacros(d) {
			for _, im := range m.Impls {
				rows = append(rows, []any{i64(m.ID), int64(im.ID), im.Dialect, im.SQL, im.Type})
			}
		}
		return rows
	},
	"ducklake_macro_parameters": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, m := range latestMacros(d) {
			for _, im := range m.Impls {
				for _, p := range im.Parameters {
					rows = append(rows, []any{i64(m.ID), int64(im.ID), int64(p.ColumnID), p.Name, p.Type, optStr(p.DefaultValue), optStr(p.DefaultValueType)})
				}
			}
		}
		return rows
	},
	"ducklake_sort_info": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.Sorts {
			rows = append(rows, []any{i64(s.ID), i64(s.TableID), i64(s.Begin), end(s.Versioned)})
		}
		return rows
	},
	"ducklake_sort_expression": func(d *core.Dump, _ *Spec) (rows [][]any) {
		seen := map[core.SortID]bool{}
		for _, s := range d.Sorts {
			if seen[s.ID] {
				continue // one sort's expressions, once
			}
			seen[s.ID] = true
			for _, e := range s.Expressions {
				rows = append(rows, []any{i64(s.ID), i64(s.TableID), int64(e.Index), e.Expression, e.Dialect, e.Direction, e.NullOrder})
			}
		}
		return rows
	},
	"ducklake_file_variant_stats": func(d *core.Dump, _ *Spec) (rows [][]any) {
		for _, s := range d.FileVariantStats {
			for _, p := range s.Paths {
				rows = append(rows, []any{i64(s.DataFileID), i64(s.TableID), i64(s.ColumnID), p.VariantPath, optStr(p.ShreddedType),
					optI64(p.ColumnSizeBytes), optI64(p.ValueCount), optI64(p.NullCount), optStr(p.MinValue), optStr(p.MaxValue),
					optBool(p.ContainsNaN), optStr(p.ExtraStats)})
			}
		}
		return rows
	},
}

// latestMacros lists each macro id once, as its latest version.
func latestMacros(d *core.Dump) []core.Macro {
	var out []core.Macro
	for _, m := range d.Macros { // by id, then begin
		if n := len(out); n > 0 && out[n-1].ID == m.ID {
			out[n-1] = m
			continue
		}
		out = append(out, m)
	}
	return out
}
