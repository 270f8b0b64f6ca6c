// Package commitlogtest is the acceptance suite of RFC 0024 for a commit-log
// provider: what any core.CommitLogProvider must do for the catalog,
// checked through core's public API alone, whatever the provider's slot
// format. A library proves it keeps the contract by running it from its own
// tests:
//
//	func TestMyLogKeepsTheContract(t *testing.T) {
//		commitlogtest.Run(t, func(t *testing.T) core.CommitLogProvider {
//			return mylog.New(mylog.Options{})
//		})
//	}
//
// Each check opens catalogs over a fresh in-memory object store, every
// open with a provider newProvider returns (as separate processes would
// each build their own), and passes it per open (CatalogOptions.CommitLog),
// so nothing is registered process-wide.
//
// The obligations checked: adoption of a single-writer lake, after which a
// provider-less open is refused; a commit reaching a tailing reader before
// any fold; committers over readers, each commit landing exactly once
// whatever the races (a lost race is folded before the retry); a true
// conflict through the log reported as a commit conflict; the fold cadence
// bounding the unfolded tail; a committer arriving after another stopped
// without closing (a crash) folding what it left; a reader-only provider
// refused for a read-write open; the registry (once per process) and the
// per-open provider winning over it;
// several processes (children of the test binary, each with its own
// provider) committing to one lake on a local store, one SIGKILLed midway,
// losing nothing acknowledged. The obligations that depend on the in-tree
// slot format (what a slot holds, the session's recorded writes) are
// checked by the in-tree provider's own tests in core.
package commitlogtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// Factory returns a provider for one open. Providers a factory returns for
// one store must see each other's commits (they stand for processes
// sharing the store), and keep no state across stores.
type Factory func(t *testing.T) core.CommitLogProvider

// childEnv tells a child process of the test binary what to do:
// "commit|<dir>|<n>" (testProcesses) or "registry|<dir>" (testRegistry).
const childEnv = "MORAINE_COMMITLOGTEST_CHILD"

// Run runs every check against providers from newProvider. Call it from a
// top-level test: the multi-process check runs that test again in child
// processes of the test binary (which then commit instead of checking).
func Run(t *testing.T, newProvider Factory) {
	if v := os.Getenv(childEnv); v != "" {
		runChild(t, newProvider, v)
		return
	}
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Factory)
	}{
		{"AdoptionThenAProviderIsNeeded", testAdoption},
		{"ACommitReachesATailingReader", testTailingReader},
		{"CommittersRaceAndEveryCommitLandsOnce", testCommittersRace},
		{"ATrueConflictIsACommitConflict", testTrueConflict},
		{"TheFoldCadenceBoundsTheTail", testFoldCadence},
		{"ACommitterFoldsWhatACrashedOneLeft", testCrash},
		{"AReaderOnlyProviderCannotCommit", testReaderOnly},
		{"ThePerOpenProviderIsTheOneUsed", testPerOpen},
		{"ProcessesCommitOneLakeAndAKilledOneLosesNothing", testProcesses},
		{"TheRegistryAndThePerOpenOverride", testRegistry},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newProvider) })
	}
}

var bg = context.Background()

func options(p core.CommitLogProvider, extra ...func(*core.CatalogOptions)) core.CatalogOptions {
	o := core.CatalogOptions{CommitLog: p, CommitLogPollInterval: 10 * time.Millisecond, ReaderPollInterval: -1,
		CommitLogFoldSlots: -1}
	for _, f := range extra {
		f(&o)
	}
	return o
}

