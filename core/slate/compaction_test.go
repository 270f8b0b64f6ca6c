package slate_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/core/slate/slatetest"
)

// TestCompactionMatchesModel applies random batches (puts, overwrites,
// deletes) with small memtables and SSTs, compacting now and then (into
// multi-SST runs), and compares every read with an in-memory model.
// Snapshots and transactions held across compactions must keep returning
// their old values; once they are released a full compaction keeps exactly
// one row per live key.
func TestCompactionMatchesModel(t *testing.T) {
	for _, e := range []*env{{name: "memory/native", store: memStore}, {name: "memory/memwal", store: memStore, plugs: true}, {name: "local/native", store: localStore}} {
		t.Run(e.name, func(t *testing.T) {
			if e.plugs {
				e.memWAL = slatetest.NewMemWAL()
			}
			rng := rand.New(rand.NewPCG(7, 9))
			s := e.store(t)
			opts := []slate.Option{
				slate.WithSettings(slate.Settings{FlushInterval: time.Millisecond, L0SSTSizeBytes: 1200, ManifestPollInterval: -1, BlockSize: 256}),
				slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MinSources: 2, MaxSources: 4, MaxSSTSize: 1500, RetainInputs: -1}),
				slate.WithGC(slate.GCOptions{Interval: -1}),
			}
			db := e.open(t, s, opts...)
			model := map[string]string{}
			type held struct {
				snap  *slate.Snapshot
				txn   *slate.Txn
				model map[string]string
			}
			var views []held
			key := func() string { return fmt.Sprintf("key-%03d", rng.IntN(120)) }
			checkView := func(what string, h held) {
				t.Helper()
				if h.snap != nil {
					sameMap(t, what+" snapshot scan", scanMap(t, h.snap.Scan(bg, nil, nil)), h.model)
					for i := 0; i < 10; i++ {
						k := key()
						mustGet(t, h.snap.Get, k, h.model[k])
					}
				} else {
					sameMap(t, what+" txn scan", scanMap(t, h.txn.Scan(bg, nil, nil)), h.model)
					k := key()
					mustGet(t, h.txn.Get, k, h.model[k])
				}
			}
			compactions := 0
			for round := 0; round < 25; round++ {
				for i := 0; i < 15; i++ {
					b := slate.NewWriteBatch()
					for j := 0; j < 1+rng.IntN(5); j++ {
						k := key()
						if rng.IntN(4) == 0 {
							b.Delete([]byte(k))
							delete(model, k)
						} else {
							v := fmt.Sprintf("v%d.%d.%d", round, i, j)
							b.Put([]byte(k), []byte(v))
							model[k] = v
						}
					}
					if _, err := db.Write(bg, b, slate.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				switch rng.IntN(4) {
				case 0:
					views = append(views, held{snap: db.Snapshot(), model: maps.Clone(model)})
				case 1:
					txn, err := db.Begin()
					if err != nil {
						t.Fatal(err)
					}
					views = append(views, held{txn: txn, model: maps.Clone(model)})
				}
				if len(views) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(views))
					checkView(fmt.Sprintf("round %d released", round), views[i])
					if views[i].snap != nil {
						views[i].snap.Release()
					} else {
						views[i].txn.Rollback()
					}
					views = append(views[:i], views[i+1:]...)
				}
				if rng.IntN(2) == 0 {
					if err := db.FlushMemtable(bg); err != nil {
						t.Fatal(err)
					}
				}
				var rep slate.CompactionReport
				var err error
				if round%7 == 6 {
					rep, err = db.CompactAll(bg)
				} else {
					rep, err = db.Compact(bg)
				}
				if err != nil {
					t.Fatalf("round %d: compaction: %v", round, err)
				}
				if rep.Compacted {
					compactions++
				}
				sameMap(t, fmt.Sprintf("round %d scan", round), scanMap(t, db.Scan(bg, nil, nil)), model)
				for i := 0; i < 20; i++ {
					k := key()
					mustGet(t, db.Get, k, model[k])
				}
				for _, h := range views {
					checkView(fmt.Sprintf("round %d held", round), h)
				}
				if round%8 == 7 {
					if _, err := db.RunGC(bg, noMinAge()); err != nil {
						t.Fatal(err)
					}
				}
			}
			st := db.Stats()
			t.Logf("%d compactions; %+v", compactions, st)
			if compactions < 5 || st.SortedRunSSTs < 2 {
				t.Fatalf("the test did not exercise compaction into multi-SST runs: %d compactions, %+v", compactions, st)
			}
			for _, h := range views {
				checkView("final", h)
				if h.snap != nil {
					h.snap.Release()
				} else {
					h.txn.Rollback()
				}
			}
			// With nothing held, a full compaction keeps one row per live key:
			// older versions and, at the bottom, tombstones are gone.
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
			rep, err := db.CompactAll(bg)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Bottom || rep.OutputRows != int64(len(model)) {
				t.Fatalf("full compaction kept %d rows for %d live keys: %+v", rep.OutputRows, len(model), rep)
			}
			sameMap(t, "after full compaction", scanMap(t, db.Scan(bg, nil, nil)), model)
			r := e.reader(t, s, slate.ReaderOptions{})
			sameMap(t, "reader", scanMap(t, r.Scan(bg, nil, nil)), model)
			db.Close(bg)
			db = e.open(t, s, opts...)
			defer db.Close(bg)
			sameMap(t, "reopened", scanMap(t, db.Scan(bg, nil, nil)), model)
		})
	}
}

