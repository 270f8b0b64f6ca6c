package core

// rows.go is the row-level entry point. DuckLake writes its catalog as rows
// it computed itself: the ids it allocated (from next_catalog_id and
// next_file_id, column ids per table), the snapshot record with its
// changes_made, schema versions, statistics. The Transaction verbs
// (txn_schema.go, txn_files.go, txn_meta.go) allocate ids and derive all
// of that, so DuckLake's rows go through this entry point instead: a
// transaction from BeginRows stages entities exactly as given (Put* and
// Delete*), checks what the catalog's own structure needs
// (one live version per entity, names unique among the live ones, the
// snapshot that follows the head), and lands as one batch like any
// explicit transaction. Package ducklake translates DuckLake's rows into
// these calls.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/moraine-go/moraine/core/keys"
)

// rowsState is what a rows-mode transaction stages beyond its writes.
type rowsState struct {
	genesis  bool      // the store held no lake: this commit creates it
	snapshot *Snapshot // the snapshot this commit mints, if any
	// ownedInlined marks the tables whose t.next.inlined slice this
	// transaction already copied from the base (and may modify in place).
	ownedInlined map[TableID]bool
	// rowVersions counts a table's inlined rows by row id, built on first
	// use (otherVersionOf) and kept by setInlinedChunk.
	rowVersions map[TableID]map[uint64]int
}