func open(t *testing.T, store objstore.Store, o core.CatalogOptions) *core.Catalog {
	t.Helper()
	c, err := core.Open(bg, store, o)
	if err != nil {
		t.Fatalf("read-write open through the provider: %v", err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

func view(t *testing.T, c *core.Catalog) *core.CatalogView {
	t.Helper()
	v, err := c.View(bg)
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	return v
}

func createTable(t *testing.T, c *core.Catalog, name string) (core.TableID, core.SnapshotID) {
	t.Helper()
	var id core.TableID
	s, err := c.Commit(bg, func(tx *core.Transaction) error {
		m, ok := tx.View().SchemaByName("main")
		if !ok {
			return errors.New("no schema main")
		}
		var err error
		id, err = tx.CreateTable(m.ID, name, []core.ColumnDef{{Name: "a", Type: "int64"}})
		return err
	})
	if err != nil {
		t.Fatalf("CREATE TABLE %s: %v", name, err)
	}
	return id, s
}

func hasTable(t *testing.T, c *core.Catalog, name string) bool {
	t.Helper()
	_, ok := view(t, c).TableByName("main", name)
	return ok
}

// A lake the single writer wrote becomes log-resident at the first open
// through the provider, keeping everything; from then on an open without a
// provider is refused (core.NeedsCommitLog), read-only too.
func testAdoption(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	single, err := core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, single, "before")
	single.Close(bg)

	c := open(t, store, options(newProvider(t)))
	if r := c.Role(); r != core.RoleCommitter {
		t.Fatalf("a read-write open through the provider is a %v, want a committer", r)
	}
	if !hasTable(t, c, "before") {
		t.Fatal("the adopted lake lost its table")
	}
	createTable(t, c, "after")
	c.Close(bg)
	if _, err := core.Open(bg, store, core.CatalogOptions{}); !core.NeedsCommitLog(err) {
		t.Fatalf("provider-less open of an adopted lake: %v, want the refusal core.NeedsCommitLog reports", err)
	}
	if _, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1}); !core.NeedsCommitLog(err) {
		t.Fatalf("provider-less read-only open of an adopted lake: %v, want the refusal core.NeedsCommitLog reports", err)
	}
	again := open(t, store, options(newProvider(t)))
	if !hasTable(t, again, "before") || !hasTable(t, again, "after") {
		t.Fatal("a reopen through the provider lost a table")
	}
}

// A committer reads its own commit, and a read-only open tailing the log
// serves it before any fold, and the next one after a Refresh.
func testTailingReader(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	c := open(t, store, options(newProvider(t)))
	createTable(t, c, "t")
	if !hasTable(t, c, "t") {
		t.Fatal("the committer does not see its own commit")
	}
	ro, err := core.OpenReadOnly(bg, store, options(newProvider(t), func(o *core.CatalogOptions) { o.CommitLogTail = true }))
	if err != nil {
		t.Fatalf("read-only open through the provider: %v", err)
	}
	defer ro.Close(bg)
	if r := ro.Role(); r != core.RoleTailingReader {
		t.Fatalf("a tailing read-only open is a %v, want a tailing reader", r)
	}
	if !hasTable(t, ro, "t") {
		t.Fatal("the tailing reader does not serve the unfolded commit")
	}
	createTable(t, c, "u")
	if err := ro.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if !hasTable(t, ro, "u") {
		t.Fatal("the tailing reader does not serve the next commit after Refresh")
	}
}

