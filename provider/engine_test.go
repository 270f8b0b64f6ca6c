package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// engineOpts: no background GC, compaction or manifest poll (tests drive
// them), plus extra.
func engineOpts(extra ...slate.Option) []slate.Option {
	opts := []slate.Option{
		slate.WithLogger(quiet),
		slate.WithSettings(slate.Settings{ManifestPollInterval: -1, FlushInterval: slate.FlushContinuous}),
		slate.WithGC(slate.GCOptions{Interval: -1}),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1}),
	}
	return append(opts, extra...)
}

// quiet drops the engine's log lines (tests provoke closes on purpose).
var quiet = slog.New(slog.DiscardHandler)

// nativeStore creates a store at path on its own WAL, writes to it, flushes
// it into the tree and closes it, and returns a base just past its WAL ids
// and seqs (as adoption computes one).
func nativeStore(t *testing.T, st objstore.Store, path string) core.LogBase {
	t.Helper()
	db, err := slate.Open(bg, st, path, engineOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"pre/a", "1"}, {"pre/b", "2"}, {"last", "pre"}} {
		if err := db.Put(bg, []byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete(bg, []byte("pre/b")); err != nil {
		t.Fatal(err)
	}
	if err := db.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	s := db.Stats()
	if err := db.Close(bg); err != nil {
		t.Fatal(err)
	}
	return core.LogBase{WalBase: s.WalLastFlushedID + 1, SeqBase: s.LastSeq + 1, OriginBatchSeq: testBase.OriginBatchSeq}
}

func writeBatchOf(b core.LogBatch) *slate.WriteBatch {
	wb := slate.NewWriteBatch()
	for _, w := range b.Writes {
		if w.Delete {
			wb.Delete(w.Key)
		} else {
			wb.Put(w.Key, w.Value)
		}
	}
	return wb
}

// land wins slot k through c and applies it to db at its seq.
func land(t *testing.T, c *Committer, db *slate.DB, base core.LogBase, k uint64) {
	t.Helper()
	b := batchFor(k)
	mustWin(t, c, b)
	h, err := db.Write(bg, writeBatchOf(b), slate.WriteOptions{Seq: base.Seq(k)})
	if err != nil {
		t.Fatalf("applying slot %d: %v", k, err)
	}
	if h.Seq != base.Seq(k) {
		t.Fatalf("slot %d applied at seq %d, want %d", k, h.Seq, base.Seq(k))
	}
}

type getter interface {
	Get(ctx context.Context, key []byte) ([]byte, bool, error)
}

// expectState checks the pre-log keys and slots 1..through.
func expectState(t *testing.T, g getter, through uint64) {
	t.Helper()
	want := map[string]string{"pre/a": "1", "pre/b": "", "sys/format": "stamp", "last": fmt.Sprint(through)}
	if through == 0 {
		want["last"] = "pre"
	}
	for k := uint64(1); k <= through; k++ {
		want[fmt.Sprintf("k%03d", k)] = fmt.Sprintf("v%d", k)
	}
	want[fmt.Sprintf("k%03d", through+1)] = ""
	for k, v := range want {
		got, ok, err := g.Get(bg, []byte(k))
		if err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
		if string(got) != v || ok != (v != "") {
			t.Fatalf("%s = %q (found %v), want %q", k, got, ok, v)
		}
	}
}

// logGets counts GETs of slot objects.
type logGets struct {
	objstore.Store
	n atomic.Int64
}

func (l *logGets) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	if i := strings.LastIndex(key, "/log/"); i >= 0 && len(key)-i-5 == 20 {
		l.n.Add(1)
	}
	return l.Store.Get(ctx, key)
}