// BeginRows starts a transaction that stages DuckLake's rows as given,
// prepared against expect: the head the caller's reads were made at. If
// anything committed since, it fails with CommitConflict (the caller
// re-reads and tries again, as DuckLake does on "conflict"). On a store
// opened with LeaveEmpty that holds no lake yet, the transaction creates
// the lake: its snapshot must be snapshot 0 (expect is the zero Head).
func (c *Catalog) BeginRows(ctx context.Context, expect Head) (*Transaction, error) {
	c.mu.Lock()
	closed, empty := c.closed, c.empty
	c.mu.Unlock()
	if !empty {
		// Begin refuses a read-only or closed handle.
		t, err := c.Begin(ctx)
		if err != nil {
			return nil, err
		}
		if t.head != expect {
			e := errorf(CommitConflict, "conflict: the lake moved from snapshot %d (batch %d) to snapshot %d (batch %d) since this transaction read it; read it again and retry",
				expect.SnapshotID, expect.BatchSeq, t.head.SnapshotID, t.head.BatchSeq)
			// Moved by nothing but a peer's claim (claim.go)?
			e.claimed = c.clog != nil && t.head.SnapshotID == expect.SnapshotID && t.head.BatchSeq == expect.BatchSeq+1 && c.clog.claimedBy(ctx, t.sess)
			t.Rollback()
			return nil, e
		}
		t.rows = &rowsState{}
		return t, nil
	}
	// Only a read-write open is ever empty.
	if closed {
		return nil, errorf(InvalidArgument, "the catalog handle is closed")
	}
	if expect != (Head{}) {
		return nil, errorf(CommitConflict, "conflict: this transaction read snapshot %d, but the store holds no lake", expect.SnapshotID)
	}
	sess, err := c.newSession(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok, err := readHead(ctx, sess); err != nil || ok {
		sess.release()
		if err == nil {
			err = errorf(CommitConflict, "conflict: another open created a lake in this store since this transaction read it; read it again and retry")
		}
		return nil, err
	}
	base := newCatalogView()
	t := newTransaction(base, time.Now().UTC().Truncate(time.Microsecond), FormatCurrent)
	t.id = 0
	t.cat, t.sess = c, sess
	t.rows = &rowsState{genesis: true}
	return t, nil
}

// Landed is the head of the transaction's view: once Commit succeeds, the
// head it landed (its snapshot and batch counter); before that (or after a
// failed Commit), the head the transaction began from — the zero Head for
// a transaction that creates the lake.
func (t *Transaction) Landed() Head { return t.next.head }

func (t *Transaction) checkRows(what string) error {
	if t.rows == nil {
		return errorf(InvalidArgument, "%s is for transactions from Catalog.BeginRows", what)
	}
	return nil
}

// ---- snapshots ----

// PutSnapshot stages the snapshot this commit mints: the ducklake_snapshot
// row joined with its ducklake_snapshot_changes row. It must follow the
// head (snapshot 0 when the commit creates the lake), its counters must not
// fall below the head's, and changes_made must parse.
func (t *Transaction) PutSnapshot(s Snapshot) error {
	if err := t.checkRows("PutSnapshot"); err != nil {
		return err
	}
	if t.rows.snapshot != nil {
		return errorf(InvalidArgument, "a commit mints one snapshot; got snapshot %d and %d", t.rows.snapshot.ID, s.ID)
	}
	if s.ID != t.id {
		return errorf(CommitConflict, "conflict: snapshot %d does not follow the head (the next snapshot is %d); read the lake again and retry", s.ID, t.id)
	}
	if !t.rows.genesis {
		b := t.base.snap
		switch {
		case s.NextCatalogID < b.NextCatalogID:
			return errorf(InvalidArgument, "snapshot %d: next_catalog_id %d is below the head's %d", s.ID, s.NextCatalogID, b.NextCatalogID)
		case s.NextFileID < b.NextFileID:
			return errorf(InvalidArgument, "snapshot %d: next_file_id %d is below the head's %d", s.ID, s.NextFileID, b.NextFileID)
		case s.SchemaVersion < b.SchemaVersion:
			return errorf(InvalidArgument, "snapshot %d: schema_version %d is below the head's %d", s.ID, s.SchemaVersion, b.SchemaVersion)
		}
	}
	chs, err := parseChanges(s.ChangesMade)
	if err != nil {
		return errorf(InvalidArgument, "snapshot %d: %v", s.ID, err)
	}
	for _, p := range []*string{s.Author, s.CommitMessage, s.CommitExtraInfo} {
		if p != nil && !utf8.ValidString(*p) {
			return errorf(InvalidArgument, "snapshot %d: author, commit message and extra info must be valid UTF-8", s.ID)
		}
	}
	s.SchemaChangedTables, s.DeletedDataFiles = nil, nil
	t.changes = chs
	t.rows.snapshot = &s
	return nil
}

// DeleteSnapshot removes an older snapshot's record (expire_snapshots):
// time travel to it is refused afterwards. The head's snapshot stays.
func (t *Transaction) DeleteSnapshot(id SnapshotID) error {
	if err := t.checkRows("DeleteSnapshot"); err != nil {
		return err
	}
	if t.rows.genesis || id >= t.base.snap.ID {
		return errorf(InvalidArgument, "snapshot %d cannot be deleted: only snapshots before the head (%d) can", id, t.base.snap.ID)
	}
	t.del(keys.Snapshot(uint64(id)))
	return nil
}

// ---- versioned entities ----

// live reads, sets and drops the live version of one kind of entity in the
// transaction's view (t.next), keeping its name indexes.
type live[E any] struct {
	get  func(t *Transaction, e *E) (*E, bool)
	set  func(t *Transaction, e *E)
	drop func(t *Transaction, e *E)
}

// putVersion stages one version of an entity as given: a live version
// (End nil) becomes the entity's current one, an ended version its history
// record at End; ending the live version (the same Begin) removes it from
// current. what names the entity in errors (called only on one).
func putVersion[E any, P interface {
	*E
	versionedEntity
}](t *Transaction, e P, what func() string, kind keys.Kind, encode func(P) []byte, lv live[E], comps ...uint64) error {
	v := e.version()
	if v.Begin > t.id {
		return errorf(InvalidArgument, "%s: begin_snapshot %d is after the snapshot this commit mints (%d)", what(), v.Begin, t.id)
	}
	cur, ok := lv.get(t, (*E)(e))
	if v.End == nil {
		if ok && P(cur).version().Begin != v.Begin {
			return errorf(Constraint, "%s: a version that began at snapshot %d is still live; end it before adding the one that begins at %d", what(), P(cur).version().Begin, v.Begin)
		}
		t.put(keys.Current(kind, comps...), encode(e))
		lv.set(t, (*E)(e))
		return nil
	}
	if *v.End <= v.Begin || *v.End > t.id {
		return errorf(InvalidArgument, "%s: end_snapshot %d must be after begin_snapshot %d and no later than %d", what(), *v.End, v.Begin, t.id)
	}
	t.put(keys.History(kind, uint64(*v.End), comps...), encode(e))
	if ok && P(cur).version().Begin == v.Begin {
		t.del(keys.Current(kind, comps...))
		lv.drop(t, cur)
	}
	return nil
}

// deleteVersion removes a version (expire_snapshots, cleanup): the live one
// when end is nil, else the history record ended at *end.
func deleteVersion[E any, P interface {
	*E
	versionedEntity
}](t *Transaction, key *E, begin SnapshotID, end *SnapshotID, what func() string, kind keys.Kind, lv live[E], comps ...uint64) error {
	if end != nil {
		t.del(keys.History(kind, uint64(*end), comps...))
		return nil
	}
	cur, ok := lv.get(t, key)
	if !ok || P(cur).version().Begin != begin {
		return errorf(NotFound, "%s: no live version that began at snapshot %d", what(), begin)
	}
	t.del(keys.Current(kind, comps...))
	lv.drop(t, cur)
	return nil
}

var liveSchema = live[Schema]{
	get: func(t *Transaction, e *Schema) (*Schema, bool) { s, ok := t.next.schemas[e.ID]; return s, ok },
	set: func(t *Transaction, e *Schema) {
		if old, ok := t.next.schemas[e.ID]; ok && old.Name != e.Name {
			delete(t.next.schemaByName, old.Name)
			t.touchName(keys.NameSchema, 0, old.Name)
		}
		c := *e
		t.next.schemas[e.ID] = &c
		t.next.schemaByName[e.Name] = e.ID
		t.touchName(keys.NameSchema, 0, e.Name)
	},
	drop: func(t *Transaction, e *Schema) {
		delete(t.next.schemas, e.ID)
		if t.next.schemaByName[e.Name] == e.ID {
			delete(t.next.schemaByName, e.Name)
		}
		t.touchName(keys.NameSchema, 0, e.Name)
	},
}

// PutSchema stages a ducklake_schema row.
func (t *Transaction) PutSchema(s Schema) error {
	if err := t.checkRows("PutSchema"); err != nil {
		return err
	}
	if err := checkName("schema", s.Name); err != nil {
		return err
	}
	if s.End == nil {
		if id, ok := t.next.schemaByName[s.Name]; ok && id != s.ID {
			return errorf(AlreadyExists, "schema %q already exists (schema %d)", s.Name, id)
		}
	}
	return putVersion(t, &s, func() string { return fmt.Sprintf("schema %d", s.ID) }, keys.KindSchema, encodeSchema, liveSchema, uint64(s.ID))
}

// DeleteSchema removes a ducklake_schema row.
func (t *Transaction) DeleteSchema(id SchemaID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteSchema"); err != nil {
		return err
	}
	return deleteVersion[Schema](t, &Schema{ID: id}, begin, end, func() string { return fmt.Sprintf("schema %d", id) },
		keys.KindSchema, liveSchema, uint64(id))
}

