package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

var bg = context.Background()

func openRW(t *testing.T, s objstore.Store) *core.Catalog {
	t.Helper()
	c, err := core.Open(bg, s, core.CatalogOptions{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

func openRO(t *testing.T, s objstore.Store, opts core.CatalogOptions) *core.Catalog {
	t.Helper()
	if opts.ReaderPollInterval == 0 {
		opts.ReaderPollInterval = -1
	}
	c, err := core.OpenReadOnly(bg, s, opts)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

func commit(t *testing.T, c *core.Catalog, fn func(*core.Transaction) error) core.SnapshotID {
	t.Helper()
	id, err := c.Commit(bg, fn)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return id
}

func snap(t *testing.T, c *core.Catalog) *core.CatalogView {
	t.Helper()
	s, err := c.View(bg)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return s
}

func mainSchema(t *testing.T, tx *core.Transaction) core.SchemaID {
	s, ok := tx.View().SchemaByName("main")
	if !ok {
		t.Fatal("no schema main")
	}
	return s.ID
}

func cols(names ...string) []core.ColumnDef {
	var out []core.ColumnDef
	for _, n := range names {
		out = append(out, core.ColumnDef{Name: n, Type: "int64"})
	}
	return out
}

func wantKind(t *testing.T, err error, k core.Kind) {
	t.Helper()
	if !errors.Is(err, k) {
		t.Fatalf("got %v (kind %v), want kind %v", err, core.KindOf(err), k)
	}
}

func TestGenesisCreatesSnapshotZeroWithSchemaMain(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	s := snap(t, c)
	if s.ID() != 0 || s.Head() != (core.Head{}) {
		t.Fatalf("genesis head = %+v at snapshot %d", s.Head(), s.ID())
	}
	m, ok := s.SchemaByName("main")
	if !ok || m.ID != 0 || m.Path != "main/" || !m.PathIsRelative {
		t.Fatalf("schema main = %+v, %v", m, ok)
	}
	if got := s.Snapshot().ChangesMade; got != `created_schema:"main"` {
		t.Fatalf("changes_made = %q", got)
	}
	if v, ok := s.Option(core.ScopeGlobal, 0, "encrypted"); !ok || v != "false" {
		t.Fatalf("encrypted option = %q %v", v, ok)
	}
	f, origin := c.Format()
	if f != core.FormatCurrent || origin != nil {
		t.Fatalf("format %d origin %v, want %d and none", f, origin, core.FormatCurrent)
	}
}

func TestEveryVerbStagesAndReadsBack(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	var tbl core.TableID
	var file core.DataFileID
	var view core.ViewID
	var sch core.SchemaID
	var colB core.ColumnID
	id1 := commit(t, c, func(tx *core.Transaction) error {
		var err error
		sch, err = tx.CreateSchema("sales")
		if err != nil {
			return err
		}
		tbl, err = tx.CreateTable(sch, "orders", []core.ColumnDef{
			{Name: "a", Type: "int64"},
			{Name: "b", Type: "varchar"},
			{Name: "s", Type: "struct", Children: []core.ColumnDef{{Name: "x", Type: "int32"}, {Name: "y", Type: "float64"}}},
		})
		if err != nil {
			return err
		}
		view, err = tx.CreateView(sch, "big_orders", "SELECT * FROM orders WHERE a > 10", "", "")
		return err
	})
	s := snap(t, c)
	if s.ID() != id1 || id1 != 1 {
		t.Fatalf("first commit minted %d (head %d)", id1, s.ID())
	}
	orders, ok := s.TableByName("sales", "orders")
	if !ok || orders.ID != tbl || orders.Begin != 1 || !orders.Live() {
		t.Fatalf("table = %+v %v", orders, ok)
	}
	cs := s.Columns(tbl)
	if len(cs) != 5 {
		t.Fatalf("columns = %+v, want 5 (3 top-level + 2 nested)", cs)
	}
	for _, col := range cs {
		if col.Name == "x" || col.Name == "y" {
			if col.Parent == nil || s.Columns(tbl)[2].ID != *col.Parent {
				t.Fatalf("nested column %s has parent %v", col.Name, col.Parent)
			}
		}
		if col.Name == "b" {
			colB = col.ID
		}
	}
	if v, ok := s.ViewByName("sales", "big_orders"); !ok || v.ID != view || v.Dialect != "duckdb" {
		t.Fatalf("view = %+v %v", v, ok)
	}
	if s.Snapshot().SchemaVersion != 1 {
		t.Fatalf("schema version %d, want 1", s.Snapshot().SchemaVersion)
	}

	commit(t, c, func(tx *core.Transaction) error {
		var err error
		file, err = tx.RegisterDataFile(core.DataFileDef{TableID: tbl, Path: "f1.parquet", PathIsRelative: true, RecordCount: 100, FileSizeBytes: 1000, FooterSize: 10,
			PartitionValues: []core.PartitionValue{{KeyIndex: 0, Value: "2026"}},
			ColumnStats:     []core.FileColumnStats{{ColumnID: colB, NullCount: ptr(uint64(3))}}})
		return err
	})
	s = snap(t, c)
	f, ok := s.DataFile(tbl, file)
	if !ok || f.RowIDStart == nil || *f.RowIDStart != 0 || f.RecordCount != 100 || f.Format != "parquet" || len(f.PartitionValues) != 1 {
		t.Fatalf("data file = %+v %v", f, ok)
	}
	st, _ := s.TableStats(tbl)
	if st.RecordCount != 100 || st.NextRowID != 100 || st.FileSizeBytes != 1000 {
		t.Fatalf("stats after register = %+v", st)
	}
	if fs := s.FileColumnStats(file); len(fs) != 1 || *fs[0].NullCount != 3 {
		t.Fatalf("file column stats = %+v", fs)
	}
	if got := s.Snapshot().ChangesMade; got != fmt.Sprintf("inserted_into_table:%d", tbl) {
		t.Fatalf("changes_made = %q", got)
	}

	var del core.DeleteFileID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		del, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tbl, DataFileID: file, Path: "f1-del.parquet", DeleteCount: 5})
		if err != nil {
			return err
		}
		if err := tx.UpdateColumnStats(core.TableColumnStats{TableID: tbl, ColumnID: colB, ContainsNull: ptr(true), MinValue: ptr("a"), MaxValue: ptr("z")}); err != nil {
			return err
		}
		if err := tx.SetTag(uint64(tbl), "owner", "ops"); err != nil {
			return err
		}
		if err := tx.SetOption(core.ScopeTable, uint64(tbl), "target_file_size", "1MB"); err != nil {
			return err
		}
		if _, err := tx.SetPartitioning(tbl, []core.PartitionColumn{{KeyIndex: 0, ColumnID: colB, Transform: "identity"}}); err != nil {
			return err
		}
		if _, err := tx.SetSorting(tbl, []core.SortExpression{{Index: 0, Expression: "a", Dialect: "duckdb", Direction: "ASC", NullOrder: "NULLS_LAST"}}); err != nil {
			return err
		}
		_, err = tx.CreateMapping(tbl, "map_by_name", []core.NameMapping{{ColumnID: colB, SourceName: "B", TargetFieldID: 2}})
		return err
	})
	s = snap(t, c)
	if d := s.DeleteFilesOf(tbl, file); len(d) != 1 || d[0].ID != del || d[0].DeleteCount != 5 {
		t.Fatalf("delete files = %+v", d)
	}
	if tc := s.TableColumnStats(tbl); len(tc) != 1 || *tc[0].MaxValue != "z" {
		t.Fatalf("table column stats = %+v", tc)
	}
	if tags := s.Tags(uint64(tbl)); len(tags) != 1 || tags[0].Value != "ops" {
		t.Fatalf("tags = %+v", tags)
	}
	if v, ok := s.Option(core.ScopeTable, uint64(tbl), "target_file_size"); !ok || v != "1MB" {
		t.Fatalf("option = %q %v", v, ok)
	}
	if p, ok := s.Partition(tbl); !ok || len(p.Columns) != 1 {
		t.Fatalf("partition = %+v %v", p, ok)
	}
	if so, ok := s.Sort(tbl); !ok || so.Expressions[0].Expression != "a" {
		t.Fatalf("sort = %+v %v", so, ok)
	}
	if m := s.Mappings(); len(m) != 1 || m[0].Names[0].SourceName != "B" {
		t.Fatalf("mappings = %+v", m)
	}

	commit(t, c, func(tx *core.Transaction) error {
		if err := tx.RenameColumn(tbl, colB, "bee"); err != nil {
			return err
		}
		if err := tx.AlterColumn(tbl, colB, core.ColumnChange{Type: ptr("varchar"), Default: ptr("'x'")}); err != nil {
			return err
		}
		if _, err := tx.AddColumn(tbl, core.ColumnDef{Name: "c", Type: "bool"}); err != nil {
			return err
		}
		if err := tx.ExpireDeleteFile(tbl, del); err != nil {
			return err
		}
		if err := tx.AlterView(view, "huge_orders", "SELECT 1"); err != nil {
			return err
		}
		if err := tx.RemoveTag(uint64(tbl), "owner"); err != nil {
			return err
		}
		return tx.RenameTable(tbl, "orders2")
	})
	s = snap(t, c)
	if b, _ := s.Column(tbl, colB); b.Name != "bee" || *b.DefaultValue != "'x'" || b.Begin != s.ID() {
		t.Fatalf("altered column = %+v", b)
	}
	if _, ok := s.TableByName("sales", "orders"); ok {
		t.Fatal("old table name still resolves")
	}
	if tb, ok := s.TableByName("sales", "orders2"); !ok || tb.ID != tbl {
		t.Fatal("renamed table does not resolve")
	}
	if len(s.DeleteFiles(tbl)) != 0 || len(s.Tags(uint64(tbl))) != 0 {
		t.Fatal("expired delete file or removed tag still live")
	}
	if _, ok := s.ViewByName("sales", "huge_orders"); !ok {
		t.Fatal("renamed view does not resolve")
	}

	commit(t, c, func(tx *core.Transaction) error {
		if err := tx.DropColumn(tbl, cs[2].ID); err != nil { // the struct with its children
			return err
		}
		if err := tx.ClearSorting(tbl); err != nil {
			return err
		}
		if err := tx.ClearPartitioning(tbl); err != nil {
			return err
		}
		if err := tx.UnsetOption(core.ScopeTable, uint64(tbl), "target_file_size"); err != nil {
			return err
		}
		return tx.ExpireDataFile(tbl, file)
	})
	s = snap(t, c)
	if n := len(s.Columns(tbl)); n != 3 {
		t.Fatalf("%d columns after dropping the struct, want 3 (a, bee, c)", n)
	}
	if st, _ := s.TableStats(tbl); st.RecordCount != 0 || len(s.DataFiles(tbl)) != 0 {
		t.Fatalf("after expiring the only file: stats %+v, files %d", st, len(s.DataFiles(tbl)))
	}

	commit(t, c, func(tx *core.Transaction) error {
		if err := tx.DropView(view); err != nil {
			return err
		}
		return tx.DropSchema(sch, true)
	})
	s = snap(t, c)
	if _, ok := s.SchemaByName("sales"); ok || len(s.AllTables()) != 0 || len(s.AllViews()) != 0 {
		t.Fatal("dropping schema sales with cascade left things behind")
	}

	// Everything above survives a reopen, as a read-only handle sees it.
	ro := openRO(t, store, core.CatalogOptions{})
	rs := snap(t, ro)
	if rs.ID() != s.ID() || len(rs.Schemas()) != 1 {
		t.Fatalf("read-only view at %d with %d schemas, writer at %d", rs.ID(), len(rs.Schemas()), s.ID())
	}
}