// TestFold: a store whose manifest predates the log is opened over the
// plug: every slot's writes are replayed at their seqs; a further slot is
// applied with db.Write at its seq and moves the plug's status; the flush
// records its WAL id as the replay point; a reopen replays nothing twice;
// a reader over the log sees the folded state plus unfolded slots.
func TestFold(t *testing.T) {
	forBackends(t, true, func(t *testing.T, st objstore.Store) {
		const path = "lake"
		base := nativeStore(t, st, path)
		p := New(testOpts())
		c := adopt(t, p, st, path, base, 5)

		// The replay iterator yields each slot at its seq and WAL id.
		it, err := New(testOpts()).Reader(st, path).Iterator(bg, slate.WalRange{Start: 1, End: base.WalID(6)})
		if err != nil {
			t.Fatal(err)
		}
		for k := uint64(0); k <= 5; k++ {
			rows, err := it.Next(bg)
			if err != nil || rows == nil {
				t.Fatalf("slot %d: %+v %v", k, rows, err)
			}
			if rows.LastConsumedWalID != base.WalID(k) {
				t.Fatalf("slot %d at WAL id %d, want %d", k, rows.LastConsumedWalID, base.WalID(k))
			}
			for _, r := range rows.Rows {
				if r.Seq != base.Seq(k) {
					t.Fatalf("slot %d row %q at seq %d, want %d", k, r.Key, r.Seq, base.Seq(k))
				}
			}
		}
		if rows, err := it.Next(bg); rows != nil || err != nil {
			t.Fatalf("past the range: %+v %v", rows, err)
		}

		db, err := slate.Open(bg, st, path, engineOpts(slate.WithWalWriter(p.WriterInit(st, path)))...)
		if err != nil {
			t.Fatal(err)
		}
		expectState(t, db, 5)
		if got := db.LastCommittedSeq(); got != base.Seq(5) {
			t.Fatalf("last seq %d, want slot 5's %d", got, base.Seq(5))
		}
		land(t, c, db, base, 6)
		expectState(t, db, 6)
		if s := db.Stats(); s.WalLastFlushedID != base.WalID(6) || s.DurableSeq != base.Seq(6) {
			t.Fatalf("plug status after slot 6: WAL %d durable %d, want %d %d", s.WalLastFlushedID, s.DurableSeq, base.WalID(6), base.Seq(6))
		}
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		if s := db.Stats(); s.ReplayAfterWalID != base.WalID(6) || s.LastL0Seq != base.Seq(6) {
			t.Fatalf("after the flush: replay point %d last L0 seq %d, want %d %d", s.ReplayAfterWalID, s.LastL0Seq, base.WalID(6), base.Seq(6))
		}
		if err := db.Close(bg); err != nil {
			t.Fatal(err)
		}

		// Reopen: nothing to replay (no slot GET), the state intact.
		counted := &logGets{Store: st}
		p2 := New(testOpts())
		db2, err := slate.Open(bg, st, path, engineOpts(slate.WithWalWriter(p2.WriterInit(counted, path)))...)
		if err != nil {
			t.Fatal(err)
		}
		if n := counted.n.Load(); n != 0 {
			t.Fatalf("reopen read %d slots; everything was folded", n)
		}
		expectState(t, db2, 6)
		land(t, p2.Committer(counted, path).(*Committer), db2, base, 7)
		if err := db2.Close(bg); err != nil {
			t.Fatal(err)
		}

		// A reader over the log: folded state, then an unfolded slot after
		// a Refresh.
		r, err := slate.OpenReader(bg, st, path, slate.ReaderOptions{PollInterval: -1}, slate.WithWalReader(New(testOpts()).Reader(st, path)))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(bg)
		expectState(t, r, 7)
		mustWin(t, c, batchFor(8))
		if err := r.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		expectState(t, r, 8)
		if r.Seq() != base.Seq(8) {
			t.Fatalf("reader seq %d, want %d", r.Seq(), base.Seq(8))
		}
	})
}

