package core_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
	"github.com/moraine-go/moraine/provider"
)

// Multi-process tests re-execute this test binary; a child sees these
// variables and runs a role instead of the tests.
const (
	envLogChild = "MORAINE_LOG_CHILD"    // role name
	envLogDir   = "MORAINE_LOG_DIR"      // local store directory
	envLogN     = "MORAINE_LOG_N"        // commits (writer role)
	envLogID    = "MORAINE_LOG_CHILD_ID" // child id
	envLogSync  = "MORAINE_LOG_SYNC_DIR" // rendezvous files (peer and taker roles)
	envLogURI   = "MORAINE_LOG_URI"      // an S3 store (instead of envLogDir); the server from s3test's MORAINE_S3_*
	envLogFold  = "MORAINE_LOG_FOLD"     // fold cadence in slots (writer role; truncation without retention)
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

// childStore opens the store the parent named: an S3 location on the
// server the parent's harness exported, else a local directory.
func childStore() (objstore.Store, error) {
	if uri := os.Getenv(envLogURI); uri != "" {
		return objstore.Open(bg, uri, objstore.Options{S3: objstore.S3Options{
			Endpoint:        os.Getenv(s3test.EnvEndpoint),
			Region:          os.Getenv(s3test.EnvRegion),
			AccessKeyID:     os.Getenv(s3test.EnvAccessKey),
			SecretAccessKey: os.Getenv(s3test.EnvSecretKey),
			URLStyle:        "path",
		}})
	}
	return objstore.NewLocal(os.Getenv(envLogDir), 0)
}

// foldingOpts makes every committer fold every n slots and truncate the
// log below the replay point at once (no retention).
func foldingOpts(n int) func(*core.CatalogOptions) {
	return func(o *core.CatalogOptions) {
		o.CommitLog = provider.New(provider.Options{Retention: -1})
		o.CommitLogFoldSlots = n
		o.CommitLogRetention = -1
	}
}

func runLogChild(role string) int {
	if role == "bench-writer" {
		return runBenchWriter()
	}
	store, err := childStore()
	if err != nil {
		return childFail("%v", err)
	}
	opts := logOpts()
	if n, _ := strconv.Atoi(os.Getenv(envLogFold)); n > 0 {
		opts = logOpts(foldingOpts(n))
	}
	if role == "taker" {
		opts.CommitLogFoldPoll = time.Hour
	}
	c, err := core.Open(bg, store, opts)
	if err != nil {
		return childFail("open: %v", err)
	}
	defer c.Close(bg)
	s, err := c.View(bg)
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
		s, err := c.View(bg)
		if err != nil || len(s.DataFiles(tb.ID)) == 0 {
			return childFail("the committer does not see its own slot: %v", err)
		}
		if err := writeSyncFile(filepath.Join(syncDir, "child-done"), fmt.Sprint(snap)); err != nil {
			return childFail("%v", err)
		}
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
		s, err = c.View(bg)
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
	case "taker":
		// Take the store (fencing the parent's holder), commit through it,
		// and hold it until the parent is done checking.
		syncDir := os.Getenv(envLogSync)
		if err := c.TakeStore(bg); err != nil {
			return childFail("take store: %v", err)
		}
		snap, err := c.Commit(bg, insertInto(tb.ID, "taker.parquet"))
		if err != nil {
			return childFail("commit: %v", err)
		}
		if err := writeSyncFile(filepath.Join(syncDir, "child-done"), fmt.Sprint(snap)); err != nil {
			return childFail("%v", err)
		}
		if err := waitForFile(filepath.Join(syncDir, "parent-done"), 60*time.Second); err != nil {
			return childFail("%v", err)
		}
		fmt.Fprintln(out, "held")
	default:
		return childFail("unknown role %q", role)
	}
	return 0
}

