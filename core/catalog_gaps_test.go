package core_test

// Commit outcomes under store faults (a lost acknowledgement, a failed
// group write) and the verbs the broader tests do not reach: table and file
// column statistics, commit extra info, column nullability.

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// waitQueued blocks until n Commit callers wait in c's group-commit queue.
// It is a condition wait, not a timing assumption: callers reach the queue
// as soon as their goroutine runs, and a test holding the leader inside a
// closure knows none of them can leave it before it lets go.
func waitQueued(t *testing.T, c *core.Catalog, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.QueuedCommitsForTest() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d Commit callers reached the group-commit queue", c.QueuedCommitsForTest(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// holdLeader starts a Commit whose closure stages nothing and blocks until
// release is closed, so the group committer is busy and later callers
// queue. It returns once the closure runs, and a channel with the
// blocker's own result.
func holdLeader(t *testing.T, c *core.Catalog, release <-chan struct{}) <-chan error {
	t.Helper()
	started := make(chan struct{})
	var once sync.Once
	res := make(chan error, 1)
	go func() {
		_, err := c.Commit(bg, func(tx *core.Transaction) error {
			once.Do(func() { close(started) })
			<-release
			return nil
		})
		res <- err
	}()
	<-started
	return res
}

// wantConsecutive checks the catalog's snapshot records are 0..head with no
// gap and returns how many there are.
func wantConsecutive(t *testing.T, c *core.Catalog) int {
	t.Helper()
	snaps, err := c.Snapshots(bg, 0)
	if err != nil {
		t.Fatalf("Snapshots: %v", err)
	}
	head := snap(t, c).ID()
	if len(snaps) != int(head)+1 {
		t.Fatalf("%d snapshot records for head %d", len(snaps), head)
	}
	for i, s := range snaps {
		if s.ID != core.SnapshotID(i) {
			t.Fatalf("snapshot record %d has id %d (ids not consecutive)", i, s.ID)
		}
	}
	return len(snaps)
}

func noConflictText(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "conflict") {
		t.Fatalf("a %v error mentions conflict: %v", core.KindOf(err), err)
	}
}

// TestLostAckOnTheCommitWriteIsOutcomeUnknown: the WAL upload carrying a
// commit lands in the store but reports an error. Commit must not call
// that a failure: it returns OutcomeUnknown, and after reopening the
// commit is there in full. With the retrying transport (the default) the
// same lost acknowledgement is resolved by reading the object back, and
// Commit succeeds.
func TestLostAckOnTheCommitWriteIsOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name         string
		disableRetry bool
	}{
		{"bare store: the engine cannot tell", true},
		{"retrying transport resolves it", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := objstore.NewMemory(0)
			c0, err := core.Open(bg, inner, core.CatalogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := setupTwoTables(t, c0)
			if err := c0.Close(bg); err != nil {
				t.Fatal(err)
			}

			faulty := objstore.NewFaulty(inner)
			c, err := core.Open(bg, faulty, core.CatalogOptions{DisableRetry: tc.disableRetry})
			if err != nil {
				t.Fatal(err)
			}
			before := snap(t, c).Head()
			// The WAL object is the first create-if-absent write from here
			// on: nothing else writes while the catalog is idle, and a
			// commit's batch is one WAL upload.
			faulty.LoseAckNth(objstore.OpPutIfAbsent, 1)
			id, err := c.Commit(bg, func(tx *core.Transaction) error {
				if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: a, Path: "landed.parquet", RecordCount: 5}); err != nil {
					return err
				}
				return tx.RenameTable(a, "a_renamed")
			})
			if got := faulty.Injected(); got != 1 {
				t.Fatalf("%d faults injected, want the one lost ack", got)
			}
			if tc.disableRetry {
				wantKind(t, err, core.OutcomeUnknown)
				noConflictText(t, err)
				if !strings.Contains(err.Error(), "may or may not") {
					t.Fatalf("OutcomeUnknown does not say the commit may or may not have landed: %v", err)
				}
				if id != 0 {
					t.Fatalf("Commit returned snapshot %d with an OutcomeUnknown error", id)
				}
			} else if err != nil {
				t.Fatalf("the retrying transport should resolve a lost ack: %v", err)
			} else if id != before.SnapshotID+1 {
				t.Fatalf("Commit minted %d, want %d", id, before.SnapshotID+1)
			}
			c.Close(bg) // the engine may have stopped after the failed upload

			r := openRW(t, inner)
			s := snap(t, r)
			if s.ID() != before.SnapshotID+1 {
				t.Fatalf("after reopen the head is %d, want the unacknowledged commit %d", s.ID(), before.SnapshotID+1)
			}
			tb, ok := s.Table(a)
			files := s.DataFiles(a)
			if !ok || tb.Name != "a_renamed" || len(files) != 1 || files[0].Path != "landed.parquet" {
				t.Fatalf("the commit is not there in full: table %+v (%v), files %+v", tb, ok, files)
			}
			wantConsecutive(t, r)
			next := commit(t, r, insertInto(a, "after.parquet"))
			if next != s.ID()+1 {
				t.Fatalf("the next commit minted %d, want %d", next, s.ID()+1)
			}
		})
	}
}