// liveInSchema is the live[E] of a relation named within its schema
// (tables, views): byID and byName pick its maps in a snapshot, key reads
// its id, schema and name, and kind is its name-directory kind.
func liveInSchema[ID comparable, E any](kind keys.NameKind, byID func(*CatalogView) map[ID]*E,
	byName func(*CatalogView) map[SchemaID]map[string]ID, key func(*E) (ID, SchemaID, string)) live[E] {
	return live[E]{
		get: func(t *Transaction, e *E) (*E, bool) {
			id, _, _ := key(e)
			x, ok := byID(t.next)[id]
			return x, ok
		},
		set: func(t *Transaction, e *E) {
			id, schema, name := key(e)
			if old, ok := byID(t.next)[id]; ok {
				if _, oldSchema, oldName := key(old); oldName != name || oldSchema != schema {
					delete(innerCopy(t, byName(t.next), oldSchema), oldName)
					t.touchName(kind, uint64(oldSchema), oldName)
				}
			}
			c := *e
			byID(t.next)[id] = &c
			innerCopy(t, byName(t.next), schema)[name] = id
			t.touchName(kind, uint64(schema), name)
		},
		drop: func(t *Transaction, e *E) {
			id, schema, name := key(e)
			delete(byID(t.next), id)
			names := innerCopy(t, byName(t.next), schema)
			if names[name] == id {
				delete(names, name)
			}
			t.touchName(kind, uint64(schema), name)
		},
	}
}

var liveTable = liveInSchema(keys.NameTable,
	func(s *CatalogView) map[TableID]*Table { return s.tables },
	func(s *CatalogView) map[SchemaID]map[string]TableID { return s.tableByName },
	func(e *Table) (TableID, SchemaID, string) { return e.ID, e.SchemaID, e.Name })

// PutTable stages a ducklake_table row.
func (t *Transaction) PutTable(tb Table) error {
	if err := t.checkRows("PutTable"); err != nil {
		return err
	}
	if err := checkName("table", tb.Name); err != nil {
		return err
	}
	if tb.End == nil {
		if id, ok := t.next.tableByName[tb.SchemaID][tb.Name]; ok && id != tb.ID {
			return errorf(AlreadyExists, "table %q already exists in schema %d (table %d)", tb.Name, tb.SchemaID, id)
		}
	}
	return putVersion(t, &tb, func() string { return fmt.Sprintf("table %d", tb.ID) }, keys.KindTable, encodeTable, liveTable, uint64(tb.ID))
}

// DeleteTable removes a ducklake_table row.
func (t *Transaction) DeleteTable(id TableID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteTable"); err != nil {
		return err
	}
	return deleteVersion[Table](t, &Table{ID: id}, begin, end, func() string { return fmt.Sprintf("table %d", id) },
		keys.KindTable, liveTable, uint64(id))
}

var liveView = liveInSchema(keys.NameView,
	func(s *CatalogView) map[ViewID]*View { return s.views },
	func(s *CatalogView) map[SchemaID]map[string]ViewID { return s.viewByName },
	func(e *View) (ViewID, SchemaID, string) { return e.ID, e.SchemaID, e.Name })

// PutView stages a ducklake_view row.
func (t *Transaction) PutView(v View) error {
	if err := t.checkRows("PutView"); err != nil {
		return err
	}
	if err := checkName("view", v.Name); err != nil {
		return err
	}
	if v.End == nil {
		if id, ok := t.next.viewByName[v.SchemaID][v.Name]; ok && id != v.ID {
			return errorf(AlreadyExists, "view %q already exists in schema %d (view %d)", v.Name, v.SchemaID, id)
		}
	}
	return putVersion(t, &v, func() string { return fmt.Sprintf("view %d", v.ID) }, keys.KindView, encodeView, liveView, uint64(v.ID))
}

// DeleteView removes a ducklake_view row.
func (t *Transaction) DeleteView(id ViewID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteView"); err != nil {
		return err
	}
	return deleteVersion[View](t, &View{ID: id}, begin, end, func() string { return fmt.Sprintf("view %d", id) },
		keys.KindView, liveView, uint64(id))
}

// liveMacro keeps a macro's name (macroKey) within its schema; macros are
// not in the name directory (nothing looks them up through the store).
var liveMacro = live[Macro]{
	get: func(t *Transaction, e *Macro) (*Macro, bool) {
		x, ok := t.next.macros[e.ID]
		return x, ok
	},
	set: func(t *Transaction, e *Macro) {
		if old, ok := t.next.macros[e.ID]; ok {
			delete(innerCopy(t, t.next.macroByName, old.SchemaID), macroKey(old.kind(), old.Name))
		}
		c := e.clone()
		t.next.macros[e.ID] = &c
		innerCopy(t, t.next.macroByName, e.SchemaID)[macroKey(e.kind(), e.Name)] = e.ID
	},
	drop: func(t *Transaction, e *Macro) {
		delete(t.next.macros, e.ID)
		names := innerCopy(t, t.next.macroByName, e.SchemaID)
		if k := macroKey(e.kind(), e.Name); names[k] == e.ID {
			delete(names, k)
		}
	},
}

