package slate_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// crashWorkload writes batches of two keys each through a store that
// freezes after k writes. It returns the batches acknowledged as durable
// and whether the workload ran to the end (the store never froze).
func crashWorkload(t *testing.T, s objstore.Store, settings slate.Settings) (acked []int, completed bool) {
	step := func(db *slate.DB, i int) error {
		b := slate.NewWriteBatch()
		b.Put([]byte(fmt.Sprintf("b%03d/x", i)), []byte(fmt.Sprintf("x%d", i)))
		b.Put([]byte(fmt.Sprintf("b%03d/y", i)), []byte(fmt.Sprintf("y%d", i)))
		b.Put([]byte("last"), []byte(fmt.Sprint(i)))
		_, err := db.Write(bg, b, slate.WriteOptions{})
		return err
	}
	db, err := slate.Open(bg, s, "db", slate.WithSettings(settings))
	if err != nil {
		return nil, false
	}
	i := 0
	for ; i < 12; i++ {
		if err := step(db, i); err != nil {
			db.Close(bg)
			return acked, false
		}
		acked = append(acked, i)
		if i%4 == 3 {
			if err := db.FlushMemtable(bg); err != nil {
				db.Close(bg)
				return acked, false
			}
		}
	}
	if err := db.Close(bg); err != nil {
		return acked, false
	}
	// A second writer session: reopen (fence, replay), write, flush.
	db, err = slate.Open(bg, s, "db", slate.WithSettings(settings))
	if err != nil {
		return acked, false
	}
	for ; i < 18; i++ {
		if err := step(db, i); err != nil {
			db.Close(bg)
			return acked, false
		}
		acked = append(acked, i)
	}
	if err := db.FlushMemtable(bg); err != nil {
		db.Close(bg)
		return acked, false
	}
	return acked, db.Close(bg) == nil
}

// TestCrashSweepNothingAcknowledgedIsLostNothingTorn freezes the store
// after k writes for every k (the process "dies" at its k-th object-store
// write), then opens the database again on the unfrozen store: every batch
// acknowledged before the crash is there, and every batch is all or nothing.
// It runs on the memory and the local store, every crash point on both:
// the local sweep (about 30 points) takes about 4 s with -race on 2 cores,
// so it is not thinned.
func TestCrashSweepNothingAcknowledgedIsLostNothingTorn(t *testing.T) {
	forEachNativeEnv(t, testCrashSweep)
}

func testCrashSweep(t *testing.T, e *env) {
	settings := slate.Settings{FlushInterval: time.Millisecond, ManifestPollInterval: -1, L0SSTSizeBytes: 600}
	for k := 0; ; k++ {
		inner := e.store(t)
		faulty := objstore.NewFaulty(inner)
		faulty.FreezeAfter(k)
		acked, completed := crashWorkload(t, faulty, settings)
		db, err := slate.Open(bg, inner, "db", slate.WithSettings(settings))
		if err != nil {
			t.Fatalf("k=%d: reopen after crash: %v", k, err)
		}
		for _, i := range acked {
			mustGet(t, db.Get, fmt.Sprintf("b%03d/x", i), fmt.Sprintf("x%d", i))
		}
		for i := 0; i < 18; i++ {
			x, okx, err1 := db.Get(bg, []byte(fmt.Sprintf("b%03d/x", i)))
			y, oky, err2 := db.Get(bg, []byte(fmt.Sprintf("b%03d/y", i)))
			if err1 != nil || err2 != nil {
				t.Fatalf("k=%d: %v %v", k, err1, err2)
			}
			if okx != oky || (okx && (string(x) != fmt.Sprintf("x%d", i) || string(y) != fmt.Sprintf("y%d", i))) {
				t.Fatalf("k=%d: batch %d torn: x=%q(%v) y=%q(%v)", k, i, x, okx, y, oky)
			}
		}
		// The recovered database keeps working.
		if err := db.Put(bg, []byte("after"), []byte("crash")); err != nil {
			t.Fatalf("k=%d: write after recovery: %v", k, err)
		}
		db.Close(bg)
		if completed {
			if k < 10 {
				t.Fatalf("workload completed with only %d writes: the sweep covered nothing", k)
			}
			t.Logf("swept %d crash points", k)
			return
		}
		if k > 2000 {
			t.Fatal("workload never completed")
		}
	}
}