func ptr[T any](v T) *T { return &v }

func TestVerbPremisesAreChecked(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.CreateTable(mainSchema(t, tx), "t", cols("a"))
		return err
	})
	cases := []struct {
		name string
		fn   func(tx *core.Transaction) error
		kind core.Kind
	}{
		{"duplicate table", func(tx *core.Transaction) error {
			_, err := tx.CreateTable(mainSchema(t, tx), "t", cols("a"))
			return err
		}, core.AlreadyExists},
		{"duplicate schema", func(tx *core.Transaction) error { _, err := tx.CreateSchema("main"); return err }, core.AlreadyExists},
		{"view named like a table", func(tx *core.Transaction) error {
			_, err := tx.CreateView(mainSchema(t, tx), "t", "SELECT 1", "", "")
			return err
		}, core.AlreadyExists},
		{"unknown table", func(tx *core.Transaction) error { return tx.DropTable(999) }, core.NotFound},
		{"unknown schema", func(tx *core.Transaction) error { _, err := tx.CreateTable(77, "x", nil); return err }, core.NotFound},
		{"non-empty schema", func(tx *core.Transaction) error { return tx.DropSchema(mainSchema(t, tx), false) }, core.Constraint},
		{"empty name", func(tx *core.Transaction) error { _, err := tx.CreateSchema(""); return err }, core.InvalidArgument},
		{"file without path", func(tx *core.Transaction) error {
			tb, _ := tx.View().TableByName("main", "t")
			_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb.ID})
			return err
		}, core.InvalidArgument},
		{"delete file for a missing data file", func(tx *core.Transaction) error {
			tb, _ := tx.View().TableByName("main", "t")
			_, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tb.ID, DataFileID: 12345, Path: "d"})
			return err
		}, core.NotFound},
		{"inline row of the wrong width", func(tx *core.Transaction) error {
			tb, _ := tx.View().TableByName("main", "t")
			_, err := tx.InlineInsert(tb.ID, [][]core.Value{{}, {}})
			return err
		}, core.InvalidArgument},
	}
	before := snap(t, c).Head()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Commit(bg, tc.fn)
			wantKind(t, err, tc.kind)
			if strings.Contains(strings.ToLower(err.Error()), "conflict") {
				t.Fatalf("a %v error mentions conflict: %v", tc.kind, err)
			}
		})
	}
	if after := snap(t, c).Head(); after != before {
		t.Fatalf("failed commits moved the head from %+v to %+v", before, after)
	}
}

