package core

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/keys"
)

// ColumnDef describes a column to create. Nested types (struct, list, map)
// carry their children; a list has one child (the element), a map two
// (key, value).
type ColumnDef struct {
	Name         string
	Type         string // DuckLake type string: int64, varchar, struct, list, decimal(10,2), ...
	NullsAllowed *bool  // default true
	Default      *string
	Children     []ColumnDef
}

// ColumnChange alters a column; nil fields stay as they are.
type ColumnChange struct {
	Type         *string
	Default      *string
	DropDefault  bool
	NullsAllowed *bool
}

// DataFileDef registers a data file; ids and begin snapshot are assigned.
type DataFileDef struct {
	TableID         TableID
	Path            string
	PathIsRelative  bool
	Format          string // default "parquet"
	RecordCount     uint64
	FileSizeBytes   uint64
	FooterSize      uint64
	RowIDStart      *uint64 // default: the table's next row id
	FileOrder       *uint64 // default: the new file id
	PartitionID     *PartitionID
	EncryptionKey   *string
	PartialFileInfo *string
	MappingID       *MappingID
	PartitionValues []PartitionValue
	// ColumnStats are recorded as ducklake_file_column_stats rows.
	ColumnStats []FileColumnStats
}

// DeleteFileDef registers a delete file for one data file.
type DeleteFileDef struct {
	TableID        TableID
	DataFileID     DataFileID
	Path           string
	PathIsRelative bool
	Format         string // default "parquet"
	DeleteCount    uint64
	FileSizeBytes  uint64
	FooterSize     uint64
	EncryptionKey  *string
}

// kvWrite is one staged engine write.
type kvWrite struct {
	key   []byte
	value []byte // nil: delete
}

// Transaction stages one commit: verbs check their premises against the
// catalog as this transaction sees it (the snapshot it started from plus
// its own changes) and stage the writes. Nothing is visible to anyone else
// until the commit lands. A Transaction is not safe for concurrent use.
type Transaction struct {
	base *CatalogSnapshot
	next *CatalogSnapshot
	id   SnapshotID // the snapshot this transaction mints
	now  time.Time

	nextCatalogID uint64
	nextFileID    uint64
	schemaVersion uint64 // next.snap.SchemaVersion once bumped
	shapeChanged  bool
	changes       []change
	deletedFiles  []DataFileID
	shapeTables   map[TableID]bool
	// statsOverwrites: tables whose statistics this transaction overwrote
	// (see noteStatsOverwrite; resolved by finish).
	statsOverwrites map[TableID]bool

	author, message, extra *string

	writes map[string]kvWrite
	order  []string
	owned  map[unsafe.Pointer]bool // inner maps already copied by this transaction
	// dirty name-directory slots to rewrite at finish.
	nameSlots map[nameSlot]bool
	chunkSeq  map[TableID]uint64
	format    uint64 // the catalog's format: which derived indexes to maintain

	// Explicit transactions (Catalog.Begin) only.
	cat  *Catalog
	sess session
	head Head
	// rows is set for a transaction from Catalog.BeginRows (rows.go).
	rows *rowsState
}

type nameSlot struct {
	kind   keys.NameKind
	parent uint64
	hash   uint64
}

func newTransaction(base *CatalogSnapshot, now time.Time, format uint64) *Transaction {
	t := &Transaction{
		base:          base,
		next:          base.clone(),
		id:            base.snap.ID + 1,
		now:           now,
		nextCatalogID: base.snap.NextCatalogID,
		nextFileID:    base.snap.NextFileID,
		schemaVersion: base.snap.SchemaVersion,
		shapeTables:   map[TableID]bool{},
		writes:        map[string]kvWrite{},
		owned:         map[unsafe.Pointer]bool{},
		nameSlots:     map[nameSlot]bool{},
		chunkSeq:      map[TableID]uint64{},
		format:        format,
	}
	return t
}

// Snapshot returns the catalog as this transaction sees it (base plus its
// own changes so far). The view is only valid until the next verb.
func (t *Transaction) Snapshot() *CatalogSnapshot { return t.next }

// SnapshotID is the id the commit will mint.
func (t *Transaction) SnapshotID() SnapshotID { return t.id }

// changed reports whether any verb staged anything.
func (t *Transaction) changed() bool {
	return len(t.order) > 0 || t.rows != nil && (t.rows.snapshot != nil || t.rows.genesis)
}

// SetAuthor, SetCommitMessage and SetCommitExtraInfo annotate the snapshot
// (invalid UTF-8 is replaced).
func (t *Transaction) SetAuthor(s string)          { t.author = validUTF8(s) }
func (t *Transaction) SetCommitMessage(s string)   { t.message = validUTF8(s) }
func (t *Transaction) SetCommitExtraInfo(s string) { t.extra = validUTF8(s) }

func validUTF8(s string) *string {
	v := strings.ToValidUTF8(s, "\uFFFD")
	return &v
}

