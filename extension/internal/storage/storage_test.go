package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/ducklake"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
)

var bg = context.Background()

// counted wraps a catalog and counts its dumps.
type counted struct {
	*core.Catalog
	dumps int
}

func (c *counted) Dump(ctx context.Context) (*core.Dump, error) {
	c.dumps++
	return c.Catalog.Dump(ctx)
}

func newLake(t *testing.T) (*counted, *objstore.CountingStore) {
	t.Helper()
	store := objstore.WithCounting(objstore.NewMemory(0))
	c, err := core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return &counted{Catalog: c}, store
}

func addSchemas(t *testing.T, c *core.Catalog, names ...string) {
	t.Helper()
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		for _, n := range names {
			if _, err := tx.CreateSchema(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// all reads a scan to the end in batches of n.
func all(s *Scan, n int) (rows [][]any, batches int) {
	for {
		b := s.Next(n)
		if len(b.Rows) == 0 {
			return rows, batches
		}
		batches++
		rows = append(rows, b.Rows...)
	}
}

func TestATransactionReadsItsPinnedHead(t *testing.T) {
	c, _ := newLake(t)
	l := NewLake(c)
	pinned, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	addSchemas(t, c.Catalog, "a")
	next, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	count := func(tx *Txn) int {
		s, err := tx.Scan("ducklake_schema", []int{0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := all(s, 0)
		return len(r)
	}
	if n := count(pinned); n != 1 {
		t.Fatalf("the pinned transaction sees %d schemas, want 1 (main): a later commit leaked in", n)
	}
	if n := count(next); n != 2 {
		t.Fatalf("the next transaction sees %d schemas, want 2", n)
	}
}

func TestUnchangedHeadIsServedFromMemory(t *testing.T) {
	c, store := newLake(t)
	l := NewLake(c)
	if _, err := l.Begin(bg); err != nil {
		t.Fatal(err)
	}
	before := store.Snapshot()
	for i := 0; i < 5; i++ {
		tx, err := l.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tx.Scan("ducklake_snapshot", []int{0, 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		all(s, 0)
	}
	if d := store.Snapshot().Sub(before); d.Total() != 0 || c.dumps != 1 {
		t.Fatalf("five transactions on an unchanged head: %v requests, %d dumps; want none and 1", d, c.dumps)
	}
	addSchemas(t, c.Catalog, "b")
	if _, err := l.Begin(bg); err != nil {
		t.Fatal(err)
	}
	if c.dumps != 2 {
		t.Fatalf("a moved head was not materialized again (%d dumps)", c.dumps)
	}
}

func TestScanProjectsFiltersAndNumbersRows(t *testing.T) {
	c, _ := newLake(t)
	addSchemas(t, c.Catalog, "a", "b", "c", "d")
	tx, err := NewLake(c).Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	// ducklake_schema: schema_id 0..4; ask for schema_name and rowid where
	// schema_id >= 2, in batches of 2.
	s, err := tx.Scan("DuckLake_Schema", []int{4, Rowid}, []Filter{{Column: 0, Op: OpGe, Value: int64(2)}})
	if err != nil {
		t.Fatal(err)
	}
	rows, batches := all(s, 2)
	want := [][]any{{"b", int64(2)}, {"c", int64(3)}, {"d", int64(4)}}
	if len(rows) != len(want) || batches != 2 {
		t.Fatalf("rows %v in %d batches; want %v in 2", rows, batches, want)
	}
	for i := range want {
		if rows[i][0] != want[i][0] || rows[i][1] != want[i][1] {
			t.Fatalf("row %d = %v, want %v", i, rows[i], want[i])
		}
	}
	b := (&Scan{table: s.table, rows: s.rows, cols: []int{4, Rowid, 1}}).Next(10)
	if b.Columns[0].Name != "schema_name" || b.Columns[0].Type != sqlfn.TypeVarchar || b.Columns[1].Name != "rowid" || b.Columns[1].Type != sqlfn.TypeBigint {
		t.Fatalf("columns %+v", b.Columns)
	}
	for _, tc := range []struct {
		f    Filter
		want int
	}{
		{Filter{0, OpEq, int64(3)}, 1},
		{Filter{0, OpNe, int64(3)}, 4},
		{Filter{0, OpLt, int64(3)}, 3},
		{Filter{0, OpLe, uint64(3)}, 4},
		{Filter{0, OpGt, int64(-1)}, 5},
		{Filter{4, OpEq, "main"}, 1},
		{Filter{4, OpGe, "c"}, 3},        // c, d, main
		{Filter{3, OpIsNull, nil}, 5},    // end_snapshot
		{Filter{3, OpIsNotNull, nil}, 0}, // end_snapshot
		{Filter{6, OpEq, true}, 5},       // path_is_relative
		{Filter{0, OpEq, nil}, 0},        // = NULL is never true
		{Filter{0, OpEq, "3"}, 5},        // undecidable here: kept for DuckDB
	} {
		s, err := tx.Scan("ducklake_schema", []int{0}, []Filter{tc.f})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := all(s, 0); len(r) != tc.want {
			t.Errorf("filter %+v kept %d rows, want %d", tc.f, len(r), tc.want)
		}
	}
}

func TestScanRefusesWhatTheTableLacks(t *testing.T) {
	c, _ := newLake(t)
	tx, err := NewLake(c).Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Scan("nope", []int{0}, nil); core.KindOf(err) != core.NotFound {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := tx.Scan("ducklake_schema", []int{7}, nil); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("column 7 of a 7-column table: %v", err)
	}
	if _, err := tx.Scan("ducklake_schema", []int{0}, []Filter{{Column: 0, Op: 99}}); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("operator 99: %v", err)
	}
}

func TestMixedCellsTravelAsText(t *testing.T) {
	rows := [][]any{{int64(1)}, {"x"}, {nil}, {1.5}}
	if typ := carrier(rows, 0); typ != sqlfn.TypeVarchar {
		t.Fatalf("mixed column carried as %v", typ)
	}
	if rows[0][0] != "1" || rows[1][0] != "x" || rows[2][0] != nil || rows[3][0] != "1.5" {
		t.Fatalf("converted cells %v", rows)
	}
	if typ := carrier([][]any{{nil}, {nil}}, 0); typ != sqlfn.TypeBigint {
		t.Fatalf("all-NULL column carried as %v", typ)
	}
}

func TestNoLake(t *testing.T) {
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	tx, err := NewLake(c).Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tx.Tables()) != 0 || tx.View().HasLake() {
		t.Fatalf("an empty store lists %d tables", len(tx.Tables()))
	}
}

// The DuckLake version the host's DuckLake writes decides how a store
// without a lake and a lake recording no version are served; an unknown
// one is refused and changes nothing.
func TestSetDuckLakeVersion(t *testing.T) {
	t.Cleanup(func() { newLakes.Store(nil) })
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	goAPI, _ := newLake(t) // a lake the Go API wrote: no version recorded
	for _, tc := range []struct {
		version string
		tables  int
	}{{"1.0", 28}, {"0.3", 22}} {
		if err := SetDuckLakeVersion(tc.version); err != nil {
			t.Fatal(err)
		}
		tx, err := NewLake(c).Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		if got := tx.View().Spec().Version; got != tc.version {
			t.Fatalf("a store without a lake is served as %s after SetDuckLakeVersion(%s)", got, tc.version)
		}
		tx, err = NewLake(goAPI).Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		if v := tx.View(); v.Spec().Version != tc.version || v.Lookup("ducklake_macro") != nil != (tc.tables == 28) {
			t.Fatalf("a Go API lake is served as %s (%d tables) after SetDuckLakeVersion(%s)", v.Spec().Version, len(v.Tables()), tc.version)
		}
	}
	if err := SetDuckLakeVersion("0.2"); err == nil || !strings.Contains(err.Error(), "0.3 and 1.0") {
		t.Fatalf("SetDuckLakeVersion(0.2): %v", err)
	}
	if newLakeSpec().Version != "0.3" {
		t.Fatalf("a refused version changed the spec to %s", newLakeSpec().Version)
	}
}

// scanAll reads a table as the transaction sees it: rowid and every column.
func scanAll(t *testing.T, tx *Txn, name string) [][]any {
	t.Helper()
	tb := tx.Changes().Lookup(name)
	if tb == nil {
		t.Fatalf("no table %s", name)
	}
	cols := []int{Rowid}
	for i := range tb.Columns {
		cols = append(cols, i)
	}
	s, err := tx.Scan(name, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := all(s, 0)
	return rows
}

// A transaction's writes are in its own scans and table list, with stable
// rowids, and in no other transaction's.
func TestATransactionReadsItsOwnWrites(t *testing.T) {
	c, store := newLake(t)
	l := NewLake(c)
	tx, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	before := store.Snapshot()
	if err := tx.Insert("ducklake_tag", [][]any{{int64(7), int64(1), nil, "k", "v"}, {int64(8), int64(1), nil, "k2", nil}}); err != nil {
		t.Fatal(err)
	}
	rows := scanAll(t, tx, "ducklake_tag")
	if len(rows) != 2 || rows[0][0] != int64(0) || rows[1][0] != int64(1) || rows[1][4] != "k2" {
		t.Fatalf("own inserts: %v", rows)
	}
	if err := tx.Update("ducklake_tag", []int64{0}, []int{4}, [][]any{{"v2"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := tx.Delete("ducklake_tag", []int64{1}); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if rows := scanAll(t, tx, "ducklake_tag"); len(rows) != 1 || rows[0][5] != "v2" {
		t.Fatalf("after update and delete: %v", rows)
	}
	if rows := scanAll(t, other, "ducklake_tag"); len(rows) != 0 {
		t.Fatalf("another transaction sees %v", rows)
	}
	// Filters apply to the merged rows; a delete of the base rows too.
	s, err := tx.Scan("ducklake_schema", []int{Rowid, 4}, []Filter{{Column: 4, Op: OpEq, Value: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := all(s, 0); len(r) != 1 || r[0][0] != int64(0) {
		t.Fatalf("main: %v", r)
	}
	if n, err := tx.Delete("ducklake_schema", []int64{0}); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if rows := scanAll(t, tx, "ducklake_schema"); len(rows) != 0 {
		t.Fatalf("deleted base row still scanned: %v", rows)
	}
	// A created table is listed and scanned.
	def := &ducklake.Table{Name: "ducklake_inlined_data_1_1", PrimaryKey: -1, Columns: []ducklake.Column{
		{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "v", Type: "HUGEINT"},
	}}
	if created, err := tx.CreateTable(def, false); err != nil || !created {
		t.Fatal(created, err)
	}
	if ts := tx.Tables(); ts[len(ts)-1].Name != def.Name || len(other.Tables()) != 22 {
		t.Fatalf("table lists: %d and %d", len(tx.Tables()), len(other.Tables()))
	}
	if err := tx.Insert(def.Name, [][]any{{int64(0), int64(1), nil, ducklake.Encoded{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	if rows := scanAll(t, tx, def.Name); len(rows) != 1 || string(rows[0][4].(ducklake.Encoded)) != "\x01\x02\x03" {
		t.Fatalf("inlined rows: %v", rows)
	}
	if d := store.Snapshot().Sub(before); d.Total() != 0 {
		t.Fatalf("uncommitted writes made %v requests", d)
	}
}

// committing wraps a catalog: its BeginRows fails, so Commit's reach into
// ducklake.Commit shows.
type committing struct {
	*core.Catalog
	begun int
}

func (c *committing) BeginRows(ctx context.Context, expect core.Head) (*core.Transaction, error) {
	c.begun++
	return nil, &core.Error{Kind: core.CommitConflict, Msg: "conflict: test"}
}

// Commit hands the change set to ducklake.Commit once: an empty one
// commits nothing; afterwards the transaction takes no writes.
func TestCommitHandsTheChangesOver(t *testing.T) {
	c, store := newLake(t)
	cat := &committing{Catalog: c.Catalog}
	l := NewLake(cat)
	ro, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	scanAll(t, ro, "ducklake_snapshot")
	before := store.Snapshot()
	if err := ro.Commit(bg); err != nil {
		t.Fatalf("a read-only commit: %v", err)
	}
	if d := store.Snapshot().Sub(before); d.Total() != 0 || cat.begun != 0 {
		t.Fatalf("a read-only commit made %v requests, %d BeginRows", d, cat.begun)
	}
	if err := ro.Commit(bg); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("a second commit: %v", err)
	}
	tx, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Insert("ducklake_tag", [][]any{{int64(7), int64(1), nil, "k", "v"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(bg); core.KindOf(err) != core.CommitConflict || cat.begun != 1 {
		t.Fatalf("commit: %v, %d BeginRows", err, cat.begun)
	}
	if commits, conflicts := l.Counts(); commits != 0 || conflicts != 1 {
		t.Fatalf("after a read-only commit and a conflict: %d commits, %d conflicts counted", commits, conflicts)
	}
	if err := tx.Insert("ducklake_tag", [][]any{{int64(8), int64(1), nil, "k", "v"}}); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("a write after commit: %v", err)
	}
	if _, err := tx.Delete("ducklake_tag", []int64{0}); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("a delete after commit: %v", err)
	}
}

// Encoded cells travel as DUCKDB; a batch never mixes them with other
// cells in one column (they have no text), it ends before such a row.
func TestEncodedCellsKeepTheirOwnBatches(t *testing.T) {
	c, _ := newLake(t)
	tx, err := NewLake(c).Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	def := &ducklake.Table{Name: "ducklake_inlined_data_1_1", PrimaryKey: -1, Columns: []ducklake.Column{
		{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "v", Type: "HUGEINT"},
	}}
	if _, err := tx.CreateTable(def, false); err != nil {
		t.Fatal(err)
	}
	e := ducklake.Encoded{9}
	if err := tx.Insert(def.Name, [][]any{
		{int64(0), int64(1), nil, e}, {int64(1), int64(1), nil, nil}, {int64(2), int64(1), nil, e},
		{int64(3), int64(1), nil, "12"}, {int64(4), int64(1), nil, int64(5)}, {int64(5), int64(1), nil, e},
	}); err != nil {
		t.Fatal(err)
	}
	s, err := tx.Scan(def.Name, []int{0, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		b := s.Next(100)
		if len(b.Rows) == 0 {
			break
		}
		got = append(got, fmt.Sprintf("%d:%s", len(b.Rows), b.Columns[1].Type))
	}
	if want := []string{"3:DUCKDB", "2:VARCHAR", "1:DUCKDB"}; !slices.Equal(got, want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// Under DuckLake 0.3 a lake whose objects lie inside the DATA_PATH it
// records is refused for read-write (0.3's orphan cleanup would delete
// them), naming both and what to do; beside it, read-only, or under
// DuckLake 1.0, it is not.
func TestCheckAttachDataPath(t *testing.T) {
	t.Cleanup(func() { newLakes.Store(nil) })
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{DataPath: "/srv/lake/data/"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	for _, tc := range []struct {
		version, location string
		refused           bool
	}{
		{"0.3", "/srv/lake/data/meta", true},
		{"0.3", "/srv/lake/data", true},
		{"0.3", "file:///srv/lake/data/x/../meta", true},
		{"0.3", "/srv/lake/meta", false},
		{"0.3", "/srv/lake/database", false},
		{"1.0", "/srv/lake/data/meta", false},
	} {
		if err := SetDuckLakeVersion(tc.version); err != nil {
			t.Fatal(err)
		}
		err := NewLake(c, tc.location, "").CheckAttach(bg, false)
		if refused := err != nil; refused != tc.refused {
			t.Errorf("DuckLake %s, lake at %s: %v", tc.version, tc.location, err)
		}
		if err := NewLake(c, tc.location).CheckAttach(bg, true); err != nil {
			t.Errorf("DuckLake %s, lake at %s, read-only: %v", tc.version, tc.location, err)
		}
		if err != nil && (core.KindOf(err) != core.InvalidArgument || !strings.Contains(err.Error(), "/srv/lake/data/") ||
			!strings.Contains(err.Error(), "ducklake_delete_orphaned_files") || !strings.Contains(err.Error(), "READ_ONLY")) {
			t.Errorf("the refusal does not say what and why: %v", err)
		}
	}
	for _, tc := range []struct {
		loc, dir string
		in       bool
	}{
		{"s3://b/data/lake", "s3://b/data/", true},
		{"s3://b/data", "s3://b/data/", true},
		{"s3://b/datalake", "s3://b/data/", false},
		{"s3://b/lake", "s3://b/data/", false},
		{"s3://c/data/lake", "s3://b/data/", false},
	} {
		if got := within(tc.loc, tc.dir); got != tc.in {
			t.Errorf("within(%q, %q) = %v", tc.loc, tc.dir, got)
		}
	}
}

// A lake DuckLake 1.0 created or migrated is refused under DuckLake 0.3
// (which would read version 1.0 as one below its own), naming both
// versions and the DuckDB to use; DuckLake 1.0 attaches it.
func TestCheckAttachRefusesANewerDuckLake(t *testing.T) {
	t.Cleanup(func() { newLakes.Store(nil) })
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	tx, err := c.BeginRows(bg, core.Head{})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(tx.PutSnapshot(core.Snapshot{ID: 0, NextCatalogID: 1, ChangesMade: `created_schema:"main"`}),
		tx.PutSchema(core.Schema{ID: 0, Name: "main", Path: "main/", PathIsRelative: true}),
		tx.PutOptions(core.Options{Scope: core.ScopeGlobal, Values: map[string]string{"version": "1.0", "data_path": "/d/"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{false, true} {
		if err := SetDuckLakeVersion("0.3"); err != nil {
			t.Fatal(err)
		}
		err := NewLake(c, "/l").CheckAttach(bg, readOnly)
		if core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "version 1.0") ||
			!strings.Contains(err.Error(), "reads version 0.3") || !strings.Contains(err.Error(), "DuckDB v1.5") {
			t.Fatalf("a 1.0 lake under DuckLake 0.3 (read-only %v): %v", readOnly, err)
		}
		if err := SetDuckLakeVersion("1.0"); err != nil {
			t.Fatal(err)
		}
		if err := NewLake(c, "/l").CheckAttach(bg, readOnly); err != nil {
			t.Fatalf("a 1.0 lake under DuckLake 1.0: %v", err)
		}
	}
}
