package slate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/core/slate/slatetest"
)

// hookStore passes every call to its inner store. beforeWrite, when set,
// runs before each write call reaches the inner store and may fail it (the
// write then does not land); afterWrite, when set, runs after the inner
// store answered a write; every write is logged in call order as
// "start <op> <key>" when it goes to the inner store and "done <op> <key>"
// when the inner store answered.
type hookStore struct {
	objstore.Store

	mu          sync.Mutex
	beforeWrite func(op objstore.Op, key string, data []byte) error
	afterWrite  func(op objstore.Op, key string, err error)
	log         []string
}

func (h *hookStore) setHook(fn func(op objstore.Op, key string, data []byte) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.beforeWrite = fn
}

func (h *hookStore) setAfter(fn func(op objstore.Op, key string, err error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.afterWrite = fn
}

func (h *hookStore) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

// writes returns the log.
func (h *hookStore) writes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func (h *hookStore) write(op objstore.Op, key string, data []byte, fn func() (string, error)) (string, error) {
	h.mu.Lock()
	hook, after := h.beforeWrite, h.afterWrite
	h.mu.Unlock()
	if hook != nil {
		if err := hook(op, key, data); err != nil {
			return "", err
		}
	}
	h.record("start " + op.String() + " " + key)
	etag, err := fn()
	h.record("done " + op.String() + " " + key)
	if after != nil {
		after(op, key, err)
	}
	return etag, err
}

func (h *hookStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	return h.write(objstore.OpPut, key, data, func() (string, error) { return h.Store.Put(ctx, key, data) })
}

func (h *hookStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return h.write(objstore.OpPutIfAbsent, key, data, func() (string, error) { return h.Store.PutIfAbsent(ctx, key, data) })
}

func (h *hookStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return h.write(objstore.OpPutIfMatch, key, data, func() (string, error) { return h.Store.PutIfMatch(ctx, key, data, etag) })
}

func (h *hookStore) Delete(ctx context.Context, key string) error {
	_, err := h.write(objstore.OpDelete, key, nil, func() (string, error) { return "", h.Store.Delete(ctx, key) })
	return err
}

var _ objstore.Store = (*hookStore)(nil)

// walKey is the native WAL's object key of id in the database "db".
func walKey(id uint64) string { return fmt.Sprintf("db/wal/%020d.sst", id) }

// quietOpts are writer options with the given WAL flush interval (or
// FlushManual) under which the writer never polls the manifest (so an
// older writer learns of a newer one only from its own writes) and no
// background compaction or GC runs.
func quietOpts(flush time.Duration) []slate.Option {
	return []slate.Option{
		slate.WithSettings(slate.Settings{FlushInterval: flush, ManifestPollInterval: -1}),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1}),
		slate.WithGC(slate.GCOptions{Interval: -1}),
	}
}