// PutMacro stages a ducklake_macro row with its implementations and their
// parameters (ducklake_macro_impl, ducklake_macro_parameters): the macro
// as a whole, as the key holds it (format 13+).
func (t *Transaction) PutMacro(m Macro) error {
	if err := t.checkRows("PutMacro"); err != nil {
		return err
	}
	if err := t.needsDuckLake10("a macro"); err != nil {
		return err
	}
	if err := checkName("macro", m.Name); err != nil {
		return err
	}
	if m.End == nil {
		if id, ok := t.next.macroByName[m.SchemaID][macroKey(m.kind(), m.Name)]; ok && id != m.ID {
			return errorf(AlreadyExists, "%s macro %q already exists in schema %d (macro %d)", m.kind(), m.Name, m.SchemaID, id)
		}
	}
	return putVersion(t, &m, func() string { return fmt.Sprintf("macro %d", m.ID) }, keys.KindMacro, encodeMacro, liveMacro, uint64(m.ID))
}

// DeleteMacro removes a ducklake_macro row (with its implementations).
func (t *Transaction) DeleteMacro(id MacroID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteMacro"); err != nil {
		return err
	}
	return deleteVersion[Macro](t, &Macro{ID: id}, begin, end, func() string { return fmt.Sprintf("macro %d", id) },
		keys.KindMacro, liveMacro, uint64(id))
}

// liveInTable is the live[E] of an entity kept per table (columns, data
// and delete files): byTable picks its map in a snapshot, key reads its
// table and id.
func liveInTable[ID comparable, E any](byTable func(*CatalogView) map[TableID]map[ID]*E, key func(*E) (TableID, ID)) live[E] {
	return live[E]{
		get: func(t *Transaction, e *E) (*E, bool) {
			table, id := key(e)
			x, ok := byTable(t.next)[table][id]
			return x, ok
		},
		set: func(t *Transaction, e *E) {
			table, id := key(e)
			c := *e
			innerCopy(t, byTable(t.next), table)[id] = &c
		},
		drop: func(t *Transaction, e *E) {
			table, id := key(e)
			delete(innerCopy(t, byTable(t.next), table), id)
		},
	}
}

var liveColumn = liveInTable(func(s *CatalogView) map[TableID]map[ColumnID]*Column { return s.columns },
	func(e *Column) (TableID, ColumnID) { return e.TableID, e.ID })

// PutColumn stages a ducklake_column row (with the ducklake_column_tag rows
// the translation attaches to it). Column ids are the table's own.
func (t *Transaction) PutColumn(c Column) error {
	if err := t.checkRows("PutColumn"); err != nil {
		return err
	}
	if err := checkName("column", c.Name); err != nil {
		return err
	}
	if c.Type == "" {
		return errorf(InvalidArgument, "column %d of table %d has no type", c.ID, c.TableID)
	}
	return putVersion(t, &c, func() string { return fmt.Sprintf("column %d of table %d", c.ID, c.TableID) },
		keys.KindColumn, encodeColumn, liveColumn, uint64(c.TableID), uint64(c.ID))
}

// DeleteColumn removes a ducklake_column row.
func (t *Transaction) DeleteColumn(table TableID, id ColumnID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteColumn"); err != nil {
		return err
	}
	return deleteVersion[Column](t, &Column{TableID: table, ID: id}, begin, end, func() string { return fmt.Sprintf("column %d of table %d", id, table) },
		keys.KindColumn, liveColumn, uint64(table), uint64(id))
}

var liveDataFile = liveInTable(func(s *CatalogView) map[TableID]map[DataFileID]*DataFile { return s.dataFiles },
	func(e *DataFile) (TableID, DataFileID) { return e.TableID, e.ID })

// PutDataFile stages a ducklake_data_file row (with its
// ducklake_file_partition_value rows).
func (t *Transaction) PutDataFile(f DataFile) error {
	if err := t.checkRows("PutDataFile"); err != nil {
		return err
	}
	if f.Path == "" {
		return errorf(InvalidArgument, "data file %d has no path", f.ID)
	}
	return putVersion(t, &f, func() string { return fmt.Sprintf("data file %d", f.ID) },
		keys.KindDataFile, encodeDataFile, liveDataFile, uint64(f.TableID), uint64(f.ID))
}

// DeleteDataFile removes a ducklake_data_file row.
func (t *Transaction) DeleteDataFile(table TableID, id DataFileID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteDataFile"); err != nil {
		return err
	}
	return deleteVersion[DataFile](t, &DataFile{TableID: table, ID: id}, begin, end, func() string { return fmt.Sprintf("data file %d", id) },
		keys.KindDataFile, liveDataFile, uint64(table), uint64(id))
}