func TestCommitThatStagesNothingReturnsTheHead(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	id := commit(t, c, func(tx *core.Transaction) error { return nil })
	if id != 0 || snap(t, c).Head().BatchSeq != 0 {
		t.Fatalf("empty commit returned %d and moved the batch count", id)
	}
}

func TestConcurrentCommitsAreConsecutiveAndNothingIsLost(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	const goroutines, each = 8, 15
	var tables [goroutines]core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		for g := range tables {
			id, err := tx.CreateTable(mainSchema(t, tx), fmt.Sprintf("t%d", g), cols("a"))
			if err != nil {
				return err
			}
			tables[g] = id
		}
		return nil
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	minted := map[core.SnapshotID]string{}
	errs := make(chan error, goroutines*each)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				path := fmt.Sprintf("g%d/f%d.parquet", g, i)
				id, err := c.Commit(bg, func(tx *core.Transaction) error {
					_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tables[g], Path: path, RecordCount: 1})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if prev, dup := minted[id]; dup {
					errs <- fmt.Errorf("snapshot %d minted for both %s and %s", id, prev, path)
				}
				minted[id] = path
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := snap(t, c)
	if s.ID() != 1+goroutines*each {
		t.Fatalf("head %d, want %d", s.ID(), 1+goroutines*each)
	}
	for id := core.SnapshotID(2); id <= s.ID(); id++ {
		if _, ok := minted[id]; !ok {
			t.Fatalf("snapshot %d was never returned to a caller (ids not consecutive)", id)
		}
	}
	if s.Head().BatchSeq >= uint64(goroutines*each) {
		t.Logf("note: %d commits took %d batches (no grouping happened)", goroutines*each, s.Head().BatchSeq)
	}
	// A fresh reader sees every file exactly once.
	ro := openRO(t, store, core.CatalogOptions{})
	rs := snap(t, ro)
	for g := range tables {
		if n := len(rs.DataFiles(tables[g])); n != each {
			t.Fatalf("table %d has %d files, want %d", tables[g], n, each)
		}
		st, _ := rs.TableStats(tables[g])
		if st.RecordCount != each || st.NextRowID != each {
			t.Fatalf("table %d stats %+v", tables[g], st)
		}
	}
	snaps, err := ro.Snapshots(bg, 0)
	if err != nil || len(snaps) != int(s.ID())+1 {
		t.Fatalf("%d snapshot records, want %d (%v)", len(snaps), s.ID()+1, err)
	}
}