// Committers over readers: several committers on one store commit at once;
// every commit lands exactly once (the losers of a slot fold the winner's
// and retry after it), snapshot ids are distinct, and every committer ends
// up seeing every table.
func testCommittersRace(t *testing.T, newProvider Factory) {
	const handles, each = 4, 6
	store := objstore.NewMemory(0)
	cs := make([]*core.Catalog, handles)
	for i := range cs {
		cs[i] = open(t, store, options(newProvider(t)))
	}
	var mu sync.Mutex
	ids := map[core.SnapshotID]string{}
	var wg sync.WaitGroup
	errs := make(chan error, handles*each)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				name := fmt.Sprintf("t_%d_%d", i, k)
				s, err := c.Commit(bg, func(tx *core.Transaction) error {
					m, _ := tx.View().SchemaByName("main")
					_, err := tx.CreateTable(m.ID, name, []core.ColumnDef{{Name: "a", Type: "int64"}})
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					continue
				}
				mu.Lock()
				if other, dup := ids[s]; dup {
					errs <- fmt.Errorf("%s and %s both landed as snapshot %d", other, name, s)
				}
				ids[s] = name
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for i, c := range cs {
		if err := c.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		if n := len(view(t, c).AllTables()); n != handles*each {
			t.Fatalf("committer %d sees %d tables, want all %d", i, n, handles*each)
		}
	}
	check := open(t, store, options(newProvider(t)))
	if n := len(view(t, check).AllTables()); n != handles*each {
		t.Fatalf("a fresh committer sees %d tables, want %d", n, handles*each)
	}
}

// A commit prepared against a table another committer dropped meanwhile
// is refused as a commit conflict (nothing of it lands).
func testTrueConflict(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	c1 := open(t, store, options(newProvider(t)))
	c2 := open(t, store, options(newProvider(t)))
	a, _ := createTable(t, c1, "a")
	if err := c2.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	tx, err := c1.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.AddColumn(a, core.ColumnDef{Name: "b", Type: "int64"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Commit(bg, func(tx *core.Transaction) error { return tx.DropTable(a) }); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(bg); core.KindOf(err) != core.CommitConflict {
		t.Fatalf("a commit against a dropped table: %v, want a commit conflict", err)
	}
	check := open(t, store, options(newProvider(t)))
	if hasTable(t, check, "a") {
		t.Fatal("the dropped table is back")
	}
}

// With CommitLogFoldSlots set, the committers fold the log as it grows: the
// unfolded tail stays within the cadence once the folds in flight are done, and a
// committer arriving at a long tail folds it at open.
func testFoldCadence(t *testing.T, newProvider Factory) {
	const fold = 4
	store := objstore.NewMemory(0)
	c := open(t, store, options(newProvider(t), func(o *core.CatalogOptions) { o.CommitLogFoldSlots = fold }))
	for i := range 3 * fold {
		createTable(t, c, fmt.Sprintf("t%d", i))
	}
	// A cadence fold runs beside the commits; Close waits for the ones in
	// flight, and a handle that never folds counts what they left.
	c.Close(bg)
	long := open(t, store, options(newProvider(t))) // never folds by itself
	n, err := long.UnfoldedSlots(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n >= fold {
		t.Fatalf("%d slots unfolded after %d commits with a fold every %d", n, 3*fold, fold)
	}
	for i := range 3 * fold {
		createTable(t, long, fmt.Sprintf("u%d", i))
	}
	long.Close(bg)
	late := open(t, store, options(newProvider(t), func(o *core.CatalogOptions) { o.CommitLogFoldSlots = fold }))
	if n, err := late.UnfoldedSlots(bg); err != nil || n > fold {
		t.Fatalf("%d slots unfolded after an open at a long tail (%v); the open should fold", n, err)
	}
	if n := len(view(t, late).AllTables()); n != 6*fold {
		t.Fatalf("after the fold the catalog has %d tables, want %d", n, 6*fold)
	}
}

// A committer that stops without closing (a crash: its handle abandoned)
// loses nothing it acknowledged: the next committer sees every commit and
// commits after them.
func testCrash(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	crashed, err := core.Open(bg, store, options(newProvider(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { crashed.Close(bg) }) // after the check: the crash is never closing in between
	for i := range 5 {
		createTable(t, crashed, fmt.Sprintf("t%d", i))
	}
	next := open(t, store, options(newProvider(t)))
	for i := range 5 {
		if !hasTable(t, next, fmt.Sprintf("t%d", i)) {
			t.Fatalf("table t%d, acknowledged before the crash, is missing", i)
		}
	}
	_, s := createTable(t, next, "after")
	if v := view(t, next); v.ID() != s || !hasTable(t, next, "after") {
		t.Fatalf("the commit after the crash landed at %d, the committer is at %d", s, v.ID())
	}
}

// readerOnly is the provider without a committer.
type readerOnly struct{ core.CommitLogProvider }

func (readerOnly) Committer(objstore.Store, string) core.Committer { return nil }
func (readerOnly) Session() core.CommitLogProvider                 { return nil }

// A provider that has no committer opens read-only only: a read-write open
// through it is refused, and a read-only one serves the lake.
func testReaderOnly(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	c := open(t, store, options(newProvider(t)))
	createTable(t, c, "t")
	if _, err := core.Open(bg, store, options(readerOnly{newProvider(t)})); err == nil {
		t.Fatal("a read-write open through a reader-only provider succeeded")
	}
	ro, err := core.OpenReadOnly(bg, store, options(readerOnly{newProvider(t)}, func(o *core.CatalogOptions) { o.CommitLogTail = true }))
	if err != nil {
		t.Fatalf("read-only open through a reader-only provider: %v", err)
	}
	defer ro.Close(bg)
	if !hasTable(t, ro, "t") {
		t.Fatal("the reader-only provider's reader does not serve the lake")
	}
}

// counting wraps a provider and counts what the catalog asks of it.
type counting struct {
	core.CommitLogProvider
	committers, readers *atomic.Int64
}

func (c counting) Committer(s objstore.Store, path string) core.Committer {
	c.committers.Add(1)
	return c.CommitLogProvider.Committer(s, path)
}

func (c counting) Reader(s objstore.Store, path string) slate.WalReader {
	c.readers.Add(1)
	return c.CommitLogProvider.Reader(s, path)
}

func (c counting) Session() core.CommitLogProvider {
	s := c.CommitLogProvider.Session()
	if s == nil {
		s = c.CommitLogProvider
	}
	return counting{CommitLogProvider: s, committers: c.committers, readers: c.readers}
}

// The provider given per open (CatalogOptions.CommitLog) is the one the
// open uses: its committer commits, its reader reads.
func testPerOpen(t *testing.T, newProvider Factory) {
	store := objstore.NewMemory(0)
	var committers, readers atomic.Int64
	p := counting{CommitLogProvider: newProvider(t), committers: &committers, readers: &readers}
	c := open(t, store, options(p))
	createTable(t, c, "t")
	if committers.Load() == 0 || readers.Load() == 0 {
		t.Fatalf("the open asked the per-open provider for %d committers and %d readers, want both used", committers.Load(), readers.Load())
	}
}

// processCommits is how many tables each child process creates.
const processCommits = 12

// runChild is a child process of testProcesses: it opens the lake in the
// directory through the provider and creates its tables one commit each,
// printing "landed <name>" after each commit returns.
func runChild(t *testing.T, newProvider Factory, v string) {
	parts := strings.Split(v, "|")
	if len(parts) == 2 && parts[0] == "registry" {
		runRegistryChild(t, newProvider, parts[1])
		return
	}
	if len(parts) != 3 || parts[0] != "commit" {
		t.Fatalf("%s=%q: want commit|<dir>|<n> or registry|<dir>", childEnv, v)
	}
	dir, n := parts[1], parts[2]
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, store, options(newProvider(t)))
	for k := range processCommits {
		name := fmt.Sprintf("p%s_%d", n, k)
		createTable(t, c, name)
		fmt.Printf("landed %s\n", name)
	}
}

// Several processes (children of the test binary, each with its own
// provider) commit to one lake on a local store at once, one of them
// SIGKILLed after a few commits: every commit a process saw return is in
// the lake, once, and the survivors' are all there.
func testProcesses(t *testing.T, newProvider Factory) {
	const procs, victim = 3, 0
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	setup := open(t, store, options(newProvider(t)))
	createTable(t, setup, "setup")
	setup.Close(bg)
	root := strings.SplitN(t.Name(), "/", 2)[0]
	type child struct {
		cmd    *exec.Cmd
		landed []string
		done   chan error
	}
	var mu sync.Mutex
	children := make([]*child, procs)
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^"+root+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=commit|"+dir+"|"+strconv.Itoa(i))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ch := &child{cmd: cmd, done: make(chan error, 1)}
		children[i] = ch
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if name, ok := strings.CutPrefix(sc.Text(), "landed "); ok {
					mu.Lock()
					ch.landed = append(ch.landed, name)
					n := len(ch.landed)
					mu.Unlock()
					if i == victim && n == 3 {
						cmd.Process.Kill() // SIGKILL, mid-way through its commits
					}
				}
			}
			err := cmd.Wait()
			if err != nil && i != victim {
				err = fmt.Errorf("%w\n%s", err, stderr.String())
			}
			ch.done <- err
		}()
	}
	for i, ch := range children {
		select {
		case err := <-ch.done:
			if i != victim && err != nil {
				t.Fatalf("child process %d: %v", i, err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("child process %d did not finish in 2 minutes", i)
		}
	}
	check := open(t, store, options(newProvider(t)))
	v := view(t, check)
	mu.Lock()
	defer mu.Unlock()
	for i, ch := range children {
		if i != victim && len(ch.landed) != processCommits {
			t.Fatalf("child %d reported %d commits, want %d", i, len(ch.landed), processCommits)
		}
		for _, name := range ch.landed {
			if _, ok := v.TableByName("main", name); !ok {
				t.Errorf("child %d's acknowledged table %s is missing", i, name)
			}
		}
	}
	if len(children[victim].landed) < 3 {
		t.Fatalf("the victim reported %d commits before the kill, want 3", len(children[victim].landed))
	}
	names := map[string]int{}
	for _, tb := range v.AllTables() {
		names[tb.Name]++
	}
	for name, n := range names {
		if n != 1 {
			t.Errorf("table %s is in the lake %d times", name, n)
		}
	}
	t.Logf("%d processes: %d, %d and %d (killed) commits acknowledged; the lake holds %d tables",
		procs, len(children[1].landed), len(children[2].landed), len(children[victim].landed), len(names))
	want := 1 + (procs-1)*processCommits + len(children[victim].landed)
	if got := len(names); got < want || got > want+1 { // +1: the victim's commit cut off by the kill may have landed
		t.Errorf("the lake holds %d tables, want %d (or one more: the victim's cut-off commit)", got, want)
	}
}

// runRegistryChild checks the registry in a process of its own (the
// registry is once per process): the provider registers once, a second
// registration is refused, an open without a per-open provider uses the
// registered one, and a per-open provider wins over it.
func runRegistryChild(t *testing.T, newProvider Factory, dir string) {
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var regCommitters, regReaders, ownCommitters, ownReaders atomic.Int64
	registered := counting{CommitLogProvider: newProvider(t), committers: &regCommitters, readers: &regReaders}
	if err := core.RegisterCommitLog(registered); err != nil {
		t.Fatalf("RegisterCommitLog: %v", err)
	}
	if !core.CommitLogRegistered() {
		t.Fatal("CommitLogRegistered is false after a registration")
	}
	if err := core.RegisterCommitLog(newProvider(t)); core.KindOf(err) != core.Configuration {
		t.Fatalf("a second RegisterCommitLog: %v, want a Configuration error", err)
	}
	o := options(nil)
	c := open(t, store, o)
	if c.Role() != core.RoleCommitter {
		t.Fatalf("an open without a per-open provider is a %v, want a committer through the registered one", c.Role())
	}
	createTable(t, c, "through_the_registry")
	if regCommitters.Load() == 0 {
		t.Fatal("the open did not use the registered provider")
	}
	c.Close(bg)
	before := regCommitters.Load() + regReaders.Load()
	own := counting{CommitLogProvider: newProvider(t), committers: &ownCommitters, readers: &ownReaders}
	d := open(t, store, options(own))
	createTable(t, d, "through_the_per_open_provider")
	if ownCommitters.Load() == 0 || regCommitters.Load()+regReaders.Load() != before {
		t.Fatalf("with a per-open provider the open asked it %d times and the registered one %d more: the per-open one must win",
			ownCommitters.Load()+ownReaders.Load(), regCommitters.Load()+regReaders.Load()-before)
	}
	fmt.Println("registry checked")
}

// The registry rules, checked in a child process of the test binary (the
// registry is once per process, and this one must stay clean): see
// runRegistryChild.
func testRegistry(t *testing.T, newProvider Factory) {
	root := strings.SplitN(t.Name(), "/", 2)[0]
	cmd := exec.Command(os.Args[0], "-test.run=^"+root+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=registry|"+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "registry checked") {
		t.Fatalf("the registry child: %v\n%s", err, out)
	}
	if core.CommitLogRegistered() {
		t.Fatal("a provider is registered in the test process itself")
	}
}