// TestReaderBeforeFold: a reader whose manifest predates the log reads
// every slot from 0, and keeps tailing.
func TestReaderBeforeFold(t *testing.T) {
	st := objstore.NewMemory(0)
	base := nativeStore(t, st, "")
	c := adopt(t, New(testOpts()), st, "", base, 2)
	r, err := slate.OpenReader(bg, st, "", slate.ReaderOptions{PollInterval: -1}, slate.WithWalReader(New(testOpts()).Reader(st, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	expectState(t, r, 2)
	for k := uint64(3); k <= 40; k++ {
		mustWin(t, c, batchFor(k))
		if k%7 == 0 {
			if err := r.Refresh(bg); err != nil {
				t.Fatal(err)
			}
			expectState(t, r, k)
		}
	}
	if err := r.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	expectState(t, r, 40)
}

// uploadHook runs fn during the first table upload after it is armed.
type uploadHook struct {
	objstore.Store
	mu sync.Mutex
	fn func()
}

func (h *uploadHook) arm(fn func()) {
	h.mu.Lock()
	h.fn = fn
	h.mu.Unlock()
}

func (h *uploadHook) Put(ctx context.Context, key string, data []byte) (string, error) {
	if strings.Contains(key, "compacted/") {
		h.mu.Lock()
		fn := h.fn
		h.fn = nil
		h.mu.Unlock()
		if fn != nil {
			fn()
		}
	}
	return h.Store.Put(ctx, key, data)
}

// TestTruncation: db.RunGC through the plug's collector keeps the
// replay-point slot and every slot a reader's checkpoint references,
// deletes the rest below the floor it raises first, never loses the base,
// and a reader opened before the collection still reads everything.
func TestTruncation(t *testing.T) {
	forBackends(t, true, func(t *testing.T, st objstore.Store) {
		const path = "db"
		base := nativeStore(t, st, path)
		p := New(testOpts())
		c := adopt(t, p, st, path, base, 2)
		hooked := &uploadHook{Store: st}
		db, err := slate.Open(bg, hooked, path, engineOpts(slate.WithWalWriter(p.WriterInit(st, path)), slate.WithWalGC(p.GC(st, path)))...)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(bg)
		// The open froze the replayed slots and flushes them in the
		// background: let that upload finish before arming the hook, so the
		// armed upload is the one of the memtable holding slot 3.
		for deadline := time.Now().Add(30 * time.Second); db.Stats().FrozenMemtables > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the open's frozen memtable never reached L0")
			}
		}
		land(t, c, db, base, 3)
		// Flush at slot 3 while slot 4 is applied during the table's upload
		// (after the freeze, before the manifest update): the manifest then
		// says "replay after slot 3, WAL ids used through slot 4", a range a
		// reader's checkpoint pins.
		var hookErr error
		hooked.arm(func() {
			b := batchFor(4)
			if res, err := c.Offer(bg, b); err != nil || !res.Won {
				hookErr = fmt.Errorf("offer 4: %v %v", res.Won, err)
				return
			}
			_, hookErr = db.Write(bg, writeBatchOf(b), slate.WriteOptions{Seq: base.Seq(4)})
		})
		if err := db.FlushMemtable(bg); err != nil || hookErr != nil {
			t.Fatalf("flush: %v, slot 4: %v", err, hookErr)
		}
		if s := db.Stats(); s.ReplayAfterWalID != base.WalID(3) {
			t.Fatalf("replay point %d, want slot 3's %d", s.ReplayAfterWalID, base.WalID(3))
		}
		reader, err := slate.OpenReader(bg, st, path, slate.ReaderOptions{PollInterval: -1}, slate.WithWalReader(New(testOpts()).Reader(st, path)))
		if err != nil {
			t.Fatal(err)
		}
		expectState(t, reader, 4)
		for k := uint64(5); k <= 7; k++ {
			land(t, c, db, base, k)
		}
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		if s := db.Stats(); s.ReplayAfterWalID != base.WalID(7) {
			t.Fatalf("replay point %d, want slot 7's %d", s.ReplayAfterWalID, base.WalID(7))
		}
		// The reader's checkpoint pins (slot 3, slot 4]: slot 3 is the
		// replay-point slot kept for it; 0..2 go.
		rep, err := db.RunGC(bg, slate.GCOptions{MinAge: -1})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rep.WalFiles) != fmt.Sprint([]uint64{base.WalID(0), base.WalID(1), base.WalID(2)}) {
			t.Fatalf("deleted WAL ids %v", rep.WalFiles)
		}
		if got := slotsIn(t, st, path); fmt.Sprint(got) != fmt.Sprint(span(3, 7)) {
			t.Fatalf("slots left %v", got)
		}
		if f, _, err := newLogState(st, path, testOpts()).readFloor(bg); err != nil || f != 3 {
			t.Fatalf("floor %d %v, want 3", f, err)
		}
		// The reader opened before the collection reads everything, and
		// follows on.
		if err := reader.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		expectState(t, reader, 7)
		mustWin(t, c, batchFor(8))
		if err := reader.Refresh(bg); err != nil {
			t.Fatal(err)
		}
		expectState(t, reader, 8)
		if err := reader.Close(bg); err != nil {
			t.Fatal(err)
		}
		// No reader: everything below the replay point (slot 7) goes; slot
		// 7 itself and the unfolded slot 8 stay.
		rep, err = db.RunGC(bg, slate.GCOptions{MinAge: -1})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rep.WalFiles) != fmt.Sprint([]uint64{base.WalID(3), base.WalID(4), base.WalID(5), base.WalID(6)}) {
			t.Fatalf("deleted WAL ids %v", rep.WalFiles)
		}
		if got := slotsIn(t, st, path); fmt.Sprint(got) != "[7 8]" {
			t.Fatalf("slots left %v", got)
		}
		// Retention keeps young slots whatever the engine asks.
		if _, err := db.Write(bg, writeBatchOf(batchFor(8)), slate.WriteOptions{Seq: base.Seq(8)}); err != nil {
			t.Fatal(err)
		}
		land(t, c, db, base, 9)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		kept, err := New(Options{Retention: DefaultRetention}).GC(st, path).Collect(bg, []slate.WalRange{{Start: base.WalID(10)}}, 0, false)
		if err != nil || len(kept) != 0 {
			t.Fatalf("retention: deleted %v %v", kept, err)
		}
		dry, err := p.GC(st, path).Collect(bg, []slate.WalRange{{Start: base.WalID(10)}}, 0, true)
		if err != nil || fmt.Sprint(dry) != fmt.Sprint([]uint64{base.WalID(7), base.WalID(8)}) {
			t.Fatalf("dry run: %v %v", dry, err)
		}
		if got := slotsIn(t, st, path); fmt.Sprint(got) != "[7 8 9]" {
			t.Fatalf("a dry run deleted something: %v", got)
		}
		// The log's base outlives slot 0; a cold reopen replays from the
		// store and the log alike.
		if b, ok, err := New(testOpts()).Committer(st, path).Base(bg); err != nil || !ok || b != base {
			t.Fatalf("base %+v %v %v", b, ok, err)
		}
		if err := db.Close(bg); err != nil {
			t.Fatal(err)
		}
		db2, err := slate.Open(bg, st, path, engineOpts(slate.WithWalWriter(New(testOpts()).WriterInit(st, path)))...)
		if err != nil {
			t.Fatal(err)
		}
		expectState(t, db2, 9)
		if err := db2.Close(bg); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTwoFolders: a second folder's open fences the first (engine epoch);
// the first finds out at its next Flush, and its writes then fail and land
// nothing in the log (a folder never writes the log).
func TestTwoFolders(t *testing.T) {
	st := objstore.NewMemory(0)
	base := nativeStore(t, st, "")
	p := New(testOpts())
	c := adopt(t, p, st, "", base, 2)
	a, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(p.WriterInit(st, "")))...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(bg)
	land(t, c, a, base, 3)
	b, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(New(testOpts()).WriterInit(st, "")))...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	if err := a.Flush(bg); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("first folder's flush after the second opened: %v, want ErrFenced", err)
	}
	mustWin(t, c, batchFor(4))
	if _, err := a.Write(bg, writeBatchOf(batchFor(4)), slate.WriteOptions{Seq: base.Seq(4)}); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("fenced folder's write: %v, want ErrFenced", err)
	}
	if err := a.FlushMemtable(bg); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("fenced folder's flush: %v", err)
	}
	if got := slotsIn(t, st, ""); fmt.Sprint(got) != fmt.Sprint(span(0, 4)) {
		t.Fatalf("slots %v", got)
	}
	// The second folder replayed slot 3 (which the first had only in its
	// memtable) and folds on.
	expectState(t, b, 3)
	h, err := b.Write(bg, writeBatchOf(batchFor(4)), slate.WriteOptions{Seq: base.Seq(4)})
	if err != nil || h.Seq != base.Seq(4) {
		t.Fatalf("second folder: %v", err)
	}
	expectState(t, b, 4)
}

