package slate_test

import (
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

// pollUntil polls cond until it holds, failing the test after d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", d, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestWalRequestedMemtableFlush: a WAL that asks for a memtable flush
// (ShouldFlushMemtable) gets one, with the memtable far below its size
// limit: the memtable is frozen and lands in L0, the replay point moves.
// Without the request the same writes stay in the memtable.
func TestWalRequestedMemtableFlush(t *testing.T) {
	forEachLocalEnv(t, func(t *testing.T, e *env) {
		run := func(t *testing.T, ask bool) slate.Stats {
			s := e.store(t)
			settings := slate.Settings{FlushInterval: 5 * time.Millisecond, ManifestPollInterval: -1}
			if e.plugs {
				e.memWAL = slatetest.NewMemWAL()
				if ask {
					e.memWAL.FlushMemtableAfter(3)
				}
			} else if ask {
				settings.MaxWalFlushesBeforeL0Flush = 3
			}
			opts := []slate.Option{slate.WithSettings(settings),
				slate.WithCompactor(slate.CompactorOptions{PollInterval: -1}), slate.WithGC(slate.GCOptions{Interval: -1})}
			db := e.open(t, s, opts...)
			for i := 0; i < 6; i++ {
				if err := db.Put(bg, []byte(fmt.Sprintf("k%d", i)), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			if !ask {
				st := db.Stats()
				if st.L0 != 0 || st.FrozenMemtables != 0 {
					t.Fatalf("nothing asked for a memtable flush, yet %+v", st)
				}
				db.Close(bg)
				return st
			}
			// The freeze happens inside a write; the upload follows.
			pollUntil(t, 10*time.Second, "the requested memtable flush reaches L0", func() bool {
				st := db.Stats()
				return st.L0 >= 1 && st.FrozenMemtables == 0
			})
			st := db.Stats()
			if st.ReplayAfterWalID == 0 || st.LastL0Seq == 0 {
				t.Fatalf("L0 flush did not advance the replay point: %+v", st)
			}
			if e.plugs && e.memWAL.MemtableFlushRequests() == 0 {
				t.Fatal("the MemWAL was never asked")
			}
			// Crash and reopen: L0 plus the WAL above the replay point.
			db2 := e.open(t, s, opts...)
			defer db2.Close(bg)
			for i := 0; i < 6; i++ {
				mustGet(t, db2.Get, fmt.Sprintf("k%d", i), "v")
			}
			db.Close(bg)
			return st
		}
		t.Run("asked", func(t *testing.T) { run(t, true) })
		t.Run("not asked", func(t *testing.T) { run(t, false) })
	})
}

// TestL0PublishedOnlyAfterWalDurable holds the WAL upload of a memtable's
// last batch while FlushMemtable runs: no L0 table is uploaded or
// published meanwhile. If the WAL upload then fails, none ever is (and the
// unacknowledged batch is gone after reopening); if it lands, the L0 upload
// starts only after it.
func TestL0PublishedOnlyAfterWalDurable(t *testing.T) {
	forEachNativeEnv(t, func(t *testing.T, e *env) {
		for _, lands := range []bool{false, true} {
			name := "WAL upload fails"
			if lands {
				name = "WAL upload lands"
			}
			t.Run(name, func(t *testing.T) {
				inner := e.store(t)
				hs := &hookStore{Store: inner}
				db := e.open(t, hs, quietOpts(slate.FlushManual)...)
				defer db.Close(bg)
				if err := db.Put(bg, []byte("a"), []byte("1")); err != nil {
					t.Fatal(err)
				}
				reached, release, abort := make(chan struct{}), make(chan error), make(chan struct{})
				defer close(abort) // a failed test lets the held upload go before db.Close
				var heldKey string
				var once sync.Once
				hs.setHook(func(op objstore.Op, key string, data []byte) error {
					hold := false
					if op == objstore.OpPutIfAbsent && strings.HasPrefix(key, "db/wal/") && len(data) > 0 {
						once.Do(func() { hold, heldKey = true, key; close(reached) })
					}
					if !hold {
						return nil
					}
					select {
					case err := <-release:
						return err
					case <-abort:
						return errors.New("test ended")
					}
				})
				h, err := db.Write(bg, batchOf("b", "2"), slate.WriteOptions{NoWait: true})
				if err != nil {
					t.Fatal(err)
				}
				flushed := make(chan error, 1)
				go func() { flushed <- db.FlushMemtable(bg) }()
				select {
				case <-reached:
				case <-time.After(10 * time.Second):
					t.Fatal("FlushMemtable never uploaded the WAL")
				}
				// While the WAL upload hangs, an engine that did not wait for
				// it would upload and publish the L0 table now: give it the
				// chance.
				for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
					assertNoL0(t, inner, "while the WAL upload hangs")
				}
				if st := db.Stats(); st.DurableSeq >= h.Seq {
					t.Fatalf("seq %d durable before its WAL upload finished: %+v", h.Seq, st)
				}
				if !lands {
					release <- errors.New("injected: WAL upload failed")
					if err := <-flushed; err == nil {
						t.Fatal("FlushMemtable succeeded although the WAL upload failed")
					}
					if err := h.AwaitDurable(bg); err == nil {
						t.Fatal("a batch whose WAL upload failed was acknowledged as durable")
					}
					assertNoL0(t, inner, "after the WAL upload failed")
					db2 := e.open(t, inner, quietOpts(slate.FlushManual)...)
					defer db2.Close(bg)
					mustGet(t, db2.Get, "a", "1")
					mustGet(t, db2.Get, "b", "")
					return
				}
				release <- nil
				if err := <-flushed; err != nil {
					t.Fatal(err)
				}
				log := hs.writes()
				walDone, l0Start := -1, -1
				for i, w := range log {
					if w == "done put-if-absent "+heldKey && walDone < 0 {
						walDone = i
					}
					if strings.HasPrefix(w, "start put db/compacted/") && l0Start < 0 {
						l0Start = i
					}
				}
				if walDone < 0 || l0Start < 0 || l0Start < walDone {
					t.Fatalf("the L0 upload (write #%d) must start after the WAL upload of its rows finished (write #%d): %v", l0Start, walDone, log)
				}
				if st := db.Stats(); st.L0 != 1 || st.LastL0Seq != h.Seq {
					t.Fatalf("after the flush: %+v, want one L0 table up to seq %d", st, h.Seq)
				}
			})
		}
	})
}

// assertNoL0 fails if an L0 table was uploaded or published.
func assertNoL0(t *testing.T, s objstore.Store, when string) {
	t.Helper()
	objs, err := objstore.ListAll(bg, s, "db/compacted/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 0 {
		t.Fatalf("%s: L0 tables uploaded: %v", when, keysAndTags(objs))
	}
	_, desc, err := slate.DescribeLatest(bg, s, "db")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(desc, "last_l0_seq=0 ") || !strings.Contains(desc, "l0=[ ]") {
		t.Fatalf("%s: L0 published: %s", when, desc)
	}
}

// TestReaderDoesNotSeeUndurableWrite: a batch written without waiting and
// not yet flushed to the WAL is visible to the writer but to no reader,
// whatever it does, until the WAL makes it durable.
func TestReaderDoesNotSeeUndurableWrite(t *testing.T) {
	forEachNativeEnv(t, func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, quietOpts(slate.FlushManual)...)
		defer db.Close(bg)
		if err := db.Put(bg, []byte("k"), []byte("v1")); err != nil {
			t.Fatal(err)
		}
		managed := e.reader(t, s, slate.ReaderOptions{})
		mustGet(t, managed.Get, "k", "v1")
		h, err := db.Write(bg, batchOf("k", "v2", "new", "x"), slate.WriteOptions{NoWait: true})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, db.Get, "k", "v2")
		if st := db.Stats(); st.DurableSeq >= h.Seq {
			t.Fatalf("manual flush mode made seq %d durable on its own: %+v", h.Seq, st)
		}
		if err := managed.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		follow := e.reader(t, s, slate.ReaderOptions{Mode: slate.ReaderFollowLatest})
		for name, r := range map[string]*slate.Reader{"managed": managed, "follow-latest": follow} {
			mustGet(t, r.Get, "k", "v1")
			mustGet(t, r.Get, "new", "")
			if got := scanAll(t, r.Scan(bg, nil, nil)); fmt.Sprint(got) != "[k=v1]" {
				t.Fatalf("%s reader scan = %v before the WAL flush", name, got)
			}
		}
		if err := db.Flush(bg); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*slate.Reader{"managed": managed, "follow-latest": follow} {
			if err := r.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			if got := scanAll(t, r.Scan(bg, nil, nil)); fmt.Sprint(got) != "[k=v2 new=x]" {
				t.Fatalf("%s reader scan = %v after the WAL flush", name, got)
			}
		}
	})
}