// TestFencedWriterUploadsNoL0 is the case TestFencedWriterWritesNothing
// leaves out: the older writer's WAL is already durable, so its L0 flush
// is the first thing it writes after the newer writer's fence. The flush
// must re-read the manifest and stop with ErrFenced before it uploads the
// SST (no orphan under compacted/), on FlushMemtable and on Close alike,
// and the writer then stays closed with ErrFenced.
func TestFencedWriterUploadsNoL0(t *testing.T) {
	forEachLocalEnv(t, func(t *testing.T, e *env) {
		for _, how := range []string{"FlushMemtable", "Close"} {
			t.Run(how, func(t *testing.T) {
				if e.plugs {
					e.memWAL = slatetest.NewMemWAL()
				}
				s := e.store(t)
				a := e.open(t, s, quietOpts(5*time.Millisecond)...)
				if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
					t.Fatal(err)
				}
				if st := a.Stats(); st.DurableSeq < st.LastSeq {
					t.Fatalf("A's write is not durable: %+v", st)
				}
				b := e.open(t, s, quietOpts(5*time.Millisecond)...)
				defer b.Close(bg)
				// B flushes what it replayed; then nothing of B's is in flight.
				if err := b.FlushMemtable(bg); err != nil {
					t.Fatal(err)
				}
				before, err := objstore.ListAll(bg, s, "", "")
				if err != nil {
					t.Fatal(err)
				}
				if how == "FlushMemtable" {
					if err := a.FlushMemtable(bg); !errors.Is(err, slate.ErrFenced) {
						t.Fatalf("older writer's FlushMemtable: %v, want ErrFenced", err)
					}
					if err := a.CloseReason(); !errors.Is(err, slate.ErrFenced) {
						t.Fatalf("older writer's close reason after the flush: %v, want ErrFenced", err)
					}
					if err := a.Put(bg, []byte("x"), []byte("y")); !errors.Is(err, slate.ErrFenced) {
						t.Fatalf("write after the failed flush: %v, want ErrFenced", err)
					}
				}
				if err := a.Close(bg); !errors.Is(err, slate.ErrFenced) {
					t.Fatalf("older writer's Close: %v, want ErrFenced", err)
				}
				after, err := objstore.ListAll(bg, s, "", "")
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(keysAndTags(before)) != fmt.Sprint(keysAndTags(after)) {
					t.Fatalf("the fenced writer changed the store:\nbefore %v\nafter  %v", keysAndTags(before), keysAndTags(after))
				}
				mustGet(t, b.Get, "k", "a1")
				mustGet(t, b.Get, "x", "")
			})
		}
	})
}

// TestOpenMovesPastAFenceIDAnOlderWriterTook: between the newer writer's
// tail probe and its fence PUT, the older writer uploads a WAL file at the
// very id the fence was to take. The newer writer must re-check that its
// epoch still stands, move its fence to the next id, and replay the older
// writer's file (that write was acknowledged as durable).
func TestOpenMovesPastAFenceIDAnOlderWriterTook(t *testing.T) {
	forEachNativeEnv(t, func(t *testing.T, e *env) {
		inner := e.store(t)
		a := e.open(t, inner, quietOpts(slate.FlushManual)...)
		if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
			t.Fatal(err)
		}
		h, err := a.Write(bg, batchOf("k", "a2"), slate.WriteOptions{NoWait: true})
		if err != nil {
			t.Fatal(err)
		}
		tail := a.Stats().WalLastFlushedID // B's probe finds this; its fence goes to tail+1
		hs := &hookStore{Store: inner}
		var raced bool
		var aFlush error
		hs.setHook(func(op objstore.Op, key string, data []byte) error {
			if op == objstore.OpPutIfAbsent && strings.HasPrefix(key, "db/wal/") && len(data) == 0 && !raced {
				raced = true
				if key != walKey(tail+1) {
					return fmt.Errorf("fence attempted at %s, want %s", key, walKey(tail+1))
				}
				aFlush = a.Flush(bg) // A uploads its buffered batch into that id
			}
			return nil
		})
		b := e.open(t, hs, quietOpts(slate.FlushManual)...)
		defer b.Close(bg)
		if !raced {
			t.Fatal("B never wrote a fence")
		}
		if aFlush != nil {
			t.Fatalf("A's flush into the id B was about to fence: %v (B's epoch is claimed but its WAL fence is not yet there, so A's WAL write still lands)", aFlush)
		}
		if err := h.AwaitDurable(bg); err != nil {
			t.Fatal(err)
		}
		if info, err := inner.Head(bg, walKey(tail+1)); err != nil || info.Size == 0 {
			t.Fatalf("WAL %d: %+v %v, want A's file", tail+1, info, err)
		}
		if info, err := inner.Head(bg, walKey(tail+2)); err != nil || info.Size != 0 {
			t.Fatalf("WAL %d: %+v %v, want B's zero-byte fence", tail+2, info, err)
		}
		if got := b.Stats().WalLastFlushedID; got != tail+2 {
			t.Fatalf("B's WAL starts after %d, want after its fence %d", got, tail+2)
		}
		mustGet(t, b.Get, "k", "a2") // A's acknowledged write was replayed
		if err := a.Put(bg, []byte("k"), []byte("a3")); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("A after B's fence: %v, want ErrFenced", err)
		}
		a.Close(bg)
		if err := b.Put(bg, []byte("k"), []byte("b1")); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(bg); err != nil {
			t.Fatal(err)
		}
		c := e.open(t, inner, quietOpts(slate.FlushManual)...)
		defer c.Close(bg)
		mustGet(t, c.Get, "k", "b1")
	})
}