// TestFailedGroupWriteFailsEveryMemberAndLandsNone: several callers share
// one batch; the store refuses the batch's write. Every caller gets an
// error, and after reopening none of their changes exist and the snapshot
// ids stay consecutive (the ids the batch would have minted are free).
func TestFailedGroupWriteFailsEveryMemberAndLandsNone(t *testing.T) {
	const members = 6
	inner := objstore.NewMemory(0)
	c0, err := core.Open(bg, inner, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tables [members]core.TableID
	commit(t, c0, func(tx *core.Transaction) error {
		for i := range tables {
			id, err := tx.CreateTable(mainSchema(t, tx), fmt.Sprintf("t%d", i), cols("a"))
			if err != nil {
				return err
			}
			tables[i] = id
		}
		return nil
	})
	if err := c0.Close(bg); err != nil {
		t.Fatal(err)
	}

	faulty := objstore.NewFaulty(inner)
	c, err := core.Open(bg, faulty, core.CatalogOptions{DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	before := snap(t, c).Head()

	release := make(chan struct{})
	blocker := holdLeader(t, c, release)
	var wg sync.WaitGroup
	results := make([]error, members)
	ids := make([]core.SnapshotID, members)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ids[i], results[i] = c.Commit(bg, func(tx *core.Transaction) error {
				if _, err := tx.CreateSchema(fmt.Sprintf("s%d", i)); err != nil {
					return err
				}
				_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tables[i], Path: fmt.Sprintf("m%d.parquet", i), RecordCount: 1})
				return err
			})
		}(i)
	}
	// All members wait behind the held leader, so its next batch takes
	// them all (one batch holds up to MaxGroupMembersForTest).
	waitQueued(t, c, members)
	if members > core.MaxGroupMembersForTest {
		t.Fatal("more members than one batch holds")
	}
	// The blocker stages nothing and writes nothing, so the next
	// create-if-absent write is the members' WAL upload.
	faulty.FailNth(objstore.OpPutIfAbsent, 1)
	close(release)
	wg.Wait()
	if err := <-blocker; err != nil {
		t.Fatalf("the blocker (nothing staged, nothing written) failed: %v", err)
	}
	kind := core.KindOf(results[0])
	for i, err := range results {
		if err == nil {
			t.Fatalf("member %d succeeded (snapshot %d) although the batch's write failed", i, ids[i])
		}
		if !errors.Is(err, core.OutcomeUnknown) && !errors.Is(err, core.Store) {
			t.Fatalf("member %d: %v (kind %v), want Store or OutcomeUnknown", i, err, core.KindOf(err))
		}
		if core.KindOf(err) != kind {
			t.Fatalf("members got different kinds: %v and %v", kind, core.KindOf(err))
		}
		noConflictText(t, err)
	}
	if got := faulty.Injected(); got != 1 {
		t.Fatalf("%d faults injected, want the one failed write", got)
	}
	t.Logf("every member got %v: %v", kind, results[0])
	c.Close(bg)

	r := openRW(t, inner)
	s := snap(t, r)
	if s.ID() != before.SnapshotID {
		t.Fatalf("after reopen the head is %d, want %d (nothing of the failed batch)", s.ID(), before.SnapshotID)
	}
	for i := range tables {
		if _, ok := s.SchemaByName(fmt.Sprintf("s%d", i)); ok {
			t.Fatalf("member %d's schema exists after the failed batch", i)
		}
		if n := len(s.DataFiles(tables[i])); n != 0 {
			t.Fatalf("member %d's table has %d data files after the failed batch", i, n)
		}
	}
	wantConsecutive(t, r)
	if next := commit(t, r, insertInto(tables[0], "after.parquet")); next != before.SnapshotID+1 {
		t.Fatalf("the next commit minted %d, want %d", next, before.SnapshotID+1)
	}
	wantConsecutive(t, r)
}

