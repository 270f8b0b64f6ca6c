package slate_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/core/slate/slatetest"
)

// env is one engine configuration the shared tests run under: a store
// backend and a WAL implementation.
type env struct {
	name   string
	store  func(t *testing.T) objstore.Store
	plugs  bool // the in-memory WAL plug instead of the native WAL
	memWAL *slatetest.MemWAL
}

func (e *env) writerOpts(extra ...slate.Option) []slate.Option {
	opts := []slate.Option{slate.WithSettings(fast())}
	if e.plugs {
		opts = append(opts, slate.WithWalWriter(e.memWAL))
	}
	return append(opts, extra...)
}

func (e *env) readerOpts() []slate.Option {
	if e.plugs {
		return []slate.Option{slate.WithWalReader(e.memWAL)}
	}
	return nil
}

func (e *env) open(t *testing.T, s objstore.Store, extra ...slate.Option) *slate.DB {
	t.Helper()
	db, err := slate.Open(bg, s, "db", e.writerOpts(extra...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func (e *env) reader(t *testing.T, s objstore.Store, ro slate.ReaderOptions) *slate.Reader {
	t.Helper()
	if ro.PollInterval == 0 {
		ro.PollInterval = -1
	}
	r, err := slate.OpenReader(bg, s, "db", ro, e.readerOpts()...)
	if err != nil {
		t.Fatalf("OpenReader: %v", err)
	}
	t.Cleanup(func() { r.Close(bg) })
	return r
}

func memStore(t *testing.T) objstore.Store { return objstore.NewMemory(0) }

func localStore(t *testing.T) objstore.Store {
	s, err := objstore.NewLocal(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// envs lists the configurations; extraEnvs (S3) is appended by another file.
func envs() []*env {
	out := []*env{
		{name: "memory/native", store: memStore},
		{name: "local/native", store: localStore},
		{name: "memory/memwal", store: memStore, plugs: true},
	}
	return append(out, extraEnvs()...)
}

func forEachEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	runEnvs(t, envs(), fn)
}

// forEachLocalEnv runs fn on the memory and local configurations only.
func forEachLocalEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	runEnvs(t, envs()[:3], fn)
}

// forEachNativeEnv runs fn with the native WAL on the memory and local
// stores (tests of the native WAL's objects, or of timing the in-memory
// WAL does not have: its appends are durable at once).
func forEachNativeEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	var list []*env
	for _, e := range envs()[:3] {
		if !e.plugs {
			list = append(list, e)
		}
	}
	runEnvs(t, list, fn)
}

func runEnvs(t *testing.T, list []*env, fn func(t *testing.T, e *env)) {
	for _, e := range list {
		t.Run(e.name, func(t *testing.T) {
			if e.plugs {
				e.memWAL = slatetest.NewMemWAL()
			}
			fn(t, e)
		})
	}
}

func TestEngineWriteReplayReopen(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s)
		b := slate.NewWriteBatch()
		b.Put([]byte("a"), []byte("1"))
		b.Put([]byte("b"), []byte("2"))
		b.Delete([]byte("c"))
		h, err := db.Write(bg, b, slate.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Put(bg, []byte("c"), []byte("3")); err != nil {
			t.Fatal(err)
		}
		// Crash (no Close), reopen: the WAL replays both batches.
		db2 := e.open(t, s)
		mustGet(t, db2.Get, "a", "1")
		mustGet(t, db2.Get, "b", "2")
		mustGet(t, db2.Get, "c", "3")
		if got := db2.LastCommittedSeq(); got < h.Seq+1 {
			t.Fatalf("seq after replay %d, want >= %d", got, h.Seq+1)
		}
		// New writes take seqs above the replayed ones.
		if err := db2.Put(bg, []byte("d"), []byte("4")); err != nil {
			t.Fatal(err)
		}
		if err := db2.Close(bg); err != nil {
			t.Fatal(err)
		}
		db3 := e.open(t, s)
		defer db3.Close(bg)
		for k, v := range map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"} {
			mustGet(t, db3.Get, k, v)
		}
	})
}