// TestCompactorFencing: a newer compactor's epoch claim fences the older
// one; the older one's publish fails with ErrFenced and changes nothing
// (memory and local stores).
func TestCompactorFencing(t *testing.T) {
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		db := open(t, s, manual()...)
		model := map[string]string{}
		for round := 0; round < 4; round++ {
			writeRound(t, db, model, round, 8)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		copts := slate.CompactorOptions{MinSources: 2, RetainInputs: -1}

		// 1. Fenced mid-compaction: outputs written, publish refused.
		c1, err := slate.OpenCompactor(bg, s, "db", copts)
		if err != nil {
			t.Fatal(err)
		}
		_, start, _ := slate.DescribeLatest(bg, s, "db")
		var c2 *slate.Compactor
		var atFence string
		slate.SetCompactorHook(c1, func() {
			c2, err = slate.OpenCompactor(bg, s, "db", copts)
			if err != nil {
				t.Error(err)
			}
			_, atFence, _ = slate.DescribeLatest(bg, s, "db")
		})
		_, err = c1.Compact(bg)
		if !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("fenced compactor's publish: %v, want ErrFenced", err)
		}
		_, after, _ := slate.DescribeLatest(bg, s, "db")
		if after != atFence {
			t.Fatalf("the fenced compactor changed the manifest:\nat fence %s\nafter    %s", atFence, after)
		}
		if l0 := func(d string) string { return d[strings.Index(d, "l0="):] }; l0(after) != l0(start) {
			t.Fatalf("tree changed:\nbefore %s\nafter  %s", start, after)
		}
		if c2.Epoch() != c1.Epoch()+1 {
			t.Fatalf("epochs: c1 %d, c2 %d", c1.Epoch(), c2.Epoch())
		}
		// Every later call of the old one fails too.
		if _, err := c1.CompactAll(bg); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("old compactor after fencing: %v", err)
		}
		// 2. The newer one works.
		rep, err := c2.Compact(bg)
		if err != nil || !rep.Compacted {
			t.Fatalf("newer compactor: %+v %v", rep, err)
		}
		// 3. The writer's in-process compactor is fenced by the standalone one
		// (it claimed an epoch before c1 and c2), and the writer still works.
		if _, err := db.Compact(bg); err != nil {
			t.Fatalf("in-process compactor claims a fresh epoch: %v", err)
		}
		if _, err := c2.Compact(bg); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("c2 after the writer's compactor claimed: %v", err)
		}
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		// 4. A fenced writer's in-process compactor neither publishes nor takes
		// the compactor epoch from the newer writer's.
		for round := 4; round < 7; round++ {
			writeRound(t, db, model, round, 8)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		newer := open(t, s, append(manual(), slate.WithSettings(slate.Settings{FlushInterval: 5 * time.Millisecond, ManifestPollInterval: -1}))...)
		_, before, _ := slate.DescribeLatest(bg, s, "db")
		if _, err := db.Compact(bg); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("fenced writer's compaction: %v, want ErrFenced", err)
		}
		if _, now, _ := slate.DescribeLatest(bg, s, "db"); now != before {
			t.Fatalf("a fenced writer's compactor changed the manifest:\nbefore %s\nafter  %s", before, now)
		}
		db.Close(bg)
		if rep, err := newer.Compact(bg); err != nil || !rep.Compacted {
			t.Fatalf("newer writer's compaction: %+v %v", rep, err)
		}
		newer.Close(bg)
		db = open(t, s, manual()...)
		defer db.Close(bg)
		sameMap(t, "after compactor fencing", scanMap(t, db.Scan(bg, nil, nil)), model)
	})
}