// TestFolderGuards: a folder never gets ahead of the log, and refuses a
// store the log cannot drive.
func TestFolderGuards(t *testing.T) {
	t.Run("slot not landed", func(t *testing.T) {
		st := objstore.NewMemory(0)
		base := nativeStore(t, st, "")
		p := New(testOpts())
		adopt(t, p, st, "", base, 2)
		db, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(p.WriterInit(st, "")))...)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(bg)
		if _, err := db.Write(bg, writeBatchOf(batchFor(3)), slate.WriteOptions{Seq: base.Seq(3)}); !errors.Is(err, ErrNotLanded) {
			t.Fatalf("applying a slot that never landed: %v, want ErrNotLanded", err)
		}
		if err := db.FlushMemtable(bg); err == nil {
			t.Fatal("a store ahead of its log flushed")
		}
	})
	t.Run("skipped slots", func(t *testing.T) {
		st := objstore.NewMemory(0)
		base := nativeStore(t, st, "")
		p := New(testOpts())
		c := adopt(t, p, st, "", base, 1)
		db, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(p.WriterInit(st, "")))...)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(bg)
		// An empty slot may be skipped (it holds nothing to apply).
		mustWin(t, c, core.LogBatch{TxnID: batchFor(2).TxnID, Slot: 2})
		land(t, c, db, base, 3)
		if s := db.Stats(); s.WalLastFlushedID != base.WalID(3) {
			t.Fatalf("status %d after skipping an empty slot", s.WalLastFlushedID)
		}
		// A slot with writes may not.
		mustWin(t, c, batchFor(4))
		mustWin(t, c, batchFor(5))
		if _, err := db.Write(bg, writeBatchOf(batchFor(5)), slate.WriteOptions{Seq: base.Seq(5)}); !errors.Is(err, slate.ErrInvalid) || !strings.Contains(err.Error(), "skipped slot 4") {
			t.Fatalf("skipping slot 4: %v", err)
		}
	})
	t.Run("unadopted", func(t *testing.T) {
		st := objstore.NewMemory(0)
		nativeStore(t, st, "")
		_, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(New(testOpts()).WriterInit(st, "")))...)
		if !errors.Is(err, ErrNotAdopted) {
			t.Fatalf("open over an unadopted log: %v", err)
		}
	})
	t.Run("rows left in the store's own WAL", func(t *testing.T) {
		st := objstore.NewMemory(0)
		native, err := slate.Open(bg, st, "", engineOpts()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := native.Put(bg, []byte("unflushed"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		s := native.Stats() // a crash: no flush, no close
		base := core.LogBase{WalBase: s.WalLastFlushedID + 1, SeqBase: s.LastSeq + 1}
		adopt(t, New(testOpts()), st, "", base, 1)
		_, err = slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(New(testOpts()).WriterInit(st, "")))...)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "own WAL") {
			t.Fatalf("open over a store with unflushed native rows: %v", err)
		}
		// The attempt fenced the native writer out of its WAL.
		if err := native.Put(bg, []byte("late"), []byte("y")); !errors.Is(err, slate.ErrFenced) {
			t.Fatalf("native writer after the plug's fence: %v, want ErrFenced", err)
		}
		native.Close(bg)
	})
	t.Run("replay point past the log", func(t *testing.T) {
		st := objstore.NewMemory(0)
		base := nativeStore(t, st, "")
		p := New(testOpts())
		c := adopt(t, p, st, "", base, 0)
		db, err := slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(p.WriterInit(st, "")))...)
		if err != nil {
			t.Fatal(err)
		}
		for k := uint64(1); k <= 4; k++ {
			land(t, c, db, base, k)
		}
		if err := db.Close(bg); err != nil {
			t.Fatal(err)
		}
		// Another log (another store) with the same base but a shorter tail.
		other := objstore.NewMemory(0)
		adopt(t, New(testOpts()), other, "", base, 2)
		_, err = slate.Open(bg, st, "", engineOpts(slate.WithWalWriter(New(testOpts()).WriterInit(other, "")))...)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "replay point") {
			t.Fatalf("open with a replay point past the log's tail: %v", err)
		}
	})
}