// liveDeleteFile also keeps the delete-target index of live delete files.
var liveDeleteFile = func() live[DeleteFile] {
	lv := liveInTable(func(s *CatalogView) map[TableID]map[DeleteFileID]*DeleteFile { return s.deleteFiles },
		func(e *DeleteFile) (TableID, DeleteFileID) { return e.TableID, e.ID })
	set, drop := lv.set, lv.drop
	lv.set = func(t *Transaction, e *DeleteFile) { set(t, e); t.indexDeleteTarget(e, true) }
	lv.drop = func(t *Transaction, e *DeleteFile) { drop(t, e); t.indexDeleteTarget(e, false) }
	return lv
}()

// PutDeleteFile stages a ducklake_delete_file row.
func (t *Transaction) PutDeleteFile(d DeleteFile) error {
	if err := t.checkRows("PutDeleteFile"); err != nil {
		return err
	}
	if d.Path == "" {
		return errorf(InvalidArgument, "delete file %d has no path", d.ID)
	}
	if d.End == nil && d.Begin == t.id {
		t.deletedFiles = append(t.deletedFiles, d.DataFileID)
	}
	return putVersion(t, &d, func() string { return fmt.Sprintf("delete file %d", d.ID) },
		keys.KindDeleteFile, encodeDeleteFile, liveDeleteFile, uint64(d.TableID), uint64(d.ID))
}

// DeleteDeleteFile removes a ducklake_delete_file row.
func (t *Transaction) DeleteDeleteFile(table TableID, id DeleteFileID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteDeleteFile"); err != nil {
		return err
	}
	return deleteVersion[DeleteFile](t, &DeleteFile{TableID: table, ID: id}, begin, end, func() string { return fmt.Sprintf("delete file %d", id) },
		keys.KindDeleteFile, liveDeleteFile, uint64(table), uint64(id))
}

var livePartition = live[Partition]{
	get: func(t *Transaction, e *Partition) (*Partition, bool) {
		x, ok := t.next.partitions[e.TableID]
		if ok && x.ID != e.ID {
			return nil, false
		}
		return x, ok
	},
	set: func(t *Transaction, e *Partition) {
		c := *e
		t.next.partitions[e.TableID] = &c
	},
	drop: func(t *Transaction, e *Partition) { delete(t.next.partitions, e.TableID) },
}

// PutPartition stages a ducklake_partition_info row with its
// ducklake_partition_column rows.
func (t *Transaction) PutPartition(p Partition) error {
	if err := t.checkRows("PutPartition"); err != nil {
		return err
	}
	return putVersion(t, &p, func() string { return fmt.Sprintf("partition %d of table %d", p.ID, p.TableID) },
		keys.KindPartition, encodePartition, livePartition, uint64(p.TableID), uint64(p.ID))
}

// DeletePartition removes a ducklake_partition_info row (and its columns).
func (t *Transaction) DeletePartition(table TableID, id PartitionID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeletePartition"); err != nil {
		return err
	}
	return deleteVersion[Partition](t, &Partition{TableID: table, ID: id}, begin, end, func() string { return fmt.Sprintf("partition %d of table %d", id, table) },
		keys.KindPartition, livePartition, uint64(table), uint64(id))
}

var liveSort = live[Sort]{
	get: func(t *Transaction, e *Sort) (*Sort, bool) {
		x, ok := t.next.sorts[e.TableID]
		if ok && x.ID != e.ID {
			return nil, false
		}
		return x, ok
	},
	set: func(t *Transaction, e *Sort) {
		c := *e
		c.Expressions = slices.Clone(e.Expressions)
		t.next.sorts[e.TableID] = &c
	},
	drop: func(t *Transaction, e *Sort) { delete(t.next.sorts, e.TableID) },
}

// PutSort stages a ducklake_sort_info row with its ducklake_sort_expression
// rows (DuckLake 1.0).
func (t *Transaction) PutSort(st Sort) error {
	if err := t.checkRows("PutSort"); err != nil {
		return err
	}
	return putVersion(t, &st, func() string { return fmt.Sprintf("sort %d of table %d", st.ID, st.TableID) },
		keys.KindSort, encodeSort, liveSort, uint64(st.TableID), uint64(st.ID))
}

// DeleteSort removes a ducklake_sort_info row (and its expressions).
func (t *Transaction) DeleteSort(table TableID, id SortID, begin SnapshotID, end *SnapshotID) error {
	if err := t.checkRows("DeleteSort"); err != nil {
		return err
	}
	return deleteVersion[Sort](t, &Sort{TableID: table, ID: id}, begin, end, func() string { return fmt.Sprintf("sort %d of table %d", id, table) },
		keys.KindSort, liveSort, uint64(table), uint64(id))
}

// ---- unversioned rows ----

// PutTableStats stages a ducklake_table_stats row.
func (t *Transaction) PutTableStats(st TableStats) error {
	if err := t.checkRows("PutTableStats"); err != nil {
		return err
	}
	t.setStats(&st)
	return nil
}

// DeleteTableStats removes a ducklake_table_stats row.
func (t *Transaction) DeleteTableStats(table TableID) error {
	if err := t.checkRows("DeleteTableStats"); err != nil {
		return err
	}
	delete(t.next.tableStats, table)
	t.del(keys.CurrentTableStats(uint64(table)))
	return nil
}

// PutTableColumnStats stages a ducklake_table_column_stats row.
func (t *Transaction) PutTableColumnStats(cs TableColumnStats) error {
	if err := t.checkRows("PutTableColumnStats"); err != nil {
		return err
	}
	t.setColumnStats(&cs)
	return nil
}