// TestConcurrentL0PublishDuringCompaction: the writer publishes L0 tables
// while a compaction runs (between its outputs and its publish). The
// compaction's manifest CAS re-applies on top of them: none is lost.
func TestConcurrentL0PublishDuringCompaction(t *testing.T) {
	forEachLocalEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		model := map[string]string{}
		for round := 0; round < 3; round++ {
			writeRound(t, db, model, round, 8)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		slate.SetCompactionHook(db, func() {
			for round := 3; round < 5; round++ {
				writeRound(t, db, model, round, 8)
				if err := db.FlushMemtable(bg); err != nil {
					t.Error(err)
				}
			}
		})
		rep, err := db.Compact(bg)
		if err != nil || !rep.Compacted || rep.SourceL0 != 3 {
			t.Fatalf("compaction: %+v %v", rep, err)
		}
		if st := db.Stats(); st.L0 != 2 || st.SortedRuns != 1 {
			t.Fatalf("after compaction with concurrent flushes: %+v (want the 2 new L0 tables and 1 run)", st)
		}
		sameMap(t, "writer", scanMap(t, db.Scan(bg, nil, nil)), model)
		r := e.reader(t, s, slate.ReaderOptions{})
		sameMap(t, "reader", scanMap(t, r.Scan(bg, nil, nil)), model)
		db2 := e.open(t, s, manual()...) // crash, reopen
		defer db2.Close(bg)
		sameMap(t, "reopened", scanMap(t, db2.Scan(bg, nil, nil)), model)
		if st := db2.Stats(); st.L0 < 2 || st.SortedRuns != 1 {
			t.Fatalf("reopened: %+v", st)
		}
		db.Close(bg)
	})
}

// TestBackgroundCompactionAndL0Backpressure: concurrent writers with tiny
// memtables against the background compactor: L0 never holds more than
// L0MaxSSTs tables, and every acknowledged write is there (memory and
// local stores).
func TestBackgroundCompactionAndL0Backpressure(t *testing.T) {
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		const limit = 4
		db, err := slate.Open(bg, s, "db",
			slate.WithSettings(slate.Settings{FlushInterval: time.Millisecond, L0SSTSizeBytes: 800, ManifestPollInterval: 10 * time.Millisecond, L0MaxSSTs: limit}),
			slate.WithCompactor(slate.CompactorOptions{PollInterval: time.Hour, MinSources: 3, RetainInputs: -1}),
			slate.WithGC(slate.GCOptions{Interval: -1}))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		model := map[string]string{}
		maxL0 := 0
		stop := make(chan struct{})
		var watch sync.WaitGroup
		watch.Add(1)
		go func() {
			defer watch.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
				if n := db.Stats().L0; n > maxL0 {
					maxL0 = n
				}
			}
		}()
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 150; i++ {
					k, v := fmt.Sprintf("w%d-%03d", w, i%60), fmt.Sprintf("%d", i)
					if err := db.Put(bg, []byte(k), []byte(v)); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					model[k] = v
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(stop)
		watch.Wait()
		st := db.Stats()
		t.Logf("max L0 %d; %+v", maxL0, st)
		if maxL0 > limit {
			t.Fatalf("L0 reached %d tables, limit %d", maxL0, limit)
		}
		if st.SortedRuns == 0 {
			t.Fatal("the background compactor never ran (it was only woken by backpressure)")
		}
		sameMap(t, "writer", scanMap(t, db.Scan(bg, nil, nil)), model)
		if err := db.Close(bg); err != nil {
			t.Fatal(err)
		}
		db2 := open(t, s, manual()...)
		defer db2.Close(bg)
		sameMap(t, "reopened", scanMap(t, db2.Scan(bg, nil, nil)), model)
	})
}