func TestGroupCommitSharesOneWriteAndFailsMembersIndividually(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	release := make(chan struct{})
	started := make(chan struct{})
	// The first commit holds the committer while others queue up behind it.
	go c.Commit(bg, func(tx *core.Transaction) error {
		select {
		case <-started:
		default:
			close(started)
		}
		<-release
		_, err := tx.CreateSchema("first")
		return err
	})
	<-started
	before := snap(t, c).Head()
	var wg sync.WaitGroup
	results := make([]error, 6)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, results[i] = c.Commit(bg, func(tx *core.Transaction) error {
				if i == 3 {
					return errors.New("member 3 gives up")
				}
				_, err := tx.CreateSchema(fmt.Sprintf("s%d", i))
				return err
			})
		}(i)
	}
	waitQueued(t, c, len(results)) // all six wait behind the held leader
	close(release)
	wg.Wait()
	for i, err := range results {
		if (i == 3) != (err != nil) {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	after := snap(t, c).Head()
	if after.SnapshotID != before.SnapshotID+6 {
		t.Fatalf("head moved %d -> %d, want 6 new snapshots", before.SnapshotID, after.SnapshotID)
	}
	// One batch for the held first commit, one for the six queued behind it.
	if batches := after.BatchSeq - before.BatchSeq; batches != 2 {
		t.Fatalf("7 commits took %d engine batches; group commit should need exactly 2", batches)
	}
}

func TestReaderSeesCommitAfterRefresh(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	ro := openRO(t, store, core.CatalogOptions{})
	if snap(t, ro).ID() != 0 {
		t.Fatal("reader not at genesis")
	}
	id := commit(t, c, func(tx *core.Transaction) error { _, err := tx.CreateSchema("late"); return err })
	if _, ok := snap(t, ro).SchemaByName("late"); ok {
		t.Fatal("reader saw the commit before refreshing (it never polls here)")
	}
	if err := ro.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	s := snap(t, ro)
	if _, ok := s.SchemaByName("late"); !ok || s.ID() != id {
		t.Fatalf("after refresh the reader is at %d without schema late", s.ID())
	}
	if _, err := ro.Commit(bg, func(tx *core.Transaction) error { return nil }); !errors.Is(err, core.InvalidArgument) {
		t.Fatalf("commit on a read-only handle: %v", err)
	}
}

func TestReaderPollsOnItsOwn(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	ro := openRO(t, store, core.CatalogOptions{ReaderPollInterval: 10 * time.Millisecond})
	id := commit(t, c, func(tx *core.Transaction) error { _, err := tx.CreateSchema("polled"); return err })
	deadline := time.Now().Add(5 * time.Second)
	for snap(t, ro).ID() != id {
		if time.Now().After(deadline) {
			t.Fatal("the reader never picked up the commit on its own")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTimeTravelReturnsExactlyTheOldState(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	var tb core.TableID
	s1 := commit(t, c, func(tx *core.Transaction) error {
		var err error
		tb, err = tx.CreateTable(mainSchema(t, tx), "t", cols("a", "b"))
		return err
	})
	var f1 core.DataFileID
	s2 := commit(t, c, func(tx *core.Transaction) error {
		var err error
		f1, err = tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "1.parquet", RecordCount: 10})
		return err
	})
	s3 := commit(t, c, func(tx *core.Transaction) error {
		cs := tx.View().Columns(tb)
		if err := tx.RenameColumn(tb, cs[1].ID, "bb"); err != nil {
			return err
		}
		return tx.RenameTable(tb, "t2")
	})
	s4 := commit(t, c, func(tx *core.Transaction) error {
		if err := tx.ExpireDataFile(tb, f1); err != nil {
			return err
		}
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "2.parquet", RecordCount: 7})
		return err
	})
	s5 := commit(t, c, func(tx *core.Transaction) error { return tx.DropTable(tb) })
	type expect struct {
		at      core.SnapshotID
		name    string // "" = table absent
		colB    string
		files   []string
		version uint64
	}
	for _, e := range []expect{
		{0, "", "", nil, 0},
		{s1, "t", "b", nil, 1},
		{s2, "t", "b", []string{"1.parquet"}, 1},
		{s3, "t2", "bb", []string{"1.parquet"}, 2},
		{s4, "t2", "bb", []string{"2.parquet"}, 2},
		{s5, "", "", nil, 3},
	} {
		s, err := c.ViewAt(bg, e.at)
		if err != nil {
			t.Fatalf("ViewAt(%d): %v", e.at, err)
		}
		if s.ID() != e.at || s.Snapshot().SchemaVersion != e.version {
			t.Fatalf("at %d: view at %d with schema version %d, want %d", e.at, s.ID(), s.Snapshot().SchemaVersion, e.version)
		}
		got, ok := s.Table(tb)
		if (e.name == "") == ok || (ok && got.Name != e.name) {
			t.Fatalf("at %d: table = %+v (%v), want name %q", e.at, got, ok, e.name)
		}
		if !ok {
			continue
		}
		if cs := s.Columns(tb); len(cs) != 2 || cs[1].Name != e.colB {
			t.Fatalf("at %d: columns %+v, want b named %q", e.at, cs, e.colB)
		}
		var paths []string
		for _, f := range s.DataFiles(tb) {
			paths = append(paths, f.Path)
		}
		if fmt.Sprint(paths) != fmt.Sprint(e.files) {
			t.Fatalf("at %d: files %v, want %v", e.at, paths, e.files)
		}
	}
	if _, err := c.ViewAt(bg, s5+1); !errors.Is(err, core.NotFound) {
		t.Fatalf("ViewAt(future): %v", err)
	}
}

