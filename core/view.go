package core

import (
	"cmp"
	"maps"
	"slices"
	"sort"
)

// Head is the catalog's head stamp: the latest snapshot and the count of
// batches written so far (every batch, head-advancing or not, increments
// BatchSeq). Equal stamps mean equal catalog state.
type Head struct {
	SnapshotID SnapshotID
	BatchSeq   uint64
}

type scopeKey struct {
	scope OptionScope
	id    uint64
}

// CatalogView is an immutable, materialized view of the catalog at one
// snapshot: every live entity, with lookups by id and by name. It makes no
// store requests once built. Share it freely between goroutines.
type CatalogView struct {
	snap Snapshot
	head Head // BatchSeq is 0 for time-travel views

	schemas      map[SchemaID]*Schema
	schemaByName map[string]SchemaID
	tables       map[TableID]*Table
	tableByName  map[SchemaID]map[string]TableID
	views        map[ViewID]*View
	viewByName   map[SchemaID]map[string]ViewID
	macros       map[MacroID]*Macro
	macroByName  map[SchemaID]map[string]MacroID // by macroKey: DuckDB names scalar and table macros apart
	columns      map[TableID]map[ColumnID]*Column
	dataFiles    map[TableID]map[DataFileID]*DataFile
	deleteFiles  map[TableID]map[DeleteFileID]*DeleteFile
	tableStats   map[TableID]*TableStats
	colStats     map[TableID]map[ColumnID]*TableColumnStats
	fileStats    map[DataFileID]map[ColumnID]*FileColumnStats
	partitions   map[TableID]*Partition
	sorts        map[TableID]*Sort
	mappings     map[MappingID]*Mapping
	tags         map[uint64]*Tags
	options      map[scopeKey]*Options
	// inlined row chunks visible at this snapshot, per table, in write order.
	inlined map[TableID][]*chunkState
	gcFiles map[DataFileID]*GcFile
	// schemaVersions of every table (history included), by begin snapshot.
	schemaVersions []SchemaVersion
}

func newCatalogView() *CatalogView {
	return &CatalogView{
		schemas: map[SchemaID]*Schema{}, schemaByName: map[string]SchemaID{},
		tables: map[TableID]*Table{}, tableByName: map[SchemaID]map[string]TableID{},
		views: map[ViewID]*View{}, viewByName: map[SchemaID]map[string]ViewID{},
		macros: map[MacroID]*Macro{}, macroByName: map[SchemaID]map[string]MacroID{},
		columns: map[TableID]map[ColumnID]*Column{}, dataFiles: map[TableID]map[DataFileID]*DataFile{},
		deleteFiles: map[TableID]map[DeleteFileID]*DeleteFile{}, tableStats: map[TableID]*TableStats{},
		colStats: map[TableID]map[ColumnID]*TableColumnStats{}, fileStats: map[DataFileID]map[ColumnID]*FileColumnStats{},
		partitions: map[TableID]*Partition{}, sorts: map[TableID]*Sort{}, mappings: map[MappingID]*Mapping{},
		tags: map[uint64]*Tags{}, options: map[scopeKey]*Options{}, inlined: map[TableID][]*chunkState{},
		gcFiles: map[DataFileID]*GcFile{},
	}
}

// restamped is s at head h, sharing everything else: the view after a slot
// that changed nothing but the head (a claim).
func (s *CatalogView) restamped(h Head) *CatalogView {
	c := *s
	c.head = h
	return &c
}

