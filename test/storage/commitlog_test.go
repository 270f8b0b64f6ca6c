package storage

// The commit-log build (moraine_commitlog) end to end: several DuckDB
// v1.4.4 processes, each a separate OS process (build/duckdb-shell-v1.4.4),
// attach one lake with DuckLake and commit to it at once through the
// in-tree commit log, on a local store and on S3 (versitygw). Row-level
// checks go through DuckLake; catalog-level ones through the Go API.

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
	"github.com/moraine-go/moraine/provider"
)

// logLake is one lake the commit-log tests run on.
type logLake struct {
	name  string
	uri   string   // the store, as ATTACH 'ducklake:moraine:<uri>' names it
	data  string   // DATA_PATH
	env   []string // the DuckDB processes' environment (S3 credentials)
	store objstore.Store
	// setup runs in every DuckDB process after DuckLake is loaded (httpfs
	// and the s3 secret, for a lake whose data is in the bucket).
	setup []string
	// dataPrefix is where the data files are in store ("" when they are
	// not in it).
	dataPrefix string
}

// logLakes returns a fresh local lake and a fresh S3 lake.
func logLakes(t *testing.T) []logLake {
	dir := t.TempDir()
	local, err := objstore.Open(bg, filepath.Join(dir, "lake"), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loc := s3test.NewLocation(t)
	remote, err := loc.Open(bg)
	if err != nil {
		t.Fatal(err)
	}
	// The whole lake in the bucket: the data files too, through httpfs
	// with the one s3 secret (which moraine reads as well). httpfs exists
	// for v1.4.4 only (../shared/httpfs): on another release the data
	// files stay on local disk, and moraine takes the AWS environment.
	s3Lake := logLake{name: "s3", uri: "S3://" + strings.TrimPrefix(loc.URI, "s3://"), store: remote}
	if version == "v1.4.4" {
		s3Lake.data, s3Lake.dataPrefix = loc.URI+"/data/", "data/"
		s3Lake.setup = []string{"LOAD " + sqlString(httpfsExtension(t)), s3Secret(loc)}
	} else {
		s3Lake.data = filepath.Join(dir, "s3data") + "/"
		s3Lake.env = []string{"AWS_ACCESS_KEY_ID=" + loc.Server.AccessKey, "AWS_SECRET_ACCESS_KEY=" + loc.Server.SecretKey,
			"AWS_REGION=" + loc.Server.Region, "AWS_ENDPOINT_URL=" + loc.Server.Endpoint}
	}
	return []logLake{
		{name: "local", uri: filepath.Join(dir, "lake"), data: filepath.Join(dir, "data") + "/", store: local},
		// S3:// in capitals: DuckDB hands a lower-case s3:// ATTACH path to
		// httpfs before the storage extension sees it.
		s3Lake,
	}
}

// start starts a DuckDB process with the commit-log build and DuckLake
// loaded.
func (l logLake) start(t *testing.T) *duck {
	t.Helper()
	d := startDuckWith(t, commitLogExtension(), l.env...)
	d.ok("", "LOAD "+sqlString(ducklakeExtension()))
	for _, s := range l.setup {
		d.ok("", s)
	}
	return d
}

// attachSQL is the ATTACH of the lake as "lake", with extra options.
func (l logLake) attachSQL(opts ...string) string {
	o := append([]string{"DATA_PATH " + sqlString(l.data)}, opts...)
	return "ATTACH " + sqlString("ducklake:moraine:"+l.uri) + " AS lake (" + strings.Join(o, ", ") + ")"
}

// open starts a DuckDB process with the lake attached read-write.
func (l logLake) open(t *testing.T) *duck {
	t.Helper()
	d := l.start(t)
	d.ok("", l.attachSQL())
	return d
}

// catalog opens the lake read-only through the Go API, over the commit log.
func (l logLake) catalog(t *testing.T) *core.Catalog {
	t.Helper()
	c, err := core.OpenReadOnly(bg, l.store, core.CatalogOptions{CommitLog: provider.New(provider.Options{}), CommitLogTail: true, ReaderPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

// ids returns the sorted ids of a table, through DuckLake.
func ids(t *testing.T, d *duck, table string) []int64 {
	t.Helper()
	var out []int64
	for _, row := range d.ok("", "SELECT id FROM "+table+" ORDER BY id").Rows {
		n, err := strconv.ParseInt(*row[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// checkSnapshots checks that DuckLake's snapshot ids are 0..n-1 with no
// gap and that the catalog's head, through the Go API, is the last; it
// returns n.
func checkSnapshots(t *testing.T, l logLake, d *duck) int {
	t.Helper()
	r := d.ok("", "SELECT count(*), min(snapshot_id), max(snapshot_id) FROM lake.snapshots()")
	n, _ := strconv.Atoi(*r.Rows[0][0])
	if *r.Rows[0][1] != "0" || *r.Rows[0][2] != strconv.Itoa(n-1) {
		t.Fatalf("snapshots: %d, ids %s..%s: not consecutive from 0", n, *r.Rows[0][1], *r.Rows[0][2])
	}
	c := l.catalog(t)
	h, err := c.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := c.Snapshots(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int(h.SnapshotID) != n-1 || len(snaps) != n {
		t.Fatalf("the catalog's head is snapshot %d with %d snapshots; DuckLake shows %d", h.SnapshotID, len(snaps), n)
	}
	for i, s := range snaps {
		if int(s.ID) != i {
			t.Fatalf("the catalog's snapshot %d has id %d", i, s.ID)
		}
	}
	return n
}

// writer is one DuckDB process committing in a loop.
type writer struct {
	acked  map[string][]int64 // table -> ids whose INSERT returned OK
	failed []string           // statements DuckDB refused, with the error
}

// Four DuckDB processes commit small INSERTs at once, half into one shared
// table and half into a table of their own: every acknowledged COMMIT's
// rows are present exactly once, nothing else is, every commit is one
// snapshot, the snapshot ids are consecutive, and no process is wedged.
func TestCommitLogManyDuckDBProcesses(t *testing.T) {
	const procs, commits = 4, 16
	for _, l := range logLakes(t) {
		t.Run(l.name, func(t *testing.T) {
			setup := l.open(t)
			if role := setup.value("", "SELECT role FROM moraine_info('__ducklake_metadata_lake')"); role != "committer" {
				t.Fatalf("a read-write attach of the commit-log build is a %s, want a committer", role)
			}
			setup.ok("", "CREATE TABLE lake.shared (id BIGINT, writer INTEGER)")
			for w := range procs {
				setup.ok("", fmt.Sprintf("CREATE TABLE lake.own_%d (id BIGINT)", w))
			}
			before := checkSnapshots(t, l, setup)
			ducks := make([]*duck, procs)
			for w := range ducks {
				ducks[w] = l.open(t)
			}
			writers := make([]writer, procs)
			var wg sync.WaitGroup
			for w, d := range ducks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wr := &writers[w]
					wr.acked = map[string][]int64{}
					for k := range commits {
						id := int64(w*1000 + k)
						table, sql := "lake.shared", fmt.Sprintf("INSERT INTO lake.shared VALUES (%d, %d)", id, w)
						if k%2 == 1 {
							table, sql = fmt.Sprintf("lake.own_%d", w), fmt.Sprintf("INSERT INTO lake.own_%d VALUES (%d)", w, id)
						}
						r, err := d.try("", sql)
						switch {
						case err != nil:
							wr.failed = append(wr.failed, sql+": "+err.Error())
							return
						case r.Error != "":
							wr.failed = append(wr.failed, sql+": "+r.Error)
						default:
							wr.acked[table] = append(wr.acked[table], id)
						}
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				for _, d := range ducks {
					d.kill()
				}
				t.Fatal("the writers did not finish within 5 minutes: a process is wedged")
			}
			var want = map[string][]int64{}
			total := 0
			for w, wr := range writers {
				for _, f := range wr.failed {
					t.Errorf("process %d: %s", w, f)
				}
				for table, got := range wr.acked {
					want[table] = append(want[table], got...)
					total += len(got)
				}
			}
			check := l.open(t)
			for table, w := range want {
				slices.Sort(w)
				if got := ids(t, check, table); !slices.Equal(got, w) {
					t.Errorf("%s holds ids %v, want the acknowledged %v", table, got, w)
				}
				r := check.ok("", "SELECT count(*), count(DISTINCT id) FROM "+table)
				if *r.Rows[0][0] != strconv.Itoa(len(w)) || *r.Rows[0][1] != strconv.Itoa(len(w)) {
					t.Errorf("%s: count %s, distinct %s, want %d of each", table, *r.Rows[0][0], *r.Rows[0][1], len(w))
				}
			}
			if n := checkSnapshots(t, l, check); n != before+total {
				t.Errorf("%d snapshots, want %d before the writers plus one per acknowledged commit (%d)", n, before, total)
			}
			retries := 0
			for _, d := range ducks {
				n, _ := strconv.Atoi(d.value("", "SELECT conflicts FROM moraine_info('__ducklake_metadata_lake')"))
				retries += n
			}
			t.Logf("%s: %d processes, %d commits acknowledged, %d refused, %d DuckLake retries", l.name, procs, total, procs*commits-total, retries)
		})
	}
}

// looper is a DuckDB process inserting ids first, first+1, ... into a
// table in a loop, pausing pause() before each INSERT, until halted.
type looper struct {
	mu    sync.Mutex
	acked []int64  // ids whose INSERT returned OK
	errs  []string // statements refused, and a broken pipe
	halt  func()   // stops the loop and waits for it (idempotent)
}

func startLooper(d *duck, table string, first int64, pause func() time.Duration) *looper {
	lp := &looper{}
	stop, done := make(chan struct{}), make(chan struct{})
	lp.halt = sync.OnceFunc(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for id := first; ; id++ {
			select {
			case <-stop:
				return
			case <-time.After(pause()):
			}
			r, err := d.try("", fmt.Sprintf("INSERT INTO %s VALUES (%d)", table, id))
			lp.mu.Lock()
			switch {
			case err != nil:
				lp.errs = append(lp.errs, err.Error())
				lp.mu.Unlock()
				return
			case r.Error != "":
				lp.errs = append(lp.errs, r.Error)
			default:
				lp.acked = append(lp.acked, id)
			}
			lp.mu.Unlock()
		}
	}()
	return lp
}

// count is how many INSERTs were acknowledged so far.
func (lp *looper) count() int {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return len(lp.acked)
}

// A DuckDB process SIGKILLed in the middle of a COMMIT, again and again,
// loses nothing acknowledged and blocks nobody: three other processes keep
// committing throughout, each restart of the killed one attaches and
// commits again, and at the end every acknowledged id is present once
// (an id whose COMMIT was cut off is present at most once).
func TestCommitLogSIGKILLMidCommit(t *testing.T) {
	const rounds = 6
	for _, l := range logLakes(t) {
		t.Run(l.name, func(t *testing.T) {
			setup := l.open(t)
			setup.ok("", "CREATE TABLE lake.t (id BIGINT)")
			// A commit every 20 ms or so, oftener than a DuckLake retry's
			// window (30-65 ms on a loaded machine) is long: the restarted
			// process's retries get in by claiming the next slot
			// (core/claim.go), and a claim of a process killed holds this
			// one briefly. Stopped before its process is closed, on a
			// failure too.
			// Three steady processes and the victim: four writing at once.
			var steady []*looper
			for i := range 3 {
				lp := startLooper(l.open(t), "lake.t", int64(1_000_000*(i+1)), func() time.Duration {
					return time.Duration(10+rand.IntN(20)) * time.Millisecond
				})
				defer lp.halt()
				steady = append(steady, lp)
			}
			steadyCount := func() int {
				n := 0
				for _, lp := range steady {
					n += lp.count()
				}
				return n
			}
			var acked, cut []int64
			next := int64(0)
			for round := range rounds {
				victim := l.open(t)
				// A few acknowledged commits, then one cut off at a random
				// point of its COMMIT.
				for range 1 + rand.IntN(3) {
					r, err := victim.try("", fmt.Sprintf("INSERT INTO lake.t VALUES (%d)", next))
					if err != nil || r.Error != "" {
						t.Fatalf("round %d: restarted process cannot commit: %v %s", round, err, r.Error)
					}
					acked = append(acked, next)
					next++
				}
				if err := victim.send("", fmt.Sprintf("INSERT INTO lake.t VALUES (%d)", next)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rand.IntN(15_000)) * time.Microsecond)
				victim.kill()
				cut = append(cut, next)
				next++
				// Nobody is blocked: the steady writers commit after the kill.
				at := steadyCount()
				deadline := time.Now().Add(time.Minute)
				for steadyCount() < at+2 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if steadyCount() < at+2 {
					t.Fatalf("round %d: the other processes committed nothing for a minute after the kill", round)
				}
			}
			var steadyAcked []int64
			for i, lp := range steady {
				lp.halt()
				for _, e := range lp.errs {
					t.Errorf("steady process %d: %s", i, e)
				}
				steadyAcked = append(steadyAcked, lp.acked...)
			}
			check := l.open(t)
			got := ids(t, check, "lake.t")
			present := map[int64]int{}
			for _, id := range got {
				present[id]++
			}
			for _, id := range append(acked, steadyAcked...) {
				if present[id] != 1 {
					t.Errorf("acknowledged id %d is present %d times", id, present[id])
				}
				delete(present, id)
			}
			cutLanded := 0
			for _, id := range cut {
				if n := present[id]; n > 1 {
					t.Errorf("cut-off id %d is present %d times", id, n)
				} else if n == 1 {
					cutLanded++
				}
				delete(present, id)
			}
			for id, n := range present {
				t.Errorf("id %d (never sent) is present %d times", id, n)
			}
			checkSnapshots(t, l, check)
			orphans := checkDataFiles(t, l, check, "t")
			t.Logf("%s: %d kills (%d of the cut-off commits landed), %d + %d acknowledged commits, %d orphaned data files removed", l.name, rounds, cutLanded, len(acked), len(steadyAcked), orphans)
		})
	}
}

// A process committing in a tight loop does not starve another: each
// commit of the second process lands with DuckLake's default retries
// (10), although its DuckLake transaction (from the head it reads to its
// slot's PUT) takes longer than the busy process takes between commits.
// After three refusals in a row its retry claims the next slot
// (core/claim.go) and the busy process yields it: without claims the
// second process lost ten retries in a row on most commits.
func TestCommitLogBusyPeerDoesNotStarveAnother(t *testing.T) {
	const commits = 16
	for _, l := range logLakes(t) {
		t.Run(l.name, func(t *testing.T) {
			setup := l.open(t)
			setup.ok("", "CREATE TABLE lake.busy (id BIGINT)")
			setup.ok("", "CREATE TABLE lake.slow (id BIGINT, note VARCHAR)")
			busy := startLooper(l.open(t), "lake.busy", 0, func() time.Duration { return 0 })
			defer busy.halt()
			slow := l.open(t)
			// Wait until the busy process is committing.
			for deadline := time.Now().Add(time.Minute); busy.count() < 3; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the busy process landed no commit in a minute")
				}
			}
			// The slow process's transactions read and write more than the
			// busy one's: a count over the busy table first.
			var refused []string
			for k := range commits {
				r, err := slow.try("", fmt.Sprintf("INSERT INTO lake.slow SELECT %d, 'after ' || count(*) FROM lake.busy", k))
				if err != nil {
					t.Fatal(err)
				}
				if r.Error != "" {
					refused = append(refused, r.Error)
				}
			}
			busy.halt()
			for _, e := range refused {
				t.Errorf("the slow process: %s", e)
			}
			for _, e := range busy.errs {
				t.Errorf("the busy process: %s", e)
			}
			check := l.open(t)
			if got := ids(t, check, "lake.slow"); len(got) != commits-len(refused) {
				t.Errorf("lake.slow holds %d rows, want the %d acknowledged", len(got), commits-len(refused))
			}
			if got := ids(t, check, "lake.busy"); !slices.Equal(got, busy.acked) {
				t.Errorf("lake.busy holds ids %v, want the acknowledged %v", got, busy.acked)
			}
			checkSnapshots(t, l, check)
			r := slow.ok("", "SELECT conflicts, claims FROM moraine_info('__ducklake_metadata_lake')")
			t.Logf("%s: %d slow commits (%s DuckLake retries, %s claims), %d busy commits meanwhile", l.name, commits, *r.Rows[0][0], *r.Rows[0][1], len(busy.acked))
		})
	}
}

// A READ_ONLY + COMMIT_LOG_TAIL attach is a tailing reader: it sees the
// other processes' commits within its poll interval (READER_POLL_INTERVAL_MS)
// plus the time a query takes, and writes nothing. A committer's own reads
// are as fresh as its COMMIT_LOG_POLL_INTERVAL_MS (RFC 0024: an idle
// committer lists nothing; its commits are checked against the log's tail
// whatever it read).
func TestCommitLogTailingReaderProcess(t *testing.T) {
	const readerMS, committerMS = 500, 300
	for _, l := range logLakes(t) {
		t.Run(l.name, func(t *testing.T) {
			w := l.open(t)
			w.ok("", "CREATE TABLE lake.t (id BIGINT)")
			r := l.start(t)
			r.ok("", "ATTACH "+sqlString("ducklake:moraine:"+l.uri)+
				fmt.Sprintf(" AS lake (READ_ONLY, META_COMMIT_LOG_TAIL true, META_READER_POLL_INTERVAL_MS %d)", readerMS))
			if role := r.value("", "SELECT role FROM moraine_info('__ducklake_metadata_lake')"); role != "tailing reader" {
				t.Fatalf("READ_ONLY + COMMIT_LOG_TAIL is a %s, want a tailing reader", role)
			}
			if r.query("", "INSERT INTO lake.t VALUES (0)").Error == "" {
				t.Fatal("a tailing reader accepted an INSERT")
			}
			c := l.start(t)
			c.ok("", l.attachSQL(fmt.Sprintf("META_COMMIT_LOG_POLL_INTERVAL_MS %d", committerMS)))
			watchers := []struct {
				name string
				d    *duck
				ms   int
			}{{"tailing reader", r, readerMS}, {"committer", c, committerMS}}
			worst := make([]time.Duration, len(watchers))
			for i := 1; i <= 5; i++ {
				w.ok("", fmt.Sprintf("INSERT INTO lake.t VALUES (%d)", i))
				landed := time.Now()
				seen := make([]bool, len(watchers))
				for left := len(watchers); left > 0; time.Sleep(5 * time.Millisecond) {
					for j, x := range watchers {
						if seen[j] {
							continue
						}
						if x.d.value("", "SELECT count(*) FROM lake.t") == strconv.Itoa(i) {
							seen[j], left = true, left-1
							worst[j] = max(worst[j], time.Since(landed))
						} else if time.Since(landed) > time.Duration(x.ms)*time.Millisecond+2*time.Second {
							t.Fatalf("commit %d not seen by the %s %v after it landed (poll %d ms)", i, x.name, time.Since(landed), x.ms)
						}
					}
				}
			}
			for j, x := range watchers {
				t.Logf("%s: the slowest of 5 commits reached the %s after %v (poll %d ms)", l.name, x.name, worst[j], x.ms)
			}
		})
	}
}

// The first attaches of an empty store race to create the lake: exactly
// one DuckLake genesis lands, each loser's ATTACH fails with a conflict
// (not a fenced writer: the adoption itself is raced safely) and succeeds
// when repeated, and a single-writer build is refused by the
// adopted lake with a message naming the commit-log build.
func TestCommitLogFirstAttachesAndThePlainBuild(t *testing.T) {
	l := logLakes(t)[0]
	const procs = 3
	ducks := make([]*duck, procs)
	for i := range ducks {
		ducks[i] = l.start(t)
	}
	errs := make([]string, procs)
	var wg sync.WaitGroup
	for i, d := range ducks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := d.try("", l.attachSQL())
			if err != nil {
				errs[i] = err.Error()
			} else {
				errs[i] = r.Error
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		t.Logf("process %d: first ATTACH: %q", i, e)
		if e != "" {
			if !strings.Contains(e, "conflict") {
				t.Errorf("process %d: ATTACH failed with %q, want a conflict", i, e)
			}
			// DuckDB keeps the name attached (its metadata catalog is
			// gone): DETACH, and ATTACH again finds the lake.
			ducks[i].ok("", "DETACH lake")
			ducks[i].ok("", l.attachSQL())
		}
	}
	for _, d := range ducks {
		d.ok("", "SELECT count(*) FROM lake.snapshots()")
	}
	if n := checkSnapshots(t, l, ducks[0]); n != 1 {
		t.Fatalf("%d snapshots after the first attaches, want the one genesis", n)
	}
	// moraine_info of a commit-log attach of an empty store, before any
	// lake: a committer with no format and no head yet.
	bare := startDuckWith(t, commitLogExtension())
	bare.ok("", "ATTACH "+sqlString("moraine:"+filepath.Join(t.TempDir(), "bare"))+" AS m")
	if r := bare.ok("", "SELECT role, format IS NULL, head_snapshot IS NULL, commits, conflicts FROM moraine_info('m')"); fmt.Sprint(deref(r.Rows[0])) != "[committer true true 0 0]" {
		t.Fatalf("moraine_info of an empty commit-log store: %v", deref(r.Rows[0]))
	}
	plain := startDuck(t)
	plain.ok("", "LOAD "+sqlString(ducklakeExtension()))
	e := plain.query("", l.attachSQL()).Error
	if !strings.Contains(e, "moraine_commitlog") || !strings.Contains(e, "commit log") {
		t.Fatalf("the single-writer build attaching a commit-log lake: %q, want a refusal naming moraine_commitlog", e)
	}
	if e := plain.query("", "LOAD "+sqlString(commitLogExtension())).Error; !strings.Contains(e, "already loaded") {
		t.Fatalf("loading both builds in one process: %q, want a refusal", e)
	}
}

// deref renders a result row's cells.
func deref(row []*string) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = "NULL"
		if c != nil {
			out[i] = *c
		}
	}
	return out
}

// Logical conflicts between processes are refused as DuckLake refuses them
// on its own catalog: two processes deleting the same rows, or creating a
// table of the same name, in transactions open at once: the first COMMIT
// lands, the second fails with DuckLake's conflict (its retry re-reads the
// first and finds the clash), and the lake holds the first's result.
func TestCommitLogLogicalConflictsAcrossProcesses(t *testing.T) {
	l := logLakes(t)[0]
	a, b := l.open(t), l.open(t)
	a.ok("", "CREATE TABLE lake.t (id BIGINT)")
	a.ok("", "INSERT INTO lake.t SELECT i FROM range(10) r(i)")
	for _, d := range []*duck{a, b} {
		d.ok("", "BEGIN")
	}
	// b may not see the table yet (its reads are a poll old): wait until it does.
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.ok("", "ROLLBACK")
		b.ok("", "BEGIN")
		if r := b.query("", "SELECT count(*) FROM lake.t"); r.Error == "" && *r.Rows[0][0] == "10" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("process b never saw process a's table")
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.ok("", "DELETE FROM lake.t WHERE id < 3")
	b.ok("", "DELETE FROM lake.t WHERE id < 3")
	a.ok("", "COMMIT")
	if e := b.query("", "COMMIT").Error; !strings.Contains(strings.ToLower(e), "conflict") {
		t.Fatalf("the second delete of the same rows: %q, want DuckLake's conflict", e)
	}
	if n := b.value("", "SELECT count(*) FROM lake.t"); n != "7" {
		t.Fatalf("after the conflicting deletes: %s rows, want 7", n)
	}
	for _, d := range []*duck{a, b} {
		d.ok("", "BEGIN")
	}
	a.ok("", "CREATE TABLE lake.dup (i INTEGER)")
	b.ok("", "CREATE TABLE lake.dup (j VARCHAR)")
	a.ok("", "COMMIT")
	if e := b.query("", "COMMIT").Error; !strings.Contains(e, "already exists") && !strings.Contains(strings.ToLower(e), "conflict") {
		t.Fatalf("the second create of the same name: %q, want DuckLake's conflict", e)
	}
	check := l.open(t)
	if r := check.ok("", "SELECT column_name FROM duckdb_columns() WHERE database_name = 'lake' AND table_name = 'dup'"); len(r.Rows) != 1 || *r.Rows[0][0] != "i" {
		t.Fatalf("lake.dup's columns: %v, want the first process's i", r.Rows)
	}
	checkSnapshots(t, l, check)
}

// A lake the single-writer build wrote is adopted by the first
// commit-log attach: its rows and snapshots carry over, commits continue
// through the log, and from then on the single-writer build refuses it.
func TestCommitLogAdoptsALakeThePlainBuildWrote(t *testing.T) {
	l := logLakes(t)[0]
	plain := startDuck(t)
	plain.ok("", "LOAD "+sqlString(ducklakeExtension()))
	plain.ok("", l.attachSQL())
	plain.ok("", "CREATE TABLE lake.t (id BIGINT)")
	plain.ok("", "INSERT INTO lake.t VALUES (1), (2)")
	plain.ok("", "DETACH lake")
	plain.close()

	c := l.open(t)
	if role := c.value("", "SELECT role FROM moraine_info('__ducklake_metadata_lake')"); role != "committer" {
		t.Fatalf("the commit-log build's attach of a single-writer lake is a %s", role)
	}
	c.ok("", "INSERT INTO lake.t VALUES (3)")
	if n := c.value("", "SELECT count(*) FROM lake.t"); n != "3" {
		t.Fatalf("after adoption: %s rows, want the 2 written before and 1 after", n)
	}
	checkSnapshots(t, l, c)
	again := startDuck(t)
	again.ok("", "LOAD "+sqlString(ducklakeExtension()))
	if e := again.query("", l.attachSQL()).Error; !strings.Contains(e, "moraine_commitlog") {
		t.Fatalf("the single-writer build on the adopted lake: %q, want a refusal naming moraine_commitlog", e)
	}
}

// Several lakes in one store (METADATA_SCHEMA) on the commit-log build:
// each lake has its own commit log, so commits to different lakes never
// race for a slot. One DuckDB process per lake (the store's own and two
// named ones) commits concurrently with DuckLake's retries turned off,
// where a lost slot race would fail the INSERT: every INSERT succeeds, and
// each lake holds its own rows and one snapshot per commit, its ids
// counted from its own genesis.
func TestCommitLogLakesOfOneStoreNeverConflict(t *testing.T) {
	const commits = 12
	for _, l := range logLakes(t) {
		t.Run(l.name, func(t *testing.T) {
			schemas := []string{"", "s1", "Other 's2'"}
			ducks := make([]*duck, len(schemas))
			for i, s := range schemas {
				d := l.start(t)
				opts := []string{}
				if s != "" {
					opts = append(opts, "METADATA_SCHEMA "+sqlString(s))
				}
				d.ok("", l.attachSQL(opts...))
				d.ok("", "SET ducklake_max_retry_count = 0")
				d.ok("", "CREATE TABLE lake.t (id BIGINT)")
				ducks[i] = d
			}
			errs := make([][]string, len(ducks))
			var wg sync.WaitGroup
			for i, d := range ducks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range commits {
						r, err := d.try("", fmt.Sprintf("INSERT INTO lake.t VALUES (%d)", i*1000+k))
						if err != nil {
							errs[i] = append(errs[i], err.Error())
							return
						}
						if r.Error != "" {
							errs[i] = append(errs[i], r.Error)
						}
					}
				}()
			}
			wg.Wait()
			for i, e := range errs {
				for _, msg := range e {
					t.Errorf("lake %q: %s", schemas[i], msg)
				}
			}
			for i, d := range ducks {
				var want []int64
				for k := range commits {
					want = append(want, int64(i*1000+k))
				}
				if got := ids(t, d, "lake.t"); !slices.Equal(got, want) {
					t.Errorf("lake %q holds ids %v, want %v", schemas[i], got, want)
				}
				// genesis, CREATE TABLE, one per INSERT
				if n := d.value("", "SELECT max(snapshot_id) FROM lake.snapshots()"); n != strconv.Itoa(1+commits) {
					t.Errorf("lake %q: last snapshot %s, want %d", schemas[i], n, 1+commits)
				}
			}
			// Each named lake keeps its own commit log under its prefix.
			for _, s := range schemas[1:] {
				prefix := "lakes/" + hex.EncodeToString([]byte(strings.ToLower(s))) + "/"
				objs, err := objstore.ListAll(bg, l.store, prefix, "")
				if err != nil || len(objs) == 0 {
					t.Errorf("no objects under %s (%v)", prefix, err)
				}
			}
		})
	}
}

// checkDataFiles checks, for a lake whose data is in its store, that every
// data and delete file the catalog lists for table is there, and that
// DuckLake's ducklake_delete_orphaned_files removes exactly the others
// (the files of commits that never landed: killed mid-COMMIT, refused),
// leaving the bucket holding what the catalog lists. It returns how many
// it removed.
func checkDataFiles(t *testing.T, l logLake, d *duck, table string) int {
	t.Helper()
	if l.dataPrefix == "" {
		return 0
	}
	listed := map[string]bool{}
	rows := d.ok("", "SELECT data_file, delete_file FROM ducklake_list_files('lake', "+sqlString(table)+")")
	for _, r := range rows.Rows {
		for _, v := range r {
			if v != nil {
				listed[strings.TrimPrefix(*v, strings.TrimSuffix(l.data, l.dataPrefix))] = true
			}
		}
	}
	inBucket := map[string]bool{}
	for _, k := range objects(t, l.store, l.dataPrefix, "") {
		inBucket[k] = true
	}
	for k := range listed {
		if !inBucket[k] {
			t.Errorf("the catalog lists %s, which is not in the bucket", k)
		}
	}
	var orphans []string
	for k := range inBucket {
		if !listed[k] {
			orphans = append(orphans, k)
		}
	}
	removed := d.value("", "SELECT count(*) FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)")
	if removed != strconv.Itoa(len(orphans)) {
		t.Errorf("ducklake_delete_orphaned_files removed %s files, want the %d the catalog does not list", removed, len(orphans))
	}
	after := objects(t, l.store, l.dataPrefix, "")
	if len(after) != len(listed) {
		t.Errorf("after removing the orphans the bucket holds %d data files, the catalog lists %d", len(after), len(listed))
	}
	for _, k := range after {
		if !listed[k] {
			t.Errorf("%s is still in the bucket, and the catalog does not list it", k)
		}
	}
	return len(orphans)
}

// A process that listed the store's lakes (its first attach) attaches a
// lake another process published since: the new attach reads the store's
// list afresh, so DuckLake finds the lake's tables rather than creating
// them again.
func TestCommitLogALakePublishedByAnotherProcess(t *testing.T) {
	l := logLakes(t)[0]
	a := l.open(t)
	a.ok("", "CREATE TABLE lake.t (id BIGINT)")
	b := l.start(t)
	b.ok("", strings.Replace(l.attachSQL("METADATA_SCHEMA 's1'"), " AS lake ", " AS s1 ", 1))
	b.ok("", "CREATE TABLE s1.t (v VARCHAR)")
	b.ok("", "INSERT INTO s1.t VALUES ('from b')")
	a.ok("", strings.Replace(l.attachSQL("METADATA_SCHEMA 's1'"), " AS lake ", " AS s1 ", 1))
	if got := a.value("", "SELECT string_agg(v, ',') FROM s1.t"); got != "from b" {
		t.Fatalf("the other process's lake reads %q, want its row", got)
	}
	if duckLakeSpec(t) == "1.0" {
		// DuckLake 1.0 attaches its metadata database HIDDEN, which
		// duckdb_schemas() leaves out: the first attach resolves s1.
		if got := a.value("", "SELECT count(*) > 0 FROM __ducklake_metadata_lake.s1.ducklake_snapshot"); got != "true" {
			t.Fatalf("the first attach's metadata database reads s1's snapshots: %s", got)
		}
		return
	}
	if got := a.value("", "SELECT count(*) FROM duckdb_schemas() WHERE database_name = '__ducklake_metadata_lake' AND schema_name = 's1'"); got != "1" {
		t.Fatalf("the first attach lists s1 %s times, want once", got)
	}
}