func (t *Transaction) put(key, value []byte) {
	k := string(key)
	if _, ok := t.writes[k]; !ok {
		t.order = append(t.order, k)
	}
	t.writes[k] = kvWrite{key: key, value: value}
}

func (t *Transaction) del(key []byte) {
	k := string(key)
	if _, ok := t.writes[k]; !ok {
		t.order = append(t.order, k)
	}
	t.writes[k] = kvWrite{key: key}
}

func (t *Transaction) note(c change) { t.changes = append(t.changes, c) }

func (t *Transaction) noteTable(kind string, id TableID) {
	for _, c := range t.changes {
		if c.Kind == kind && c.ID == uint64(id) && c.Name == nil {
			return
		}
	}
	t.note(change{Kind: kind, ID: uint64(id)})
}

// shape marks a schema change (bumps the snapshot's schema version once);
// table, when non-zero, records a ducklake_schema_versions row for it.
func (t *Transaction) shape(table TableID) {
	if !t.shapeChanged {
		t.shapeChanged = true
		t.schemaVersion = t.base.snap.SchemaVersion + 1
	}
	if table != 0 {
		t.shapeTables[table] = true
	}
}

func (t *Transaction) allocCatalogID() uint64 {
	id := t.nextCatalogID
	t.nextCatalogID++
	return id
}

func (t *Transaction) allocFileID() uint64 {
	id := t.nextFileID
	t.nextFileID++
	return id
}

// innerCopy returns the inner map outer[k] in a form the transaction may
// modify: the first write copies the map shared with the base snapshot.
func innerCopy[K1, K2 comparable, V any](t *Transaction, outer map[K1]map[K2]V, k K1) map[K2]V {
	inner, ok := outer[k]
	if ok && inner != nil && t.owned[reflect.ValueOf(inner).UnsafePointer()] {
		return inner
	}
	c := maps.Clone(inner)
	if c == nil {
		c = map[K2]V{}
	}
	outer[k] = c
	t.owned[reflect.ValueOf(c).UnsafePointer()] = true
	return c
}

func end(id SnapshotID) *SnapshotID { return &id }

func checkName(what, name string) error {
	if name == "" {
		return errorf(InvalidArgument, "%s name is empty", what)
	}
	if strings.ContainsRune(name, 0) {
		return errorf(InvalidArgument, "%s name %q contains a NUL byte", what, name)
	}
	if !utf8.ValidString(name) {
		return errorf(InvalidArgument, "%s name %q is not valid UTF-8", what, name)
	}
	return nil
}

// ---- schemas ----

// CreateSchema creates a schema; its data path defaults to "<name>/"
// relative to the catalog's data path.
func (t *Transaction) CreateSchema(name string) (SchemaID, error) {
	if err := checkName("schema", name); err != nil {
		return 0, err
	}
	if _, ok := t.next.schemaByName[name]; ok {
		return 0, errorf(AlreadyExists, "schema %q already exists", name)
	}
	s := &Schema{ID: SchemaID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(),
		Name: name, Path: name + "/", PathIsRelative: true}
	t.next.schemas[s.ID] = s
	t.next.schemaByName[name] = s.ID
	t.put(keys.CurrentSchema(uint64(s.ID)), encodeSchema(s))
	t.touchName(keys.NameSchema, 0, name)
	t.note(change{Kind: chCreatedSchema, Name: []string{name}})
	t.shape(0)
	return s.ID, nil
}

// DropSchema drops a schema. Without cascade it must be empty; with cascade
// its tables and views are dropped too.
func (t *Transaction) DropSchema(id SchemaID, cascade bool) error {
	s, ok := t.next.schemas[id]
	if !ok {
		return errorf(NotFound, "schema %d does not exist", id)
	}
	tables := t.next.Tables(id)
	views := t.next.Views(id)
	if !cascade && (len(tables) > 0 || len(views) > 0) {
		return errorf(Constraint, "schema %q is not empty (%d tables, %d views); drop them first or drop with cascade", s.Name, len(tables), len(views))
	}
	for _, tb := range tables {
		if err := t.DropTable(tb.ID); err != nil {
			return err
		}
	}
	for _, v := range views {
		if err := t.DropView(v.ID); err != nil {
			return err
		}
	}
	delete(t.next.schemas, id)
	delete(t.next.schemaByName, s.Name)
	retire(t, s, keys.KindSchema, encodeSchema, uint64(id))
	t.touchName(keys.NameSchema, 0, s.Name)
	t.note(change{Kind: chDroppedSchema, ID: uint64(id)})
	t.shape(0)
	return nil
}

func (t *Transaction) schemaOf(id SchemaID) (*Schema, error) {
	s, ok := t.next.schemas[id]
	if !ok {
		return nil, errorf(NotFound, "schema %d does not exist", id)
	}
	return s, nil
}