// TestWriterAppendRules exercises the plug's writer directly.
func TestWriterAppendRules(t *testing.T) {
	st := objstore.NewMemory(0)
	p := New(Options{Retention: -1, FlushSlots: 3})
	adopt(t, p, st, "", testBase, 2)
	l := p.state(st, "")
	w := newWriter(l, testBase, nil, 2)
	defer w.Close(bg)
	var events []slate.WalEvent
	var mu sync.Mutex
	w.Subscribe(func(ev slate.WalEvent) { mu.Lock(); events = append(events, ev); mu.Unlock() })
	row := func(seq uint64) slate.Row {
		return slate.Row{Key: []byte("k"), Value: []byte("v"), Kind: slate.RowPut, Seq: seq}
	}
	if err := w.Append([]slate.Row{row(testBase.SeqBase - 1)}); !errors.Is(err, slate.ErrInvalid) {
		t.Fatalf("seq below the base: %v", err)
	}
	if err := w.Append([]slate.Row{row(testBase.Seq(2))}); !errors.Is(err, slate.ErrInvalid) {
		t.Fatalf("a slot already held: %v", err)
	}
	if err := w.Append([]slate.Row{row(testBase.Seq(3)), row(testBase.Seq(4))}); !errors.Is(err, slate.ErrInvalid) {
		t.Fatalf("two seqs in a batch: %v", err)
	}
	if w.ShouldFlushMemtable(testBase.WalID(0)) {
		t.Fatal("flush asked with 2 slots past the replay point")
	}
	if !w.ShouldFlushMemtable(1) {
		t.Fatal("no flush asked with 3 slots and a replay point below the log")
	}
	c := p.Committer(st, "").(*Committer)
	mustWin(t, c, batchFor(3))
	if err := w.Append([]slate.Row{row(testBase.Seq(3))}); err != nil {
		t.Fatal(err)
	}
	if s := w.Status(); s.LastFlushedWalID != testBase.WalID(3) || s.LastFlushedSeq != testBase.Seq(3) || !s.HasFlushedSeq {
		t.Fatalf("status after a known slot: %+v", s)
	}
	if !w.ShouldFlushMemtable(testBase.WalID(0)) {
		t.Fatal("no flush asked with 3 slots past the replay point")
	}
	// A slot landed by a peer the session did not see: confirmed by a LIST.
	mustWin(t, New(testOpts()).Committer(st, "").(*Committer), batchFor(4))
	if err := w.Append([]slate.Row{row(testBase.Seq(4))}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "slot 4 confirmed", func() bool { return w.Status().LastFlushedWalID == testBase.WalID(4) })
	waitFor(t, "events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) > 0 && events[len(events)-1].Status.LastFlushedWalID == testBase.WalID(4)
	})
	mu.Lock()
	for _, ev := range events {
		if ev.Kind != slate.WalFlushed {
			t.Fatalf("event %+v", ev)
		}
	}
	mu.Unlock()
}