// writeSyncFile publishes a rendezvous file whole (write, then rename):
// the other process polls for it and reads it at once.
func writeSyncFile(path, content string) error {
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func waitForFile(path string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never appeared within %v", filepath.Base(path), within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// childCmd runs this binary as a child in role over the store named by
// where: a local directory, or an "s3://" location.
func childCmd(t testing.TB, role, where string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envLogChild+"="+role)
	if strings.HasPrefix(where, "s3://") {
		cmd.Env = append(cmd.Env, envLogURI+"="+where)
	} else {
		cmd.Env = append(cmd.Env, envLogDir+"="+where)
	}
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
// concurrently through one log; every acknowledged commit appears exactly
// once and the snapshot ids are consecutive. On a local store and on S3
// (the harness's server, reached by the children through the MORAINE_S3_*
// environment it exports), and with folding during the contention: every
// few slots the committer that lands one folds the log into the store and
// truncates it, while the others keep racing.
func TestManyProcessesCommitThroughOneLog(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: spawns processes")
	}
	local := func(t *testing.T) (objstore.Store, string) {
		dir := t.TempDir()
		store, err := objstore.NewLocal(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		return store, dir
	}
	onS3 := func(t *testing.T) (objstore.Store, string) {
		store, loc := s3test.NewStore(t)
		return store, loc.URI
	}
	for _, tc := range []struct {
		name        string
		open        func(t *testing.T) (objstore.Store, string)
		procs, each int
		fold        int
	}{
		{"local", local, 4, 8, 0},
		{"local, folding while committing", local, 4, 8, 3},
		{"s3", onS3, 3, 6, 0},
		{"s3, folding while committing", onS3, 3, 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, where := tc.open(t)
			manyProcesses(t, store, where, tc.procs, tc.each, tc.fold)
		})
	}
}

func manyProcesses(t *testing.T, store objstore.Store, where string, procs, each, fold int) {
	var extra []func(*core.CatalogOptions)
	var env []string
	if fold > 0 {
		extra = append(extra, foldingOpts(fold))
		env = append(env, fmt.Sprintf("%s=%d", envLogFold, fold))
	}
	c := openCommitter(t, store, logOpts(extra...))
	tb := createTable(t, c, "t")
	start := snap(t, c).ID()
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmds[i], outs[i] = childCmd(t, "writer", where, append(env, fmt.Sprintf("%s=p%d", envLogID, i), fmt.Sprintf("%s=%d", envLogN, each))...)
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
	check := func(who string, s *core.CatalogView) {
		t.Helper()
		if s.ID() != start+core.SnapshotID(procs*each) {
			t.Fatalf("%s: head %d, want %d (consecutive snapshots)", who, s.ID(), start+core.SnapshotID(procs*each))
		}
		for id := start + 1; id <= s.ID(); id++ {
			if _, ok := acked[id]; !ok {
				t.Fatalf("%s: snapshot %d was never acknowledged to a writer", who, id)
			}
		}
		files := map[string]int{}
		for _, f := range s.DataFiles(tb) {
			files[f.Path]++
		}
		for _, path := range acked {
			if files[path] != 1 {
				t.Fatalf("%s: %s appears %d times in the catalog", who, path, files[path])
			}
		}
		if len(files) != len(acked) {
			t.Fatalf("%s: the catalog holds %d files, %d were acknowledged", who, len(files), len(acked))
		}
	}
	if err := c.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	check("the parent committer", snap(t, c))
	if fold == 0 {
		return
	}
	// The children folded while they committed: the store's replay point
	// is past the first cadence multiple (the parent never folded past
	// its own adoption and first commit).
	base := logBase(t, store)
	mi, err := slate.DescribeManifest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	if mi.ReplayAfterWalID < base.WalID(uint64(fold)) {
		t.Fatalf("the store's replay point is WAL id %d (slot %d): no cadence fold landed while the processes committed",
			mi.ReplayAfterWalID, int64(mi.ReplayAfterWalID)-int64(base.WalBase))
	}
	t.Logf("folded through slot %d while committing; log objects left: %d", mi.ReplayAfterWalID-base.WalBase, len(slots(t, store)))
	// A cold reader replays what the folds left, and the store alone,
	// once folded to the end, holds the same catalog.
	ro, err := core.OpenReadOnly(bg, store, logOpts(extra...))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close(bg)
	check("a cold reader", snap(t, ro))
	if _, err := c.FoldSprint(bg); err != nil {
		t.Fatal(err)
	}
	if n, err := c.UnfoldedSlots(bg); err != nil || n != 0 {
		t.Fatalf("after a final fold: %d unfolded (%v)", n, err)
	}
	m, err := core.MaterializeForTest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	check("the folded store alone", m.Head)
}

// writeLog records the keys written through it (successfully) while armed.
type writeLog struct {
	objstore.Store
	armed atomic.Bool
	mu    sync.Mutex
	keys  []string
}

func (w *writeLog) note(key string, err error) {
	if err == nil && w.armed.Load() {
		w.mu.Lock()
		w.keys = append(w.keys, key)
		w.mu.Unlock()
	}
}

func (w *writeLog) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.keys...)
}