// statsFixture creates table t (a int64, b varchar) with one data file.
func statsFixture(t *testing.T, c *core.Catalog) (tb core.TableID, colA, colB core.ColumnID, file core.DataFileID, created core.SnapshotID) {
	t.Helper()
	created = commit(t, c, func(tx *core.Transaction) error {
		var err error
		tb, err = tx.CreateTable(mainSchema(t, tx), "t", []core.ColumnDef{{Name: "a", Type: "int64"}, {Name: "b", Type: "varchar"}})
		return err
	})
	cs := snap(t, c).Columns(tb)
	colA, colB = cs[0].ID, cs[1].ID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		file, err = tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f1.parquet", RecordCount: 100, FileSizeBytes: 1000})
		return err
	})
	return tb, colA, colB, file, created
}

func TestUpdateTableStats(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	tb, _, _, _, created := statsFixture(t, c)
	if st, _ := snap(t, c).TableStats(tb); st != (core.TableStats{TableID: tb, RecordCount: 100, NextRowID: 100, FileSizeBytes: 1000}) {
		t.Fatalf("stats after the registration = %+v", st)
	}

	want := core.TableStats{TableID: tb, RecordCount: 90, NextRowID: 150, FileSizeBytes: 900}
	id := commit(t, c, func(tx *core.Transaction) error { return tx.UpdateTableStats(want) })
	s := snap(t, c)
	if s.ID() != id {
		t.Fatalf("UpdateTableStats minted %d, head %d", id, s.ID())
	}
	if st, ok := s.TableStats(tb); !ok || st != want {
		t.Fatalf("stats = %+v (%v), want %+v", st, ok, want)
	}
	// A read-only handle (a fresh materialization) sees the same.
	if st, _ := snap(t, openRO(t, store, core.CatalogOptions{})).TableStats(tb); st != want {
		t.Fatalf("read-only handle: stats = %+v, want %+v", st, want)
	}

	// The next file takes its row ids from the overwritten next_row_id.
	var f2 core.DataFileID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		f2, err = tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f2.parquet", RecordCount: 10, FileSizeBytes: 100})
		return err
	})
	s = snap(t, c)
	if f, _ := s.DataFile(tb, f2); f.RowIDStart == nil || *f.RowIDStart != 150 {
		t.Fatalf("the next file starts at row id %v, want the updated next_row_id 150", f.RowIDStart)
	}
	if st, _ := s.TableStats(tb); st != (core.TableStats{TableID: tb, RecordCount: 100, NextRowID: 160, FileSizeBytes: 1000}) {
		t.Fatalf("stats after the next registration = %+v", st)
	}

	// Statistics are unversioned, as ducklake_table_stats is: time travel to
	// a snapshot where the table lives shows the current values, and one
	// before the table existed shows none.
	old, err := c.ViewAt(bg, created)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := old.TableStats(tb); st != (core.TableStats{TableID: tb, RecordCount: 100, NextRowID: 160, FileSizeBytes: 1000}) {
		t.Fatalf("at snapshot %d: stats = %+v (unversioned stats are the current ones)", created, st)
	}
	genesis, err := c.ViewAt(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := genesis.TableStats(tb); ok {
		t.Fatalf("at genesis the table has stats %+v", st)
	}

	// Premises: the table must be live.
	head := snap(t, c).Head()
	_, err = c.Commit(bg, func(tx *core.Transaction) error {
		return tx.UpdateTableStats(core.TableStats{TableID: 999, RecordCount: 1})
	})
	wantKind(t, err, core.NotFound)
	if !strings.Contains(err.Error(), "999") {
		t.Fatalf("the error does not name the table: %v", err)
	}
	_, err = c.Commit(bg, func(tx *core.Transaction) error {
		if err := tx.DropTable(tb); err != nil {
			return err
		}
		return tx.UpdateTableStats(core.TableStats{TableID: tb, RecordCount: 1})
	})
	wantKind(t, err, core.NotFound)
	noConflictText(t, err)
	if after := snap(t, c).Head(); after != head {
		t.Fatalf("refused commits moved the head from %+v to %+v", head, after)
	}
}