func (t *Transaction) tableOf(id TableID) (*Table, error) {
	tb, ok := t.next.tables[id]
	if !ok {
		return nil, errorf(NotFound, "table %d does not exist", id)
	}
	return tb, nil
}

// ---- tables ----

func (t *Transaction) relationNameTaken(schema SchemaID, name string) bool {
	if _, ok := t.next.tableByName[schema][name]; ok {
		return true
	}
	_, ok := t.next.viewByName[schema][name]
	return ok
}

// CreateTable creates a table with its columns.
func (t *Transaction) CreateTable(schema SchemaID, name string, columns []ColumnDef) (TableID, error) {
	s, err := t.schemaOf(schema)
	if err != nil {
		return 0, err
	}
	if err := checkName("table", name); err != nil {
		return 0, err
	}
	if t.relationNameTaken(schema, name) {
		return 0, errorf(AlreadyExists, "a table or view named %q already exists in schema %q", name, s.Name)
	}
	tb := &Table{ID: TableID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(),
		SchemaID: schema, Name: name, Path: name + "/", PathIsRelative: true}
	t.next.tables[tb.ID] = tb
	byName := innerCopy(t, t.next.tableByName, schema)
	byName[name] = tb.ID
	t.put(keys.CurrentTable(uint64(tb.ID)), encodeTable(tb))
	t.touchName(keys.NameTable, uint64(schema), name)
	var order uint64
	for _, def := range columns {
		if _, err := t.addColumn(tb.ID, def, nil, &order); err != nil {
			return 0, err
		}
	}
	st := &TableStats{TableID: tb.ID}
	t.next.tableStats[tb.ID] = st
	t.put(keys.CurrentTableStats(uint64(tb.ID)), encodeTableStats(st))
	t.note(change{Kind: chCreatedTable, Name: []string{s.Name, name}})
	t.shape(tb.ID)
	return tb.ID, nil
}

// RenameTable renames a table (a new version of it).
func (t *Transaction) RenameTable(id TableID, name string) error {
	tb, err := t.tableOf(id)
	if err != nil {
		return err
	}
	if err := checkName("table", name); err != nil {
		return err
	}
	if name == tb.Name {
		return nil
	}
	if t.relationNameTaken(tb.SchemaID, name) {
		return errorf(AlreadyExists, "a table or view named %q already exists in schema %d", name, tb.SchemaID)
	}
	old := tb.Name
	nv := *tb
	nv.Name = name
	t.newVersionTable(tb, &nv)
	byName := innerCopy(t, t.next.tableByName, tb.SchemaID)
	delete(byName, old)
	byName[name] = id
	t.touchName(keys.NameTable, uint64(tb.SchemaID), old)
	t.touchName(keys.NameTable, uint64(tb.SchemaID), name)
	t.noteTable(chAlteredTable, id)
	t.shape(id)
	return nil
}

// newVersionTable ends tb's current version and makes nv (same id) live.
func (t *Transaction) newVersionTable(tb, nv *Table) {
	replaceVersion(t, tb, nv, keys.KindTable, encodeTable, uint64(tb.ID))
	t.next.tables[nv.ID] = nv
}

// DropTable drops a table with its columns, files, partitioning, sorting
// and inlined rows.
func (t *Transaction) DropTable(id TableID) error {
	tb, err := t.tableOf(id)
	if err != nil {
		return err
	}
	for _, c := range t.next.columns[id] {
		t.endColumn(c)
	}
	delete(t.next.columns, id)
	for _, f := range t.next.dataFiles[id] {
		t.endDataFile(f)
	}
	delete(t.next.dataFiles, id)
	for _, d := range t.next.deleteFiles[id] {
		t.endDeleteFile(d)
	}
	delete(t.next.deleteFiles, id)
	if p, ok := t.next.partitions[id]; ok {
		t.endPartition(p)
	}
	if s, ok := t.next.sorts[id]; ok {
		t.endSort(s)
	}
	t.archiveInlined(id)
	delete(t.next.tables, id)
	byName := innerCopy(t, t.next.tableByName, tb.SchemaID)
	delete(byName, tb.Name)
	retire(t, tb, keys.KindTable, encodeTable, uint64(id))
	t.touchName(keys.NameTable, uint64(tb.SchemaID), tb.Name)
	// The table's versioned rows were ended above (time travel keeps them);
	// its statistics are unversioned, so they go.
	delete(t.next.tableStats, id)
	t.del(keys.CurrentTableStats(uint64(id)))
	for cid := range t.next.colStats[id] {
		t.del(keys.CurrentTableColumnStats(uint64(id), uint64(cid)))
	}
	delete(t.next.colStats, id)
	t.noteTable(chDroppedTable, id)
	t.shape(id)
	return nil
}

// ---- columns ----

// nextColumnID allocates a column id. Column ids must never be reused
// within a table, dropped columns included; drawing them from the catalog
// id counter guarantees that without a per-table high-water mark.
func (t *Transaction) nextColumnID() ColumnID {
	return ColumnID(t.allocCatalogID())
}