// clone returns a copy whose top-level maps can be changed without
// touching s; inner maps are shared until a writer replaces them (see
// Transaction's copy-on-write helpers).
func (s *CatalogView) clone() *CatalogView {
	c := *s
	c.schemas = maps.Clone(s.schemas)
	c.schemaByName = maps.Clone(s.schemaByName)
	c.tables = maps.Clone(s.tables)
	c.tableByName = maps.Clone(s.tableByName)
	c.views = maps.Clone(s.views)
	c.viewByName = maps.Clone(s.viewByName)
	c.macros = maps.Clone(s.macros)
	c.macroByName = maps.Clone(s.macroByName)
	c.columns = maps.Clone(s.columns)
	c.dataFiles = maps.Clone(s.dataFiles)
	c.deleteFiles = maps.Clone(s.deleteFiles)
	c.tableStats = maps.Clone(s.tableStats)
	c.colStats = maps.Clone(s.colStats)
	c.fileStats = maps.Clone(s.fileStats)
	c.partitions = maps.Clone(s.partitions)
	c.sorts = maps.Clone(s.sorts)
	c.mappings = maps.Clone(s.mappings)
	c.tags = maps.Clone(s.tags)
	c.options = maps.Clone(s.options)
	c.inlined = maps.Clone(s.inlined)
	c.gcFiles = maps.Clone(s.gcFiles)
	c.schemaVersions = slices.Clip(s.schemaVersions)
	return &c
}

// dropStatsOfAbsentTables removes the table and column statistics of tables
// not live in this view: the store keeps their rows (DuckLake never deletes
// them on DROP TABLE, and time travel reads current stats), but they do not
// belong to the view. load and rows commits both apply it, so a rows
// commit's cached view is what load reads back.
func (s *CatalogView) dropStatsOfAbsentTables() {
	for id := range s.tableStats {
		if _, ok := s.tables[id]; !ok {
			delete(s.tableStats, id)
		}
	}
	for id := range s.colStats {
		if _, ok := s.tables[id]; !ok {
			delete(s.colStats, id)
		}
	}
}

// Snapshot returns the snapshot record this view is at.
func (s *CatalogView) Snapshot() Snapshot { return s.snap }

// ID is the snapshot id this view is at.
func (s *CatalogView) ID() SnapshotID { return s.snap.ID }

// Head returns the head stamp this view was built at (BatchSeq 0 for time
// travel).
func (s *CatalogView) Head() Head { return s.head }