// compactionCrashWorkload writes batches of two keys, flushes L0 tables,
// compacts (scheduled and full), collects garbage and reopens, through a
// store that may freeze. It returns the acknowledged batches and whether
// it ran to the end.
func compactionCrashWorkload(s objstore.Store, opts []slate.Option) (acked []int, completed bool) {
	step := func(db *slate.DB, i int) error {
		b := slate.NewWriteBatch()
		b.Put([]byte(fmt.Sprintf("b%03d/x", i%14)), []byte(fmt.Sprintf("x%d", i)))
		b.Put([]byte(fmt.Sprintf("b%03d/y", i%14)), []byte(fmt.Sprintf("y%d", i)))
		if i%5 == 4 {
			b.Delete([]byte(fmt.Sprintf("b%03d/x", (i+3)%14)))
			b.Delete([]byte(fmt.Sprintf("b%03d/y", (i+3)%14)))
		}
		_, err := db.Write(bg, b, slate.WriteOptions{})
		return err
	}
	db, err := slate.Open(bg, s, "db", opts...)
	if err != nil {
		return nil, false
	}
	fail := func() ([]int, bool) { db.Close(bg); return acked, false }
	i := 0
	for ; i < 20; i++ {
		if step(db, i) != nil {
			return fail()
		}
		acked = append(acked, i)
		if i%3 == 2 && db.FlushMemtable(bg) != nil {
			return fail()
		}
		if i%6 == 5 {
			if _, err := db.Compact(bg); err != nil {
				return fail()
			}
		}
	}
	if _, err := db.CompactAll(bg); err != nil {
		return fail()
	}
	if _, err := db.RunGC(bg, noMinAge()); err != nil {
		return fail()
	}
	if db.Close(bg) != nil {
		return acked, false
	}
	db, err = slate.Open(bg, s, "db", opts...)
	if err != nil {
		return acked, false
	}
	for ; i < 26; i++ {
		if step(db, i) != nil {
			return fail()
		}
		acked = append(acked, i)
		if i%3 == 2 && db.FlushMemtable(bg) != nil {
			return fail()
		}
	}
	if _, err := db.Compact(bg); err != nil {
		return fail()
	}
	return acked, db.Close(bg) == nil
}