// DeleteTableColumnStats removes a ducklake_table_column_stats row.
func (t *Transaction) DeleteTableColumnStats(table TableID, column ColumnID) error {
	if err := t.checkRows("DeleteTableColumnStats"); err != nil {
		return err
	}
	delete(innerCopy(t, t.next.colStats, table), column)
	t.del(keys.CurrentTableColumnStats(uint64(table), uint64(column)))
	return nil
}

// PutFileColumnStats stages a ducklake_file_column_stats row.
func (t *Transaction) PutFileColumnStats(cs FileColumnStats) error {
	if err := t.checkRows("PutFileColumnStats"); err != nil {
		return err
	}
	t.setFileStats(&cs)
	return nil
}

// DeleteFileColumnStats removes a ducklake_file_column_stats row.
func (t *Transaction) DeleteFileColumnStats(table TableID, file DataFileID, column ColumnID) error {
	if err := t.checkRows("DeleteFileColumnStats"); err != nil {
		return err
	}
	delete(innerCopy(t, t.next.fileStats, file), column)
	t.del(keys.CurrentFileColumnStats(uint64(table), uint64(file), uint64(column)))
	return nil
}

// PutTags stages every ducklake_tag row of one object (no entries: none).
func (t *Transaction) PutTags(tags Tags) error {
	if err := t.checkRows("PutTags"); err != nil {
		return err
	}
	if len(tags.Entries) == 0 {
		delete(t.next.tags, tags.ObjectID)
		t.del(keys.CurrentTag(tags.ObjectID))
		return nil
	}
	tags.Entries = slices.Clone(tags.Entries)
	t.setTags(&tags)
	return nil
}

// PutOptions stages every ducklake_metadata row of one scope (no values:
// none).
func (t *Transaction) PutOptions(o Options) error {
	if err := t.checkRows("PutOptions"); err != nil {
		return err
	}
	if len(o.Values) == 0 {
		delete(t.next.options, scopeKey{o.Scope, o.ScopeID})
		t.del(keys.CurrentOption(uint64(o.Scope), o.ScopeID))
		return nil
	}
	t.putOptions(&o)
	return nil
}

// PutMapping stages a ducklake_column_mapping row with its
// ducklake_name_mapping rows.
func (t *Transaction) PutMapping(m Mapping) error {
	if err := t.checkRows("PutMapping"); err != nil {
		return err
	}
	m.Names = slices.Clone(m.Names)
	t.setMapping(&m)
	return nil
}

// DeleteMapping removes a ducklake_column_mapping row and its names.
func (t *Transaction) DeleteMapping(table TableID, id MappingID) error {
	if err := t.checkRows("DeleteMapping"); err != nil {
		return err
	}
	delete(t.next.mappings, id)
	t.del(keys.CurrentMapping(uint64(table), uint64(id)))
	return nil
}

// PutGcFile stages a ducklake_files_scheduled_for_deletion row.
func (t *Transaction) PutGcFile(g GcFile) error {
	if err := t.checkRows("PutGcFile"); err != nil {
		return err
	}
	t.next.gcFiles[g.DataFileID] = &g
	t.put(keys.GcFile(uint64(g.DataFileID)), encodeGcFile(&g))
	return nil
}

// DeleteGcFile removes a ducklake_files_scheduled_for_deletion row.
func (t *Transaction) DeleteGcFile(id DataFileID) error {
	if err := t.checkRows("DeleteGcFile"); err != nil {
		return err
	}
	delete(t.next.gcFiles, id)
	t.del(keys.GcFile(uint64(id)))
	return nil
}

// PutSchemaVersion stages a ducklake_schema_versions row. DuckLake 0.3's
// rows name no table: they are stored with TableID 0.
func (t *Transaction) PutSchemaVersion(sv SchemaVersion) error {
	if err := t.checkRows("PutSchemaVersion"); err != nil {
		return err
	}
	t.put(keys.SchemaVersion(uint64(sv.TableID), uint64(sv.BeginSnapshot)), encodeSchemaVersion(sv.SchemaVersion))
	t.dropSchemaVersion(sv.TableID, sv.BeginSnapshot)
	t.next.schemaVersions = append(t.next.schemaVersions, sv)
	slices.SortFunc(t.next.schemaVersions, func(a, b SchemaVersion) int {
		return cmp.Or(cmp.Compare(a.BeginSnapshot, b.BeginSnapshot), cmp.Compare(a.TableID, b.TableID))
	})
	return nil
}

func (t *Transaction) dropSchemaVersion(table TableID, begin SnapshotID) {
	t.next.schemaVersions = slices.DeleteFunc(slices.Clone(t.next.schemaVersions), func(s SchemaVersion) bool {
		return s.TableID == table && s.BeginSnapshot == begin
	})
}

// DeleteSchemaVersion removes a ducklake_schema_versions row.
func (t *Transaction) DeleteSchemaVersion(table TableID, begin SnapshotID) error {
	if err := t.checkRows("DeleteSchemaVersion"); err != nil {
		return err
	}
	t.del(keys.SchemaVersion(uint64(table), uint64(begin)))
	t.dropSchemaVersion(table, begin)
	return nil
}

// ---- inlined data ----