func (t *Transaction) addColumn(table TableID, def ColumnDef, parent *ColumnID, order *uint64) (ColumnID, error) {
	if err := checkName("column", def.Name); err != nil {
		return 0, err
	}
	if def.Type == "" {
		return 0, errorf(InvalidArgument, "column %q has no type", def.Name)
	}
	for _, c := range t.next.columns[table] {
		if c.Name == def.Name && ptrEq(c.Parent, parent) {
			return 0, errorf(AlreadyExists, "column %q already exists in table %d", def.Name, table)
		}
	}
	nulls := true
	if def.NullsAllowed != nil {
		nulls = *def.NullsAllowed
	}
	if !nulls && def.Default == nil && t.hasRows(table) {
		return 0, errorf(Constraint, "column %q is NOT NULL without a default, but table %d already has rows", def.Name, table)
	}
	c := &Column{TableID: table, ID: t.nextColumnID(), Versioned: Versioned{Begin: t.id}, Order: *order,
		Name: def.Name, Type: def.Type, InitialDefault: def.Default, DefaultValue: def.Default, NullsAllowed: nulls, Parent: parent}
	*order++
	cols := innerCopy(t, t.next.columns, table)
	cols[c.ID] = c
	t.put(keys.CurrentColumn(uint64(table), uint64(c.ID)), encodeColumn(c))
	for _, child := range def.Children {
		p := c.ID
		if _, err := t.addColumn(table, child, &p, order); err != nil {
			return 0, err
		}
	}
	return c.ID, nil
}

func ptrTo[T any](v T) *T { return &v }

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func (t *Transaction) hasRows(table TableID) bool {
	if st, ok := t.next.tableStats[table]; ok && st.RecordCount > 0 {
		return true
	}
	return len(t.next.dataFiles[table]) > 0
}

// AddColumn adds a top-level column at the end of the table.
func (t *Transaction) AddColumn(table TableID, def ColumnDef) (ColumnID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	var order uint64
	for _, c := range t.next.columns[table] {
		if c.Order >= order {
			order = c.Order + 1
		}
	}
	id, err := t.addColumn(table, def, nil, &order)
	if err != nil {
		return 0, err
	}
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return id, nil
}

func (t *Transaction) columnOf(table TableID, id ColumnID) (*Column, error) {
	if _, err := t.tableOf(table); err != nil {
		return nil, err
	}
	c, ok := t.next.columns[table][id]
	if !ok {
		return nil, errorf(NotFound, "column %d does not exist in table %d", id, table)
	}
	return c, nil
}

// newVersionColumn ends c and makes nv live.
func (t *Transaction) newVersionColumn(c, nv *Column) {
	replaceVersion(t, c, nv, keys.KindColumn, encodeColumn, uint64(c.TableID), uint64(c.ID))
	cols := innerCopy(t, t.next.columns, c.TableID)
	cols[nv.ID] = nv
}

func (t *Transaction) endColumn(c *Column) {
	retire(t, c, keys.KindColumn, encodeColumn, uint64(c.TableID), uint64(c.ID))
}

// RenameColumn renames a column.
func (t *Transaction) RenameColumn(table TableID, id ColumnID, name string) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	if err := checkName("column", name); err != nil {
		return err
	}
	for _, o := range t.next.columns[table] {
		if o.ID != id && o.Name == name && ptrEq(o.Parent, c.Parent) {
			return errorf(AlreadyExists, "column %q already exists in table %d", name, table)
		}
	}
	nv := *c
	nv.Name = name
	t.newVersionColumn(c, &nv)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// AlterColumn changes a column's type, default or nullability.
func (t *Transaction) AlterColumn(table TableID, id ColumnID, ch ColumnChange) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	nv := *c
	if ch.Type != nil {
		if *ch.Type == "" {
			return errorf(InvalidArgument, "column %q: empty type", c.Name)
		}
		nv.Type = *ch.Type
	}
	if ch.DropDefault {
		nv.DefaultValue = nil
	} else if ch.Default != nil {
		nv.DefaultValue = ch.Default
	}
	if ch.NullsAllowed != nil {
		if !*ch.NullsAllowed && c.NullsAllowed {
			if err := t.checkNoNulls(table, c); err != nil {
				return err
			}
		}
		nv.NullsAllowed = *ch.NullsAllowed
	}
	t.newVersionColumn(c, &nv)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// DropColumn drops a column and its nested children.
func (t *Transaction) DropColumn(table TableID, id ColumnID) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	var drop func(c *Column)
	cols := innerCopy(t, t.next.columns, table)
	drop = func(c *Column) {
		for _, o := range cols {
			if o.Parent != nil && *o.Parent == c.ID {
				drop(o)
			}
		}
		t.endColumn(c)
		delete(cols, c.ID)
	}
	drop(c)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// ---- data and delete files ----