// TestCrashSweepAcrossCompaction freezes the store after k writes, for
// every k over a workload that flushes, compacts and collects garbage,
// then reopens on the unfrozen store: every acknowledged batch is there
// with its latest value, no batch is torn, and the database compacts and
// collects again. It sweeps the memory store and (more coarsely) the local
// one.
func TestCrashSweepAcrossCompaction(t *testing.T) {
	opts := []slate.Option{
		slate.WithSettings(slate.Settings{FlushInterval: time.Millisecond, ManifestPollInterval: -1, L0SSTSizeBytes: 1 << 20}),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MinSources: 2, RetainInputs: -1}),
		slate.WithGC(slate.GCOptions{Interval: -1}),
	}
	envs := nativeStoreEnvs()
	for _, sweep := range []struct {
		e      *env
		stride int
	}{
		{envs[0], 1},
		// The local store syncs every object and directory, so a crash
		// point costs about five times more there (the full sweep took 13 s
		// under -race): it sweeps every localCrashStride-th point, which
		// still lands in every phase of the workload (flushes,
		// compactions, GC, the reopen); memory sweeps them all.
		{envs[1], localCrashStride},
	} {
		t.Run(sweep.e.name, func(t *testing.T) {
			for k := 0; ; k += sweep.stride {
				inner := sweep.e.store(t)
				faulty := objstore.NewFaulty(inner)
				faulty.FreezeAfter(k)
				acked, completed := compactionCrashWorkload(faulty, opts)
				db, err := slate.Open(bg, inner, "db", opts...)
				if err != nil {
					t.Fatalf("k=%d: reopen after crash: %v", k, err)
				}
				// The model: the last acknowledged batch decides each key.
				want := map[string]string{}
				for _, i := range acked {
					want[fmt.Sprintf("b%03d/x", i%14)] = fmt.Sprintf("x%d", i)
					want[fmt.Sprintf("b%03d/y", i%14)] = fmt.Sprintf("y%d", i)
					if i%5 == 4 {
						delete(want, fmt.Sprintf("b%03d/x", (i+3)%14))
						delete(want, fmt.Sprintf("b%03d/y", (i+3)%14))
					}
				}
				got := scanMap(t, db.Scan(bg, nil, nil))
				last := -1
				if len(acked) > 0 {
					last = acked[len(acked)-1]
				}
				for slot := 0; slot < 14; slot++ {
					x, okx := got[fmt.Sprintf("b%03d/x", slot)]
					y, oky := got[fmt.Sprintf("b%03d/y", slot)]
					if okx != oky || (okx && x[1:] != y[1:]) {
						t.Fatalf("k=%d: slot %d torn: x=%q y=%q", k, slot, x, y)
					}
					// At most one unacknowledged batch (the one in flight) may
					// have landed on top of the acknowledged state.
					wx, wok := want[fmt.Sprintf("b%03d/x", slot)]
					if x != wx || okx != wok {
						inflight := last + 1
						touches := inflight%14 == slot || (inflight%5 == 4 && (inflight+3)%14 == slot)
						if !touches {
							t.Fatalf("k=%d: slot %d = %q (%v), acknowledged state %q (%v), last acked batch %d", k, slot, x, okx, wx, wok, last)
						}
					}
				}
				if _, err := db.CompactAll(bg); err != nil {
					t.Fatalf("k=%d: compaction after recovery: %v", k, err)
				}
				if _, err := db.RunGC(bg, noMinAge()); err != nil {
					t.Fatalf("k=%d: GC after recovery: %v", k, err)
				}
				sameMap(t, fmt.Sprintf("k=%d after recovery, compaction and GC", k), scanMap(t, db.Scan(bg, nil, nil)), got)
				if err := db.Put(bg, []byte("after"), []byte("crash")); err != nil {
					t.Fatalf("k=%d: write after recovery: %v", k, err)
				}
				db.Close(bg)
				if completed {
					if k < 20 {
						t.Fatalf("workload completed with only %d writes: the sweep covered nothing", k)
					}
					t.Logf("swept %d crash points (every %d of %d)", k/sweep.stride+1, sweep.stride, k+1)
					return
				}
				if k > 3000 {
					t.Fatal("workload never completed")
				}
			}
		})
	}
}

// localCrashStride: the local store's crash sweep takes every
// localCrashStride-th crash point (see TestCrashSweepAcrossCompaction).
const localCrashStride = 3

// TestReadAmplificationFallsAfterCompaction counts the tables a Get
// consults (ReadStats) with ten L0 tables that each span the whole key
// range, then after a full compaction into one run.
func TestReadAmplificationFallsAfterCompaction(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s, manual()...)
	defer db.Close(bg)
	const n = 1000
	perm := rand.New(rand.NewPCG(4, 4)).Perm(n)
	for i, k := range perm {
		if _, err := db.Write(bg, batchOf(fmt.Sprintf("key%05d", k), "v"), slate.WriteOptions{NoWait: true}); err != nil {
			t.Fatal(err)
		}
		if i%(n/10) == n/10-1 {
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	probe := func() (ssts, filters float64) {
		before := db.ReadStats()
		for k := 0; k < n; k++ {
			mustGet(t, db.Get, fmt.Sprintf("key%05d", k), "v")
		}
		st := db.ReadStats()
		gets := float64(st.Gets - before.Gets)
		return float64(st.SSTsConsulted-before.SSTsConsulted) / gets, float64(st.FilterSkips-before.FilterSkips) / gets
	}
	l0SSTs, l0Skips := probe()
	if _, err := db.CompactAll(bg); err != nil {
		t.Fatal(err)
	}
	runSSTs, runSkips := probe()
	t.Logf("per Get: 10 L0 tables: %.2f searched + %.2f filtered out; one run: %.2f searched + %.2f filtered out", l0SSTs, l0Skips, runSSTs, runSkips)
	if l0SSTs+l0Skips < 3 || runSSTs+runSkips != 1 || runSSTs > l0SSTs {
		t.Fatalf("read amplification: L0 %.2f+%.2f, run %.2f+%.2f", l0SSTs, l0Skips, runSSTs, runSkips)
	}
}