func sortedValues[K comparable, V any](m map[K]*V, less func(a, b *V) bool) []V {
	out := make([]*V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	vals := make([]V, len(out))
	for i, v := range out {
		vals[i] = *v
	}
	return vals
}

// Schemas lists live schemas by id.
func (s *CatalogView) Schemas() []Schema {
	return sortedValues(s.schemas, func(a, b *Schema) bool { return a.ID < b.ID })
}

// Schema looks a schema up by id.
func (s *CatalogView) Schema(id SchemaID) (Schema, bool) {
	v, ok := s.schemas[id]
	if !ok {
		return Schema{}, false
	}
	return *v, true
}

// SchemaByName looks a schema up by name.
func (s *CatalogView) SchemaByName(name string) (Schema, bool) {
	id, ok := s.schemaByName[name]
	if !ok {
		return Schema{}, false
	}
	return s.Schema(id)
}

// Tables lists the live tables of a schema by id (every schema's with
// schema 0... use AllTables for all).
func (s *CatalogView) Tables(schema SchemaID) []Table {
	out := make(map[TableID]*Table)
	for _, id := range s.tableByName[schema] {
		out[id] = s.tables[id]
	}
	return sortedValues(out, func(a, b *Table) bool { return a.ID < b.ID })
}

// AllTables lists every live table by id.
func (s *CatalogView) AllTables() []Table {
	return sortedValues(s.tables, func(a, b *Table) bool { return a.ID < b.ID })
}

// Table looks a table up by id.
func (s *CatalogView) Table(id TableID) (Table, bool) {
	v, ok := s.tables[id]
	if !ok {
		return Table{}, false
	}
	return *v, true
}

// TableByName looks a table up by schema and table name.
func (s *CatalogView) TableByName(schema, table string) (Table, bool) {
	sid, ok := s.schemaByName[schema]
	if !ok {
		return Table{}, false
	}
	id, ok := s.tableByName[sid][table]
	if !ok {
		return Table{}, false
	}
	return s.Table(id)
}

// Views lists a schema's live views.
func (s *CatalogView) Views(schema SchemaID) []View {
	out := make(map[ViewID]*View)
	for _, id := range s.viewByName[schema] {
		out[id] = s.views[id]
	}
	return sortedValues(out, func(a, b *View) bool { return a.ID < b.ID })
}

// AllViews lists every live view.
func (s *CatalogView) AllViews() []View {
	return sortedValues(s.views, func(a, b *View) bool { return a.ID < b.ID })
}

// ViewByName looks a view up by schema and view name.
func (s *CatalogView) ViewByName(schema, view string) (View, bool) {
	sid, ok := s.schemaByName[schema]
	if !ok {
		return View{}, false
	}
	id, ok := s.viewByName[sid][view]
	if !ok {
		return View{}, false
	}
	v := s.views[id]
	return *v, true
}

// Macros lists a schema's live macros.
func (s *CatalogView) Macros(schema SchemaID) []Macro {
	var out []Macro
	for _, id := range s.macroByName[schema] {
		out = append(out, s.macros[id].clone())
	}
	slices.SortFunc(out, func(a, b Macro) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// AllMacros lists every live macro.
func (s *CatalogView) AllMacros() []Macro {
	out := make([]Macro, 0, len(s.macros))
	for _, m := range s.macros {
		out = append(out, m.clone())
	}
	slices.SortFunc(out, func(a, b Macro) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// macroKey is a macro's name as its schema holds it: scalar and table
// macros are apart (DuckDB allows one of each with a name); kind is
// MacroImpl.Type.
func macroKey(kind, name string) string { return kind + ":" + name }

// macroKind is the kind of a macro's implementations (all of one kind).
func (m *Macro) kind() string {
	if len(m.Impls) == 0 {
		return ""
	}
	return m.Impls[0].Type
}

// MacroByName looks a macro up by schema, kind ("scalar" or "table") and
// name.
func (s *CatalogView) MacroByName(schema, kind, macro string) (Macro, bool) {
	sid, ok := s.schemaByName[schema]
	if !ok {
		return Macro{}, false
	}
	id, ok := s.macroByName[sid][macroKey(kind, macro)]
	if !ok {
		return Macro{}, false
	}
	return s.macros[id].clone(), true
}

// clone copies m deeply (a view's entities are never shared for writing).
func (m *Macro) clone() Macro {
	c := *m
	c.Impls = slices.Clone(m.Impls)
	for i := range c.Impls {
		c.Impls[i].Parameters = slices.Clone(c.Impls[i].Parameters)
	}
	return c
}

// Columns lists a table's live columns in column order (top-level and
// nested children alike; children have Parent set).
func (s *CatalogView) Columns(table TableID) []Column {
	return sortedValues(s.columns[table], func(a, b *Column) bool {
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.ID < b.ID
	})
}

// Column looks a column up by table and column id.
func (s *CatalogView) Column(table TableID, id ColumnID) (Column, bool) {
	c, ok := s.columns[table][id]
	if !ok {
		return Column{}, false
	}
	return *c, true
}

// DataFiles lists a table's live data files by file order, then id.
func (s *CatalogView) DataFiles(table TableID) []DataFile {
	return sortedValues(s.dataFiles[table], func(a, b *DataFile) bool {
		if oa, ob := fileOrder(a), fileOrder(b); oa != ob {
			return oa < ob
		}
		return a.ID < b.ID
	})
}

// fileOrder is a data file's order: its file_order, or its id when that is
// NULL (as DuckLake writes it).
func fileOrder(f *DataFile) uint64 {
	if f.FileOrder != nil {
		return *f.FileOrder
	}
	return uint64(f.ID)
}

// DataFile looks a live data file up.
func (s *CatalogView) DataFile(table TableID, id DataFileID) (DataFile, bool) {
	f, ok := s.dataFiles[table][id]
	if !ok {
		return DataFile{}, false
	}
	return *f, true
}

// DeleteFiles lists a table's live delete files by id.
func (s *CatalogView) DeleteFiles(table TableID) []DeleteFile {
	return sortedValues(s.deleteFiles[table], func(a, b *DeleteFile) bool { return a.ID < b.ID })
}

// DeleteFilesOf lists the live delete files targeting one data file.
func (s *CatalogView) DeleteFilesOf(table TableID, file DataFileID) []DeleteFile {
	var out []DeleteFile
	for _, d := range s.DeleteFiles(table) {
		if d.DataFileID == file {
			out = append(out, d)
		}
	}
	return out
}

// TableStats returns a table's statistics.
func (s *CatalogView) TableStats(table TableID) (TableStats, bool) {
	v, ok := s.tableStats[table]
	if !ok {
		return TableStats{}, false
	}
	return *v, true
}

// TableColumnStats lists a table's column statistics by column id.
func (s *CatalogView) TableColumnStats(table TableID) []TableColumnStats {
	return sortedValues(s.colStats[table], func(a, b *TableColumnStats) bool { return a.ColumnID < b.ColumnID })
}

// FileColumnStats lists one data file's column statistics.
func (s *CatalogView) FileColumnStats(file DataFileID) []FileColumnStats {
	return sortedValues(s.fileStats[file], func(a, b *FileColumnStats) bool { return a.ColumnID < b.ColumnID })
}

// Partition returns a table's live partitioning.
func (s *CatalogView) Partition(table TableID) (Partition, bool) {
	p, ok := s.partitions[table]
	if !ok {
		return Partition{}, false
	}
	return *p, true
}

// Sort returns a table's live sort order.
func (s *CatalogView) Sort(table TableID) (Sort, bool) {
	v, ok := s.sorts[table]
	if !ok {
		return Sort{}, false
	}
	return *v, true
}

// Mappings lists column mappings by id.
func (s *CatalogView) Mappings() []Mapping {
	return sortedValues(s.mappings, func(a, b *Mapping) bool { return a.ID < b.ID })
}

// Tags returns an object's tags live at this snapshot.
func (s *CatalogView) Tags(object uint64) []TagEntry {
	t, ok := s.tags[object]
	if !ok {
		return nil
	}
	var out []TagEntry
	for _, e := range t.Entries {
		if e.VisibleAt(s.snap.ID) {
			out = append(out, e)
		}
	}
	return out
}

// Option returns a ducklake_metadata value.
func (s *CatalogView) Option(scope OptionScope, scopeID uint64, key string) (string, bool) {
	o, ok := s.options[scopeKey{scope, scopeID}]
	if !ok {
		return "", false
	}
	v, ok := o.Values[key]
	return v, ok
}

// AllOptions lists every option scope.
func (s *CatalogView) AllOptions() []Options {
	out := make([]Options, 0, len(s.options))
	for _, o := range s.options {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scope != out[j].Scope {
			return out[i].Scope < out[j].Scope
		}
		return out[i].ScopeID < out[j].ScopeID
	})
	return out
}

// InlinedRows lists a table's inlined rows live at this snapshot, grouped by
// the schema version they were written under (ascending), rows in row-id
// order. Deleted rows are left out.
func (s *CatalogView) InlinedRows(table TableID) []InlinedRows {
	bySV := map[uint64]*InlinedRows{}
	for _, c := range s.inlined[table] {
		g := bySV[c.schemaVersion]
		if g == nil {
			g = &InlinedRows{TableID: table, SchemaVersion: c.schemaVersion}
			bySV[c.schemaVersion] = g
		}
		for _, r := range c.rows {
			if r.VisibleAt(s.snap.ID) {
				g.Rows = append(g.Rows, r)
			}
		}
	}
	out := make([]InlinedRows, 0, len(bySV))
	for _, g := range bySV {
		sort.Slice(g.Rows, func(i, j int) bool { return g.Rows[i].RowID < g.Rows[j].RowID })
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SchemaVersion < out[j].SchemaVersion })
	return out
}

// InlinedRowCount counts a table's live inlined rows.
func (s *CatalogView) InlinedRowCount(table TableID) int {
	n := 0
	for _, c := range s.inlined[table] {
		for _, r := range c.rows {
			if r.VisibleAt(s.snap.ID) {
				n++
			}
		}
	}
	return n
}

// GcFiles lists files scheduled for deletion.
func (s *CatalogView) GcFiles() []GcFile {
	return sortedValues(s.gcFiles, func(a, b *GcFile) bool { return a.DataFileID < b.DataFileID })
}

// SchemaVersions lists ducklake_schema_versions rows up to this snapshot.
func (s *CatalogView) SchemaVersions() []SchemaVersion { return slices.Clone(s.schemaVersions) }