// RegisterDataFile adds a data file to a table and updates its stats
// (record count, next row id, size).
func (t *Transaction) RegisterDataFile(def DataFileDef) (DataFileID, error) {
	if _, err := t.tableOf(def.TableID); err != nil {
		return 0, err
	}
	if def.Path == "" {
		return 0, errorf(InvalidArgument, "data file for table %d has no path", def.TableID)
	}
	st := t.statsFor(def.TableID)
	id := DataFileID(t.allocFileID())
	f := &DataFile{TableID: def.TableID, ID: id, Versioned: Versioned{Begin: t.id}, Path: def.Path, PathIsRelative: def.PathIsRelative,
		Format: def.Format, RecordCount: def.RecordCount, FileSizeBytes: def.FileSizeBytes, FooterSize: ptrTo(def.FooterSize),
		PartitionID: def.PartitionID, EncryptionKey: def.EncryptionKey, PartialFileInfo: def.PartialFileInfo,
		MappingID: def.MappingID, PartitionValues: slices.Clone(def.PartitionValues)}
	if f.Format == "" {
		f.Format = "parquet"
	}
	f.FileOrder = ptrTo(uint64(id))
	if def.FileOrder != nil {
		f.FileOrder = ptrTo(*def.FileOrder)
	}
	f.RowIDStart = ptrTo(st.NextRowID)
	if def.RowIDStart != nil {
		f.RowIDStart = ptrTo(*def.RowIDStart)
	}
	files := innerCopy(t, t.next.dataFiles, def.TableID)
	files[id] = f
	t.put(keys.CurrentDataFile(uint64(def.TableID), uint64(id)), encodeDataFile(f))
	nst := *st
	nst.RecordCount += def.RecordCount
	nst.FileSizeBytes += def.FileSizeBytes
	if e := *f.RowIDStart + def.RecordCount; e > nst.NextRowID {
		nst.NextRowID = e
	}
	t.setStats(&nst)
	for _, cs := range def.ColumnStats {
		cs.TableID, cs.DataFileID = def.TableID, id
		if err := t.SetFileColumnStats(cs); err != nil {
			return 0, err
		}
	}
	t.noteTable(chInsertedInto, def.TableID)
	return id, nil
}

func (t *Transaction) statsFor(table TableID) *TableStats {
	if st, ok := t.next.tableStats[table]; ok {
		return st
	}
	return &TableStats{TableID: table}
}

func (t *Transaction) setStats(st *TableStats) {
	t.next.tableStats[st.TableID] = st
	t.put(keys.CurrentTableStats(uint64(st.TableID)), encodeTableStats(st))
}

func (t *Transaction) endDataFile(f *DataFile) {
	retire(t, f, keys.KindDataFile, encodeDataFile, uint64(f.TableID), uint64(f.ID))
}

// ExpireDataFile ends a data file (after a merge or rewrite replaced it)
// along with its delete files, and takes its rows out of the table stats.
func (t *Transaction) ExpireDataFile(table TableID, id DataFileID) error {
	if _, err := t.tableOf(table); err != nil {
		return err
	}
	f, ok := t.next.dataFiles[table][id]
	if !ok {
		return errorf(NotFound, "data file %d is not live in table %d", id, table)
	}
	files := innerCopy(t, t.next.dataFiles, table)
	delete(files, id)
	t.endDataFile(f)
	for _, d := range t.next.deleteFiles[table] {
		if d.DataFileID == id {
			dels := innerCopy(t, t.next.deleteFiles, table)
			delete(dels, d.ID)
			t.endDeleteFile(d)
		}
	}
	st := *t.statsFor(table)
	st.RecordCount = subFloor(st.RecordCount, f.RecordCount)
	st.FileSizeBytes = subFloor(st.FileSizeBytes, f.FileSizeBytes)
	t.setStats(&st)
	t.noteTable(chMergeAdjacent, table)
	return nil
}

