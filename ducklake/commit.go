package ducklake

// commit.go turns one DuckDB transaction's writes to DuckLake's metadata
// tables into one core commit. DuckLake writes rows it computed itself
// (ids, the snapshot record, statistics), so the translation does not
// interpret statements: it compares, entity by entity, what the pinned head
// held with what the transaction leaves (the base rows with its deletes,
// updates and inserts applied) and stages each entity that differs through
// core's row-level entry point (core.Catalog.BeginRows), as given. Only
// the entities the transaction touched are read. An entity spans the rows
// of the tables rows.go serves it from: a snapshot is its ducklake_snapshot
// and ducklake_snapshot_changes rows, a column its versions and its
// ducklake_column_tag rows, a data file its row and its partition values,
// and so on.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// Encoded is a cell holding a value of any DuckDB type in DuckDB's own
// binary serialization (the storage extension encodes and decodes it; Go
// never looks inside). Inlined-data tables carry the values of types the
// C ABI has no native form for this way, so they round-trip bit-exactly.
type Encoded []byte

// RowsCatalog is what Commit needs of an open catalog: a transaction of
// DuckLake rows (core.Catalog.BeginRows). (Committer, in core and the
// provider, names a commit log's committer.)
type RowsCatalog interface {
	BeginRows(ctx context.Context, expect core.Head) (*core.Transaction, error)
}