func TestInlinedRowsInsertDeleteFlushAndTimeTravel(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	var tb core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		tb, err = tx.CreateTable(mainSchema(t, tx), "t", []core.ColumnDef{{Name: "id", Type: "int64"}, {Name: "name", Type: "varchar"}})
		return err
	})
	row := func(i int64, n string) []core.Value { return []core.Value{{Int: &i}, {String: &n}} }
	sIns := commit(t, c, func(tx *core.Transaction) error {
		first, err := tx.InlineInsert(tb, [][]core.Value{row(1, "a"), row(2, "b"), row(3, "c")})
		if err != nil || first != 0 {
			return fmt.Errorf("first row id %d: %v", first, err)
		}
		return nil
	})
	sDel := commit(t, c, func(tx *core.Transaction) error { return tx.InlineDelete(tb, []uint64{1}) })
	s := snap(t, c)
	rows := s.InlinedRows(tb)
	if len(rows) != 1 || len(rows[0].Rows) != 2 || rows[0].Rows[0].RowID != 0 || rows[0].Rows[1].RowID != 2 {
		t.Fatalf("live inlined rows = %+v", rows)
	}
	if st, _ := s.TableStats(tb); st.RecordCount != 2 || st.NextRowID != 3 {
		t.Fatalf("stats %+v", st)
	}
	if err := func() error {
		_, err := c.Commit(bg, func(tx *core.Transaction) error { return tx.InlineDelete(tb, []uint64{1}) })
		return err
	}(); !errors.Is(err, core.NotFound) {
		t.Fatalf("deleting a deleted inlined row: %v", err)
	}
	sFlush := commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.FlushInlined(tb, core.DataFileDef{Path: "flushed.parquet", RecordCount: 2})
		return err
	})
	s = snap(t, c)
	if s.InlinedRowCount(tb) != 0 || len(s.DataFiles(tb)) != 1 {
		t.Fatalf("after flush: %d inlined rows, %d files", s.InlinedRowCount(tb), len(s.DataFiles(tb)))
	}
	if st, _ := s.TableStats(tb); st.RecordCount != 2 || st.NextRowID != 3 {
		t.Fatalf("stats after flush %+v (rows must not be counted twice)", st)
	}
	for at, want := range map[core.SnapshotID]int{sIns: 3, sDel: 2, sFlush: 0} {
		old, err := c.ViewAt(bg, at)
		if err != nil {
			t.Fatal(err)
		}
		if got := old.InlinedRowCount(tb); got != want {
			t.Fatalf("at %d: %d inlined rows, want %d", at, got, want)
		}
	}
	// A fresh reader decodes the same values.
	ro := openRO(t, store, core.CatalogOptions{})
	old, err := ro.ViewAt(bg, sDel)
	if err != nil {
		t.Fatal(err)
	}
	got := old.InlinedRows(tb)[0].Rows
	if *got[1].Values[1].String != "c" || *got[1].Values[0].Int != 3 {
		t.Fatalf("decoded rows %+v", got)
	}
}