func subFloor(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// RegisterDeleteFile records deleted rows of one data file.
func (t *Transaction) RegisterDeleteFile(def DeleteFileDef) (DeleteFileID, error) {
	if _, err := t.tableOf(def.TableID); err != nil {
		return 0, err
	}
	if _, ok := t.next.dataFiles[def.TableID][def.DataFileID]; !ok {
		return 0, errorf(NotFound, "data file %d is not live in table %d", def.DataFileID, def.TableID)
	}
	if def.Path == "" {
		return 0, errorf(InvalidArgument, "delete file for data file %d has no path", def.DataFileID)
	}
	id := DeleteFileID(t.allocFileID())
	d := &DeleteFile{TableID: def.TableID, ID: id, Versioned: Versioned{Begin: t.id}, DataFileID: def.DataFileID,
		Path: def.Path, PathIsRelative: def.PathIsRelative, Format: def.Format, DeleteCount: def.DeleteCount,
		FileSizeBytes: def.FileSizeBytes, FooterSize: ptrTo(def.FooterSize), EncryptionKey: def.EncryptionKey}
	if d.Format == "" {
		d.Format = "parquet"
	}
	dels := innerCopy(t, t.next.deleteFiles, def.TableID)
	dels[id] = d
	t.put(keys.CurrentDeleteFile(uint64(def.TableID), uint64(id)), encodeDeleteFile(d))
	t.indexDeleteTarget(d, true)
	t.deletedFiles = append(t.deletedFiles, def.DataFileID)
	t.noteTable(chDeletedFrom, def.TableID)
	return id, nil
}

// indexDeleteTarget stages (live) or removes the delete-target index entry
// of d, in formats that keep the index.
func (t *Transaction) indexDeleteTarget(d *DeleteFile, live bool) {
	if !hasDeleteTargets(t.format) {
		return
	}
	k := keys.DeleteTarget(uint64(d.TableID), uint64(d.DataFileID), uint64(d.ID))
	if live {
		t.put(k, encodeDeleteTarget())
	} else {
		t.del(k)
	}
}

func (t *Transaction) endDeleteFile(d *DeleteFile) {
	t.del(keys.CurrentDeleteFile(uint64(d.TableID), uint64(d.ID)))
	t.indexDeleteTarget(d, false)
	recordEnd(t, d, keys.KindDeleteFile, encodeDeleteFile, uint64(d.TableID), uint64(d.ID))
}

// ExpireDeleteFile ends a delete file (after a rewrite folded it in).
func (t *Transaction) ExpireDeleteFile(table TableID, id DeleteFileID) error {
	if _, err := t.tableOf(table); err != nil {
		return err
	}
	d, ok := t.next.deleteFiles[table][id]
	if !ok {
		return errorf(NotFound, "delete file %d is not live in table %d", id, table)
	}
	dels := innerCopy(t, t.next.deleteFiles, table)
	delete(dels, id)
	t.endDeleteFile(d)
	t.noteTable(chRewriteDelete, table)
	return nil
}

// ---- statistics ----

// UpdateTableStats overwrites a table's statistics. Overwriting the
// statistics of a table that existed before the transaction records
// altered_table in changes_made (see noteStatsOverwrite).
func (t *Transaction) UpdateTableStats(st TableStats) error {
	tb, err := t.tableOf(st.TableID)
	if err != nil {
		return err
	}
	t.setStats(&st)
	t.noteStatsOverwrite(tb.ID, tb.Begin)
	return nil
}

// UpdateColumnStats overwrites one column's table-level statistics (and
// records altered_table like UpdateTableStats).
func (t *Transaction) UpdateColumnStats(cs TableColumnStats) error {
	if _, err := t.columnOf(cs.TableID, cs.ColumnID); err != nil {
		return err
	}
	t.setColumnStats(&cs)
	t.noteStatsOverwrite(cs.TableID, t.next.tables[cs.TableID].Begin)
	return nil
}

// noteStatsOverwrite notes an overwrite of statistics the transaction did
// not create; a transaction that changed nothing else of the table records
// it as altered_table (noteStatsOnlyChanges), DuckLake's word for a change
// to a table's definition: a stats-only commit then says what it changed, and
// two concurrent overwrites of one table's statistics conflict (altered
// against altered) instead of the later silently replacing the earlier;
// an insert racing it conflicts too, as DuckLake's own check refuses an
// insert into a table altered meanwhile. Statistics of a table or data
// file created in the same transaction are part of that creation.
func (t *Transaction) noteStatsOverwrite(table TableID, begin SnapshotID) {
	if begin == t.id {
		return
	}
	if t.statsOverwrites == nil {
		t.statsOverwrites = map[TableID]bool{}
	}
	t.statsOverwrites[table] = true
}

// noteStatsOnlyChanges records altered_table for every table whose
// statistics the transaction overwrote without changing its data: an
// insert, delete, compaction or flush of the same table already says so
// (it updates the table's statistics as part of it), and two inserts must
// not conflict over that.
func (t *Transaction) noteStatsOnlyChanges() {
	for table := range t.statsOverwrites {
		data := false
		for _, c := range t.changes {
			switch c.Kind {
			case chInsertedInto, chDeletedFrom, chCompacted, chMergeAdjacent, chRewriteDelete, chFlushedInlined, chAlteredTable, chCreatedTable, chDroppedTable:
				data = data || c.ID == uint64(table)
			}
		}
		if !data {
			t.noteTable(chAlteredTable, table)
		}
	}
}

func (t *Transaction) setColumnStats(cs *TableColumnStats) {
	innerCopy(t, t.next.colStats, cs.TableID)[cs.ColumnID] = cs
	t.put(keys.CurrentTableColumnStats(uint64(cs.TableID), uint64(cs.ColumnID)), encodeTableColumnStats(cs))
}

// SetFileColumnStats records one column's statistics for a data file
// (for a file the transaction did not register, an overwrite: altered_table,
// see noteStatsOverwrite).
func (t *Transaction) SetFileColumnStats(cs FileColumnStats) error {
	if _, ok := t.next.dataFiles[cs.TableID][cs.DataFileID]; !ok {
		return errorf(NotFound, "data file %d is not live in table %d", cs.DataFileID, cs.TableID)
	}
	if _, err := t.columnOf(cs.TableID, cs.ColumnID); err != nil {
		return err
	}
	t.setFileStats(&cs)
	t.noteStatsOverwrite(cs.TableID, t.next.dataFiles[cs.TableID][cs.DataFileID].Begin)
	return nil
}

func (t *Transaction) setFileStats(cs *FileColumnStats) {
	innerCopy(t, t.next.fileStats, cs.DataFileID)[cs.ColumnID] = cs
	t.put(keys.CurrentFileColumnStats(uint64(cs.TableID), uint64(cs.DataFileID), uint64(cs.ColumnID)), encodeFileColumnStats(cs))
}

// ---- views ----

// CreateView creates a view.
func (t *Transaction) CreateView(schema SchemaID, name, sql, dialect, columnAliases string) (ViewID, error) {
	s, err := t.schemaOf(schema)
	if err != nil {
		return 0, err
	}
	if err := checkName("view", name); err != nil {
		return 0, err
	}
	if t.relationNameTaken(schema, name) {
		return 0, errorf(AlreadyExists, "a table or view named %q already exists in schema %q", name, s.Name)
	}
	if dialect == "" {
		dialect = "duckdb"
	}
	v := &View{ID: ViewID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(), SchemaID: schema,
		Name: name, Dialect: dialect, SQL: sql, ColumnAliases: columnAliases}
	t.next.views[v.ID] = v
	byName := innerCopy(t, t.next.viewByName, schema)
	byName[name] = v.ID
	t.put(keys.CurrentView(uint64(v.ID)), encodeView(v))
	t.touchName(keys.NameView, uint64(schema), name)
	t.note(change{Kind: chCreatedView, Name: []string{s.Name, name}})
	t.shape(0)
	return v.ID, nil
}

// AlterView replaces a view's SQL (and optionally renames it).
func (t *Transaction) AlterView(id ViewID, name, sql string) error {
	v, ok := t.next.views[id]
	if !ok {
		return errorf(NotFound, "view %d does not exist", id)
	}
	nv := *v
	if name != "" && name != v.Name {
		if err := checkName("view", name); err != nil {
			return err
		}
		if t.relationNameTaken(v.SchemaID, name) {
			return errorf(AlreadyExists, "a table or view named %q already exists in schema %d", name, v.SchemaID)
		}
		byName := innerCopy(t, t.next.viewByName, v.SchemaID)
		delete(byName, v.Name)
		byName[name] = id
		t.touchName(keys.NameView, uint64(v.SchemaID), v.Name)
		t.touchName(keys.NameView, uint64(v.SchemaID), name)
		nv.Name = name
	}
	if sql != "" {
		nv.SQL = sql
	}
	replaceVersion(t, v, &nv, keys.KindView, encodeView, uint64(id))
	t.next.views[id] = &nv
	t.note(change{Kind: chAlteredView, ID: uint64(id)})
	t.shape(0)
	return nil
}

// DropView drops a view.
func (t *Transaction) DropView(id ViewID) error {
	v, ok := t.next.views[id]
	if !ok {
		return errorf(NotFound, "view %d does not exist", id)
	}
	delete(t.next.views, id)
	byName := innerCopy(t, t.next.viewByName, v.SchemaID)
	delete(byName, v.Name)
	retire(t, v, keys.KindView, encodeView, uint64(id))
	t.touchName(keys.NameView, uint64(v.SchemaID), v.Name)
	t.note(change{Kind: chDroppedView, ID: uint64(id)})
	t.shape(0)
	return nil
}

// ---- tags and options ----

// SetTag sets (or replaces) a tag on a schema, table or view id.
func (t *Transaction) SetTag(object uint64, key, value string) error {
	if key == "" {
		return errorf(InvalidArgument, "tag key is empty")
	}
	tags := t.tagsFor(object)
	for i := range tags.Entries {
		e := &tags.Entries[i]
		if e.Key == key && e.End == nil {
			if e.Value == value {
				return nil
			}
			e.End = end(t.id)
		}
	}
	tags.Entries = append(tags.Entries, TagEntry{Versioned: Versioned{Begin: t.id}, Key: key, Value: value})
	t.putTags(tags)
	return nil
}

// RemoveTag ends a tag.
func (t *Transaction) RemoveTag(object uint64, key string) error {
	tags := t.tagsFor(object)
	found := false
	for i := range tags.Entries {
		e := &tags.Entries[i]
		if e.Key == key && e.End == nil {
			e.End = end(t.id)
			found = true
		}
	}
	if !found {
		return errorf(NotFound, "object %d has no tag %q", object, key)
	}
	t.putTags(tags)
	return nil
}

func (t *Transaction) tagsFor(object uint64) *Tags {
	if old, ok := t.next.tags[object]; ok {
		return &Tags{ObjectID: object, Entries: slices.Clone(old.Entries)}
	}
	return &Tags{ObjectID: object}
}

func (t *Transaction) putTags(tags *Tags) {
	t.setTags(tags)
	t.shape(0)
}

func (t *Transaction) setTags(tags *Tags) {
	t.next.tags[tags.ObjectID] = tags
	t.put(keys.CurrentTag(tags.ObjectID), encodeTags(tags))
}

// SetOption sets a ducklake_metadata value.
func (t *Transaction) SetOption(scope OptionScope, scopeID uint64, key, value string) error {
	if key == "" {
		return errorf(InvalidArgument, "option key is empty")
	}
	o := t.optionsFor(scope, scopeID)
	o.Values[key] = value
	t.putOptions(o)
	return nil
}

// UnsetOption removes a ducklake_metadata value.
func (t *Transaction) UnsetOption(scope OptionScope, scopeID uint64, key string) error {
	o := t.optionsFor(scope, scopeID)
	if _, ok := o.Values[key]; !ok {
		return errorf(NotFound, "option %q is not set in scope %s %d", key, scope, scopeID)
	}
	delete(o.Values, key)
	t.putOptions(o)
	return nil
}

func (t *Transaction) optionsFor(scope OptionScope, id uint64) *Options {
	o := &Options{Scope: scope, ScopeID: id, Values: map[string]string{}}
	if old, ok := t.next.options[scopeKey{scope, id}]; ok {
		o.Values = maps.Clone(old.Values)
	}
	return o
}

func (t *Transaction) putOptions(o *Options) {
	t.next.options[scopeKey{o.Scope, o.ScopeID}] = o
	t.put(keys.CurrentOption(uint64(o.Scope), o.ScopeID), encodeOptions(o))
}

// ---- partitioning, sorting, mappings ----

// SetPartitioning replaces a table's partition spec.
func (t *Transaction) SetPartitioning(table TableID, cols []PartitionColumn) (PartitionID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	for _, pc := range cols {
		if _, ok := t.next.columns[table][pc.ColumnID]; !ok {
			return 0, errorf(NotFound, "partition column %d does not exist in table %d", pc.ColumnID, table)
		}
	}
	if old, ok := t.next.partitions[table]; ok {
		t.endPartition(old)
	}
	p := &Partition{TableID: table, ID: PartitionID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, Columns: slices.Clone(cols)}
	t.next.partitions[table] = p
	t.put(keys.CurrentPartition(uint64(table), uint64(p.ID)), encodePartition(p))
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return p.ID, nil
}

// ClearPartitioning removes a table's partition spec.
func (t *Transaction) ClearPartitioning(table TableID) error {
	p, ok := t.next.partitions[table]
	if !ok {
		return errorf(NotFound, "table %d is not partitioned", table)
	}
	t.endPartition(p)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

func (t *Transaction) endPartition(p *Partition) {
	delete(t.next.partitions, p.TableID)
	retire(t, p, keys.KindPartition, encodePartition, uint64(p.TableID), uint64(p.ID))
}

// SetSorting replaces a table's sort order.
func (t *Transaction) SetSorting(table TableID, exprs []SortExpression) (SortID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	if old, ok := t.next.sorts[table]; ok {
		t.endSort(old)
	}
	s := &Sort{TableID: table, ID: SortID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, Expressions: slices.Clone(exprs)}
	t.next.sorts[table] = s
	t.put(keys.CurrentSort(uint64(table), uint64(s.ID)), encodeSort(s))
	t.noteTable(chAlteredTable, table)
	return s.ID, nil
}

// ClearSorting removes a table's sort order.
func (t *Transaction) ClearSorting(table TableID) error {
	s, ok := t.next.sorts[table]
	if !ok {
		return errorf(NotFound, "table %d has no sort order", table)
	}
	t.endSort(s)
	t.noteTable(chAlteredTable, table)
	return nil
}

func (t *Transaction) endSort(s *Sort) {
	delete(t.next.sorts, s.TableID)
	retire(t, s, keys.KindSort, encodeSort, uint64(s.TableID), uint64(s.ID))
}

// CreateMapping records a column mapping (immutable once created).
func (t *Transaction) CreateMapping(table TableID, typ string, names []NameMapping) (MappingID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	m := &Mapping{TableID: table, ID: MappingID(t.allocCatalogID()), Type: typ, Names: slices.Clone(names)}
	t.setMapping(m)
	return m.ID, nil
}

func (t *Transaction) setMapping(m *Mapping) {
	t.next.mappings[m.ID] = m
	t.put(keys.CurrentMapping(uint64(m.TableID), uint64(m.ID)), encodeMapping(m))
}
