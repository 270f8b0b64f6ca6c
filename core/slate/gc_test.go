package slate_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// noMinAge makes GC take everything unreferenced at once. GC spares SSTs
// whose ULID millisecond is not below its cutoff (they may have been minted
// after it started), so it first waits for the clock to leave the current
// millisecond: every table minted so far is then strictly older.
func noMinAge() slate.GCOptions {
	for ms := time.Now().UnixMilli(); time.Now().UnixMilli() == ms; {
		time.Sleep(100 * time.Microsecond)
	}
	return slate.GCOptions{MinAge: -1}
}

// manual turns the background compactor and GC off; compaction runs on
// request with two sources and keeps no input-retention checkpoint.
func manual() []slate.Option {
	return []slate.Option{
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MinSources: 2, RetainInputs: -1}),
		slate.WithGC(slate.GCOptions{Interval: -1}),
	}
}

// objCounts counts a database's objects by kind.
type objCounts struct {
	manifests, walData, walFences, ssts int
	fences                              []string
}

func countObjects(t *testing.T, s objstore.Store) objCounts {
	t.Helper()
	var c objCounts
	list := func(prefix string) []objstore.ObjectInfo {
		infos, err := objstore.ListAll(bg, s, prefix, "")
		if err != nil {
			t.Fatal(err)
		}
		return infos
	}
	for _, o := range list("db/manifest/") {
		if strings.HasSuffix(o.Key, ".manifest") {
			c.manifests++
		}
	}
	for _, o := range list("db/wal/") {
		if o.Size == 0 {
			c.walFences++
			c.fences = append(c.fences, o.Key)
		} else {
			c.walData++
		}
	}
	c.ssts = len(list("db/compacted/"))
	return c
}