// TestOpenFencedWhileFencing: the id B's fence was to take is taken by an
// even newer writer C (which claimed its epoch after B). B's re-check of
// the epoch on that conflict finds C's epoch: B's Open fails with
// ErrFenced and B writes no fence past C's.
func TestOpenFencedWhileFencing(t *testing.T) {
	forEachNativeEnv(t, func(t *testing.T, e *env) {
		inner := e.store(t)
		a := e.open(t, inner, quietOpts(slate.FlushManual)...)
		if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
			t.Fatal(err)
		}
		tail := a.Stats().WalLastFlushedID
		hs := &hookStore{Store: inner}
		var c *slate.DB
		var cErr error
		hs.setHook(func(op objstore.Op, key string, data []byte) error {
			if op == objstore.OpPutIfAbsent && strings.HasPrefix(key, "db/wal/") && len(data) == 0 && c == nil && cErr == nil {
				c, cErr = slate.Open(bg, inner, "db", quietOpts(slate.FlushManual)...)
			}
			return nil
		})
		_, err := slate.Open(bg, hs, "db", quietOpts(slate.FlushManual)...)
		if cErr != nil {
			t.Fatalf("C's open: %v", cErr)
		}
		if c == nil {
			t.Fatal("B never wrote a fence")
		}
		defer c.Close(bg)
		if !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("B's open after C took its fence id: %v, want ErrFenced", err)
		}
		if info, err := inner.Head(bg, walKey(tail+1)); err != nil || info.Size != 0 {
			t.Fatalf("WAL %d: %+v %v, want C's fence", tail+1, info, err)
		}
		if _, err := inner.Head(bg, walKey(tail+2)); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("WAL %d exists (%v): B fenced past C", tail+2, err)
		}
		if err := c.Put(bg, []byte("k"), []byte("c1")); err != nil {
			t.Fatalf("C (the newest writer): %v", err)
		}
		mustGet(t, c.Get, "k", "c1")
		a.Close(bg)
	})
}

