package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// demoRun runs the demo command in-process on dir and returns its output.
func demoRun(t *testing.T, dir string, writers, commits int) string {
	t.Helper()
	code, out, errs := runCmd(t, "demo", "-dir", dir, "-pace", "0", "-writers", strconv.Itoa(writers), "-commits", strconv.Itoa(commits))
	if code != 0 || errs != "" {
		t.Fatalf("demo on %s: exit %d, stderr %q\n%s", dir, code, errs, out)
	}
	return out
}

// demoSnapshots is what one demo run adds: the schema and tables, one
// snapshot per writer commit, the alteration and the late inlined row.
func demoSnapshots(writers, commits int) core.SnapshotID {
	return core.SnapshotID(1 + writers*commits + 2)
}

// writerSnapshots returns the snapshot ids the demo's writer lines report.
func writerSnapshots(t *testing.T, out string) []int {
	t.Helper()
	var ids []int
	for _, m := range regexp.MustCompile(`(?m)^    writer \d+: snapshot (\d+) `).FindAllStringSubmatch(out, -1) {
		id, _ := strconv.Atoi(m[1])
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// openLake opens dir's catalog read-only.
func openLake(t *testing.T, dir string) *core.Catalog {
	t.Helper()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.OpenReadOnly(context.Background(), store, core.CatalogOptions{ReaderPollInterval: -1, FollowLatest: true})
	if err != nil {
		t.Fatalf("opening the demo's lake: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// wantLakeSnapshots checks the lake's snapshots are exactly 0..head.
func wantLakeSnapshots(t *testing.T, c *core.Catalog, head core.SnapshotID) *core.CatalogView {
	t.Helper()
	ctx := context.Background()
	s, err := c.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != head {
		t.Fatalf("the lake's head is snapshot %d, want %d", s.ID(), head)
	}
	snaps, err := c.Snapshots(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != int(head)+1 {
		t.Fatalf("%d snapshot records for head %d", len(snaps), head)
	}
	for i, sn := range snaps {
		if sn.ID != core.SnapshotID(i) {
			t.Fatalf("snapshot record %d has id %d: not consecutive", i, sn.ID)
		}
	}
	return s
}

// wantDemoRun checks what one demo run left in schema run_<n>.
func wantDemoRun(t *testing.T, s *core.CatalogView, n, writers, commits int) {
	t.Helper()
	schema := fmt.Sprintf("run_%d", n)
	if _, ok := s.SchemaByName(schema); !ok {
		t.Fatalf("schema %s is missing", schema)
	}
	if _, ok := s.TableByName(schema, "events"); ok {
		t.Fatalf("%s.events still resolves after the rename", schema)
	}
	ev, ok := s.TableByName(schema, "event_log")
	if !ok {
		t.Fatalf("%s.event_log is missing", schema)
	}
	var files, records int
	for i := 0; i < commits; i += 2 {
		files += writers
		records += writers * 100 * (i + 1)
	}
	if got := len(s.DataFiles(ev.ID)); got != files {
		t.Fatalf("%s.event_log has %d data files, want %d", schema, got, files)
	}
	if st, _ := s.TableStats(ev.ID); st.RecordCount != uint64(records) {
		t.Fatalf("%s.event_log records %d, want %d", schema, st.RecordCount, records)
	}
	users, ok := s.TableByName(schema, "users")
	if !ok {
		t.Fatalf("%s.users is missing", schema)
	}
	var names []string
	for _, c := range s.Columns(users.ID) {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "id,name,email" {
		t.Fatalf("%s.users columns %v", schema, names)
	}
	if got, want := s.InlinedRowCount(users.ID), writers*(commits/2)+1; got != want {
		t.Fatalf("%s.users has %d inlined rows, want %d", schema, got, want)
	}
}

// snapshotRows returns the ids listed in inspect's snapshot table.
func snapshotRows(t *testing.T, out string) []int {
	t.Helper()
	i := strings.Index(out, "\nSNAPSHOT ")
	if i < 0 {
		t.Fatalf("no snapshot table in:\n%s", out)
	}
	var ids []int
	for _, line := range strings.Split(out[i+1:], "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	return ids
}

// treeState lists every file under dir with its size and modification time.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDemoCreatesALakeAndEveryRerunAddsARun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake") // the demo creates it
	const w1, c1 = 3, 4
	out := demoRun(t, dir, w1, c1)
	head1 := demoSnapshots(w1, c1)
	wantContains(t, "first demo run", out,
		"==> a new lake: genesis snapshot 0 holds schema main",
		"==> snapshot 1: created schema run_1 with tables run_1.events (id, kind, at) and run_1.users (id, name)",
		fmt.Sprintf("==> the follower serves snapshot %d", head1),
		fmt.Sprintf("time travel: at snapshot 1 run_1.events had 0 data files and run_1.users 2 columns; now run_1.event_log has %d data files and run_1.users 3 columns, %d inlined rows", w1*2, w1*2+1),
		fmt.Sprintf("head      snapshot %d,", head1),
		"format    13, commit-log origin: none",
		"run_1.event_log", "run_1.users",
		"and run the demo again to add run_2 next to run_1.")
	// Every writer commit got its own snapshot: 2..1+w1*c1, each once.
	ids := writerSnapshots(t, out)
	if len(ids) != w1*c1 {
		t.Fatalf("%d writer lines, want %d", len(ids), w1*c1)
	}
	for i, id := range ids {
		if id != 2+i {
			t.Fatalf("writer snapshots %v are not 2..%d", ids, 1+w1*c1)
		}
	}
	// A new lake's listing shows every snapshot.
	if rows := snapshotRows(t, out); len(rows) != int(head1)+1 || rows[0] != 0 {
		t.Fatalf("the first run lists snapshots %v, want 0..%d", rows, head1)
	}
	c := openLake(t, dir)
	s := wantLakeSnapshots(t, c, head1)
	wantDemoRun(t, s, 1, w1, c1)
	if dp, _ := s.Option(core.ScopeGlobal, 0, "data_path"); dp != filepath.Join(dir, "data")+"/" {
		t.Fatalf("data path %q", dp)
	}
	c.Close(context.Background())

	// A second run in the same directory works in its own schema and
	// leaves the first run's objects as they were.
	const w2, c2 = 2, 3
	out = demoRun(t, dir, w2, c2)
	head2 := head1 + demoSnapshots(w2, c2)
	wantContains(t, "second demo run", out,
		fmt.Sprintf("==> an existing lake: head is snapshot %d", head1),
		"earlier demo runs left schemas run_1",
		fmt.Sprintf("==> snapshot %d: created schema run_2", head1+1),
		fmt.Sprintf("==> the follower serves snapshot %d", head2),
		fmt.Sprintf("(snapshots %d..%d; 'moraine inspect -snapshots 0' lists all %d)", head1, head2, head2+1),
		"run_1.event_log", "run_2.event_log",
		"and run the demo again to add run_3 next to run_2.")
	if rows := snapshotRows(t, out); len(rows) != int(head2-head1)+1 || rows[0] != int(head1) || rows[len(rows)-1] != int(head2) {
		t.Fatalf("the second run lists snapshots %v, want %d..%d", rows, head1, head2)
	}
	c = openLake(t, dir)
	s = wantLakeSnapshots(t, c, head2)
	wantDemoRun(t, s, 1, w1, c1)
	wantDemoRun(t, s, 2, w2, c2)
	c.Close(context.Background())

	// A third run, with the defaults but no pacing.
	code, out, errs := runCmd(t, "demo", "-dir", dir, "-pace", "0")
	if code != 0 {
		t.Fatalf("third demo run: exit %d: %s\n%s", code, errs, out)
	}
	head3 := head2 + demoSnapshots(4, 5)
	wantContains(t, "third demo run", out, "earlier demo runs left schemas run_1, run_2", "created schema run_3")
	c = openLake(t, dir)
	s = wantLakeSnapshots(t, c, head3)
	wantDemoRun(t, s, 3, 4, 5)
	c.Close(context.Background())
}

func TestInspectPrintsTheLakeAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	demoRun(t, dir, 3, 4)
	demoRun(t, dir, 3, 4)
	head := 2 * demoSnapshots(3, 4)
	before := treeState(t, dir)

	code, out, errs := runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errs)
	}
	wantContains(t, "inspect", out,
		"lake      "+dir+"\n",
		"format    13, commit-log origin: none (single-writer catalog)",
		fmt.Sprintf("head      snapshot %d, batch ", head),
		"data path "+filepath.Join(dir, "data")+"/",
		"TABLE ", "run_1.event_log", "run_1.users", "run_2.event_log", "run_2.users",
		"id int64, name varchar, email varchar",
		`created_schema:"run_2",created_table:"run_2"."events",created_table:"run_2"."users"`,
		"moraine demo create schema run_2")
	// The default lists the last 20 snapshots, ending at the head.
	rows := snapshotRows(t, out)
	if len(rows) != 20 || rows[19] != int(head) || rows[0] != int(head)-19 {
		t.Fatalf("default listing %v, want the last 20 ending at %d", rows, head)
	}
	_, out, _ = runCmd(t, "inspect", "-snapshots", "3", dir)
	if rows := snapshotRows(t, out); fmt.Sprint(rows) != fmt.Sprint([]int{int(head) - 2, int(head) - 1, int(head)}) {
		t.Fatalf("-snapshots 3 lists %v", rows)
	}
	_, out, _ = runCmd(t, "inspect", "-snapshots", "0", dir)
	rows = snapshotRows(t, out)
	for i, id := range rows {
		if id != i {
			t.Fatalf("-snapshots 0 lists %v, want 0..%d", rows, head)
		}
	}
	if len(rows) != int(head)+1 {
		t.Fatalf("-snapshots 0 lists %d snapshots, want %d", len(rows), head+1)
	}
	if after := treeState(t, dir); after != before {
		t.Fatalf("inspect changed the lake's files:\nbefore\n%s\nafter\n%s", before, after)
	}
}

func TestCommandsRefuseBadInput(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"inspect"}, 2, "exactly one URI"},
		{[]string{"inspect", "a", "b"}, 2, "inspect takes exactly one URI"},
		{[]string{"adopt"}, 2, "adopt takes exactly one URI"},
		{[]string{"fold", "a", "b"}, 2, "fold takes exactly one URI"},
		{[]string{"migrate"}, 2, "migrate takes exactly one URI"},
		{[]string{"move-wal", "a"}, 2, "move-wal takes exactly two URIs: the lake and the new WAL store"},
		{[]string{"demo", "extra"}, 2, "demo takes no arguments"},
		{[]string{"demo", "-writers", "0"}, 2, "must be at least 1"},
		{[]string{"demo", "-pace", "-1s"}, 2, "must not be negative"},
	}
	for _, tc := range cases {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Fatalf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
	// A missing or empty directory is not a lake: inspect says so and
	// creates nothing.
	empty := t.TempDir()
	missing := filepath.Join(empty, "typo")
	for _, uri := range []string{missing, "file://" + missing, empty, "file://" + empty} {
		code, out, errs := runCmd(t, "inspect", uri)
		if code != 1 || out != "" || !strings.HasPrefix(errs, "moraine inspect: no lake at "+uri+": the directory ") {
			t.Fatalf("inspect %s: exit %d, stdout %q, stderr %q", uri, code, out, errs)
		}
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Fatalf("inspect wrote into an empty directory: %v %v", entries, err)
	}
	// A directory with files but no catalog: the catalog's own refusal.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("not a lake"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "inspect", other)
	if code != 1 || out != "" || !strings.HasPrefix(errs, "moraine inspect: ") {
		t.Fatalf("inspect of a directory without a lake: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Logf("inspect of a directory without a lake: %s", strings.TrimSpace(errs))
}

func TestDemoContinuesOnAnAdoptedLake(t *testing.T) {
	dir := t.TempDir()
	demoRun(t, dir, 2, 2)
	if code, out, errs := runCmd(t, "adopt", dir); code != 0 {
		t.Fatalf("adopt: exit %d: %s %s", code, out, errs)
	}
	out := demoRun(t, dir, 2, 2)
	head := 2 * demoSnapshots(2, 2)
	wantContains(t, "demo on an adopted lake", out,
		"the lake is log-resident (adopted): committing through the in-tree commit log",
		"created schema run_2",
		fmt.Sprintf("==> the follower serves snapshot %d", head),
		"(log-resident)")
	code, out, errs := runCmd(t, "inspect", "-snapshots", "0", dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errs)
	}
	wantContains(t, "inspect of the adopted lake", out, "run_1.event_log", "run_2.event_log", fmt.Sprintf("head      snapshot %d,", head))
	rows := snapshotRows(t, out)
	for i, id := range rows {
		if id != i {
			t.Fatalf("snapshots %v are not consecutive", rows)
		}
	}
	if len(rows) != int(head)+1 {
		t.Fatalf("%d snapshots, want %d", len(rows), head+1)
	}
}