func scanMap(t *testing.T, it *slate.Iterator) map[string]string {
	t.Helper()
	defer it.Close()
	out := map[string]string{}
	for it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func sameMap(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s: got %d keys, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
}

// writeRound writes n keys (overwriting earlier rounds, deleting every
// fifth) and records them in model.
func writeRound(t *testing.T, db *slate.DB, model map[string]string, round, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		b := slate.NewWriteBatch()
		k := fmt.Sprintf("key%03d", (i*7+round)%40)
		if (i+round)%5 == 0 {
			b.Delete([]byte(k))
			delete(model, k)
		} else {
			v := fmt.Sprintf("r%d-%d", round, i)
			b.Put([]byte(k), []byte(v))
			model[k] = v
		}
		if _, err := db.Write(bg, b, slate.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGCKeepsWhatReadersAndCheckpointsNeed: with no minimum age, GC after
// compaction deletes what nothing references, and still a managed reader
// opened before it (not refreshed since), a pinned reader, a new pinned
// reader of the same checkpoint, the writer and a reopened writer read
// exactly what they should; zero-byte fences all survive.
func TestGCKeepsWhatReadersAndCheckpointsNeed(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		model := map[string]string{}
		writeRound(t, db, model, 0, 15)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		writeRound(t, db, model, 1, 15)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		writeRound(t, db, model, 2, 5) // only in the WAL
		managed := e.reader(t, s, slate.ReaderOptions{})
		atManaged := maps.Clone(model)
		sameMap(t, "managed reader", scanMap(t, managed.Scan(bg, nil, nil)), atManaged)
		cp, err := db.CreateCheckpoint(bg, slate.CheckpointOptions{Name: "pin"})
		if err != nil {
			t.Fatal(err)
		}
		atCp := maps.Clone(model)
		pinned := e.reader(t, s, slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: cp.ID})

		for round := 3; round < 6; round++ {
			writeRound(t, db, model, round, 15)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		if rep, err := db.CompactAll(bg); err != nil || !rep.Compacted {
			t.Fatalf("CompactAll: %+v %v", rep, err)
		}
		writeRound(t, db, model, 6, 10) // WAL only again
		var before objCounts
		if !e.plugs {
			before = countObjects(t, s)
		}
		rep, err := db.RunGC(bg, noMinAge())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("GC: %d manifests, %d WAL files, %d SSTs (boundary %d)", len(rep.Manifests), len(rep.WalFiles), len(rep.SSTs), rep.ManifestBoundary)
		if len(rep.Manifests) == 0 || len(rep.SSTs) == 0 || len(rep.WalFiles) == 0 {
			t.Fatalf("GC collected too little to test anything: %+v", rep)
		}
		if !e.plugs {
			after := countObjects(t, s)
			for _, f := range before.fences {
				if !slices.Contains(after.fences, f) {
					t.Fatalf("GC deleted the fence %s", f)
				}
			}
		}
		sameMap(t, "managed reader after GC", scanMap(t, managed.Scan(bg, nil, nil)), atManaged)
		for k, v := range atManaged {
			mustGet(t, managed.Get, k, v)
		}
		sameMap(t, "pinned reader after GC", scanMap(t, pinned.Scan(bg, nil, nil)), atCp)
		pinned2 := e.reader(t, s, slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: cp.ID})
		sameMap(t, "pinned reader opened after GC", scanMap(t, pinned2.Scan(bg, nil, nil)), atCp)
		sameMap(t, "writer after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
		if err := managed.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		sameMap(t, "managed reader refreshed", scanMap(t, managed.Scan(bg, nil, nil)), model)
		// A second run right away finds (almost) nothing new to take, and a
		// crash + reopen still recovers everything.
		if _, err := db.RunGC(bg, noMinAge()); err != nil {
			t.Fatal(err)
		}
		db2 := e.open(t, s, manual()...)
		defer db2.Close(bg)
		sameMap(t, "reopened writer after GC", scanMap(t, db2.Scan(bg, nil, nil)), model)
		db.Close(bg)
	})
}

// TestGCReclaimsSpace counts objects: GC takes old manifests and WAL files
// below the replay point; compaction plus GC takes the compacted L0
// tables; fences stay.
func TestGCReclaimsSpace(t *testing.T) {
	for _, e := range []*env{{name: "memory", store: memStore}, {name: "local", store: localStore}} {
		t.Run(e.name, func(t *testing.T) {
			s := e.store(t)
			db := e.open(t, s, manual()...)
			defer db.Close(bg)
			model := map[string]string{}
			for round := 0; round < 5; round++ {
				writeRound(t, db, model, round, 12)
				if err := db.FlushMemtable(bg); err != nil {
					t.Fatal(err)
				}
			}
			c1 := countObjects(t, s)
			if _, err := db.RunGC(bg, noMinAge()); err != nil {
				t.Fatal(err)
			}
			c2 := countObjects(t, s)
			t.Logf("before GC %+v; after %+v", c1, c2)
			if c2.manifests >= c1.manifests || c2.walData >= c1.walData || c2.ssts != c1.ssts || c2.walFences != c1.walFences {
				t.Fatalf("GC: before %+v, after %+v", c1, c2)
			}
			if rep, err := db.CompactAll(bg); err != nil || !rep.Compacted {
				t.Fatalf("CompactAll: %+v %v", rep, err)
			}
			if _, err := db.RunGC(bg, noMinAge()); err != nil {
				t.Fatal(err)
			}
			c3 := countObjects(t, s)
			st := db.Stats()
			t.Logf("after compaction and GC %+v (stats %+v)", c3, st)
			if c3.ssts >= c2.ssts || c3.ssts != st.L0+st.SortedRunSSTs || c3.manifests > 2 || c3.walFences != c1.walFences {
				t.Fatalf("compaction + GC: before %+v, after %+v", c2, c3)
			}
			sameMap(t, "after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
		})
	}
}

// TestCompactionRetainsInputsForInFlightReads: by default a compaction pins
// its input manifest for a while, so GC keeps the inputs until that
// checkpoint is gone.
func TestCompactionRetainsInputsForInFlightReads(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s, slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MinSources: 2}), slate.WithGC(slate.GCOptions{Interval: -1}))
	defer db.Close(bg)
	model := map[string]string{}
	for round := 0; round < 3; round++ {
		writeRound(t, db, model, round, 10)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
	}
	// A scan that starts before the compaction and continues after GC.
	it := db.Scan(bg, nil, nil)
	defer it.Close()
	if !it.Next() {
		t.Fatal("empty scan")
	}
	if _, err := db.CompactAll(bg); err != nil {
		t.Fatal(err)
	}
	before := countObjects(t, s)
	if _, err := db.RunGC(bg, noMinAge()); err != nil {
		t.Fatal(err)
	}
	if after := countObjects(t, s); after.ssts != before.ssts {
		t.Fatalf("GC took compaction inputs still pinned by the compactor's checkpoint: %d -> %d SSTs", before.ssts, after.ssts)
	}
	n := 1
	for it.Next() {
		n++
	}
	if it.Err() != nil || n != len(model) {
		t.Fatalf("in-flight scan across compaction and GC: %d keys, err %v", n, it.Err())
	}
	cps, _ := slate.ListCheckpoints(bg, s, "db")
	if len(cps) != 1 || cps[0].Name != "compactor" || cps[0].Expires.IsZero() {
		t.Fatalf("checkpoints after compaction: %+v", cps)
	}
	if err := slate.DeleteCheckpoint(bg, s, "db", cps[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RunGC(bg, noMinAge()); err != nil {
		t.Fatal(err)
	}
	if after := countObjects(t, s); after.ssts >= before.ssts {
		t.Fatalf("inputs not collected once unpinned: %d -> %d SSTs", before.ssts, after.ssts)
	}
	sameMap(t, "after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
}

func TestGCDryRunDeletesNothing(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s, manual()...)
	defer db.Close(bg)
	model := map[string]string{}
	for round := 0; round < 3; round++ {
		writeRound(t, db, model, round, 10)
		db.FlushMemtable(bg)
	}
	db.CompactAll(bg)
	if _, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Lifetime: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	before, _ := objstore.ListAll(bg, s, "", "")
	rep, err := slate.RunGC(bg, s, "db", slate.GCOptions{MinAge: -1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.DryRun || len(rep.ExpiredCheckpoints) != 1 || len(rep.Manifests) == 0 || len(rep.WalFiles) == 0 || len(rep.SSTs) == 0 {
		t.Fatalf("dry run report: %+v", rep)
	}
	after, _ := objstore.ListAll(bg, s, "", "")
	if fmt.Sprint(keysAndTags(before)) != fmt.Sprint(keysAndTags(after)) {
		t.Fatal("a dry run changed the store")
	}
	// The real run deletes exactly what the dry run listed.
	real, err := slate.RunGC(bg, s, "db", noMinAge())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(real.Manifests, real.WalFiles, real.SSTs, real.ExpiredCheckpoints) != fmt.Sprint(rep.Manifests, rep.WalFiles, rep.SSTs, rep.ExpiredCheckpoints) {
		t.Fatalf("real run %+v differs from dry run %+v", real, rep)
	}
	sameMap(t, "after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
}

// TestGCBoundaryFencesStaleManifestWrites: a reader whose view of the
// manifest is older than what GC deleted writes (closing, it deletes its
// checkpoint) at an id GC passed. The write must count as a conflict and
// land on top of the real latest version instead.
func TestGCBoundaryFencesStaleManifestWrites(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s, manual()...)
	defer db.Close(bg)
	db.Put(bg, []byte("a"), []byte("1"))
	r, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	cp := r.Checkpoint()
	for i := 0; i < 4; i++ { // newer manifests the reader does not know
		db.Put(bg, []byte("b"), []byte(fmt.Sprint(i)))
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := db.RunGC(bg, noMinAge())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Manifests) == 0 {
		t.Fatalf("GC deleted no manifest: %+v", rep)
	}
	latestBefore, _, _ := slate.DescribeLatest(bg, s, "db")
	if err := r.Close(bg); err != nil {
		t.Fatal(err)
	}
	latestAfter, desc, err := slate.DescribeLatest(bg, s, "db")
	if err != nil {
		t.Fatal(err)
	}
	if latestAfter != latestBefore+1 {
		t.Fatalf("the stale reader's checkpoint delete landed at %d, want %d (%s)", latestAfter, latestBefore+1, desc)
	}
	cps, _ := slate.ListCheckpoints(bg, s, "db")
	if hasCheckpoint(cps, cp) {
		t.Fatal("the reader's checkpoint survived its Close")
	}
	// The writer, whose view is older too, keeps working.
	if err := db.Put(bg, []byte("c"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	if err := db.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	db2 := open(t, s, manual()...) // fences db
	defer db2.Close(bg)
	mustGet(t, db2.Get, "c", "3")
	mustGet(t, db2.Get, "b", "3")
	mustGet(t, db2.Get, "a", "1")
}

// TestStandaloneGCDuringLiveWrites runs the operator's GC, with no minimum
// age, in a loop against a live writer that writes, flushes and compacts
// (in the background, reading every table from the store), while a managed
// reader polls: nobody ever misses an object.
func TestStandaloneGCDuringLiveWrites(t *testing.T) {
	s := objstore.NewMemory(0)
	settings := slate.Settings{FlushInterval: time.Millisecond, ManifestPollInterval: 5 * time.Millisecond,
		L0SSTSizeBytes: 1500, WholeObjectBytes: 1, L0MaxSSTs: 4}
	db, err := slate.Open(bg, s, "db", slate.WithSettings(settings),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: 5 * time.Millisecond, MinSources: 2}),
		slate.WithGC(slate.GCOptions{Interval: 20 * time.Millisecond, MinAge: -1}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: 10 * time.Millisecond}, slate.WithSettings(settings))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gcErr error
	var gcRuns int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := slate.RunGC(bg, s, "db", noMinAge()); err != nil {
				gcErr = err
				return
			}
			gcRuns++
		}
	}()
	model := map[string]string{}
	// Enough writes to flush several memtables, then on until the compactor
	// has run at least once (bounded generously: a loaded CI machine is slow,
	// so the test counts work, not time).
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < 400 || (db.Stats().SortedRuns == 0 && time.Now().Before(deadline)); i++ {
		k := fmt.Sprintf("k%03d", i%120)
		v := fmt.Sprintf("v%d", i)
		if err := db.Put(bg, []byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		model[k] = v
		if i%25 == 0 {
			mustGet(t, db.Get, fmt.Sprintf("k%03d", (i*13)%120), model[fmt.Sprintf("k%03d", (i*13)%120)])
			if _, err := scanAllErr(db.Scan(bg, nil, nil)); err != nil {
				t.Fatalf("writer scan during GC: %v", err)
			}
			if _, err := scanAllErr(r.Scan(bg, nil, nil)); err != nil {
				t.Fatalf("reader scan during GC: %v", err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if gcErr != nil {
		t.Fatalf("standalone GC: %v", gcErr)
	}
	st := db.Stats()
	t.Logf("%d GC runs; %+v", gcRuns, st)
	if st.SortedRuns == 0 {
		t.Fatal("no compaction happened")
	}
	sameMap(t, "writer", scanMap(t, db.Scan(bg, nil, nil)), model)
	if err := r.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	sameMap(t, "reader", scanMap(t, r.Scan(bg, nil, nil)), model)
	if err := db.Close(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := slate.RunGC(bg, s, "db", noMinAge()); err != nil {
		t.Fatal(err)
	}
	db2 := open(t, s, manual()...)
	defer db2.Close(bg)
	sameMap(t, "reopened", scanMap(t, db2.Scan(bg, nil, nil)), model)
}

func scanAllErr(it *slate.Iterator) (int, error) {
	defer it.Close()
	n := 0
	for it.Next() {
		n++
	}
	return n, it.Err()
}

// TestCheckpointExpiryAndManagedRefresh: GC removes expired checkpoints; a
// managed reader keeps its own alive (from its poll loop, or from the
// keep-alive loop when it does not poll), so GC never takes it.
//
// No assertion depends on how fast the machine is: GC runs with its clock
// (GCOptions.Now) set to the moment every checkpoint taken so far would
// have expired, after the test has waited (deadline loop) for both readers
// to extend theirs past that moment on their own. If managed refresh were
// broken the wait would fail, and GC at that moment would take the
// readers' checkpoints with the unrefreshed control checkpoint. Nothing
// runs GC on the real clock while the readers are open, so a stalled
// machine cannot let a reader's checkpoint expire under it.
func TestCheckpointExpiryAndManagedRefresh(t *testing.T) {
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		defer db.Close(bg)
		if err := db.Put(bg, []byte("k"), []byte("v")); err != nil {
			t.Fatal(err)
		}
		const life = 400 * time.Millisecond
		short, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Lifetime: 20 * time.Millisecond, Name: "short"})
		if err != nil {
			t.Fatal(err)
		}
		control, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Lifetime: life, Name: "control"})
		if err != nil {
			t.Fatal(err)
		}
		polling, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: 20 * time.Millisecond, CheckpointLifetime: life})
		if err != nil {
			t.Fatal(err)
		}
		defer polling.Close(bg)
		idle, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: -1, CheckpointLifetime: life})
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close(bg)
		readers := map[string]*slate.Reader{"polling": polling, "idle": idle}
		// expiry of a reader's current checkpoint (zero while the reader is
		// between listing and replacing it).
		expiry := func(r *slate.Reader) time.Time {
			cps, err := slate.ListCheckpoints(bg, s, "db")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cps {
				if c.ID == r.Checkpoint() {
					return c.Expires
				}
			}
			return time.Time{}
		}
		// latestExpiry: when the readers' current checkpoints expire, the
		// later of the two.
		latestExpiry := func() time.Time {
			var last time.Time
			waitUntil(t, func() string { return "a reader's checkpoint stays unlisted" }, func() bool {
				last = time.Time{}
				for _, r := range readers {
					x := expiry(r)
					if x.IsZero() {
						return false
					}
					if x.After(last) {
						last = x
					}
				}
				return true
			})
			return last
		}
		// gcAt: every checkpoint taken so far has expired by then (the
		// readers' came after the control's).
		gcAt := latestExpiry()
		if !gcAt.After(control.Expires) {
			t.Fatalf("the readers' checkpoints expire at %v, the control's at %v", gcAt, control.Expires)
		}
		wantExpired := []uuid.UUID{short.ID, control.ID}
		for round := 0; round < 2; round++ {
			var state string
			waitUntil(t, func() string {
				return fmt.Sprintf("round %d: managed checkpoints not extended past %v: %s", round, gcAt, state)
			}, func() bool {
				state = ""
				ok := true
				for name, r := range readers {
					x := expiry(r)
					state += fmt.Sprintf("%s expires %v; ", name, x)
					ok = ok && x.After(gcAt)
				}
				return ok
			})
			rep, err := db.RunGC(bg, slate.GCOptions{MinAge: -1, Now: func() time.Time { return gcAt }})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(rep.ExpiredCheckpoints)
			slices.SortFunc(got, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			slices.SortFunc(wantExpired, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			if !slices.Equal(got, wantExpired) {
				t.Fatalf("round %d: GC at %v removed checkpoints %v, want %v (short %s, control %s)", round, gcAt, got, wantExpired, short.ID, control.ID)
			}
			for _, r := range readers {
				mustGet(t, r.Get, "k", "v")
			}
			gcAt = latestExpiry() // the next round waits for extensions past this
			wantExpired = nil
		}
		_, err = slate.OpenReader(bg, s, "db", slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: short.ID})
		if !errors.Is(err, slate.ErrCheckpointMissing) || !strings.Contains(err.Error(), "never falls back") {
			t.Fatalf("pinned reader on an expired checkpoint: %v", err)
		}
		// Closing deletes the managed checkpoints.
		idle.Close(bg)
		polling.Close(bg)
		if cps, _ := slate.ListCheckpoints(bg, s, "db"); len(cps) != 0 {
			t.Fatalf("checkpoints left after closing the readers: %+v", cps)
		}
		if _, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: time.Second, CheckpointLifetime: time.Second}); !errors.Is(err, slate.ErrInvalid) {
			t.Fatalf("lifetime below twice the poll interval: %v, want ErrInvalid", err)
		}
	})
}