// Commit lands a transaction's changes as one core commit prepared against
// the head its view was pinned at, and returns the view the commit leaves:
// the pinned view with the changes applied, at the landed head (what a
// fresh read of the catalog serves, so it can be served without one). A
// head that moved since is core.CommitConflict (its message contains
// "conflict", which DuckLake retries on). Changes that write nothing commit
// nothing and return the pinned view. On an error nothing is written, except
// for core.OutcomeUnknown (the commit may have landed). A commit that landed
// returns no error, even when the view it leaves cannot be built: the view
// is nil then, and the caller reads the catalog again.
func Commit(ctx context.Context, cat RowsCatalog, c *Changes) (*View, error) {
	if c == nil {
		return nil, nil
	}
	if c.Empty() {
		return c.View(), nil
	}
	tx, err := cat.BeginRows(ctx, c.View().Head())
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := stage(tx, c); err != nil {
		return nil, err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	if c.Altered() {
		return nil, nil // landed; tables changed shape: the next read builds the view
	}
	v, err := c.committed(tx.Landed())
	if err != nil {
		return nil, nil // landed: the next read builds the view from the catalog
	}
	return v, nil
}

// committed is the view the changes leave at head: every table the
// transaction saw, with the rows it saw. Only the tables it changed are
// merged; the others keep the rows the pinned view holds (shared, as rows
// in a View never change), or build them on first use from the pinned
// view's dump as it would, since the commit left them as they were.
func (c *Changes) committed(head core.Head) (*View, error) {
	old := c.View()
	v := &View{dump: old.dump, head: head, hasLake: true, spec: old.spec, byName: map[string]*Table{}, rows: map[*Table][][]any{}}
	old.mu.Lock()
	maps.Copy(v.rows, old.rows)
	old.mu.Unlock()
	for _, t := range c.Tables() {
		v.tables = append(v.tables, t)
		v.byName[strings.ToLower(t.Name)] = t
	}
	for _, tc := range c.Changed() {
		if c.Lookup(tc.Table().Name) != tc.Table() {
			continue // dropped
		}
		set, err := c.Rows(tc.Table())
		if err != nil {
			return nil, err
		}
		v.rows[tc.Table()] = set.Cells()
	}
	return v, nil
}

// side is one end of the comparison: the pinned head or the transaction's
// result.
type side int

const (
	before side = iota
	after
)

// stager holds one commit's translation.
type stager struct {
	tx  *core.Transaction
	c   *Changes
	err error
	// rows of each metadata table, before and after, built on first use.
	rows map[string]*[2][][]any
	// changed lists each changed table's changes by name.
	changed map[string]*TableChanges
}

func stage(tx *core.Transaction, c *Changes) error {
	if err := c.checkShapes(); err != nil {
		return err
	}
	if c.Altered() && c.recordedVersion() != c.View().Spec().Version {
		// A migration (DuckLake 1.0's of a 0.3 catalog): the catalog
		// must hold 1.0's entities.
		if err := tx.NeedsDuckLake10(fmt.Sprintf("DuckLake's migration of the lake to catalog version %s", c.recordedVersion())); err != nil {
			return err
		}
	}
	s := &stager{tx: tx, c: c, rows: map[string]*[2][][]any{}, changed: map[string]*TableChanges{}}
	for _, tc := range c.Changed() {
		s.changed[strings.ToLower(tc.Table().Name)] = tc
	}
	steps := []func(){s.snapshots, s.schemas, s.tables, s.views, s.columns, s.dataFiles, s.deleteFiles,
		s.fileColumnStats, s.tableStats, s.tableColumnStats, s.partitions, s.tags, s.options, s.gcFiles, s.mappings,
		s.schemaVersions, s.inlinedTables, s.inlinedRows, s.inlinedDeletes, s.sorts, s.macros, s.variantStats}
	for _, step := range steps {
		if s.err != nil {
			break
		}
		step()
	}
	return s.err
}

func (s *stager) fail(err error) {
	if s.err == nil && err != nil {
		s.err = err
	}
}

func unsupported(format string, args ...any) error {
	return &core.Error{Kind: core.Unsupported, Msg: "moraine: " + fmt.Sprintf(format, args...)}
}

// table is the transaction's metadata table of that name (its spec's),
// nil when the lake's spec has none.
func (s *stager) table(name string) *Table { return s.c.Lookup(name) }

// tableAt is the table rows of one side are in: the view's before, the
// transaction's after (an ALTER changes its shape).
func (s *stager) tableAt(name string, at side) *Table {
	if at == before {
		return s.c.View().Lookup(name)
	}
	return s.c.Lookup(name)
}

// rowsOf returns a table's rows before or after the transaction.
func (s *stager) rowsOf(name string, at side) [][]any {
	r, ok := s.rows[name]
	if !ok {
		r = &[2][][]any{}
		s.rows[name] = r
		if t := s.c.View().Lookup(name); t != nil {
			base, err := s.c.View().Rows(t)
			s.fail(err)
			r[before] = base
		}
		if t := s.c.Lookup(name); t != nil {
			set, err := s.c.Rows(t)
			s.fail(err)
			r[after] = set.Cells()
		}
	}
	return r[at]
}

// keyFunc is an entity's key in one of its tables' rows.
type keyFunc func(r row) string

// touched returns the keys of the rows the transaction deleted, updated
// (old and new values) or inserted in a table.
func (s *stager) touched(name string, key keyFunc, into map[string]bool) {
	tc := s.changed[name]
	if tc == nil {
		return
	}
	t := tc.Table()
	add := func(cells []any) { into[key(rowOf(t, cells, &s.err))] = true }
	if tc.Replaced() {
		// Altered: every row of the old shape and of the new.
		if old := s.tableAt(name, before); old != nil {
			for _, cells := range s.rowsOf(name, before) {
				into[key(rowOf(old, cells, &s.err))] = true
			}
		}
		for _, cells := range s.rowsOf(name, after) {
			add(cells)
		}
		return
	}
	base := tc.Base()
	for _, id := range tc.Deleted() {
		add(base[id])
	}
	for _, u := range tc.Updated() {
		add(base[u.RowID])
		add(u.Row)
	}
	for _, cells := range tc.Inserted() {
		add(cells)
	}
}

// grouped returns a table's rows on one side, by key, for the keys asked.
func (s *stager) grouped(name string, at side, key keyFunc, keys map[string]bool) map[string][]row {
	t := s.tableAt(name, at)
	out := map[string][]row{}
	if t == nil {
		return out
	}
	for _, cells := range s.rowsOf(name, at) {
		r := rowOf(t, cells, &s.err)
		if k := key(r); keys[k] {
			out[k] = append(out[k], r)
		}
	}
	return out
}

func keyOf(cols ...string) keyFunc {
	return func(r row) string {
		var b strings.Builder
		for i, c := range cols {
			if i > 0 {
				b.WriteByte('/')
			}
			if p := optional(r, c, r.optU); p != nil {
				b.WriteString(strconv.FormatUint(*p, 10))
			} else {
				b.WriteString("null")
			}
		}
		return b.String()
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// twoTables is an entity kept in two tables under one key: rows of a parent
// table (ducklake_data_file) and the rows of a child table that belong to
// them (ducklake_file_partition_value).
type twoTables struct {
	parent, child string
	noun          string // what the key names, for errors: "data file"
	key           keyFunc
	keys          map[string]bool // the keys the transaction touched in either table
}

// twoTables returns the entity's touched keys, nil when the transaction
// touched neither table.
func (s *stager) twoTables(parent, child, noun string, key keyFunc) *twoTables {
	t := &twoTables{parent: parent, child: child, noun: noun, key: key, keys: map[string]bool{}}
	s.touched(parent, key, t.keys)
	s.touched(child, key, t.keys)
	if len(t.keys) == 0 {
		return nil
	}
	return t
}

// read returns the touched keys' parent rows and child rows on one side; a
// child row whose key has no parent row fails the commit.
func (s *stager) read(t *twoTables, at side) (parents, children map[string][]row) {
	parents = s.grouped(t.parent, at, t.key, t.keys)
	children = s.grouped(t.child, at, t.key, t.keys)
	for k := range children {
		if parents[k] == nil {
			s.fail(unsupported("%s holds rows of %s %s, which has no %s row", t.child, t.noun, k, t.parent))
		}
	}
	return parents, children
}

// ---- snapshots ----

func (s *stager) snapshots() {
	tt := s.twoTables("ducklake_snapshot", "ducklake_snapshot_changes", "snapshot", keyOf("snapshot_id"))
	if tt == nil {
		return
	}
	entity := func(at side) map[string]*core.Snapshot {
		snaps, changes := s.read(tt, at)
		out := map[string]*core.Snapshot{}
		for k, rs := range snaps {
			if len(rs) > 1 || len(changes[k]) > 1 {
				s.fail(&core.Error{Kind: core.Constraint, Msg: fmt.Sprintf("Duplicate key \"snapshot_id: %s\" violates primary key constraint", k)})
				continue
			}
			var ch row
			if c := changes[k]; len(c) == 1 {
				ch = c[0]
			}
			snap := snapshotOf(rs[0], ch)
			out[k] = &snap
		}
		return out
	}
	old, nu := entity(before), entity(after)
	for _, k := range sortedKeys(tt.keys) {
		o, n := old[k], nu[k]
		switch {
		case o == nil && n != nil:
			s.fail(s.tx.PutSnapshot(*n))
		case o != nil && n == nil:
			s.fail(s.tx.DeleteSnapshot(o.ID))
		case o != nil && n != nil && !reflect.DeepEqual(o, n):
			s.fail(unsupported("snapshot %d was rewritten; DuckLake's snapshots are written once", o.ID))
		}
	}
}

// ---- versioned entities ----

// versioned is how an entity kept in versions is staged: its version
// (begin and end snapshot), and the transaction's calls that put and
// remove one.
type versioned[E any] struct {
	version func(e E) core.Versioned
	put     func(e E) error
	remove  func(e E) error
}

// stageVersions compares an entity's versions before and after (by begin
// snapshot) and stages the difference: removals, then ends, then live
// versions, so a rename (end the old version, add a new one) and a name
// reused by another entity land in order.
func stageVersions[E any](s *stager, v versioned[E], old, nu map[string][]E) {
	var ends, lives []E
	queue := func(e E) {
		if v.version(e).Live() {
			lives = append(lives, e)
		} else {
			ends = append(ends, e)
		}
	}
	begin := func(e E) core.SnapshotID { return v.version(e).Begin }
	for _, k := range sortedUnion(old, nu) {
		byBegin := map[core.SnapshotID]E{}
		for _, e := range nu[k] {
			byBegin[begin(e)] = e
		}
		for _, o := range old[k] {
			n, ok := byBegin[begin(o)]
			if !ok {
				s.fail(v.remove(o))
				continue
			}
			delete(byBegin, begin(o))
			if !reflect.DeepEqual(o, n) {
				queue(n)
			}
		}
		for _, n := range nu[k] {
			if _, fresh := byBegin[begin(n)]; fresh {
				queue(n)
			}
		}
	}
	for _, e := range ends {
		s.fail(v.put(e))
	}
	for _, e := range lives {
		s.fail(v.put(e))
	}
}

func sortedUnion[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return sortedKeys(keys)
}

// simpleVersions stages an entity that is one row per version in one
// table.
func simpleVersions[E any](s *stager, name string, key keyFunc, of func(row) E, v versioned[E]) {
	keys := map[string]bool{}
	s.touched(name, key, keys)
	if len(keys) == 0 {
		return
	}
	read := func(at side) map[string][]E {
		out := map[string][]E{}
		for k, rs := range s.grouped(name, at, key, keys) {
			for _, r := range rs {
				out[k] = append(out[k], of(r))
			}
		}
		return out
	}
	stageVersions(s, v, read(before), read(after))
}

func (s *stager) schemas() {
	simpleVersions(s, "ducklake_schema", keyOf("schema_id"), schemaOf, versioned[core.Schema]{
		version: func(e core.Schema) core.Versioned { return e.Versioned },
		put:     s.tx.PutSchema,
		remove:  func(e core.Schema) error { return s.tx.DeleteSchema(e.ID, e.Begin, e.End) },
	})
}

func (s *stager) tables() {
	simpleVersions(s, "ducklake_table", keyOf("table_id"), tableOf, versioned[core.Table]{
		version: func(e core.Table) core.Versioned { return e.Versioned },
		put:     s.tx.PutTable,
		remove:  func(e core.Table) error { return s.tx.DeleteTable(e.ID, e.Begin, e.End) },
	})
}

func (s *stager) views() {
	simpleVersions(s, "ducklake_view", keyOf("view_id"), viewOf, versioned[core.View]{
		version: func(e core.View) core.Versioned { return e.Versioned },
		put:     s.tx.PutView,
		remove:  func(e core.View) error { return s.tx.DeleteView(e.ID, e.Begin, e.End) },
	})
}

func (s *stager) deleteFiles() {
	simpleVersions(s, "ducklake_delete_file", keyOf("delete_file_id"), deleteFileOf, versioned[core.DeleteFile]{
		version: func(e core.DeleteFile) core.Versioned { return e.Versioned },
		put:     s.tx.PutDeleteFile,
		remove:  func(e core.DeleteFile) error { return s.tx.DeleteDeleteFile(e.TableID, e.ID, e.Begin, e.End) },
	})
}

// stageTwoTables stages a versioned entity kept in a parent table and a
// child table (twoTables): combine builds one key's versions from its
// parent rows and child rows on each side.
func stageTwoTables[E any](s *stager, parent, child, noun string, key keyFunc, combine func(parents, children []row) []E, v versioned[E]) {
	tt := s.twoTables(parent, child, noun, key)
	if tt == nil {
		return
	}
	read := func(at side) map[string][]E {
		parents, children := s.read(tt, at)
		out := map[string][]E{}
		for k, rs := range parents {
			out[k] = combine(rs, children[k])
		}
		return out
	}
	stageVersions(s, v, read(before), read(after))
}

// columns: a column's versions with its tags, which the catalog keeps on
// the column's newest version (rows.go serves them from there).
func (s *stager) columns() {
	stageTwoTables(s, "ducklake_column", "ducklake_column_tag", "column", keyOf("table_id", "column_id"),
		func(cols, tags []row) []core.Column {
			var vs []core.Column
			for _, r := range cols {
				vs = append(vs, columnOf(r))
			}
			newest := 0
			for i := range vs {
				if vs[i].Begin > vs[newest].Begin {
					newest = i
				}
			}
			for _, t := range tags {
				vs[newest].Tags = append(vs[newest].Tags, tagOf(t))
			}
			return vs
		},
		versioned[core.Column]{
			version: func(e core.Column) core.Versioned { return e.Versioned },
			put:     s.tx.PutColumn,
			remove:  func(e core.Column) error { return s.tx.DeleteColumn(e.TableID, e.ID, e.Begin, e.End) },
		})
}

// dataFiles: a data file with its partition values.
func (s *stager) dataFiles() {
	stageTwoTables(s, "ducklake_data_file", "ducklake_file_partition_value", "data file", keyOf("data_file_id"),
		func(files, values []row) []core.DataFile {
			var out []core.DataFile
			for _, r := range files {
				f := dataFileOf(r)
				for _, v := range values {
					f.PartitionValues = append(f.PartitionValues, partitionValueOf(v))
				}
				out = append(out, f)
			}
			return out
		},
		versioned[core.DataFile]{
			version: func(e core.DataFile) core.Versioned { return e.Versioned },
			put:     s.tx.PutDataFile,
			remove:  func(e core.DataFile) error { return s.tx.DeleteDataFile(e.TableID, e.ID, e.Begin, e.End) },
		})
}

// partitions: a partition with its columns.
func (s *stager) partitions() {
	stageTwoTables(s, "ducklake_partition_info", "ducklake_partition_column", "partition", keyOf("partition_id"),
		func(infos, cols []row) []core.Partition {
			var out []core.Partition
			for _, r := range infos {
				out = append(out, partitionOf(r, cols))
			}
			return out
		},
		versioned[core.Partition]{
			version: func(e core.Partition) core.Versioned { return e.Versioned },
			put:     s.tx.PutPartition,
			remove:  func(e core.Partition) error { return s.tx.DeletePartition(e.TableID, e.ID, e.Begin, e.End) },
		})
}

// ---- unversioned rows ----

// stageRows compares one-row-per-key entities and stages the difference.
func stageRows[E any](s *stager, name string, key keyFunc, of func(row) E, put func(E) error, remove func(E) error) {
	keys := map[string]bool{}
	s.touched(name, key, keys)
	if len(keys) == 0 {
		return
	}
	read := func(at side) map[string]E {
		out := map[string]E{}
		for k, rs := range s.grouped(name, at, key, keys) {
			if len(rs) > 1 {
				s.fail(unsupported("%s holds %d rows for %s; the catalog keeps one", name, len(rs), k))
				continue
			}
			out[k] = of(rs[0])
		}
		return out
	}
	stageDiff(s, read(before), read(after), put, remove)
}

// stageDiff stages the difference between one-row-per-key entities before
// and after: a removal for each key gone, a put for each key new or
// changed, in key order.
func stageDiff[E any](s *stager, old, nu map[string]E, put func(E) error, remove func(E) error) {
	for _, k := range sortedUnion(old, nu) {
		o, had := old[k]
		n, has := nu[k]
		switch {
		case had && !has:
			s.fail(remove(o))
		case has && (!had || !reflect.DeepEqual(o, n)):
			s.fail(put(n))
		}
	}
}

func (s *stager) fileColumnStats() {
	stageRows(s, "ducklake_file_column_stats", keyOf("data_file_id", "column_id"), fileColumnStatsOf, s.tx.PutFileColumnStats,
		func(e core.FileColumnStats) error {
			return s.tx.DeleteFileColumnStats(e.TableID, e.DataFileID, e.ColumnID)
		})
}

func (s *stager) tableStats() {
	stageRows(s, "ducklake_table_stats", keyOf("table_id"), tableStatsOf, s.tx.PutTableStats,
		func(e core.TableStats) error { return s.tx.DeleteTableStats(e.TableID) })
}

func (s *stager) tableColumnStats() {
	stageRows(s, "ducklake_table_column_stats", keyOf("table_id", "column_id"), tableColumnStatsOf, s.tx.PutTableColumnStats,
		func(e core.TableColumnStats) error { return s.tx.DeleteTableColumnStats(e.TableID, e.ColumnID) })
}

func (s *stager) gcFiles() {
	stageRows(s, "ducklake_files_scheduled_for_deletion", keyOf("data_file_id"), gcFileOf, s.tx.PutGcFile,
		func(e core.GcFile) error { return s.tx.DeleteGcFile(e.DataFileID) })
}

// schemaVersions: DuckLake 0.3's rows name no table (the catalog keeps
// them under table 0); 1.0's name theirs (a NULL table_id is table 0 too,
// as only a migration from 0.3 leaves one, for a moment).
func (s *stager) schemaVersions() {
	name := "ducklake_schema_versions"
	of := func(r row) core.SchemaVersion {
		v := core.SchemaVersion{BeginSnapshot: core.SnapshotID(r.u("begin_snapshot")), SchemaVersion: r.u("schema_version")}
		if id := optional(r, "table_id", r.optU); id != nil {
			v.TableID = core.TableID(*id)
		}
		return v
	}
	key := keyOf("begin_snapshot", "schema_version")
	if t := s.table(name); t != nil && t.ColumnIndex("table_id") >= 0 {
		key = keyOf("begin_snapshot", "schema_version", "table_id")
	}
	stageRows(s, name, key, of, s.tx.PutSchemaVersion,
		func(e core.SchemaVersion) error { return s.tx.DeleteSchemaVersion(e.TableID, e.BeginSnapshot) })
}

// sorts: a table's sort keys (DuckLake 1.0), its ducklake_sort_info
// versions with their ducklake_sort_expression rows.
func (s *stager) sorts() {
	stageTwoTables(s, "ducklake_sort_info", "ducklake_sort_expression", "sort", keyOf("sort_id"),
		func(infos, exprs []row) []core.Sort {
			var es []core.SortExpression
			for _, e := range exprs {
				es = append(es, core.SortExpression{Index: e.u("sort_key_index"), Expression: e.s("expression"), Dialect: e.s("dialect"),
					Direction: e.s("sort_direction"), NullOrder: e.s("null_order")})
			}
			slices.SortFunc(es, func(a, b core.SortExpression) int { return cmp.Compare(a.Index, b.Index) })
			var out []core.Sort
			for _, r := range infos {
				out = append(out, core.Sort{TableID: core.TableID(r.u("table_id")), ID: core.SortID(r.u("sort_id")), Versioned: r.versioned(), Expressions: es})
			}
			return out
		},
		versioned[core.Sort]{
			version: func(e core.Sort) core.Versioned { return e.Versioned },
			put:     s.tx.PutSort,
			remove:  func(e core.Sort) error { return s.tx.DeleteSort(e.TableID, e.ID, e.Begin, e.End) },
		})
}

// macros (DuckLake 1.0): a macro's ducklake_macro versions with its
// implementations (ducklake_macro_impl) and their parameters
// (ducklake_macro_parameters), all keyed by macro_id.
func (s *stager) macros() {
	const macro, impls, params = "ducklake_macro", "ducklake_macro_impl", "ducklake_macro_parameters"
	key := keyOf("macro_id")
	keys := map[string]bool{}
	for _, name := range []string{macro, impls, params} {
		s.touched(name, key, keys)
	}
	if len(keys) == 0 {
		return
	}
	read := func(at side) map[string][]core.Macro {
		ms, is, ps := s.grouped(macro, at, key, keys), s.grouped(impls, at, key, keys), s.grouped(params, at, key, keys)
		out := map[string][]core.Macro{}
		for k := range keys {
			if len(ms[k]) == 0 {
				if len(is[k]) > 0 || len(ps[k]) > 0 {
					s.fail(unsupported("%s or %s holds rows of macro %s, which has no %s row", impls, params, k, macro))
				}
				continue
			}
			var list []core.MacroImpl
			for _, r := range is[k] {
				list = append(list, core.MacroImpl{ID: r.u("impl_id"), Dialect: r.s("dialect"), SQL: r.s("sql"), Type: r.s("type")})
			}
			slices.SortFunc(list, func(a, b core.MacroImpl) int { return cmp.Compare(a.ID, b.ID) })
			for _, r := range ps[k] {
				impl := r.u("impl_id")
				i := slices.IndexFunc(list, func(m core.MacroImpl) bool { return m.ID == impl })
				if i < 0 {
					s.fail(unsupported("%s holds a parameter of implementation %d of macro %s, which has no %s row", params, impl, k, impls))
					continue
				}
				list[i].Parameters = append(list[i].Parameters, core.MacroParameter{ColumnID: r.u("column_id"), Name: r.s("parameter_name"),
					Type: r.s("parameter_type"), DefaultValue: r.optS("default_value"), DefaultValueType: r.optS("default_value_type")})
			}
			for i := range list {
				slices.SortFunc(list[i].Parameters, func(a, b core.MacroParameter) int { return cmp.Compare(a.ColumnID, b.ColumnID) })
			}
			for _, r := range ms[k] {
				out[k] = append(out[k], core.Macro{ID: core.MacroID(r.u("macro_id")), Versioned: r.versioned(), SchemaID: core.SchemaID(r.u("schema_id")),
					Name: r.s("macro_name"), Impls: list})
			}
		}
		return out
	}
	stageVersions(s, versioned[core.Macro]{
		version: func(e core.Macro) core.Versioned { return e.Versioned },
		put:     s.tx.PutMacro,
		remove:  func(e core.Macro) error { return s.tx.DeleteMacro(e.ID, e.Begin, e.End) },
	}, read(before), read(after))
}

// variantStats: the statistics of one VARIANT column of one data file,
// its rows (one per variant path) in path order.
func (s *stager) variantStats() {
	name := "ducklake_file_variant_stats"
	key := keyOf("data_file_id", "column_id")
	keys := map[string]bool{}
	s.touched(name, key, keys)
	if len(keys) == 0 {
		return
	}
	read := func(at side) map[string]core.FileVariantStats {
		out := map[string]core.FileVariantStats{}
		for k, rs := range s.grouped(name, at, key, keys) {
			st := core.FileVariantStats{DataFileID: core.DataFileID(rs[0].u("data_file_id")), TableID: core.TableID(rs[0].u("table_id")),
				ColumnID: core.ColumnID(rs[0].u("column_id"))}
			for _, r := range rs {
				if core.TableID(r.u("table_id")) != st.TableID {
					s.fail(unsupported("%s: the rows of data file %d, column %d name two tables", name, st.DataFileID, st.ColumnID))
				}
				st.Paths = append(st.Paths, core.VariantPathStats{VariantPath: r.s("variant_path"), ShreddedType: r.optS("shredded_type"),
					ColumnSizeBytes: r.optU("column_size_bytes"), ValueCount: r.optU("value_count"), NullCount: r.optU("null_count"),
					MinValue: r.optS("min_value"), MaxValue: r.optS("max_value"), ContainsNaN: r.optB("contains_nan"), ExtraStats: r.optS("extra_stats")})
			}
			slices.SortStableFunc(st.Paths, func(a, b core.VariantPathStats) int { return cmp.Compare(a.VariantPath, b.VariantPath) })
			for i := 1; i < len(st.Paths); i++ {
				if st.Paths[i].VariantPath == st.Paths[i-1].VariantPath {
					s.fail(unsupported("%s holds variant path %q of data file %d, column %d twice", name, st.Paths[i].VariantPath, st.DataFileID, st.ColumnID))
				}
			}
			out[k] = st
		}
		return out
	}
	stageDiff(s, read(before), read(after), s.tx.PutFileVariantStats,
		func(e core.FileVariantStats) error {
			return s.tx.DeleteFileVariantStats(e.TableID, e.DataFileID, e.ColumnID)
		})
}

// tags: every tag row of one object.
func (s *stager) tags() {
	key := keyOf("object_id")
	keys := map[string]bool{}
	s.touched("ducklake_tag", key, keys)
	if len(keys) == 0 {
		return
	}
	old, nu := s.grouped("ducklake_tag", before, key, keys), s.grouped("ducklake_tag", after, key, keys)
	for _, k := range sortedKeys(keys) {
		id, _ := strconv.ParseUint(k, 10, 64)
		tags := core.Tags{ObjectID: id}
		for _, r := range nu[k] {
			tags.Entries = append(tags.Entries, tagOf(r))
		}
		var was []core.TagEntry
		for _, r := range old[k] {
			was = append(was, tagOf(r))
		}
		if !reflect.DeepEqual(was, tags.Entries) {
			s.fail(s.tx.PutTags(tags))
		}
	}
}

// options: every ducklake_metadata row of one scope.
func (s *stager) options() {
	key := func(r row) string {
		scope, id := scopeOf(r)
		return strconv.Itoa(int(scope)) + "/" + strconv.FormatUint(id, 10)
	}
	keys := map[string]bool{}
	s.touched("ducklake_metadata", key, keys)
	if len(keys) == 0 {
		return
	}
	read := func(at side) map[string]core.Options {
		out := map[string]core.Options{}
		for k, rs := range s.grouped("ducklake_metadata", at, key, keys) {
			scope, id := scopeOf(rs[0])
			o := core.Options{Scope: scope, ScopeID: id, Values: map[string]string{}}
			for _, r := range rs {
				name := r.s("key")
				if _, dup := o.Values[name]; dup {
					s.fail(unsupported("ducklake_metadata holds key %q twice in one scope; the catalog keeps one value", name))
				}
				o.Values[name] = r.s("value")
			}
			out[k] = o
		}
		return out
	}
	old, nu := read(before), read(after)
	for _, k := range sortedKeys(keys) {
		o, n := old[k], nu[k]
		if reflect.DeepEqual(o.Values, n.Values) {
			continue
		}
		if n.Values == nil {
			n = core.Options{Scope: o.Scope, ScopeID: o.ScopeID}
		}
		s.fail(s.tx.PutOptions(n))
	}
}

// mappings: a column mapping with its name mappings.
func (s *stager) mappings() {
	tt := s.twoTables("ducklake_column_mapping", "ducklake_name_mapping", "mapping", keyOf("mapping_id"))
	if tt == nil {
		return
	}
	read := func(at side) map[string]core.Mapping {
		maps, names := s.read(tt, at)
		out := map[string]core.Mapping{}
		for k, rs := range maps {
			if len(rs) > 1 {
				s.fail(unsupported("ducklake_column_mapping holds %d rows for mapping %s", len(rs), k))
				continue
			}
			out[k] = mappingOf(rs[0], names[k])
		}
		return out
	}
	stageDiff(s, read(before), read(after), s.tx.PutMapping,
		func(e core.Mapping) error { return s.tx.DeleteMapping(e.TableID, e.ID) })
}

// ---- inlined data ----

// inlinedTables: the definitions of inlined-data tables the transaction
// created, and whether ducklake_inlined_data_tables lists them.
func (s *stager) inlinedTables() {
	key := keyOf("table_id", "schema_version")
	keys := map[string]bool{}
	s.touched("ducklake_inlined_data_tables", key, keys)
	dropped := map[string]bool{}
	for _, t := range s.c.Created() {
		if it := t.Inlined; it != nil {
			keys[strconv.FormatUint(it.TableID, 10)+"/"+strconv.FormatUint(it.SchemaVersion, 10)] = true
		}
	}
	for _, t := range s.c.Dropped() {
		if it := t.Inlined; it != nil {
			k := strconv.FormatUint(it.TableID, 10) + "/" + strconv.FormatUint(it.SchemaVersion, 10)
			keys[k], dropped[k] = true, true
		}
	}
	if len(keys) == 0 {
		return
	}
	listed := func(at side) map[string]row {
		out := map[string]row{}
		for k, rs := range s.grouped("ducklake_inlined_data_tables", at, key, keys) {
			out[k] = rs[0]
		}
		return out
	}
	wasListed, isListed := listed(before), listed(after)
	for _, k := range sortedKeys(keys) {
		a, b, _ := strings.Cut(k, "/")
		tid, _ := strconv.ParseUint(a, 10, 64)
		sv, _ := strconv.ParseUint(b, 10, 64)
		name := InlinedTableName(tid, sv)
		def := s.c.Lookup(name)
		l, has := isListed[k]
		if has {
			name = l.s("table_name")
		}
		if def == nil {
			if _, had := wasListed[k]; (had || dropped[k]) && !has {
				s.fail(s.tx.DeleteInlinedTable(core.TableID(tid), sv))
			} else if has {
				s.fail(unsupported("ducklake_inlined_data_tables lists %s, which does not exist", name))
			}
			continue
		}
		it := core.InlinedTable{TableID: core.TableID(tid), SchemaVersion: sv, Name: name, Listed: has}
		for _, c := range def.Columns[min(len(inlinedLeading), len(def.Columns)):] {
			it.Columns = append(it.Columns, core.InlinedColumn{Name: c.Name, Type: c.Type})
		}
		s.fail(s.tx.PutInlinedTable(it))
	}
}

// inlinedRows: the rows of every inlined-data table the transaction wrote
// to, by row id and begin snapshot.
func (s *stager) inlinedRows() {
	names := make([]string, 0, len(s.changed))
	for name := range s.changed {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := s.changed[name].Table()
		if t.Inlined == nil {
			continue
		}
		tid, sv := t.Inlined.TableID, t.Inlined.SchemaVersion
		inlinedRowOf := func(cells []any) (core.InlinedRow, error) {
			var err error
			r := rowOf(t, cells, &err)
			out := core.InlinedRow{RowID: r.u("row_id"), Versioned: r.versioned()}
			for i := len(inlinedLeading); i < len(cells); i++ {
				v, verr := valueOf(cells[i])
				if verr != nil && err == nil {
					err = &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%s.%s: %v", t.Name, t.Columns[i].Name, verr)}
				}
				out.Values = append(out.Values, v)
			}
			return out, err
		}
		// A row is known by its row id and begin snapshot: DuckLake 1.0
		// ends a row it updates and inserts the new version under the
		// same row id.
		stageKeyed(s, name, func(cells []any) (core.InlinedRow, [2]uint64) {
			r, err := inlinedRowOf(cells)
			s.fail(err)
			return r, [2]uint64{r.RowID, uint64(r.Begin)}
		}, func(k [2]uint64) string { return fmt.Sprintf("row_id %d with begin_snapshot %d", k[0], k[1]) },
			func(k [2]uint64) error {
				return s.tx.DeleteInlinedRow(core.TableID(tid), sv, k[0], core.SnapshotID(k[1]))
			},
			func(r core.InlinedRow) error { return s.tx.PutInlinedRow(core.TableID(tid), sv, r) })
	}
}

// stageKeyed stages the difference between one table's rows before and
// after, each row an entity known by a pair of ids (of gives both): a
// removal for each key gone, a put for each key new or changed, in key
// order. A key held twice on one side is refused (what names it).
func stageKeyed[E any](s *stager, name string, of func(cells []any) (E, [2]uint64), what func([2]uint64) string,
	remove func([2]uint64) error, put func(E) error) {
	index := func(all [][]any) map[[2]uint64]E {
		out := map[[2]uint64]E{}
		for _, cells := range all {
			e, k := of(cells)
			if _, dup := out[k]; dup {
				s.fail(unsupported("%s holds %s twice", name, what(k)))
			}
			out[k] = e
		}
		return out
	}
	old, nu := index(s.rowsOf(name, before)), index(s.rowsOf(name, after))
	for _, k := range slices.SortedFunc(maps.Keys(old), cmpPair) {
		if _, ok := nu[k]; !ok {
			s.fail(remove(k))
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(nu), cmpPair) {
		if o, ok := old[k]; !ok || !reflect.DeepEqual(o, nu[k]) {
			s.fail(put(nu[k]))
		}
	}
}

// inlinedDeletes: the inlined-deletion tables the transaction created or
// dropped, and the rows it wrote to them, by data file and row id.
func (s *stager) inlinedDeletes() {
	for _, t := range s.c.Created() {
		if it := t.InlinedDeletes; it != nil {
			s.fail(s.tx.PutInlinedDeleteTable(core.InlinedDeleteTable{TableID: core.TableID(it.TableID), Name: t.Name}))
		}
	}
	for _, t := range s.c.Dropped() {
		if it := t.InlinedDeletes; it != nil {
			s.fail(s.tx.DeleteInlinedDeleteTable(core.TableID(it.TableID)))
		}
	}
	names := make([]string, 0, len(s.changed))
	for name, tc := range s.changed {
		if tc.Table().InlinedDeletes != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		t := s.changed[name].Table()
		table := core.TableID(t.InlinedDeletes.TableID)
		stageKeyed(s, name, func(cells []any) (core.InlinedFileDelete, [2]uint64) {
			r := rowOf(t, cells, &s.err)
			d := core.InlinedFileDelete{TableID: table, DataFileID: core.DataFileID(r.u("file_id")), RowID: r.u("row_id"), Begin: core.SnapshotID(r.u("begin_snapshot"))}
			return d, [2]uint64{uint64(d.DataFileID), d.RowID}
		}, func(k [2]uint64) string { return fmt.Sprintf("row %d of data file %d", k[1], k[0]) },
			func(k [2]uint64) error { return s.tx.DeleteInlinedFileDelete(table, core.DataFileID(k[0]), k[1]) },
			s.tx.PutInlinedFileDelete)
	}
}

func cmpPair(a, b [2]uint64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }
