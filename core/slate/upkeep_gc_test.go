package slate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/core/slate/slatetest"
	"github.com/oklog/ulid/v2"
)

// TestGCMinAgeKeepsYoungObjects: with a positive MinAge, GC takes only the
// garbage written (manifests, WAL files: LastModified) or minted (SSTs: ULID
// time) at least MinAge before its clock. Garbage is made in two phases
// around a moment tA. On the real clock none of it is old enough; with
// GC's clock (GCOptions.Now) at tA + MinAge exactly the first phase's is
// (see step 2 for the WAL's slack); with the clock far ahead all of it is.
// Nothing sleeps for MinAge.
func TestGCMinAgeKeepsYoungObjects(t *testing.T) {
	const minAge = time.Hour
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		defer db.Close(bg)
		model := map[string]string{}
		// Each phase writes and flushes three L0 tables and compacts them
		// with what is there: old manifests, WAL files below the replay
		// point and compacted-away tables become garbage.
		phase := func(first int) {
			for round := first; round < first+3; round++ {
				writeRound(t, db, model, round, 10)
				if err := db.FlushMemtable(bg); err != nil {
					t.Fatal(err)
				}
			}
			if rep, err := db.CompactAll(bg); err != nil || !rep.Compacted {
				t.Fatalf("CompactAll: %+v %v", rep, err)
			}
		}
		phase(0)
		noMinAge() // tA is in a later millisecond than every table minted so far
		tA := time.Now()
		idA := slices.Max(manifestIDs(t, s))
		walA := slices.Max(walIDs(t, s))
		sstsA := sstIDs(t, s)
		waitStoreClockPast(t, s, tA) // everything written from here on is stamped after tA
		phase(3)
		writeRound(t, db, model, 6, 5) // WAL only, above the replay point
		fences := countObjects(t, s).fences

		// What is garbage at all (a dry run with no minimum age).
		all, err := db.RunGC(bg, dryRunNoMinAge())
		if err != nil {
			t.Fatal(err)
		}
		oldMan := slices.DeleteFunc(slices.Clone(all.Manifests), func(id uint64) bool { return id > idA })
		oldWal := slices.DeleteFunc(slices.Clone(all.WalFiles), func(id uint64) bool { return id > walA })
		oldSST := slices.DeleteFunc(slices.Clone(all.SSTs), func(id ulid.ULID) bool { return !slices.Contains(sstsA, id) })
		youngMan, youngWal, youngSST := without(all.Manifests, oldMan), without(all.WalFiles, oldWal), without(all.SSTs, oldSST)
		t.Logf("garbage: manifests old %v young %v; WAL old %v young %v; SSTs old %d young %d",
			oldMan, youngMan, oldWal, youngWal, len(oldSST), len(youngSST))
		if len(oldMan) == 0 || len(oldWal) == 0 || len(oldSST) == 0 || len(youngMan) == 0 || len(youngWal) == 0 || len(youngSST) == 0 {
			t.Fatalf("the workload must leave old and young garbage of every kind: %+v", all)
		}

		// 1. The real clock: all of it is younger than MinAge; nothing goes.
		rep, err := db.RunGC(bg, slate.GCOptions{MinAge: minAge})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Deleted() != 0 {
			t.Fatalf("GC with MinAge %v took young objects: %+v", minAge, rep)
		}

		// 2. The clock at tA + MinAge: exactly the manifests and SSTs from
		// before tA go, and every WAL file from before tA. The WAL
		// collector takes an age (WalGC) and judges it by its own reading
		// of the clock, taken after ours, so WAL files written just after
		// tA may go too (the oldest young ones, by id); the rest stays.
		rep, err = db.RunGC(bg, slate.GCOptions{MinAge: minAge, Now: func() time.Time { return tA.Add(minAge) }})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rep.Manifests, rep.SSTs) != fmt.Sprint(oldMan, oldSST) {
			t.Fatalf("GC at tA+MinAge took\nmanifests %v, SSTs %v\nwant      %v, SSTs %v", rep.Manifests, rep.SSTs, oldMan, oldSST)
		}
		if len(rep.WalFiles) < len(oldWal) || !slices.Equal(rep.WalFiles[:len(oldWal)], oldWal) ||
			!slices.Equal(rep.WalFiles[len(oldWal):], youngWal[:len(rep.WalFiles)-len(oldWal)]) {
			t.Fatalf("GC at tA+MinAge took WAL files %v, want %v and at most a few of %v", rep.WalFiles, oldWal, youngWal)
		}
		youngWal = youngWal[len(rep.WalFiles)-len(oldWal):]
		if len(youngWal) == 0 {
			t.Fatalf("GC at tA+MinAge took every young WAL file: %v", rep.WalFiles)
		}
		if !rep.SSTCutoff.Equal(tA) {
			t.Fatalf("SST cutoff %v, want tA %v", rep.SSTCutoff, tA)
		}
		checkGone := func(what string, man, wal []uint64, ssts []ulid.ULID) {
			t.Helper()
			if left := without(man, without(man, manifestIDs(t, s))); len(left) > 0 {
				t.Fatalf("%s: manifests %v still there", what, left)
			}
			if left := without(wal, without(wal, walIDs(t, s))); len(left) > 0 {
				t.Fatalf("%s: WAL files %v still there", what, left)
			}
			if left := without(ssts, without(ssts, sstIDs(t, s))); len(left) > 0 {
				t.Fatalf("%s: SSTs %v still there", what, left)
			}
		}
		checkThere := func(what string, man, wal []uint64, ssts []ulid.ULID) {
			t.Helper()
			if gone := without(man, manifestIDs(t, s)); len(gone) > 0 {
				t.Fatalf("%s: manifests %v gone", what, gone)
			}
			if gone := without(wal, walIDs(t, s)); len(gone) > 0 {
				t.Fatalf("%s: WAL files %v gone", what, gone)
			}
			if gone := without(ssts, sstIDs(t, s)); len(gone) > 0 {
				t.Fatalf("%s: SSTs %v gone", what, gone)
			}
		}
		checkGone("old garbage after GC at tA+MinAge", oldMan, oldWal, oldSST)
		checkThere("young garbage after GC at tA+MinAge", youngMan, youngWal, youngSST)

		// 3. A clock far ahead of the real one: the rest goes, and the
		// cutoff stops at the run's real start (see GCOptions.Now).
		noMinAge()
		called := time.Now()
		rep, err = db.RunGC(bg, slate.GCOptions{MinAge: minAge, Now: func() time.Time { return time.Now().Add(2 * minAge) }})
		if err != nil {
			t.Fatal(err)
		}
		if rep.SSTCutoff.Before(called) || rep.SSTCutoff.After(time.Now()) {
			t.Fatalf("SST cutoff %v, want the run's start (called at %v)", rep.SSTCutoff, called)
		}
		if fmt.Sprint(rep.Manifests, rep.WalFiles, rep.SSTs) != fmt.Sprint(youngMan, youngWal, youngSST) {
			t.Fatalf("GC with the clock MinAge ahead took\nmanifests %v, WAL %v, SSTs %v\nwant      %v, WAL %v, SSTs %v",
				rep.Manifests, rep.WalFiles, rep.SSTs, youngMan, youngWal, youngSST)
		}
		checkGone("young garbage after GC with the clock ahead", youngMan, youngWal, youngSST)
		if after := countObjects(t, s).fences; !slices.Equal(after, fences) {
			t.Fatalf("fences: %v, then %v", fences, after)
		}
		sameMap(t, "writer after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
		db2 := e.open(t, s, manual()...) // crash, reopen
		defer db2.Close(bg)
		sameMap(t, "reopened after GC", scanMap(t, db2.Scan(bg, nil, nil)), model)
	})
}

// TestBackgroundGCCollects: the writer's own GC loop, on a short interval,
// deletes the garbage a previous writer left (every manifest, WAL file and
// SST a dry run lists) without anybody calling RunGC, and keeps the fences
// and every value.
func TestBackgroundGCCollects(t *testing.T) {
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		model := map[string]string{}
		for round := 0; round < 4; round++ {
			writeRound(t, db, model, round, 10)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		if rep, err := db.CompactAll(bg); err != nil || !rep.Compacted {
			t.Fatalf("CompactAll: %+v %v", rep, err)
		}
		writeRound(t, db, model, 4, 10) // WAL only
		if err := db.Close(bg); err != nil {
			t.Fatal(err)
		}
		garbage, err := slate.RunGC(bg, s, "db", dryRunNoMinAge())
		if err != nil {
			t.Fatal(err)
		}
		if len(garbage.Manifests) == 0 || len(garbage.WalFiles) == 0 || len(garbage.SSTs) == 0 {
			t.Fatalf("nothing for the loop to collect: %+v", garbage)
		}
		fences := countObjects(t, s).fences

		db2 := e.open(t, s, slate.WithCompactor(slate.CompactorOptions{PollInterval: -1}),
			slate.WithGC(slate.GCOptions{Interval: 10 * time.Millisecond, MinAge: -1}))
		defer db2.Close(bg)
		var left string
		waitUntil(t, func() string { return "the background GC left " + left }, func() bool {
			man := without(garbage.Manifests, without(garbage.Manifests, manifestIDs(t, s)))
			wal := without(garbage.WalFiles, without(garbage.WalFiles, walIDs(t, s)))
			ssts := without(garbage.SSTs, without(garbage.SSTs, sstIDs(t, s)))
			left = fmt.Sprintf("manifests %v, WAL files %v, SSTs %v", man, wal, ssts)
			return len(man)+len(wal)+len(ssts) == 0
		})
		if after := countObjects(t, s).fences; len(without(fences, after)) > 0 {
			t.Fatalf("the background GC deleted fences: %v, then %v", fences, after)
		}
		sameMap(t, "writer after background GC", scanMap(t, db2.Scan(bg, nil, nil)), model)
	})
}

// dryRunNoMinAge lists everything GC could take now (see noMinAge).
func dryRunNoMinAge() slate.GCOptions {
	o := noMinAge()
	o.DryRun = true
	return o
}

// walOnly plugs a MemWAL in as the writer's WAL but hides its collector:
// a plugged WAL that brings no WalGC.
type walOnly struct{ w *slatetest.MemWAL }

func (p walOnly) FenceAndInit(ctx context.Context, m slate.WriterManifest) (slate.WalIterator, slate.WalWriter, error) {
	return p.w.FenceAndInit(ctx, m)
}

// recordingWalGC records every Collect call and passes it on.
type recordingWalGC struct {
	inner slate.WalGC
	mu    sync.Mutex
	calls []walGCCall
}

type walGCCall struct {
	ranges []slate.WalRange
	minAge time.Duration
	dryRun bool
}

func (g *recordingWalGC) Collect(ctx context.Context, referenced []slate.WalRange, minAge time.Duration, dryRun bool) ([]uint64, error) {
	g.mu.Lock()
	g.calls = append(g.calls, walGCCall{ranges: slices.Clone(referenced), minAge: minAge, dryRun: dryRun})
	g.mu.Unlock()
	return g.inner.Collect(ctx, referenced, minAge, dryRun)
}

func (g *recordingWalGC) last(t *testing.T) walGCCall {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.calls) == 0 {
		t.Fatal("the WalGC was never called")
	}
	c := g.calls[len(g.calls)-1]
	slices.SortFunc(c.ranges, func(a, b slate.WalRange) int { return int(a.Start) - int(b.Start) })
	return c
}

// putHook runs hook once, before the first Put of a key with the prefix.
type putHook struct {
	objstore.Store
	mu     sync.Mutex
	prefix string
	hook   func()
}

func (s *putHook) arm(prefix string, hook func()) {
	s.mu.Lock()
	s.prefix, s.hook = prefix, hook
	s.mu.Unlock()
}

func (s *putHook) Put(ctx context.Context, key string, data []byte) (string, error) {
	s.mu.Lock()
	hook := s.hook
	if hook != nil && strings.HasPrefix(key, s.prefix) {
		s.hook = nil
	} else {
		hook = nil
	}
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.Put(ctx, key, data)
}

// TestGCHandsWalGCTheReferencedRanges: with a plugged WAL and WithWalGC, GC
// calls that collector with the latest manifest's range [replay point+1, ∞)
// and each checkpointed manifest's (replay point, next WAL id), passing
// MinAge and DryRun on. A managed reader's checkpoint pins a manifest whose
// WAL range holds a batch written while its L0 table was uploading; after
// the writer's replay point has moved past it, GC deletes WAL ids outside
// both ranges only, and a pinned reader opened after GC on that checkpoint
// still replays the batch.
func TestGCHandsWalGCTheReferencedRanges(t *testing.T) {
	mw := slatetest.NewMemWAL()
	rec := &recordingWalGC{inner: mw}
	s := &putHook{Store: objstore.NewMemory(0)}
	db := open(t, s, append(manual(), slate.WithWalWriter(walOnly{mw}), slate.WithWalGC(rec))...)
	defer db.Close(bg)
	model := map[string]string{}
	for round := 0; round < 2; round++ {
		writeRound(t, db, model, round, 6)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
	}
	// A batch lands in the WAL while the next L0 table uploads: the
	// published manifest's range (replay point, next WAL id) holds it.
	writeRound(t, db, model, 2, 6)
	s.arm("db/compacted/", func() {
		if err := db.Put(bg, []byte("in-flight"), []byte("during the upload")); err != nil {
			t.Error(err)
		}
		model["in-flight"] = "during the upload"
	})
	if err := db.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	r, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: -1}, slate.WithWalReader(mw))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	atReader := scanMap(t, r.Scan(bg, nil, nil))
	var cp slate.CheckpointInfo
	cps, _ := slate.ListCheckpoints(bg, s, "db")
	for _, c := range cps {
		if c.ID == r.Checkpoint() {
			cp = c
		}
	}
	cpReplay, cpNext, err := slate.ManifestWalRange(bg, s, "db", cp.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	if cpNext <= cpReplay+1 {
		t.Fatalf("the reader's checkpoint pins an empty WAL range (%d, %d)", cpReplay, cpNext)
	}
	pinnedOpts := slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: cp.ID}
	p1, err := slate.OpenReader(bg, s, "db", pinnedOpts, slate.WithWalReader(mw))
	if err != nil {
		t.Fatal(err)
	}
	atCp := scanMap(t, p1.Scan(bg, nil, nil))
	p1.Close(bg)
	if atCp["in-flight"] != "during the upload" {
		t.Fatalf("the checkpoint's state lacks the batch in its WAL range: %v", atCp)
	}
	// The writer moves on: its replay point passes the checkpoint's range.
	for round := 3; round < 5; round++ {
		writeRound(t, db, model, round, 6)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
	}
	writeRound(t, db, model, 5, 4) // WAL only
	latest, err := slate.DescribeManifest(bg, s, "db")
	if err != nil {
		t.Fatal(err)
	}
	if latest.ReplayAfterWalID < cpNext {
		t.Fatalf("the replay point %d did not pass the checkpoint's range (%d, %d)", latest.ReplayAfterWalID, cpReplay, cpNext)
	}
	want := []slate.WalRange{{Start: cpReplay + 1, End: cpNext}, {Start: latest.ReplayAfterWalID + 1}}
	before := mw.IDs()

	// A positive MinAge is passed on, as the age of GC's cutoff when it
	// calls the collector: MinAge plus at most the time the run took (the
	// files are young: nothing goes).
	called := time.Now()
	rep, err := db.RunGC(bg, slate.GCOptions{MinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(called)
	if c := rec.last(t); c.minAge < time.Hour || c.minAge > time.Hour+took || c.dryRun || len(rep.WalFiles) != 0 || rep.WalSkipped {
		t.Fatalf("GC with MinAge 1h (took %v): WalGC got minAge %v dryRun %v; report %+v", took, c.minAge, c.dryRun, rep)
	}
	// A dry run reports what the real run then deletes.
	opts := dryRunNoMinAge()
	called = time.Now()
	dry, err := db.RunGC(bg, opts)
	if err != nil {
		t.Fatal(err)
	}
	took = time.Since(called)
	if c := rec.last(t); !c.dryRun || c.minAge > took || fmt.Sprint(c.ranges) != fmt.Sprint(want) || !slices.Equal(mw.IDs(), before) {
		t.Fatalf("dry run: WalGC got %+v (want ranges %v); WAL ids %v, before %v", c, want, mw.IDs(), before)
	}
	rep, err = db.RunGC(bg, noMinAge())
	if err != nil {
		t.Fatal(err)
	}
	c := rec.last(t)
	t.Logf("WAL ids before %v; ranges %v; deleted %v", before, c.ranges, rep.WalFiles)
	if c.dryRun || fmt.Sprint(c.ranges) != fmt.Sprint(want) {
		t.Fatalf("WalGC got ranges %v (dry run %v), want %v", c.ranges, c.dryRun, want)
	}
	deleted := without(before, mw.IDs())
	if rep.WalSkipped || len(rep.WalFiles) == 0 || !slices.Equal(rep.WalFiles, deleted) || !slices.Equal(rep.WalFiles, dry.WalFiles) {
		t.Fatalf("report %+v; deleted %v; dry run %v", rep, deleted, dry.WalFiles)
	}
	for _, id := range deleted {
		if slices.ContainsFunc(want, func(r slate.WalRange) bool { return r.Contains(id) }) {
			t.Fatalf("WAL id %d deleted inside a referenced range %v", id, want)
		}
	}
	for _, id := range before {
		if slices.ContainsFunc(want, func(r slate.WalRange) bool { return r.Contains(id) }) && !slices.Contains(mw.IDs(), id) {
			t.Fatalf("WAL id %d of a referenced range %v is gone", id, want)
		}
	}
	p2, err := slate.OpenReader(bg, s, "db", pinnedOpts, slate.WithWalReader(mw))
	if err != nil {
		t.Fatalf("pinned reader opened after GC: %v", err)
	}
	defer p2.Close(bg)
	sameMap(t, "pinned reader opened after GC", scanMap(t, p2.Scan(bg, nil, nil)), atCp)
	sameMap(t, "managed reader after GC", scanMap(t, r.Scan(bg, nil, nil)), atReader)
	sameMap(t, "writer after GC", scanMap(t, db.Scan(bg, nil, nil)), model)
}

// TestGCSkipsPluggedWalWithoutCollector: a plugged WAL that is no WalGC,
// and no WithWalGC: GC reports WalSkipped and leaves every WAL file, while
// it still collects manifests. The operator's RunGC given the collector
// WithWalGC then takes them.
func TestGCSkipsPluggedWalWithoutCollector(t *testing.T) {
	mw := slatetest.NewMemWAL()
	s := objstore.NewMemory(0)
	db := open(t, s, append(manual(), slate.WithWalWriter(walOnly{mw}))...)
	defer db.Close(bg)
	model := map[string]string{}
	for round := 0; round < 3; round++ {
		writeRound(t, db, model, round, 6)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
	}
	before := mw.IDs()
	for _, dry := range []bool{true, false} {
		noMinAge()
		rep, err := db.RunGC(bg, slate.GCOptions{MinAge: -1, DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.WalSkipped || len(rep.WalFiles) != 0 || len(rep.Manifests) == 0 {
			t.Fatalf("GC (dry run %v) with a plugged WAL and no WalGC: %+v", dry, rep)
		}
	}
	if !slices.Equal(mw.IDs(), before) {
		t.Fatalf("WAL ids %v, before %v", mw.IDs(), before)
	}
	rep, err := slate.RunGC(bg, s, "db", noMinAge(), slate.WithWalGC(mw))
	if err != nil {
		t.Fatal(err)
	}
	latest, _ := slate.DescribeManifest(bg, s, "db")
	if rep.WalSkipped || len(rep.WalFiles) == 0 || !slices.Equal(rep.WalFiles, without(before, mw.IDs())) {
		t.Fatalf("standalone GC WithWalGC: %+v; WAL ids %v, before %v", rep, mw.IDs(), before)
	}
	for _, id := range rep.WalFiles {
		if id > latest.ReplayAfterWalID {
			t.Fatalf("WAL id %d above the replay point %d deleted", id, latest.ReplayAfterWalID)
		}
	}
	db2 := open(t, s, append(manual(), slate.WithWalWriter(walOnly{mw}))...) // crash, reopen
	defer db2.Close(bg)
	sameMap(t, "reopened after GC", scanMap(t, db2.Scan(bg, nil, nil)), model)
}
