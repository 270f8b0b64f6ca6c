package core

// dump.go reads the catalog as DuckLake's metadata tables: every version of
// every row (live ones and the ended ones history keeps), or the rows as a
// DuckLake client would have seen them at one snapshot. The DuckDB
// extension serves its ducklake_* table functions from these dumps.

import (
	"context"
	"sort"

	"github.com/moraine-go/moraine/core/keys"
)

// Dump is the catalog's metadata as DuckLake's tables hold it.
//
// From Catalog.Dump, versioned rows (schemas, tables, views, columns, data
// and delete files, partitions, sorts, tag entries, inlined rows) appear in
// every version: live ones with End nil and ended ones with the snapshot
// that ended them, as DuckLake's own tables keep them.
//
// From Catalog.DumpAt(s), only the versions visible at s appear (Begin <= s
// and End nil or > s), and an End after s is shown as nil: the rows as they
// were when s was the latest snapshot. Snapshots, snapshot changes and
// schema versions stop at s.
//
// Unversioned rows (table and column statistics, file column statistics,
// options, column mappings, files scheduled for deletion) are kept in place,
// never in history: both dumps show their current values, DumpAt only those
// of tables (and data files) visible at s.
type Dump struct {
	// Head is the head stamp the dump was read at.
	Head Head
	// At is the snapshot of a DumpAt, nil for Dump.
	At *SnapshotID

	Snapshots        []Snapshot // by id
	Schemas          []Schema   // by id, then begin snapshot
	Tables           []Table
	Views            []View
	Columns          []Column // by table, column id, begin snapshot
	DataFiles        []DataFile
	DeleteFiles      []DeleteFile
	Partitions       []Partition
	Sorts            []Sort
	Macros           []Macro // by id, then begin snapshot
	TableStats       []TableStats
	TableColumnStats []TableColumnStats
	FileColumnStats  []FileColumnStats
	SchemaVersions   []SchemaVersion // by begin snapshot, then table
	Tags             []Tags          // by object; entries by key, then begin
	Options          []Options       // by scope, then scope id
	Mappings         []Mapping
	GcFiles          []GcFile
	// Inlined groups inlined rows by table and the schema version they were
	// written under (DuckLake's ducklake_inlined_data_<table>_<version>),
	// rows by row id, each with its own Begin and End.
	Inlined []InlinedRows
	// InlinedTables are the inlined-data tables DuckLake created, by table
	// and schema version (empty for lakes the Go API wrote).
	InlinedTables []InlinedTable
	// InlinedDeleteTables are the ducklake_inlined_delete_<table> tables
	// DuckLake 1.0 created, by table; InlinedFileDeletes their rows, by
	// table, data file and row id.
	InlinedDeleteTables []InlinedDeleteTable
	InlinedFileDeletes  []InlinedFileDelete
	// FileVariantStats are DuckLake 1.0's statistics of VARIANT columns,
	// by table, data file and column.
	FileVariantStats []FileVariantStats
}

// Dump reads every version of the catalog's metadata rows at the head, in
// one consistent cut (see Dump).
func (c *Catalog) Dump(ctx context.Context) (*Dump, error) {
	return c.dump(ctx, nil)
}

// DumpAt reads the metadata rows as they stood at snapshot at (time
// travel; see Dump). A snapshot after the head is NotFound.
func (c *Catalog) DumpAt(ctx context.Context, at SnapshotID) (*Dump, error) {
	return c.dump(ctx, &at)
}

func (c *Catalog) dump(ctx context.Context, at *SnapshotID) (*Dump, error) {
	var d *Dump
	err := c.consistentRead(ctx, func(kv kvReader) error {
		var err error
		d, err = readDump(ctx, kv, at)
		return err
	})
	return d, err
}

// dumpFilter decides which versions a dump keeps and how their end reads.
type dumpFilter struct{ at *SnapshotID }

// keep reports whether a version belongs in the dump; it rewrites an end
// after the target to nil.
func (f dumpFilter) keep(v *Versioned) bool {
	if f.at == nil {
		return true
	}
	if !v.VisibleAt(*f.at) {
		return false
	}
	v.End = nil
	return true
}