func (w *writeLog) Put(ctx context.Context, key string, data []byte) (string, error) {
	e, err := w.Store.Put(ctx, key, data)
	w.note(key, err)
	return e, err
}

func (w *writeLog) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	e, err := w.Store.PutIfAbsent(ctx, key, data)
	w.note(key, err)
	return e, err
}

func (w *writeLog) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	e, err := w.Store.PutIfMatch(ctx, key, data, etag)
	w.note(key, err)
	return e, err
}

func (w *writeLog) Delete(ctx context.Context, key string) error {
	err := w.Store.Delete(ctx, key)
	w.note(key, err)
	return err
}

// waitRole waits (bounded) until c's role is want.
func waitRole(t *testing.T, c *core.Catalog, want core.Role) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for c.Role() != want {
		if time.Now().After(deadline) {
			t.Fatalf("role still %q after 20s, want %q", c.Role(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// fencedHolder opens a holder over a write-recording view of store. Its
// plug asks for a flush after every slot, so once fenced, a slot its idle
// fold applies (every 5ms, before its manifest poll notices the fence)
// makes it try to write the store; the engine's fencing must stop it.
func fencedHolder(t *testing.T, store objstore.Store, rec *offerLog) (*core.Catalog, *writeLog, core.TableID) {
	t.Helper()
	wl := &writeLog{Store: store}
	p := recording(rec)
	p.inner = provider.New(provider.Options{FlushSlots: 1})
	a := openCommitter(t, wl, logOpts(func(o *core.CatalogOptions) {
		o.CommitLog = p
		o.CommitLogFoldPoll = 5 * time.Millisecond
		o.Engine.ManifestPollInterval = 200 * time.Millisecond
	}))
	tb := createTable(t, a, "t")
	if err := a.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	if a.Role() != core.RoleHolder {
		t.Fatalf("role %q after TakeStore, want holder", a.Role())
	}
	n := len(rec.all())
	commit(t, a, insertInto(tb, "a-held.parquet")) // applied to the held store
	offers := rec.since(n)
	if len(offers) != 1 || !offers[0].Won {
		t.Fatalf("the holder's commit made offers %+v", offers)
	}
	// Its flush of that slot has published before anyone fences it (so
	// nothing of the holder's is in flight when the fence lands).
	want := logBase(t, store).Seq(offers[0].Batch.Slot)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mi, err := slate.DescribeManifest(bg, store, "")
		if err != nil {
			t.Fatal(err)
		}
		if mi.LastL0Seq >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holder never flushed its slot (last L0 seq %d, want %d)", mi.LastL0Seq, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return a, wl, tb
}

// afterTheFence checks what a fenced holder did: it gave the store up, its
// next commit landed through the log (a won slot after every slot the
// fencer landed), and it wrote nothing into the store (only log slots, and
// its reader's checkpoint updates, which leave the writer's manifest
// fields alone), so the store's WAL, tables and writer manifest are still
// tree and manifest (storeTree and writerManifest, taken once the fencer
// held the store).
func afterTheFence(t *testing.T, store objstore.Store, a *core.Catalog, wl *writeLog, rec *offerLog, tb core.TableID, fencerSlot uint64, tree string, manifest slate.ManifestInfo) {
	t.Helper()
	waitRole(t, a, core.RoleCommitter)
	n := len(rec.all())
	commit(t, a, insertInto(tb, "a-after.parquet"))
	offers := rec.since(n)
	if len(offers) == 0 || !offers[len(offers)-1].Won {
		t.Fatalf("the fenced holder's commit made offers %+v, want a win last", offers)
	}
	won := offers[len(offers)-1].Batch
	if won.Slot <= fencerSlot {
		t.Fatalf("the fenced holder's commit won slot %d, not after the fencer's %d", won.Slot, fencerSlot)
	}
	if got := readSlot(t, store, won.Slot).TxnID; got != won.TxnID {
		t.Fatalf("slot %d holds %s, not the fenced holder's commit", won.Slot, got)
	}
	if a.Role() != core.RoleCommitter {
		t.Fatalf("role %q after committing, want committer", a.Role())
	}
	if err := a.Close(bg); err != nil {
		t.Fatalf("closing the fenced holder: %v", err)
	}
	for _, k := range wl.written() {
		if !strings.HasPrefix(k, "log/") && !strings.HasPrefix(k, "manifest/") {
			t.Errorf("the fenced holder wrote %s into the store", k)
		}
	}
	if after := storeTree(t, store); after != tree {
		t.Errorf("the store's WAL or tables changed after the fence:\nbefore %s\nafter  %s", tree, after)
	}
	if after := writerManifest(t, store); after != manifest {
		t.Errorf("the store's writer manifest changed after the fence: %+v -> %+v", manifest, after)
	}
}

// RFC 0024: "a holder fenced by another process gives the store up and its
// next commit lands through the log". Another holder (in this process)
// takes the store; the fenced one notices, gives the store up (its role
// turns from holder to committer), writes nothing into the store from the
// fence on, and its next commit lands as a slot after the fencer's.
func TestFencedHolderGivesTheStoreUpAndKeepsCommitting(t *testing.T) {
	store := objstore.NewMemory(0)
	rec, brec := &offerLog{}, &offerLog{}
	a, wl, tb := fencedHolder(t, store, rec)
	wl.armed.Store(true) // from here on a's writes are recorded
	b := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = recording(brec); o.CommitLogFoldPoll = time.Hour }))
	if err := b.TakeStore(bg); err != nil { // fences a's store
		t.Fatal(err)
	}
	tree, manifest := storeTree(t, store), writerManifest(t, store)
	commit(t, b, insertInto(tb, "b.parquet"))
	bo := brec.all()
	if len(bo) == 0 || !bo[len(bo)-1].Won {
		t.Fatalf("the fencer's offers %+v", bo)
	}
	afterTheFence(t, store, a, wl, rec, tb, bo[len(bo)-1].Batch.Slot, tree, manifest)
	// Everyone is served all three commits, once each.
	late := openCommitter(t, store, logOpts())
	files := map[string]int{}
	for _, f := range snap(t, late).DataFiles(tb) {
		files[f.Path]++
	}
	if len(files) != 3 || files["a-held.parquet"] != 1 || files["b.parquet"] != 1 || files["a-after.parquet"] != 1 {
		t.Fatalf("after the fenced holder's commit the catalog holds %v", files)
	}
}

// The same with the fencer in another process, on a local store.
func TestFencedHolderGivesTheStoreUpToAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: spawns a process")
	}
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &offerLog{}
	a, wl, tb := fencedHolder(t, store, rec)
	wl.armed.Store(true) // idle from here on: the child's fence is the next event
	syncDir := t.TempDir()
	cmd, out := childCmd(t, "taker", dir, envLogSync+"="+syncDir, envLogID+"=taker")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			os.WriteFile(filepath.Join(syncDir, "parent-done"), nil, 0o644)
		}
	}
	defer func() { release(); cmd.Wait() }()
	if err := waitForFile(filepath.Join(syncDir, "child-done"), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(syncDir, "child-done"))
	if err != nil {
		t.Fatal(err)
	}
	childSnap, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		t.Fatalf("the child reported %q: %v", b, err)
	}
	tree, manifest := storeTree(t, store), writerManifest(t, store) // the child holds the store, idle
	// The child's commit is the slot whose stamp is its snapshot.
	landed, err := provider.New(provider.Options{}).Committer(store, "").Read(bg, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	fencerSlot := uint64(0)
	for _, lb := range landed {
		if h := headStamps(t, lb); len(h) == 1 && h[0].SnapshotID == core.SnapshotID(childSnap) {
			fencerSlot = lb.Slot
		}
	}
	if fencerSlot == 0 {
		t.Fatalf("no slot carries the child's snapshot %d", childSnap)
	}
	afterTheFence(t, store, a, wl, rec, tb, fencerSlot, tree, manifest)
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(out.String(), "held") {
		t.Fatalf("child output %q", out.String())
	}
}