// PutInlinedTable stages an inlined-data table as DuckLake created it (and
// whether ducklake_inlined_data_tables lists it).
func (t *Transaction) PutInlinedTable(it InlinedTable) error {
	if err := t.checkRows("PutInlinedTable"); err != nil {
		return err
	}
	if it.Name == "" {
		return errorf(InvalidArgument, "the inlined-data table of table %d (schema version %d) has no name", it.TableID, it.SchemaVersion)
	}
	t.put(keys.CurrentInlinedTable(uint64(it.TableID), it.SchemaVersion), encodeInlinedTable(&it))
	return nil
}

// DeleteInlinedTable removes an inlined-data table's definition.
func (t *Transaction) DeleteInlinedTable(table TableID, schemaVersion uint64) error {
	if err := t.checkRows("DeleteInlinedTable"); err != nil {
		return err
	}
	t.del(keys.CurrentInlinedTable(uint64(table), schemaVersion))
	return nil
}

// PutFileVariantStats stages the statistics of a data file's VARIANT
// column as given (format 13).
func (t *Transaction) PutFileVariantStats(s FileVariantStats) error {
	if err := t.checkRows("PutFileVariantStats"); err != nil {
		return err
	}
	if err := t.needsDuckLake10("VARIANT statistics"); err != nil {
		return err
	}
	t.put(keys.CurrentFileVariantStats(uint64(s.TableID), uint64(s.DataFileID), uint64(s.ColumnID)), encodeFileVariantStats(&s))
	return nil
}

// DeleteFileVariantStats removes the statistics of a data file's VARIANT
// column.
func (t *Transaction) DeleteFileVariantStats(table TableID, file DataFileID, column ColumnID) error {
	if err := t.checkRows("DeleteFileVariantStats"); err != nil {
		return err
	}
	t.del(keys.CurrentFileVariantStats(uint64(table), uint64(file), uint64(column)))
	return nil
}

// PutInlinedDeleteTable stages ducklake_inlined_delete_<table> as DuckLake
// 1.0 created it (format 13).
func (t *Transaction) PutInlinedDeleteTable(it InlinedDeleteTable) error {
	if err := t.checkRows("PutInlinedDeleteTable"); err != nil {
		return err
	}
	if err := t.needsDuckLake10("an inlined-deletion table"); err != nil {
		return err
	}
	if it.Name == "" {
		return errorf(InvalidArgument, "the inlined-deletion table of table %d has no name", it.TableID)
	}
	t.put(keys.CurrentInlinedDeleteTable(uint64(it.TableID)), encodeInlinedDeleteTable(&it))
	return nil
}

// DeleteInlinedDeleteTable removes ducklake_inlined_delete_<table>'s
// definition (its rows are removed one by one).
func (t *Transaction) DeleteInlinedDeleteTable(table TableID) error {
	if err := t.checkRows("DeleteInlinedDeleteTable"); err != nil {
		return err
	}
	t.del(keys.CurrentInlinedDeleteTable(uint64(table)))
	return nil
}

// PutInlinedFileDelete stages one row of ducklake_inlined_delete_<table>
// as given (format 13).
func (t *Transaction) PutInlinedFileDelete(d InlinedFileDelete) error {
	if err := t.checkRows("PutInlinedFileDelete"); err != nil {
		return err
	}
	if err := t.needsDuckLake10("an inlined deletion"); err != nil {
		return err
	}
	if d.Begin > t.id {
		return errorf(InvalidArgument, "inlined deletion of row %d of data file %d (table %d): begin_snapshot %d is after the snapshot this commit mints (%d)", d.RowID, d.DataFileID, d.TableID, d.Begin, t.id)
	}
	t.put(keys.CurrentInlinedFileDelete(uint64(d.TableID), uint64(d.DataFileID), d.RowID), encodeInlinedFileDelete(&d))
	return nil
}

// DeleteInlinedFileDelete removes one row of ducklake_inlined_delete_<table>
// (DuckLake removes them once it wrote them out as delete files).
func (t *Transaction) DeleteInlinedFileDelete(table TableID, file DataFileID, rowID uint64) error {
	if err := t.checkRows("DeleteInlinedFileDelete"); err != nil {
		return err
	}
	t.del(keys.CurrentInlinedFileDelete(uint64(table), uint64(file), rowID))
	return nil
}

// PutInlinedRow stages one row of ducklake_inlined_data_<table>_<version>
// as given: its row id, lifetime and values. A row is stored alone (one row
// per chunk, the chunk's sequence being the row id), so rows can be ended
// or removed one by one. A row is known by its row id and begin snapshot:
// DuckLake 1.0 ends a row it updates and inserts the new version under the
// same row id. From format 13 the chunk records the row's end; below, an
// inline-delete record keyed by row id does (DuckLake 0.3 never reuses a
// row id).
func (t *Transaction) PutInlinedRow(table TableID, schemaVersion uint64, r InlinedRow) error {
	if err := t.checkRows("PutInlinedRow"); err != nil {
		return err
	}
	if r.Begin > t.id {
		return errorf(InvalidArgument, "inlined row %d of table %d: begin_snapshot %d is after the snapshot this commit mints (%d)", r.RowID, table, r.Begin, t.id)
	}
	for j, v := range r.Values {
		if v.String != nil && !utf8.ValidString(*v.String) {
			return errorf(InvalidArgument, "inlined row %d of table %d: column %d is a string that is not valid UTF-8", r.RowID, table, j)
		}
	}
	c := &chunkState{table: table, schemaVersion: schemaVersion, begin: r.Begin, seq: r.RowID,
		rows: []InlinedRow{{RowID: r.RowID, Versioned: Versioned{Begin: r.Begin}, Values: slices.Clone(r.Values)}}}
	if r.End != nil {
		c.rows[0].End = ptrTo(*r.End)
	}
	t.put(keys.InlineLiveInsert(uint64(table), schemaVersion, uint64(r.Begin), r.RowID), encodeInlineChunk(c))
	switch {
	case hasDuckLake10(t.format):
		// The chunk records the end; a record by row id would end every
		// version of the row.
	case r.End != nil:
		t.put(keys.InlineLiveDelete(uint64(table), r.RowID), encodeInlineDelete(*r.End))
	default:
		t.del(keys.InlineLiveDelete(uint64(table), r.RowID))
	}
	t.setInlinedChunk(table, schemaVersion, r.Begin, r.RowID, c)
	return nil
}