func readDump(ctx context.Context, kv kvReader, at *SnapshotID) (*Dump, error) {
	head, ok, err := readHead(ctx, kv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(NotFound, "the store holds no moraine catalog (no head record)")
	}
	d := &Dump{Head: head}
	target := head.SnapshotID
	if at != nil {
		if *at > head.SnapshotID {
			return nil, errorf(NotFound, "snapshot %d does not exist (the latest is %d)", *at, head.SnapshotID)
		}
		if _, ok, err := kv.Get(ctx, keys.Snapshot(uint64(*at))); err != nil {
			return nil, storeErr(err, "reading snapshot %d", *at)
		} else if !ok {
			return nil, errorf(SnapshotExpired, "snapshot %d is no longer available", *at)
		}
		a := *at
		d.At = &a
		target = a
	}
	f := dumpFilter{at: at}

	err = scanPrefix(ctx, kv, keys.SubspacePrefix(keys.SubspaceSnapshot), func(k keys.Key, v []byte) error {
		if SnapshotID(k.Comps[0]) > target {
			return nil
		}
		s, err := decodeSnapshot(v)
		if err != nil {
			return err
		}
		d.Snapshots = append(d.Snapshots, *s)
		return nil
	})
	if err != nil {
		return nil, err
	}

	add := func(k keys.Key, value []byte) error {
		switch k.Kind {
		case keys.KindSchema:
			x, err := decodeSchema(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Schemas = append(d.Schemas, *x)
			}
			return err
		case keys.KindTable:
			x, err := decodeTable(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Tables = append(d.Tables, *x)
			}
			return err
		case keys.KindView:
			x, err := decodeView(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Views = append(d.Views, *x)
			}
			return err
		case keys.KindColumn:
			x, err := decodeColumn(value)
			if err == nil && f.keep(&x.Versioned) {
				x.Tags = keepTags(f, x.Tags)
				d.Columns = append(d.Columns, *x)
			}
			return err
		case keys.KindDataFile:
			x, err := decodeDataFile(value)
			if err == nil && f.keep(&x.Versioned) {
				d.DataFiles = append(d.DataFiles, *x)
			}
			return err
		case keys.KindDeleteFile:
			x, err := decodeDeleteFile(value)
			if err == nil && f.keep(&x.Versioned) {
				d.DeleteFiles = append(d.DeleteFiles, *x)
			}
			return err
		case keys.KindPartition:
			x, err := decodePartition(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Partitions = append(d.Partitions, *x)
			}
			return err
		case keys.KindSort:
			x, err := decodeSort(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Sorts = append(d.Sorts, *x)
			}
			return err
		case keys.KindMacro:
			x, err := decodeMacro(value)
			if err == nil && f.keep(&x.Versioned) {
				d.Macros = append(d.Macros, *x)
			}
			return err
		case keys.KindTableStats:
			x, err := decodeTableStats(value)
			if err == nil {
				d.TableStats = append(d.TableStats, *x)
			}
			return err
		case keys.KindTableColumnStats:
			x, err := decodeTableColumnStats(value)
			if err == nil {
				d.TableColumnStats = append(d.TableColumnStats, *x)
			}
			return err
		case keys.KindFileColumnStats:
			x, err := decodeFileColumnStats(value)
			if err == nil {
				d.FileColumnStats = append(d.FileColumnStats, *x)
			}
			return err
		case keys.KindTag:
			x, err := decodeTags(value)
			if err == nil {
				x.Entries = keepTags(f, x.Entries)
				if len(x.Entries) > 0 {
					d.Tags = append(d.Tags, *x)
				}
			}
			return err
		case keys.KindOption:
			x, err := decodeOptions(value)
			if err == nil {
				d.Options = append(d.Options, *x)
			}
			return err
		case keys.KindMapping:
			x, err := decodeMapping(value)
			if err == nil {
				d.Mappings = append(d.Mappings, *x)
			}
			return err
		case keys.KindInlinedTable:
			x, err := decodeInlinedTable(value)
			if err == nil {
				d.InlinedTables = append(d.InlinedTables, *x)
			}
			return err
		case keys.KindFileVariantStats:
			x, err := decodeFileVariantStats(value)
			if err == nil {
				d.FileVariantStats = append(d.FileVariantStats, *x)
			}
			return err
		case keys.KindInlinedDeleteTable:
			x, err := decodeInlinedDeleteTable(value)
			if err == nil {
				d.InlinedDeleteTables = append(d.InlinedDeleteTables, *x)
			}
			return err
		case keys.KindInlinedFileDelete:
			x, err := decodeInlinedFileDelete(value)
			if err == nil && (f.at == nil || x.Begin <= *f.at) {
				d.InlinedFileDeletes = append(d.InlinedFileDeletes, *x)
			}
			return err
		}
		return nil
	}
	if err := scanPrefix(ctx, kv, keys.CurrentEntityPrefix(), add); err != nil {
		return nil, err
	}
	if err := scanPrefix(ctx, kv, keys.SubspacePrefix(keys.SubspaceHistory), add); err != nil {
		return nil, err
	}
	if d.SchemaVersions, err = scanSchemaVersions(ctx, kv, target); err != nil {
		return nil, err
	}
	err = scanPrefix(ctx, kv, keys.GcFilePrefix(), func(k keys.Key, value []byte) error {
		g, err := decodeGcFile(value)
		if err == nil {
			d.GcFiles = append(d.GcFiles, *g)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if d.Inlined, err = dumpInlined(ctx, kv, f); err != nil {
		return nil, err
	}
	if at != nil {
		d.dropUnversionedOfInvisible()
	}
	d.sort()
	return d, nil
}

// keepTags filters tag entries like any versioned row.
func keepTags(f dumpFilter, es []TagEntry) []TagEntry {
	if f.at == nil || len(es) == 0 {
		return es
	}
	var out []TagEntry
	for _, e := range es {
		if f.keep(&e.Versioned) {
			out = append(out, e)
		}
	}
	return out
}

// dropUnversionedOfInvisible removes the statistics and mappings of tables
// and data files not visible at a DumpAt's snapshot.
func (d *Dump) dropUnversionedOfInvisible() {
	tables := map[TableID]bool{}
	for _, t := range d.Tables {
		tables[t.ID] = true
	}
	files := map[DataFileID]bool{}
	for _, f := range d.DataFiles {
		files[f.ID] = true
	}
	d.TableStats = filterRows(d.TableStats, func(s TableStats) bool { return tables[s.TableID] })
	d.TableColumnStats = filterRows(d.TableColumnStats, func(s TableColumnStats) bool { return tables[s.TableID] })
	d.FileColumnStats = filterRows(d.FileColumnStats, func(s FileColumnStats) bool { return files[s.DataFileID] })
	d.Mappings = filterRows(d.Mappings, func(m Mapping) bool { return tables[m.TableID] })
}

func filterRows[T any](rows []T, keep func(T) bool) []T {
	var out []T
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// dumpInlined reads every inlined row with its lifetime: a row begins with
// its chunk and ends at the earlier of its inline delete and the flush that
// archived its chunk.
func dumpInlined(ctx context.Context, kv kvReader, f dumpFilter) ([]InlinedRows, error) {
	type chunk struct {
		table         TableID
		schemaVersion uint64
		begin         SnapshotID
		archivedAt    *SnapshotID
		rows          []InlinedRow
	}
	var chunks []chunk
	addChunk := func(k keys.Key, value []byte, archivedAt *SnapshotID) error {
		rows, err := decodeInlineChunk(value)
		if err != nil {
			return err
		}
		chunks = append(chunks, chunk{table: TableID(k.Comps[0]), schemaVersion: k.Comps[1], begin: SnapshotID(k.Comps[2]), archivedAt: archivedAt, rows: rows})
		return nil
	}
	if err := scanPrefix(ctx, kv, keys.InlineLiveInsertPrefix(), func(k keys.Key, v []byte) error { return addChunk(k, v, nil) }); err != nil {
		return nil, err
	}
	if err := scanPrefix(ctx, kv, keys.InlineArchivedInsertPrefix(), func(k keys.Key, v []byte) error {
		e := SnapshotID(k.End)
		return addChunk(k, v, &e)
	}); err != nil {
		return nil, err
	}
	type rowKey struct {
		table TableID
		row   uint64
	}
	deleted := map[rowKey]SnapshotID{}
	addDelete := func(k keys.Key, v []byte) error {
		e, err := decodeInlineDelete(v)
		if err == nil {
			deleted[rowKey{TableID(k.Comps[0]), k.Comps[1]}] = e
		}
		return err
	}
	if err := scanPrefix(ctx, kv, keys.InlineLiveDeletePrefix(), addDelete); err != nil {
		return nil, err
	}
	if err := scanPrefix(ctx, kv, keys.InlineArchivedDeletePrefix(), addDelete); err != nil {
		return nil, err
	}

	type groupKey struct {
		table TableID
		sv    uint64
	}
	groups := map[groupKey]*InlinedRows{}
	for _, c := range chunks {
		for _, r := range c.rows {
			r.Begin = c.begin
			if e, ok := deleted[rowKey{c.table, r.RowID}]; ok {
				r.endAt(e)
			}
			if c.archivedAt != nil && (r.End == nil || *c.archivedAt < *r.End) {
				a := *c.archivedAt
				r.End = &a
			}
			if !f.keep(&r.Versioned) {
				continue
			}
			gk := groupKey{c.table, c.schemaVersion}
			g := groups[gk]
			if g == nil {
				g = &InlinedRows{TableID: c.table, SchemaVersion: c.schemaVersion}
				groups[gk] = g
			}
			g.Rows = append(g.Rows, r)
		}
	}
	out := make([]InlinedRows, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.Rows, func(i, j int) bool {
			if g.Rows[i].RowID != g.Rows[j].RowID {
				return g.Rows[i].RowID < g.Rows[j].RowID
			}
			return g.Rows[i].Begin < g.Rows[j].Begin
		})
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TableID != out[j].TableID {
			return out[i].TableID < out[j].TableID
		}
		return out[i].SchemaVersion < out[j].SchemaVersion
	})
	return out, nil
}

// sort puts every list in its documented order.
func (d *Dump) sort() {
	byIDBegin := func(a, b uint64, ab, bb SnapshotID) bool {
		if a != b {
			return a < b
		}
		return ab < bb
	}
	sort.Slice(d.Snapshots, func(i, j int) bool { return d.Snapshots[i].ID < d.Snapshots[j].ID })
	sort.Slice(d.Schemas, func(i, j int) bool {
		return byIDBegin(uint64(d.Schemas[i].ID), uint64(d.Schemas[j].ID), d.Schemas[i].Begin, d.Schemas[j].Begin)
	})
	sort.Slice(d.Tables, func(i, j int) bool {
		return byIDBegin(uint64(d.Tables[i].ID), uint64(d.Tables[j].ID), d.Tables[i].Begin, d.Tables[j].Begin)
	})
	sort.Slice(d.Views, func(i, j int) bool {
		return byIDBegin(uint64(d.Views[i].ID), uint64(d.Views[j].ID), d.Views[i].Begin, d.Views[j].Begin)
	})
	sort.Slice(d.Columns, func(i, j int) bool {
		a, b := d.Columns[i], d.Columns[j]
		if a.TableID != b.TableID {
			return a.TableID < b.TableID
		}
		return byIDBegin(uint64(a.ID), uint64(b.ID), a.Begin, b.Begin)
	})
	sort.Slice(d.DataFiles, func(i, j int) bool {
		return byIDBegin(uint64(d.DataFiles[i].ID), uint64(d.DataFiles[j].ID), d.DataFiles[i].Begin, d.DataFiles[j].Begin)
	})
	sort.Slice(d.DeleteFiles, func(i, j int) bool {
		return byIDBegin(uint64(d.DeleteFiles[i].ID), uint64(d.DeleteFiles[j].ID), d.DeleteFiles[i].Begin, d.DeleteFiles[j].Begin)
	})
	sort.Slice(d.Partitions, func(i, j int) bool {
		return byIDBegin(uint64(d.Partitions[i].ID), uint64(d.Partitions[j].ID), d.Partitions[i].Begin, d.Partitions[j].Begin)
	})
	sort.Slice(d.Sorts, func(i, j int) bool {
		return byIDBegin(uint64(d.Sorts[i].ID), uint64(d.Sorts[j].ID), d.Sorts[i].Begin, d.Sorts[j].Begin)
	})
	sort.Slice(d.Macros, func(i, j int) bool {
		return byIDBegin(uint64(d.Macros[i].ID), uint64(d.Macros[j].ID), d.Macros[i].Begin, d.Macros[j].Begin)
	})
	sort.Slice(d.TableStats, func(i, j int) bool { return d.TableStats[i].TableID < d.TableStats[j].TableID })
	sort.Slice(d.TableColumnStats, func(i, j int) bool {
		a, b := d.TableColumnStats[i], d.TableColumnStats[j]
		if a.TableID != b.TableID {
			return a.TableID < b.TableID
		}
		return a.ColumnID < b.ColumnID
	})
	sort.Slice(d.FileColumnStats, func(i, j int) bool {
		a, b := d.FileColumnStats[i], d.FileColumnStats[j]
		if a.DataFileID != b.DataFileID {
			return a.DataFileID < b.DataFileID
		}
		return a.ColumnID < b.ColumnID
	})
	sort.Slice(d.Tags, func(i, j int) bool { return d.Tags[i].ObjectID < d.Tags[j].ObjectID })
	for i := range d.Tags {
		es := d.Tags[i].Entries
		sort.Slice(es, func(a, b int) bool {
			if es[a].Key != es[b].Key {
				return es[a].Key < es[b].Key
			}
			return es[a].Begin < es[b].Begin
		})
	}
	sort.Slice(d.Options, func(i, j int) bool {
		if d.Options[i].Scope != d.Options[j].Scope {
			return d.Options[i].Scope < d.Options[j].Scope
		}
		return d.Options[i].ScopeID < d.Options[j].ScopeID
	})
	sort.Slice(d.Mappings, func(i, j int) bool { return d.Mappings[i].ID < d.Mappings[j].ID })
	sort.Slice(d.GcFiles, func(i, j int) bool { return d.GcFiles[i].DataFileID < d.GcFiles[j].DataFileID })
}

// ColumnsAt returns a table's top-level columns visible at snapshot s, in
// column order: the columns its inlined rows written at s follow.
func (d *Dump) ColumnsAt(table TableID, s SnapshotID) []Column {
	var out []Column
	for _, c := range d.Columns {
		if c.TableID == table && c.Parent == nil && c.Begin <= s && (c.End == nil || s < *c.End) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].ID < out[j].ID
	})
	return out
}