func TestEngineOlderWriterIsFenced(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		a := e.open(t, s)
		if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
			t.Fatal(err)
		}
		b := e.open(t, s)
		defer b.Close(bg)
		mustGet(t, b.Get, "k", "a1")
		err := a.Put(bg, []byte("k"), []byte("a2"))
		if !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("older writer's next write: %v, want ErrFenced", err)
		}
		if err := a.Put(bg, []byte("x"), []byte("y")); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("fenced writer must stay closed with ErrFenced: %v", err)
		}
		if _, err := a.Begin(); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("Begin on a fenced writer: %v", err)
		}
		if err := a.Close(bg); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("Close of a fenced writer: %v, want ErrFenced", err)
		}
		if err := b.Put(bg, []byte("k"), []byte("b1")); err != nil {
			t.Fatal(err)
		}
		c := e.open(t, s) // the newest writer sees only b's value
		defer c.Close(bg)
		mustGet(t, c.Get, "k", "b1")
		mustGet(t, c.Get, "x", "")
	})
}

func TestEngineIdleOlderWriterNoticesFenceOnManifestPoll(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		a := e.open(t, s)
		b := e.open(t, s)
		defer b.Close(bg)
		deadline := time.Now().Add(30 * time.Second)
		for a.CloseReason() == nil {
			if time.Now().After(deadline) {
				t.Fatal("the idle older writer never noticed the newer epoch")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !errors.Is(a.CloseReason(), slate.ErrFenced) {
			t.Fatalf("close reason %v, want ErrFenced", a.CloseReason())
		}
		a.Close(bg)
	})
}

func TestEngineReaderSeesCommitAfterRefresh(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s)
		defer db.Close(bg)
		if err := db.Put(bg, []byte("k"), []byte("v1")); err != nil {
			t.Fatal(err)
		}
		r := e.reader(t, s, slate.ReaderOptions{})
		mustGet(t, r.Get, "k", "v1")
		if err := db.Put(bg, []byte("k"), []byte("v2")); err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v1") // no poll yet
		if err := r.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k", "v2")
		// Across an L0 flush as well.
		if err := db.Put(bg, []byte("k2"), []byte("w")); err != nil {
			t.Fatal(err)
		}
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		if err := db.Put(bg, []byte("k3"), []byte("z")); err != nil {
			t.Fatal(err)
		}
		if err := r.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		mustGet(t, r.Get, "k2", "w")
		mustGet(t, r.Get, "k3", "z")
		mustGet(t, r.Get, "k", "v2")
	})
}

func TestEngineReaderPollsOnItsOwn(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s)
		defer db.Close(bg)
		r := e.reader(t, s, slate.ReaderOptions{PollInterval: 10 * time.Millisecond})
		h, err := db.Write(bg, batchOf("k", "v"), slate.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		if err := r.WaitSeq(ctx, h.Seq); err != nil {
			t.Fatalf("reader never served seq %d: %v", h.Seq, err)
		}
		mustGet(t, r.Get, "k", "v")
	})
}

func batchOf(kv ...string) *slate.WriteBatch {
	b := slate.NewWriteBatch()
	for i := 0; i+1 < len(kv); i += 2 {
		b.Put([]byte(kv[i]), []byte(kv[i+1]))
	}
	return b
}