func TestSetFileColumnStats(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	tb, colA, colB, f1, _ := statsFixture(t, c)

	sa := core.FileColumnStats{TableID: tb, DataFileID: f1, ColumnID: colA, ColumnSizeBytes: ptr(uint64(400)), ValueCount: ptr(uint64(100)),
		NullCount: ptr(uint64(0)), MinValue: ptr("1"), MaxValue: ptr("99"), ContainsNaN: ptr(false), ExtraStats: ptr(`{"distinct":42}`)}
	sb := core.FileColumnStats{TableID: tb, DataFileID: f1, ColumnID: colB, NullCount: ptr(uint64(7)), MinValue: ptr("aa"), MaxValue: ptr("zz")}
	commit(t, c, func(tx *core.Transaction) error {
		if err := tx.SetFileColumnStats(sb); err != nil {
			return err
		}
		return tx.SetFileColumnStats(sa)
	})
	check := func(what string, s *core.CatalogView, want ...core.FileColumnStats) {
		t.Helper()
		got := s.FileColumnStats(f1)
		if fmt.Sprintf("%+v", deref(got)) != fmt.Sprintf("%+v", deref(want)) {
			t.Fatalf("%s: file column stats\n got %+v\nwant %+v", what, deref(got), deref(want))
		}
	}
	check("head", snap(t, c), sa, sb) // listed by column id
	check("read-only handle", snap(t, openRO(t, store, core.CatalogOptions{})), sa, sb)

	// Setting a column again replaces its row.
	sa2 := sa
	sa2.NullCount, sa2.MaxValue = ptr(uint64(5)), ptr("120")
	commit(t, c, func(tx *core.Transaction) error { return tx.SetFileColumnStats(sa2) })
	check("after the overwrite", snap(t, c), sa2, sb)

	// A file registered in the same transaction takes stats at once.
	var f2 core.DataFileID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		if f2, err = tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f2.parquet", RecordCount: 1}); err != nil {
			return err
		}
		return tx.SetFileColumnStats(core.FileColumnStats{TableID: tb, DataFileID: f2, ColumnID: colA, ValueCount: ptr(uint64(1))})
	})
	if fs := snap(t, c).FileColumnStats(f2); len(fs) != 1 || fs[0].ColumnID != colA || *fs[0].ValueCount != 1 {
		t.Fatalf("stats of a file registered in the same commit = %+v", fs)
	}

	// Premises: the data file must be live in the named table.
	var other core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		if other, err = tx.CreateTable(mainSchema(t, tx), "other", cols("x")); err != nil {
			return err
		}
		return tx.ExpireDataFile(tb, f2)
	})
	head := snap(t, c).Head()
	for _, bad := range []struct {
		name string
		cs   core.FileColumnStats
	}{
		{"unknown data file", core.FileColumnStats{TableID: tb, DataFileID: 4242, ColumnID: colA}},
		{"file of another table", core.FileColumnStats{TableID: other, DataFileID: f1, ColumnID: colA}},
		{"expired file", core.FileColumnStats{TableID: tb, DataFileID: f2, ColumnID: colA}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := c.Commit(bg, func(tx *core.Transaction) error { return tx.SetFileColumnStats(bad.cs) })
			wantKind(t, err, core.NotFound)
			noConflictText(t, err)
			if want := fmt.Sprintf("data file %d", bad.cs.DataFileID); !strings.Contains(err.Error(), want) {
				t.Fatalf("the error does not name %q: %v", want, err)
			}
		})
	}
	if after := snap(t, c).Head(); after != head {
		t.Fatalf("refused commits moved the head from %+v to %+v", head, after)
	}
}