func TestOpenReadOnlyRefusesAnEmptyStore(t *testing.T) {
	_, err := core.OpenReadOnly(bg, objstore.NewMemory(0), core.CatalogOptions{})
	wantKind(t, err, core.NotFound)
	if !strings.Contains(err.Error(), "open it read-write once") {
		t.Fatalf("message does not say what to do: %v", err)
	}
}

func TestReadWriteOpenRefusesACheckpoint(t *testing.T) {
	_, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{Checkpoint: "0b8a8d5e-1b0c-4f0e-9b1a-1c2d3e4f5a6b"})
	wantKind(t, err, core.Configuration)
}

func TestGenesisRaceEndsWithExactlyOneGenesis(t *testing.T) {
	for round := 0; round < 5; round++ {
		store := objstore.NewMemory(0)
		var wg sync.WaitGroup
		cats := make([]*core.Catalog, 6)
		errs := make([]error, len(cats))
		for i := range cats {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cats[i], errs[i] = core.Open(bg, store, core.CatalogOptions{})
			}(i)
		}
		wg.Wait()
		opened := 0
		for i, c := range cats {
			if errs[i] == nil {
				opened++
				c.Close(bg)
			} else if !errors.Is(errs[i], core.Fenced) && !errors.Is(errs[i], core.OpenRaced) {
				t.Fatalf("round %d: open %d failed unexpectedly: %v", round, i, errs[i])
			}
		}
		if opened == 0 {
			t.Fatalf("round %d: no open succeeded", round)
		}
		ro := openRO(t, store, core.CatalogOptions{})
		s := snap(t, ro)
		snaps, _ := ro.Snapshots(bg, 0)
		if s.ID() != 0 || len(snaps) != 1 || len(s.Schemas()) != 1 {
			t.Fatalf("round %d: after the race: head %d, %d snapshots, %d schemas", round, s.ID(), len(snaps), len(s.Schemas()))
		}
		ro.Close(bg)
	}
}