// TestFencedWriterWritesNothing checks that after a newer writer's fence
// the older writer's flush lands nothing in the store.
func TestFencedWriterWritesNothing(t *testing.T) {
	forEachNativeEnv(t, testFencedWriterWritesNothing)
}

func testFencedWriterWritesNothing(t *testing.T, e *env) {
	inner := e.store(t)
	a, err := slate.Open(bg, inner, "db", slate.WithSettings(slate.Settings{FlushInterval: slate.FlushManual, ManifestPollInterval: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
		t.Fatal(err)
	}
	// A buffers a write it has not flushed yet.
	if _, err := a.Write(bg, batchOf("k", "a2"), slate.WriteOptions{NoWait: true}); err != nil {
		t.Fatal(err)
	}
	b, err := slate.Open(bg, inner, "db", slate.WithSettings(slate.Settings{FlushInterval: slate.FlushManual, ManifestPollInterval: -1}))
	if err != nil {
		t.Fatal(err)
	}
	// Let B settle (it flushes what it replayed into L0) before watching A.
	if err := b.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	before, _ := objstore.ListAll(bg, inner, "", "")
	err = a.Flush(bg)
	if !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("older writer's flush: %v, want ErrFenced", err)
	}
	if _, err := a.Write(bg, batchOf("k", "a3"), slate.WriteOptions{}); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("write after fence: %v", err)
	}
	a.Close(bg)
	after, _ := objstore.ListAll(bg, inner, "", "")
	if fmt.Sprint(keysAndTags(before)) != fmt.Sprint(keysAndTags(after)) {
		t.Fatalf("the fenced writer changed the store:\nbefore %v\nafter  %v", keysAndTags(before), keysAndTags(after))
	}
	mustGet(t, b.Get, "k", "a1")
	b.Close(bg)
}

func keysAndTags(infos []objstore.ObjectInfo) []string {
	var out []string
	for _, o := range infos {
		out = append(out, o.Key+"@"+o.ETag)
	}
	return out
}

// TestStalledWriterCannotResurrectWritesAfterGC is the #352 hazard: a
// writer stalls with buffered writes, a newer writer takes over, flushes
// to L0 and GC deletes the WAL files below the replay point. The stalled
// writer's upload must still fail (the zero-byte fence is never collected),
// so it never acknowledges writes recovery would skip.
func TestStalledWriterCannotResurrectWritesAfterGC(t *testing.T) {
	forEachNativeEnv(t, testStalledWriterCannotResurrectWritesAfterGC)
}