// TestEngineMatchesModel applies random batches (puts, deletes, overwrites)
// with a tiny memtable so data spreads over many L0 tables, reopening now
// and then, and compares every read with an in-memory model.
func TestEngineMatchesModel(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(1, 2))
		s := e.store(t)
		small := slate.WithSettings(slate.Settings{FlushInterval: 5 * time.Millisecond, L0SSTSizeBytes: 2048, ManifestPollInterval: -1, BlockSize: 256})
		db := e.open(t, s, small)
		model := map[string]string{}
		key := func() string { return fmt.Sprintf("key-%03d", rng.IntN(150)) }
		check := func(read func() (map[string]string, error), what string) {
			t.Helper()
			got, err := read()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if len(got) != len(model) {
				t.Fatalf("%s: %d keys, model has %d", what, len(got), len(model))
			}
			for k, v := range model {
				if got[k] != v {
					t.Fatalf("%s: %s = %q, model %q", what, k, got[k], v)
				}
			}
		}
		scanDB := func(db *slate.DB) func() (map[string]string, error) {
			return func() (map[string]string, error) {
				it := db.Scan(bg, nil, nil)
				defer it.Close()
				out := map[string]string{}
				var prev []byte
				for it.Next() {
					if prev != nil && bytes.Compare(prev, it.Key()) >= 0 {
						return nil, fmt.Errorf("scan out of order: %q then %q", prev, it.Key())
					}
					prev = append(prev[:0], it.Key()...)
					out[string(it.Key())] = string(it.Value())
				}
				return out, it.Err()
			}
		}
		for round := 0; round < 6; round++ {
			for i := 0; i < 40; i++ {
				b := slate.NewWriteBatch()
				for j := 0; j < 1+rng.IntN(6); j++ {
					k := key()
					if rng.IntN(4) == 0 {
						b.Delete([]byte(k))
						delete(model, k)
					} else {
						v := fmt.Sprintf("v%d-%d-%d", round, i, j)
						b.Put([]byte(k), []byte(v))
						model[k] = v
					}
				}
				if _, err := db.Write(bg, b, slate.WriteOptions{NoWait: rng.IntN(3) == 0}); err != nil {
					t.Fatal(err)
				}
			}
			check(scanDB(db), fmt.Sprintf("round %d scan", round))
			for i := 0; i < 50; i++ {
				k := key()
				mustGet(t, db.Get, k, model[k])
			}
			// Ranged scans agree with the model too.
			lo, hi := key(), key()
			if lo > hi {
				lo, hi = hi, lo
			}
			it := db.Scan(bg, []byte(lo), []byte(hi))
			var got []string
			for it.Next() {
				got = append(got, string(it.Key()))
			}
			it.Close()
			var want []string
			for k := range model {
				if k >= lo && k < hi {
					want = append(want, k)
				}
			}
			sort.Strings(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("scan [%s,%s) = %v, want %v", lo, hi, got, want)
			}
			if err := db.Flush(bg); err != nil {
				t.Fatal(err)
			}
			if round%2 == 1 {
				db.Close(bg)
			} // else: a crash; the next open replays the WAL
			db = e.open(t, s, small)
			check(scanDB(db), fmt.Sprintf("round %d after reopen", round))
		}
		if st := db.Stats(); st.L0+st.SortedRunSSTs < 2 { // (the background compactor may have run)
			t.Fatalf("test did not exercise L0 flushes: %+v", st)
		}
		r := e.reader(t, s, slate.ReaderOptions{})
		check(func() (map[string]string, error) {
			it := r.Scan(bg, nil, nil)
			defer it.Close()
			out := map[string]string{}
			for it.Next() {
				out[string(it.Key())] = string(it.Value())
			}
			return out, it.Err()
		}, "reader scan")
		db.Close(bg)
	})
}