// TestLosingOpenerFenceDoesNotStopTheWinner: B claims its epoch, then C
// opens completely (a newer epoch, its fence at the tail + 1), then B
// probes the tail, finds C's fence and fences the id after it. B's
// re-check fails (ErrFenced), but its zero-byte fence now sits at the id
// C's first WAL file was to take. C must not take that for a newer writer:
// its epoch still stands, so it moves past the fence and keeps writing.
func TestLosingOpenerFenceDoesNotStopTheWinner(t *testing.T) {
	forEachNativeEnv(t, func(t *testing.T, e *env) {
		inner := e.store(t)
		a := e.open(t, inner, quietOpts(slate.FlushManual)...)
		if err := a.Put(bg, []byte("k"), []byte("a1")); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(bg); err != nil {
			t.Fatal(err)
		}
		var tail uint64
		for _, o := range mustList(t, inner, "db/wal/") {
			tail++ // contiguous from 1
			if o.Key != walKey(tail) {
				t.Fatalf("WAL id %d is %s: the listing is not contiguous", tail, o.Key)
			}
		}
		hs := &hookStore{Store: inner}
		var c *slate.DB
		var cErr error
		var once sync.Once
		hs.setAfter(func(op objstore.Op, key string, err error) {
			if op == objstore.OpPutIfAbsent && strings.HasPrefix(key, "db/manifest/") && err == nil {
				once.Do(func() { c, cErr = slate.Open(bg, inner, "db", quietOpts(slate.FlushManual)...) })
			}
		})
		_, err := slate.Open(bg, hs, "db", quietOpts(slate.FlushManual)...)
		if cErr != nil || c == nil {
			t.Fatalf("C's open inside B's: %v", cErr)
		}
		defer c.Close(bg)
		if !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("B's open: %v, want ErrFenced (C claimed a newer epoch while B opened)", err)
		}
		for id, what := range map[uint64]string{tail + 1: "C's fence", tail + 2: "B's fence"} {
			if info, err := inner.Head(bg, walKey(id)); err != nil || info.Size != 0 {
				t.Fatalf("WAL %d: %+v %v, want %s", id, info, err, what)
			}
		}
		if err := c.Put(bg, []byte("k"), []byte("c1")); err != nil {
			t.Fatalf("C, the newest writer, after the losing opener's fence: %v", err)
		}
		if got := c.Stats().WalLastFlushedID; got != tail+3 {
			t.Fatalf("C's first WAL file is %d, want %d (past B's fence)", got, tail+3)
		}
		if err := c.Put(bg, []byte("k2"), []byte("c2")); err != nil {
			t.Fatal(err)
		}
		d := e.open(t, inner, quietOpts(slate.FlushManual)...) // crash C; replay
		defer d.Close(bg)
		mustGet(t, d.Get, "k", "c1")
		mustGet(t, d.Get, "k2", "c2")
	})
}

func mustList(t *testing.T, s objstore.Store, prefix string) []objstore.ObjectInfo {
	t.Helper()
	objs, err := objstore.ListAll(bg, s, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestRacingOpensLeaveOneWriter: two writers open at the same time, again
// and again. Whatever the interleaving, exactly one of them can write
// afterwards (the one with the higher epoch); the other's Open or first
// write fails with ErrFenced, and only the winner's write survives.
func TestRacingOpensLeaveOneWriter(t *testing.T) {
	forEachLocalEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		first := e.open(t, s)
		if err := first.Close(bg); err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 8; round++ {
			var dbs [2]*slate.DB
			var errs [2]error
			var wg sync.WaitGroup
			for i := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dbs[i], errs[i] = slate.Open(bg, s, "db", e.writerOpts()...)
				}()
			}
			wg.Wait()
			key := fmt.Sprintf("round%d", round)
			var winners []int
			for i, db := range dbs {
				if errs[i] != nil {
					if !errors.Is(errs[i], slate.ErrFenced) {
						t.Fatalf("round %d: open %d: %v, want success or ErrFenced", round, i, errs[i])
					}
					continue
				}
				err := db.Put(bg, []byte(key), []byte(fmt.Sprint(i)))
				if err == nil {
					winners = append(winners, i)
				} else if !errors.Is(err, slate.ErrFenced) {
					t.Fatalf("round %d: writer %d: %v, want success or ErrFenced", round, i, err)
				}
			}
			if len(winners) != 1 {
				t.Fatalf("round %d: %d writers could write (open errors %v), want exactly 1", round, len(winners), errs)
			}
			w := winners[0]
			if l := 1 - w; errs[l] == nil {
				if dbs[l].Stats().WriterEpoch >= dbs[w].Stats().WriterEpoch {
					t.Fatalf("round %d: the fenced writer holds epoch %d, the live one %d", round, dbs[l].Stats().WriterEpoch, dbs[w].Stats().WriterEpoch)
				}
				if err := dbs[l].Close(bg); !errors.Is(err, slate.ErrFenced) {
					t.Fatalf("round %d: Close of the fenced writer: %v", round, err)
				}
			}
			if err := dbs[w].Close(bg); err != nil {
				t.Fatalf("round %d: Close of the live writer: %v", round, err)
			}
			check := e.open(t, s)
			mustGet(t, check.Get, key, fmt.Sprint(w))
			if err := check.Close(bg); err != nil {
				t.Fatal(err)
			}
		}
	})
}