// TestCollectStopsListingAtTheFirstYoungSlot: the collector lists the log
// only up to the first slot too young to delete (slots grow younger
// upward), so while the retention keeps every slot a collection lists one
// page, not one per page of retained slots; when the slots are old it
// still lists and deletes everything below the replay point.
func TestCollectStopsListingAtTheFirstYoungSlot(t *testing.T) {
	mem := objstore.NewMemory(4) // four keys per LIST page
	cs := objstore.WithCounting(mem)
	adopt(t, New(testOpts()), mem, "", testBase, 40)
	lists := func(opts Options, dry bool) ([]uint64, int64) {
		t.Helper()
		before := cs.Snapshot()
		ids, err := New(opts).GC(cs, "").Collect(bg, []slate.WalRange{{Start: testBase.WalID(30)}}, 0, dry)
		if err != nil {
			t.Fatal(err)
		}
		return ids, cs.Snapshot().Sub(before).Of(objstore.OpList)
	}
	if ids, n := lists(Options{Retention: DefaultRetention}, false); len(ids) != 0 || n != 1 {
		t.Fatalf("every slot young: deleted %v with %d LISTs, want none with one", ids, n)
	}
	// Old slots (no retention): the listing goes on to the replay point's
	// slot 29 and everything below it goes.
	ids, n := lists(testOpts(), true)
	if len(ids) != 29 || ids[0] != testBase.WalID(0) || ids[28] != testBase.WalID(28) || n < 8 {
		t.Fatalf("old slots, dry run: %d ids (%v...), %d LISTs; want slots 0..28 over at least 8 pages", len(ids), ids[:min(len(ids), 3)], n)
	}
	if ids, _ := lists(testOpts(), false); len(ids) != 29 {
		t.Fatalf("old slots: deleted %d, want 29", len(ids))
	}
	if got := slotsIn(t, mem, ""); got[0] != 29 || len(got) != 12 {
		t.Fatalf("slots left %v, want 29..40", got)
	}
}