func TestCheckpointPinsAReadOnlyOpen(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	createTable(t, c, "before")
	cp, err := c.CreateCheckpoint(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, c, "after")
	pinned := openRO(t, store, core.CatalogOptions{Checkpoint: cp})
	s := snap(t, pinned)
	if _, ok := s.TableByName("main", "before"); !ok {
		t.Fatal("the pinned reader lacks what the checkpoint holds")
	}
	if _, ok := s.TableByName("main", "after"); ok {
		t.Fatal("the pinned reader sees a commit made after its checkpoint")
	}
	if r := pinned.Role(); r != core.RoleReader || c.Role() != core.RoleWriter {
		t.Fatalf("roles %q and %q", pinned.Role(), c.Role())
	}
	if _, err := core.OpenReadOnly(bg, store, core.CatalogOptions{Checkpoint: "0b8a8d5e-1b0c-4f0e-9b1a-1c2d3e4f5a6b"}); !errors.Is(err, core.NotFound) {
		t.Fatalf("a missing checkpoint: %v", err)
	}
}

// A read-only handle polling fast while a writer commits never serves a
// torn state: every commit adds a table together with its one data file,
// so a materialization with a table but no file would be torn.
func TestReadOnlyMaterializationsAreNeverTorn(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	// A few hundred tables make every materialization long enough for
	// polls to land in the middle of it.
	const pre = 300
	commit(t, c, func(tx *core.Transaction) error {
		for i := 0; i < pre; i++ {
			id, err := tx.CreateTable(mainSchema(t, tx), fmt.Sprintf("pre%d", i), cols("a", "b", "c"))
			if err != nil {
				return err
			}
			if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: id, Path: fmt.Sprintf("pre%d.parquet", i), RecordCount: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	ro := openRO(t, store, core.CatalogOptions{ReaderPollInterval: time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 60; i++ {
			c.Commit(bg, func(tx *core.Transaction) error {
				id, err := tx.CreateTable(mainSchema(t, tx), fmt.Sprintf("t%d", i), cols("a"))
				if err != nil {
					return err
				}
				_, err = tx.RegisterDataFile(core.DataFileDef{TableID: id, Path: fmt.Sprintf("t%d.parquet", i), RecordCount: 1})
				return err
			})
		}
	}()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		s := snap(t, ro)
		for _, tb := range s.AllTables() {
			if n := len(s.DataFiles(tb.ID)); n != 1 {
				t.Fatalf("snapshot %d: table %s has %d files (torn read)", s.ID(), tb.Name, n)
			}
		}
		if uint64(len(s.AllTables())) != pre+uint64(s.ID())-1 {
			t.Fatalf("snapshot %d serves %d tables", s.ID(), len(s.AllTables()))
		}
	}
	t.Logf("%d consistent reads", reads)
}
