package core_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// Multi-process tests re-execute this test binary; a child sees these
// variables and runs a role instead of the tests.
const (
	envLogChild = "MORAINE_LOG_CHILD"    // role name
	envLogDir   = "MORAINE_LOG_DIR"      // local store directory
	envLogN     = "MORAINE_LOG_N"        // commits (writer role)
	envLogID    = "MORAINE_LOG_CHILD_ID" // child id
	envLogSync  = "MORAINE_LOG_SYNC_DIR" // rendezvous files (peer role)
)

func init() {
	if role := os.Getenv(envLogChild); role != "" {
		os.Exit(runLogChild(role))
	}
}

func childFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
	return 3
}

func runLogChild(role string) int {
	store, err := objstore.NewLocal(os.Getenv(envLogDir), 0)
	if err != nil {
		return childFail("%v", err)
	}
	c, err := core.Open(bg, store, logOpts())
	if err != nil {
		return childFail("open: %v", err)
	}
	defer c.Close(bg)
	s, err := c.Snapshot(bg)
	if err != nil {
		return childFail("%v", err)
	}
	tb, ok := s.TableByName("main", "t")
	if !ok {
		return childFail("table t missing")
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	id := os.Getenv(envLogID)
	switch role {
	case "writer":
		n, _ := strconv.Atoi(os.Getenv(envLogN))
		for i := 0; i < n; i++ {
			path := fmt.Sprintf("%s-%d.parquet", id, i)
			snap, err := c.Commit(bg, insertInto(tb.ID, path))
			if err != nil {
				return childFail("commit %s: %v", path, err)
			}
			fmt.Fprintf(out, "acked %d %s\n", snap, path)
		}
	case "peer":
		syncDir := os.Getenv(envLogSync)
		snap, err := c.Commit(bg, insertInto(tb.ID, "child.parquet"))
		if err != nil {
			return childFail("commit: %v", err)
		}
		// Served once landed: the child's own read sees it.
		s, err := c.Snapshot(bg)
		if err != nil || len(s.DataFiles(tb.ID)) == 0 {
			return childFail("the committer does not see its own slot: %v", err)
		}
		os.WriteFile(filepath.Join(syncDir, "child-done"), []byte(fmt.Sprint(snap)), 0o644)
		deadline := time.Now().Add(60 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(syncDir, "parent-done")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return childFail("the parent never finished")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := c.Refresh(bg); err != nil {
			return childFail("refresh: %v", err)
		}
		s, err = c.Snapshot(bg)
		if err != nil {
			return childFail("%v", err)
		}
		found := false
		for _, f := range s.DataFiles(tb.ID) {
			found = found || f.Path == "parent.parquet"
		}
		if !found {
			return childFail("the committer is not served the folder's slot after refreshing")
		}
		fmt.Fprintln(out, "served parent")
	default:
		return childFail("unknown role %q", role)
	}
	return 0
}

func childCmd(t *testing.T, role, dir string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envLogChild+"="+role, envLogDir+"="+dir)
	cmd.Env = append(cmd.Env, env...)
	out := &bytes.Buffer{}
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	return cmd, out
}

// TestTwoProcessesOverOneLog (RFC 0024): a committer in another process
// lands its batch as a slot and sees it once served; the folder's next
// commit (prepared before it folded that slot) loses to it, folds it and
// lands after it; the committer is then served the folder's slot.
func TestTwoProcessesOverOneLog(t *testing.T) {
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	folder := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogFoldPoll = time.Hour }))
	tb := createTable(t, folder, "t")
	if err := folder.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	syncDir := t.TempDir()
	cmd, out := childCmd(t, "peer", dir, envLogSync+"="+syncDir, envLogID+"=peer")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var childSnap core.SnapshotID
	for {
		if b, err := os.ReadFile(filepath.Join(syncDir, "child-done")); err == nil {
			v, _ := strconv.ParseUint(string(b), 10, 64)
			childSnap = core.SnapshotID(v)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never committed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The folder has not folded the child's slot (its idle poll is an hour
	// away): its commit is prepared against a stale head and must lose,
	// fold, and land after.
	mine := commit(t, folder, insertInto(tb, "parent.parquet"))
	if mine <= childSnap {
		t.Fatalf("the folder's commit minted %d, not after the child's %d", mine, childSnap)
	}
	if n := len(snap(t, folder).DataFiles(tb)); n != 2 {
		t.Fatalf("the folder holds %d files, want the child's and its own", n)
	}
	os.WriteFile(filepath.Join(syncDir, "parent-done"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(out.String(), "served parent") {
		t.Fatalf("child output %q", out.String())
	}
}

// TestManyProcessesCommitThroughOneLog: N writer processes commit
// concurrently through the log; every acknowledged commit appears exactly
// once and the snapshot ids are consecutive.
func TestManyProcessesCommitThroughOneLog(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: spawns processes")
	}
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := openCommitter(t, store, logOpts())
	tb := createTable(t, c, "t")
	start := snap(t, c).ID()
	const procs, each = 4, 8
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmds[i], outs[i] = childCmd(t, "writer", dir, fmt.Sprintf("%s=p%d", envLogID, i), fmt.Sprintf("%s=%d", envLogN, each))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	acked := map[core.SnapshotID]string{}
	for _, o := range outs {
		for _, line := range strings.Split(strings.TrimSpace(o.String()), "\n") {
			var id uint64
			var path string
			if _, err := fmt.Sscanf(line, "acked %d %s", &id, &path); err != nil {
				t.Fatalf("bad child line %q", line)
			}
			if prev, dup := acked[core.SnapshotID(id)]; dup {
				t.Fatalf("snapshot %d acknowledged twice (%s and %s)", id, prev, path)
			}
			acked[core.SnapshotID(id)] = path
		}
	}
	if len(acked) != procs*each {
		t.Fatalf("%d commits acknowledged, want %d", len(acked), procs*each)
	}
	if err := c.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	s := snap(t, c)
	if s.ID() != start+procs*each {
		t.Fatalf("head %d, want %d (consecutive snapshots)", s.ID(), start+procs*each)
	}
	for id := start + 1; id <= s.ID(); id++ {
		if _, ok := acked[id]; !ok {
			t.Fatalf("snapshot %d was never acknowledged to a writer", id)
		}
	}
	files := map[string]int{}
	for _, f := range s.DataFiles(tb) {
		files[f.Path]++
	}
	for _, path := range acked {
		if files[path] != 1 {
			t.Fatalf("%s appears %d times in the catalog", path, files[path])
		}
	}
	if len(files) != len(acked) {
		t.Fatalf("the catalog holds %d files, %d were acknowledged", len(files), len(acked))
	}
}

// TestFencedHolderGivesTheStoreUpAndKeepsCommitting: a holder fenced by
// another holder gives the store up; its next commit lands through the log.
func TestFencedHolderGivesTheStoreUpAndKeepsCommitting(t *testing.T) {
	store := objstore.NewMemory(0)
	a := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogFoldPoll = 5 * time.Millisecond }))
	tb := createTable(t, a, "t")
	if err := a.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	b := openCommitter(t, store, logOpts())
	if err := b.TakeStore(bg); err != nil { // fences a's store
		t.Fatal(err)
	}
	commit(t, b, insertInto(tb, "b.parquet"))
	// a notices on its idle poll (or on its next landing) and keeps going.
	id := commit(t, a, insertInto(tb, "a.parquet"))
	if err := b.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	s := snap(t, b)
	if s.ID() < id || len(s.DataFiles(tb)) != 2 {
		t.Fatalf("after the fenced holder's commit: head %d (want >= %d), %d files", s.ID(), id, len(s.DataFiles(tb)))
	}
}