func TestEngineTransactionsDetectWriteWriteConflicts(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		db := e.open(t, e.store(t))
		defer db.Close(bg)
		db.Put(bg, []byte("head"), []byte("0"))
		t1, _ := db.Begin()
		t2, _ := db.Begin()
		v, _, _ := t1.Get(bg, []byte("head"))
		t1.Put([]byte("head"), append(v, '1'))
		t1.Put([]byte("only1"), []byte("x"))
		v, _, _ = t2.Get(bg, []byte("head"))
		t2.Put([]byte("head"), append(v, '2'))
		if _, err := t1.Commit(bg, slate.WriteOptions{}); err != nil {
			t.Fatalf("first commit: %v", err)
		}
		_, err := t2.Commit(bg, slate.WriteOptions{})
		if !errors.Is(err, slate.ErrTxnConflict) {
			t.Fatalf("second commit: %v, want ErrTxnConflict", err)
		}
		mustGet(t, db.Get, "head", "01")
		// Disjoint keys do not conflict; reads see the snapshot plus own writes.
		t3, _ := db.Begin()
		t4, _ := db.Begin()
		db.Put(bg, []byte("other"), []byte("z"))
		mustGet(t, t3.Get, "other", "")
		t3.Put([]byte("a"), []byte("3"))
		mustGet(t, t3.Get, "a", "3")
		t4.Put([]byte("b"), []byte("4"))
		it := t3.Scan(bg, nil, nil)
		var keys []string
		for it.Next() {
			keys = append(keys, string(it.Key()))
		}
		it.Close()
		if fmt.Sprint(keys) != "[a head only1]" {
			t.Fatalf("txn scan = %v", keys)
		}
		if _, err := t3.Commit(bg, slate.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := t4.Commit(bg, slate.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		// A committed transaction cannot commit again.
		if _, err := t4.Commit(bg, slate.WriteOptions{}); !errors.Is(err, slate.ErrInvalid) {
			t.Fatalf("second Commit: %v", err)
		}
	})
}

func TestEngineCallerSuppliedSeqnum(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s)
		h, err := db.Write(bg, batchOf("a", "1"), slate.WriteOptions{Seq: 1000})
		if err != nil || h.Seq != 1000 {
			t.Fatalf("Write with seq 1000: %v %v", h, err)
		}
		if _, err := db.Write(bg, batchOf("b", "2"), slate.WriteOptions{Seq: 1000}); !errors.Is(err, slate.ErrInvalid) {
			t.Fatalf("repeated seq: %v, want ErrInvalid", err)
		}
		if _, err := db.Write(bg, batchOf("b", "2"), slate.WriteOptions{Seq: 7}); !errors.Is(err, slate.ErrInvalid) {
			t.Fatalf("smaller seq: %v, want ErrInvalid", err)
		}
		h2, err := db.Write(bg, batchOf("c", "3"), slate.WriteOptions{})
		if err != nil || h2.Seq != 1001 {
			t.Fatalf("auto seq after 1000 = %d, %v", h2.Seq, err)
		}
		db2 := e.open(t, s) // replay keeps the supplied seqs
		defer db2.Close(bg)
		if got := db2.LastCommittedSeq(); got != 1001 {
			t.Fatalf("replayed seq %d, want 1001", got)
		}
	})
}

func TestEngineNoWaitThenAwaitDurable(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		db := e.open(t, e.store(t))
		defer db.Close(bg)
		h, err := db.Write(bg, batchOf("k", "v"), slate.WriteOptions{NoWait: true})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, db.Get, "k", "v") // visible at once
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		if err := h.AwaitDurable(ctx); err != nil {
			t.Fatal(err)
		}
		if st := db.Stats(); st.DurableSeq < h.Seq {
			t.Fatalf("durable seq %d < %d after AwaitDurable", st.DurableSeq, h.Seq)
		}
	})
}

func TestEngineSnapshotReadsAreStable(t *testing.T) {
	forEachEnv(t, func(t *testing.T, e *env) {
		db := e.open(t, e.store(t))
		defer db.Close(bg)
		db.Put(bg, []byte("k"), []byte("old"))
		snap := db.Snapshot()
		defer snap.Release()
		db.Put(bg, []byte("k"), []byte("new"))
		db.Put(bg, []byte("k2"), []byte("x"))
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		mustGet(t, snap.Get, "k", "old")
		mustGet(t, snap.Get, "k2", "")
		mustGet(t, db.Get, "k", "new")
	})
}