func testStalledWriterCannotResurrectWritesAfterGC(t *testing.T, e *env) {
	inner := e.store(t)
	manual := slate.WithSettings(slate.Settings{FlushInterval: slate.FlushManual, ManifestPollInterval: -1})
	a, err := slate.Open(bg, inner, "db", manual)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
		t.Fatal(err)
	}
	h, err := a.Write(bg, batchOf("stalled", "yes"), slate.WriteOptions{NoWait: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := slate.Open(bg, inner, "db", manual)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := b.Put(bg, []byte(fmt.Sprintf("b%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	st := b.Stats()
	wal := slate.NewNativeWAL(inner, "db")
	deleted, err := wal.Collect(bg, []slate.WalRange{{Start: st.ReplayAfterWalID + 1}}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) == 0 {
		t.Fatal("GC deleted no WAL file: the test does not exercise the hazard")
	}
	// The stalled writer wakes up.
	if err := a.Flush(bg); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("stalled writer's flush after GC: %v, want ErrFenced", err)
	}
	ctx, cancel := contextWithTimeout(time.Second)
	defer cancel()
	if err := h.AwaitDurable(ctx); err == nil {
		t.Fatal("the stalled writer acknowledged a write as durable")
	}
	a.Close(bg)
	b.Close(bg)
	c, err := slate.Open(bg, inner, "db", manual)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	mustGet(t, c.Get, "stalled", "")
	mustGet(t, c.Get, "b4", "v")
}

func TestSeparateWalStoreKeepsWalElsewhereAndRefusesMismatch(t *testing.T) {
	main := objstore.NewMemory(0)
	walStore := objstore.OpenMemory("wal-"+uuid.NewString(), 0)
	db, err := slate.Open(bg, main, "db", slate.WithSettings(fast()), slate.WithWalStore(walStore))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Put(bg, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	inWal, _ := objstore.ListAll(bg, walStore, "db/wal/", "")
	inMain, _ := objstore.ListAll(bg, main, "db/wal/", "")
	if len(inWal) < 2 || len(inMain) != 0 {
		t.Fatalf("WAL objects: %d in the WAL store, %d in the main store", len(inWal), len(inMain))
	}
	// A crash; the next writer must use the same WAL store to recover.
	if _, err := slate.Open(bg, main, "db", slate.WithSettings(fast())); !errors.Is(err, slate.ErrWalStoreMismatch) {
		t.Fatalf("open without the WAL store: %v, want ErrWalStoreMismatch", err)
	}
	if _, err := slate.OpenReader(bg, main, "db", slate.ReaderOptions{}); !errors.Is(err, slate.ErrWalStoreMismatch) {
		t.Fatalf("reader without the WAL store: %v, want ErrWalStoreMismatch", err)
	}
	db2, err := slate.Open(bg, main, "db", slate.WithSettings(fast()), slate.WithWalStore(walStore))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close(bg)
	mustGet(t, db2.Get, "k", "v")
	r, err := slate.OpenReader(bg, main, "db", slate.ReaderOptions{PollInterval: -1}, slate.WithWalStore(walStore))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	mustGet(t, r.Get, "k", "v")
}

func TestReaderModes(t *testing.T) {
	forEachNativeEnv(t, testReaderModes)
}

func testReaderModes(t *testing.T, e *env) {
	inner := e.store(t)
	db, err := slate.Open(bg, inner, "db", slate.WithSettings(fast()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(bg)
	db.Put(bg, []byte("k"), []byte("v1"))
	cp, err := db.CreateCheckpoint(bg, slate.CheckpointOptions{Name: "pin"})
	if err != nil {
		t.Fatal(err)
	}
	db.Put(bg, []byte("k"), []byte("v2"))

	t.Run("pinned reads the checkpoint and writes nothing", func(t *testing.T) {
		counting := objstore.WithCounting(inner)
		r, err := slate.OpenReader(bg, counting, "db", slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: cp.ID})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v1")
		if err := r.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v1")
		r.Close(bg)
		if w := counting.Snapshot().Writes(); w != 0 {
			t.Fatalf("pinned reader made %d writes", w)
		}
	})
	t.Run("pinned with a missing checkpoint fails", func(t *testing.T) {
		_, err := slate.OpenReader(bg, inner, "db", slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: uuid.New()})
		if !errors.Is(err, slate.ErrCheckpointMissing) {
			t.Fatalf("got %v, want ErrCheckpointMissing", err)
		}
	})
	t.Run("managed creates a checkpoint and deletes it on close", func(t *testing.T) {
		r, err := slate.OpenReader(bg, inner, "db", slate.ReaderOptions{PollInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v2")
		id := r.Checkpoint()
		cps, _ := slate.ListCheckpoints(bg, inner, "db")
		if !hasCheckpoint(cps, id) {
			t.Fatalf("managed checkpoint %s not in %v", id, cps)
		}
		r.Close(bg)
		cps, _ = slate.ListCheckpoints(bg, inner, "db")
		if hasCheckpoint(cps, id) {
			t.Fatalf("managed checkpoint %s still listed after Close", id)
		}
		if !hasCheckpoint(cps, cp.ID) {
			t.Fatal("closing a reader removed someone else's checkpoint")
		}
	})
	t.Run("follow-latest writes nothing", func(t *testing.T) {
		counting := objstore.WithCounting(inner)
		r, err := slate.OpenReader(bg, counting, "db", slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v2")
		db.Put(bg, []byte("k"), []byte("v3"))
		r.Refresh(bg)
		mustGet(t, r.Get, "k", "v3")
		r.Close(bg)
		if w := counting.Snapshot().Writes(); w != 0 {
			t.Fatalf("follow-latest reader made %d writes", w)
		}
	})
	t.Run("a reader never creates a database", func(t *testing.T) {
		_, err := slate.OpenReader(bg, e.store(t), "db", slate.ReaderOptions{})
		if !errors.Is(err, slate.ErrNotInitialized) {
			t.Fatalf("got %v, want ErrNotInitialized", err)
		}
	})
}

func hasCheckpoint(cps []slate.CheckpointInfo, id uuid.UUID) bool {
	for _, c := range cps {
		if c.ID == id {
			return true
		}
	}
	return false
}