// setInlinedChunk replaces (c nil: removes) a one-row chunk in t.next,
// keeping the table's chunks in compareChunks order. The first change to a
// table's chunks in this transaction copies them from the base; later ones
// edit that copy in place.
func (t *Transaction) setInlinedChunk(table TableID, schemaVersion uint64, begin SnapshotID, rowID uint64, c *chunkState) {
	chunks := t.next.inlined[table]
	i, found := slices.BinarySearchFunc(chunks, &chunkState{schemaVersion: schemaVersion, begin: begin, seq: rowID}, compareChunks)
	if !found && c == nil {
		return
	}
	if !t.rows.ownedInlined[table] {
		chunks = slices.Clone(chunks)
		if t.rows.ownedInlined == nil {
			t.rows.ownedInlined = map[TableID]bool{}
		}
		t.rows.ownedInlined[table] = true
	}
	counts := t.rows.rowVersions[table]
	switch {
	case c == nil:
		chunks = slices.Delete(chunks, i, i+1)
		if counts != nil {
			counts[rowID]--
		}
	case found:
		chunks[i] = c
	default:
		chunks = slices.Insert(chunks, i, c)
		if counts != nil {
			counts[rowID]++
		}
	}
	if len(chunks) == 0 {
		delete(t.next.inlined, table)
	} else {
		t.next.inlined[table] = chunks
	}
}

// DeleteInlinedRow removes one inlined row (DuckLake empties an
// inlined-data table with DELETE when it flushes it).
func (t *Transaction) DeleteInlinedRow(table TableID, schemaVersion uint64, rowID uint64, begin SnapshotID) error {
	if err := t.checkRows("DeleteInlinedRow"); err != nil {
		return err
	}
	t.del(keys.InlineLiveInsert(uint64(table), schemaVersion, uint64(begin), rowID))
	if !hasDuckLake10(t.format) || !t.otherVersionOf(table, schemaVersion, begin, rowID) {
		t.del(keys.InlineLiveDelete(uint64(table), rowID))
	}
	t.setInlinedChunk(table, schemaVersion, begin, rowID, nil)
	return nil
}

// otherVersionOf reports whether table holds a row with rowID besides the
// one of schemaVersion that began at begin: a delete record by row id may
// be that row's.
func (t *Transaction) otherVersionOf(table TableID, schemaVersion uint64, begin SnapshotID, rowID uint64) bool {
	counts := t.rows.rowVersions[table]
	if counts == nil {
		counts = map[uint64]int{}
		for _, c := range t.next.inlined[table] {
			for _, r := range c.rows {
				counts[r.RowID]++
			}
		}
		if t.rows.rowVersions == nil {
			t.rows.rowVersions = map[TableID]map[uint64]int{}
		}
		t.rows.rowVersions[table] = counts
	}
	n := counts[rowID]
	if i, found := slices.BinarySearchFunc(t.next.inlined[table], &chunkState{schemaVersion: schemaVersion, begin: begin, seq: rowID}, compareChunks); found && len(t.next.inlined[table][i].rows) > 0 {
		n-- // the row itself, still staged
	}
	return n > 0
}

// finishRows stages the snapshot record (as given), the genesis records of
// a new lake, and the name-directory slots; it returns the head the batch
// lands. Every Put and Delete keeps t.next as load would read the store
// back, and finishRows applies what load derives from the whole view, so
// the landed state stays the cached head.
func (t *Transaction) finishRows() (Head, error) {
	newHead := Head{SnapshotID: t.base.snap.ID, BatchSeq: t.head.BatchSeq + 1}
	if t.rows.genesis {
		if t.rows.snapshot == nil {
			return Head{}, errorf(InvalidArgument, "a commit that creates the lake must stage its snapshot 0")
		}
		if t.cat.clog == nil {
			newHead = Head{}
			f := currentFormat()
			t.put(keys.Format(), encodeFormat(&f))
		}
		// On a commit log adopted empty the format record is the adoption
		// stamp's (slot 0) and this is slot 1: its head stamp says batch 1.
	}
	if s := t.rows.snapshot; s != nil {
		snap := *s
		snap.DeletedDataFiles = slices.Clone(t.deletedFiles)
		t.put(keys.Snapshot(uint64(snap.ID)), encodeSnapshot(&snap))
		t.next.snap = snap
		newHead.SnapshotID = snap.ID
	}
	t.next.dropStatsOfAbsentTables()
	t.finishNames()
	return newHead, nil
}