// deref makes stats rows printable by value (pointers print as addresses).
func deref(rows []core.FileColumnStats) []string {
	var out []string
	for _, r := range rows {
		s := fmt.Sprintf("table=%d file=%d col=%d", r.TableID, r.DataFileID, r.ColumnID)
		add := func(name string, v any) { s += " " + name + "=" + fmt.Sprint(v) }
		if r.ColumnSizeBytes != nil {
			add("size", *r.ColumnSizeBytes)
		}
		if r.ValueCount != nil {
			add("values", *r.ValueCount)
		}
		if r.NullCount != nil {
			add("nulls", *r.NullCount)
		}
		if r.MinValue != nil {
			add("min", *r.MinValue)
		}
		if r.MaxValue != nil {
			add("max", *r.MaxValue)
		}
		if r.ContainsNaN != nil {
			add("nan", *r.ContainsNaN)
		}
		if r.ExtraStats != nil {
			add("extra", *r.ExtraStats)
		}
		out = append(out, s)
	}
	return out
}

func TestSetCommitExtraInfo(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	const info = `{"source":"etl","run":17}`
	s1 := commit(t, c, func(tx *core.Transaction) error {
		tx.SetAuthor("ops")
		tx.SetCommitMessage("load")
		tx.SetCommitExtraInfo("overwritten by the next call")
		tx.SetCommitExtraInfo(info)
		_, err := tx.CreateSchema("annotated")
		return err
	})
	s2 := commit(t, c, func(tx *core.Transaction) error {
		tx.SetCommitExtraInfo("bad \xff utf-8")
		_, err := tx.CreateSchema("second")
		return err
	})
	s3 := commit(t, c, func(tx *core.Transaction) error { _, err := tx.CreateSchema("plain"); return err })

	extra := func(s core.Snapshot) string {
		if s.CommitExtraInfo == nil {
			return "<nil>"
		}
		return *s.CommitExtraInfo
	}
	want := map[core.SnapshotID]string{0: "<nil>", s1: info, s2: "bad \uFFFD utf-8", s3: "<nil>"}

	// The head, time travel, the snapshot listing and a read-only handle
	// all carry each snapshot's own extra info (never inherited).
	if got := extra(snap(t, c).Snapshot()); got != want[s3] {
		t.Fatalf("head extra info %q, want %q", got, want[s3])
	}
	ro := openRO(t, store, core.CatalogOptions{})
	for _, h := range []*core.Catalog{c, ro} {
		for id, w := range want {
			at, err := h.ViewAt(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := extra(at.Snapshot()); got != w {
				t.Fatalf("ViewAt(%d).CommitExtraInfo = %q, want %q", id, got, w)
			}
		}
		snaps, err := h.Snapshots(bg, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snaps {
			if got := extra(s); got != want[s.ID] {
				t.Fatalf("Snapshots: snapshot %d extra info %q, want %q", s.ID, got, want[s.ID])
			}
		}
	}
	if at, _ := c.ViewAt(bg, s1); *at.Snapshot().Author != "ops" || *at.Snapshot().CommitMessage != "load" {
		t.Fatalf("author/message at %d: %+v", s1, at.Snapshot())
	}

	// Annotations alone stage nothing: no snapshot is minted.
	before := snap(t, c).Head()
	id := commit(t, c, func(tx *core.Transaction) error {
		tx.SetCommitExtraInfo("only an annotation")
		return nil
	})
	if after := snap(t, c).Head(); id != before.SnapshotID || after != before {
		t.Fatalf("an annotation-only commit returned %d and moved the head %+v -> %+v", id, before, after)
	}
}

func TestNullsAllowedOnCreateAndAlter(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	var tb core.TableID
	created := commit(t, c, func(tx *core.Transaction) error {
		var err error
		tb, err = tx.CreateTable(mainSchema(t, tx), "people", []core.ColumnDef{
			{Name: "id", Type: "int64", NullsAllowed: ptr(false)},
			{Name: "name", Type: "varchar"}, // default: nullable
			{Name: "nick", Type: "varchar", NullsAllowed: ptr(true)},
			{Name: "addr", Type: "struct", Children: []core.ColumnDef{
				{Name: "city", Type: "varchar", NullsAllowed: ptr(false)},
				{Name: "zip", Type: "varchar"},
			}},
		})
		return err
	})
	nulls := func(s *core.CatalogView) map[string]bool {
		out := map[string]bool{}
		for _, col := range s.Columns(tb) {
			out[col.Name] = col.NullsAllowed
		}
		return out
	}
	wantNulls := map[string]bool{"id": false, "name": true, "nick": true, "addr": true, "city": false, "zip": true}
	if got := nulls(snap(t, c)); fmt.Sprint(got) != fmt.Sprint(wantNulls) {
		t.Fatalf("nullability after create = %v, want %v", got, wantNulls)
	}
	if got := nulls(snap(t, openRO(t, store, core.CatalogOptions{}))); fmt.Sprint(got) != fmt.Sprint(wantNulls) {
		t.Fatalf("read-only handle: nullability = %v, want %v", got, wantNulls)
	}
	colID := func(name string) core.ColumnID {
		for _, col := range snap(t, c).Columns(tb) {
			if col.Name == name {
				return col.ID
			}
		}
		t.Fatalf("no column %q", name)
		return 0
	}

	// A NOT NULL column without a default can be added while the table is
	// empty.
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.AddColumn(tb, core.ColumnDef{Name: "early", Type: "int64", NullsAllowed: ptr(false)})
		return err
	})
	if s := snap(t, c); nulls(s)["early"] {
		t.Fatal("added NOT NULL column is nullable")
	}

	// SET NOT NULL on name: a new column version; time travel keeps the old.
	beforeAlter := snap(t, c)
	altered := commit(t, c, func(tx *core.Transaction) error {
		return tx.AlterColumn(tb, colID("name"), core.ColumnChange{NullsAllowed: ptr(false)})
	})
	s := snap(t, c)
	name, _ := s.Column(tb, colID("name"))
	if name.NullsAllowed || name.Begin != altered {
		t.Fatalf("after SET NOT NULL: column %+v, want NOT NULL beginning at %d", name, altered)
	}
	if got := s.Snapshot().ChangesMade; got != fmt.Sprintf("altered_table:%d", tb) {
		t.Fatalf("changes_made %q", got)
	}
	if s.Snapshot().SchemaVersion != beforeAlter.Snapshot().SchemaVersion+1 {
		t.Fatalf("schema version %d after SET NOT NULL, was %d", s.Snapshot().SchemaVersion, beforeAlter.Snapshot().SchemaVersion)
	}
	// A change that leaves NullsAllowed nil keeps it.
	defaulted := commit(t, c, func(tx *core.Transaction) error {
		return tx.AlterColumn(tb, colID("name"), core.ColumnChange{Default: ptr("'anon'")})
	})
	if n, _ := snap(t, c).Column(tb, colID("name")); n.NullsAllowed || n.DefaultValue == nil || *n.DefaultValue != "'anon'" {
		t.Fatalf("changing the default touched nullability: %+v", n)
	}
	// DROP NOT NULL on id.
	relaxed := commit(t, c, func(tx *core.Transaction) error {
		return tx.AlterColumn(tb, colID("id"), core.ColumnChange{NullsAllowed: ptr(true)})
	})
	for _, e := range []struct {
		at                       core.SnapshotID
		idNullable, nameNullable bool
	}{
		{created, false, true},
		{altered, false, false},
		{defaulted, false, false},
		{relaxed, true, false},
	} {
		at, err := c.ViewAt(bg, e.at)
		if err != nil {
			t.Fatal(err)
		}
		got := nulls(at)
		if got["id"] != e.idNullable || got["name"] != e.nameNullable {
			t.Fatalf("at %d: id nullable %v, name nullable %v; want %v, %v", e.at, got["id"], got["name"], e.idNullable, e.nameNullable)
		}
	}
	if got := nulls(snap(t, openRO(t, store, core.CatalogOptions{}))); got["id"] != true || got["name"] != false {
		t.Fatalf("read-only handle after the alters: %v", got)
	}

	// Premises: a NOT NULL column without a default cannot be added once
	// the table has rows (from a data file, or inlined); with a default it
	// can. Altering a column that does not exist is NotFound.
	var inl core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "p.parquet", RecordCount: 3}); err != nil {
			return err
		}
		var err error
		if inl, err = tx.CreateTable(mainSchema(t, tx), "inlined", cols("a")); err != nil {
			return err
		}
		one := int64(1)
		_, err = tx.InlineInsert(inl, [][]core.Value{{{Int: &one}}})
		return err
	})
	head := snap(t, c).Head()
	for _, target := range []struct {
		name  string
		table core.TableID
	}{{"data file", tb}, {"inlined rows", inl}} {
		t.Run("NOT NULL without default on a table with "+target.name, func(t *testing.T) {
			_, err := c.Commit(bg, func(tx *core.Transaction) error {
				_, err := tx.AddColumn(target.table, core.ColumnDef{Name: "late", Type: "int64", NullsAllowed: ptr(false)})
				return err
			})
			wantKind(t, err, core.Constraint)
			noConflictText(t, err)
			if !strings.Contains(err.Error(), "NOT NULL") || !strings.Contains(err.Error(), `"late"`) {
				t.Fatalf("the error does not explain itself: %v", err)
			}
		})
	}
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		return tx.AlterColumn(tb, 9999, core.ColumnChange{NullsAllowed: ptr(false)})
	})
	wantKind(t, err, core.NotFound)
	_, err = c.Commit(bg, func(tx *core.Transaction) error {
		return tx.AlterColumn(9999, colID("id"), core.ColumnChange{NullsAllowed: ptr(false)})
	})
	wantKind(t, err, core.NotFound)
	if after := snap(t, c).Head(); after != head {
		t.Fatalf("refused commits moved the head from %+v to %+v", head, after)
	}
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.AddColumn(tb, core.ColumnDef{Name: "late", Type: "int64", NullsAllowed: ptr(false), Default: ptr("0")})
		return err
	})
	if late, _ := snap(t, c).Column(tb, colID("late")); late.NullsAllowed || late.DefaultValue == nil || *late.DefaultValue != "0" || late.InitialDefault == nil {
		t.Fatalf("NOT NULL column with a default = %+v", late)
	}
}
