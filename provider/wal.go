package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// WriterInit is the folder's WAL plug (slate.WriterInit): the engine writer
// opened over it replays the slots the store lacks and then journals each
// slot the folder applies, writing nothing (the slot object is the durable
// record). It is also the log's collector (slate.WalGC).
type WriterInit struct {
	// Collector: a folder's plug also truncates the log when the engine
	// is given no other collector (slate.WalGC).
	Collector
}

// Collector is the log's garbage collector (slate.WalGC): it truncates a
// prefix of the log below the replay point (see the package doc,
// "Truncation").
type Collector struct{ l *sharedLog }

// FenceAndInit checks that the store and the log agree (see the package
// doc, "Opening a folder"), fences a provider-less writer out of the
// store's own WAL while no slot is folded yet, and returns an iterator over
// the slots whose WAL ids are in (ReplayAfterWalID, tail] plus a writer
// continuing after the tail. The log must be adopted.
func (wi *WriterInit) FenceAndInit(ctx context.Context, m slate.WriterManifest) (slate.WalIterator, slate.WalWriter, error) {
	l := wi.l
	base, ok, err := l.getBase(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: an engine writer over the commit log at %s (%s) needs its slot 0: adopt the log first", ErrNotAdopted, l.store, l.dir)
	}
	replayAfter, nextWal, lastL0 := m.ReplayAfterWalID(), m.NextWalID(), m.LastL0Seq()
	folded := replayAfter >= base.WalBase // the tree holds slot j and everything below
	var j uint64
	if folded {
		j = replayAfter - base.WalBase
	}
	if !folded {
		if lastL0 >= base.SeqBase {
			return nil, nil, corruptf("the store's tree holds seq %d, at or above the log's seq base %d, but its replay point (WAL id %d) is below the log's WAL base %d: the store was written in the log's seq range by something other than this log",
				lastL0, base.SeqBase, replayAfter, base.WalBase)
		}
		if err := l.fenceNativeWAL(ctx, m, base, replayAfter, lastL0); err != nil {
			return nil, nil, err
		}
	}
	listed, _, err := l.listSlots(ctx, j, 0, true)
	if err != nil {
		return nil, nil, err
	}
	// A listing is not a snapshot (see readRange): slots it skipped at its
	// start or its end are read directly before anything is concluded.
	if listed, err = l.probeAround(ctx, listed, j, base, nextWal); err != nil {
		return nil, nil, err
	}
	if len(listed) == 0 {
		if folded {
			return nil, nil, corruptf("the store's replay point is WAL id %d (slot %d), but the log holds no slot at or after it: opening would let the engine skip slots that land later (was the store folded from another log, or written without the log after adoption?)", replayAfter, j)
		}
		return nil, nil, l.holeOrTruncated(ctx, 0, " (the store has folded no slot yet, so it needs every slot from 0)")
	}
	tail := listed[len(listed)-1].slot
	if folded && lastL0 < base.Seq(j) {
		if err := l.checkEmptySlots(ctx, base, lastL0, j); err != nil {
			return nil, nil, err
		}
	}
	if nextWal > base.WalID(tail)+1 {
		return nil, nil, corruptf("the store's manifest has used WAL ids up to %d, past the log's tail slot %d (WAL id %d): WAL ids may never move backwards, and the engine would skip the slots in between as they land",
			nextWal-1, tail, base.WalID(tail))
	}
	first := uint64(0)
	if folded {
		first = j + 1
	}
	it := &slotIter{l: l, base: base, baseOK: true, next: first, end: tail + 1, bounded: true, complete: true}
	for _, s := range listed {
		if s.slot >= first {
			it.listed = append(it.listed, s.slot)
		}
	}
	return it, newWriter(l, base, m, tail), nil
}

// probeAround completes a listing of the slots from j on at its two ends:
// when it does not start at j, slot j is read directly, and when the
// store's manifest has used WAL ids past its last slot, the slots up to
// those ids are read directly. Slots a read finds are added (a probe
// object's info carries only its key); the rest of the listing's gaps are
// the slot iterator's to read.
func (l *sharedLog) probeAround(ctx context.Context, listed []slotInfo, j uint64, base core.LogBase, nextWal uint64) ([]slotInfo, error) {
	var probe []uint64
	if len(listed) == 0 || listed[0].slot != j {
		probe = append(probe, j)
	}
	last := j
	if len(listed) > 0 {
		last = listed[len(listed)-1].slot
	}
	if nextWal > base.WalID(last)+1 {
		for s := last + 1; base.WalID(s) < nextWal && len(probe) < 1024; s++ {
			probe = append(probe, s)
		}
	}
	if len(probe) == 0 {
		return listed, nil
	}
	got, err := l.fetch(ctx, probe)
	if err != nil {
		return nil, err
	}
	for _, f := range got {
		if f.found {
			listed = append(listed, slotInfo{slot: f.slot, info: objstore.ObjectInfo{Key: l.slotKey(f.slot)}})
		}
	}
	slices.SortFunc(listed, func(a, b slotInfo) int { return cmp.Compare(a.slot, b.slot) })
	listed = slices.CompactFunc(listed, func(a, b slotInfo) bool { return a.slot == b.slot })
	return listed, nil
}

// checkEmptySlots allows a replay point past the tree's highest seq only
// when every slot in between carried no writes (so nothing was skipped).
func (l *sharedLog) checkEmptySlots(ctx context.Context, base core.LogBase, lastL0, j uint64) error {
	from := uint64(0)
	if lastL0 >= base.SeqBase {
		from = lastL0 - base.SeqBase + 1
	}
	bad := corruptf("the store's replay point is slot %d (WAL id %d), but its tree holds seqs only up to %d (slot %d's seq is %d): the replay point was set by something other than this log's slots",
		j, base.WalID(j), lastL0, j, base.Seq(j))
	if j-from >= 1024 {
		return bad
	}
	slots := make([]uint64, 0, j-from+1)
	for s := from; s <= j; s++ {
		slots = append(slots, s)
	}
	got, err := l.fetch(ctx, slots)
	if err != nil {
		return err
	}
	for _, f := range got {
		if !f.found || len(f.batch.Writes) > 0 {
			return bad
		}
	}
	return nil
}

// fenceNativeWAL runs, before any slot is folded, the store's own WAL
// fence (so a provider-less writer still running on it can make nothing
// durable from now on) and checks that everything that WAL holds above the
// replay point is already in the tree: the plug replays the log, never that
// WAL, so rows left there by a crashed writer would otherwise be lost.
func (l *sharedLog) fenceNativeWAL(ctx context.Context, m slate.WriterManifest, base core.LogBase, replayAfter, lastL0 uint64) error {
	native := slate.NewNativeWAL(l.store, l.root)
	it, w, err := native.FenceAndInit(ctx, m)
	if err != nil {
		return fmt.Errorf("fencing the store's own WAL before the first fold: %w", err)
	}
	defer w.Close(ctx)
	defer it.Close()
	for {
		rows, err := it.Next(ctx)
		if err != nil {
			return fmt.Errorf("reading the store's own WAL above its replay point %d: %w", replayAfter, err)
		}
		if rows == nil {
			return nil
		}
		for _, r := range rows.Rows {
			switch {
			case rows.LastConsumedWalID >= base.WalBase:
				return corruptf("the store's own WAL holds file %d, at or past the log's WAL base %d: the store was written without the log after adoption", rows.LastConsumedWalID, base.WalBase)
			case r.Seq > lastL0:
				return corruptf("the store's own WAL file %d holds seq %d, above everything in its tree (%d): open the store on its own WAL and flush it before folding the log (the plug replays the log, not that WAL)",
					rows.LastConsumedWalID, r.Seq, lastL0)
			}
		}
	}
}

// Collect truncates a prefix of the log below the replay point.
func (c *Collector) Collect(ctx context.Context, referenced []slate.WalRange, minAge time.Duration, dryRun bool) ([]uint64, error) {
	return c.l.collect(ctx, referenced, minAge, dryRun)
}

// walWriter is the folder's WalWriter. Append takes the batch of slot k =
// seq - SeqBase and returns at once: when the slot is known to have landed
// (the session saw it: the folder applies only landed slots), the status
// moves to it at once; otherwise one LIST on the writer's goroutine
// confirms it first. A WalFlushed event follows on that goroutine.
type walWriter struct {
	l          *sharedLog
	base       core.LogBase
	m          slate.WriterManifest
	flushSlots int

	mu         sync.Mutex
	appended   uint64     // highest slot the engine holds (replayed or appended)
	confirmed  uint64     // highest slot known landed: the status
	gaps       []slotSpan // slots the engine skipped, not yet checked empty
	notified   uint64     // confirmed as of the last WalFlushed event
	closed     error
	closedSent bool
	subs       []func(slate.WalEvent)
	progress   chan struct{} // closed and replaced on every change

	ctx      context.Context
	cancel   context.CancelFunc
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func newWriter(l *sharedLog, base core.LogBase, m slate.WriterManifest, tail uint64) *walWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &walWriter{l: l, base: base, m: m, flushSlots: l.opts.FlushSlots,
		appended: tail, confirmed: tail, notified: tail, progress: make(chan struct{}),
		ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *walWriter) statusLocked() slate.WalStatus {
	return slate.WalStatus{LastFlushedWalID: w.base.WalID(w.confirmed), LastFlushedSeq: w.base.Seq(w.confirmed),
		HasFlushedSeq: true, Closed: w.closed}
}

func (w *walWriter) signalLocked() {
	close(w.progress)
	w.progress = make(chan struct{})
}

func (w *walWriter) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Append implements slate.WalWriter.
func (w *walWriter) Append(rows []slate.Row) error {
	if len(rows) == 0 {
		return nil
	}
	seq := rows[0].Seq
	for _, r := range rows[1:] {
		if r.Seq != seq {
			return fmt.Errorf("%w: one batch carries seqs %d and %d (a slot is one seq)", slate.ErrInvalid, seq, r.Seq)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed != nil {
		return w.closed
	}
	if seq < w.base.SeqBase {
		return fmt.Errorf("%w: seq %d is below the commit log's seq base %d: a store folded from the log is written only through slots (slot k at seq %d+k)", slate.ErrInvalid, seq, w.base.SeqBase, w.base.SeqBase)
	}
	k := seq - w.base.SeqBase
	if k <= w.appended {
		return fmt.Errorf("%w: seq %d is slot %d, which the store already holds (it is at slot %d)", slate.ErrInvalid, seq, k, w.appended)
	}
	if k > w.appended+1 {
		// The folder skipped slots: allowed only for slots without writes,
		// which the writer's goroutine checks before the status passes them.
		w.gaps = append(w.gaps, slotSpan{w.appended + 1, k - 1})
	}
	w.appended = k
	if len(w.gaps) == 0 && w.l.knownPresent(k) {
		w.confirmed = k
		w.signalLocked()
	}
	w.poke()
	return nil
}

// slotSpan is an inclusive range of slots.
type slotSpan struct{ from, to uint64 }

// maxGapCheck bounds the slots one skipped range may span.
const maxGapCheck = 1024

// run confirms appended slots the session has not seen land, and delivers
// events, in order, on one goroutine.
func (w *walWriter) run() {
	defer close(w.done)
	backoff := 10 * time.Millisecond
	for {
		select {
		case <-w.stop:
			w.deliver()
			return
		case <-w.kick:
		}
		for {
			w.mu.Lock()
			target, conf, closed := w.appended, w.confirmed, w.closed
			w.mu.Unlock()
			if closed != nil || target <= conf {
				break
			}
			if err := w.confirm(target); err != nil {
				w.l.log.Warn("provider: confirming an applied slot in the log failed; retrying", "slot", target, "err", err)
				w.deliver()
				select {
				case <-w.stop:
					w.deliver()
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 2*time.Second)
				continue
			}
			backoff = 10 * time.Millisecond
		}
		w.deliver()
	}
}

// confirm checks, with one LIST, that slot target has landed (else the
// store got ahead of the log and the writer closes), and that every slot
// the engine skipped on the way carries no writes (else the store would
// silently lack them: the writer closes).
func (w *walWriter) confirm(target uint64) error {
	w.mu.Lock()
	gaps := append([]slotSpan(nil), w.gaps...)
	w.mu.Unlock()
	if !w.l.knownPresent(target) {
		tail, ok, err := w.l.tail(w.ctx)
		if err != nil {
			return err
		}
		if !ok || tail < target {
			have := "no slot"
			if ok {
				have = fmt.Sprintf("slot %d", tail)
			}
			w.closeWith(fmt.Errorf("%w: slot %d (seq %d) was applied, but the log's tail is %s", ErrNotLanded, target, w.base.Seq(target), have))
			return nil
		}
	}
	for _, g := range gaps {
		if g.to-g.from >= maxGapCheck {
			w.closeWith(fmt.Errorf("%w: the store skipped slots %d..%d", slate.ErrInvalid, g.from, g.to))
			return nil
		}
		got, err := w.l.fetch(w.ctx, span(g.from, g.to))
		if err != nil {
			return err
		}
		for _, f := range got {
			if !f.found {
				w.closeWith(w.l.holeOrTruncated(w.ctx, f.slot, " (the store skipped it)"))
				return nil
			}
			if len(f.batch.Writes) > 0 {
				w.closeWith(fmt.Errorf("%w: the store skipped slot %d (seq %d), which carries %d writes: a folder applies every slot in order", slate.ErrInvalid, f.slot, w.base.Seq(f.slot), len(f.batch.Writes)))
				return nil
			}
		}
	}
	w.mu.Lock()
	w.gaps = w.gaps[len(gaps):]
	if target > w.confirmed {
		w.confirmed = target
		w.signalLocked()
	}
	w.mu.Unlock()
	return nil
}

// span lists the slots from..to.
func span(from, to uint64) []uint64 {
	out := make([]uint64, 0, to-from+1)
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func (w *walWriter) deliver() {
	w.mu.Lock()
	var evs []slate.WalEvent
	if w.confirmed > w.notified {
		w.notified = w.confirmed
		evs = append(evs, slate.WalEvent{Kind: slate.WalFlushed, Status: w.statusLocked()})
	}
	if w.closed != nil && !errors.Is(w.closed, slate.ErrClosed) && !w.closedSent {
		w.closedSent = true
		evs = append(evs, slate.WalEvent{Kind: slate.WalClosed, Status: w.statusLocked()})
	}
	subs := append([]func(slate.WalEvent){}, w.subs...)
	w.mu.Unlock()
	for _, ev := range evs {
		for _, fn := range subs {
			fn(ev)
		}
	}
}

func (w *walWriter) closeWith(reason error) {
	w.mu.Lock()
	if w.closed == nil {
		w.closed = reason
		w.signalLocked()
	}
	w.mu.Unlock()
	w.poke()
}

// Flush waits until every appended slot is confirmed, then checks the
// engine epoch (one manifest refresh): a writer that a newer one fenced
// closes with slate.ErrFenced here, as a native WAL does at its next
// upload.
func (w *walWriter) Flush(ctx context.Context) error {
	w.poke()
	for {
		w.mu.Lock()
		if w.closed != nil {
			err := w.closed
			w.mu.Unlock()
			return err
		}
		if w.confirmed >= w.appended {
			w.mu.Unlock()
			break
		}
		ch := w.progress
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if w.m == nil {
		return nil
	}
	if err := w.m.Refresh(ctx); err != nil {
		if errors.Is(err, slate.ErrFenced) {
			w.closeWith(err)
		}
		return err
	}
	return nil
}

// ShouldFlushMemtable is true once FlushSlots slots are past the replay
// point.
func (w *walWriter) ShouldFlushMemtable(replayAfterWalID uint64) bool {
	if w.flushSlots <= 0 {
		return false
	}
	w.mu.Lock()
	a := w.appended
	w.mu.Unlock()
	var pending uint64
	if replayAfterWalID >= w.base.WalBase {
		if done := replayAfterWalID - w.base.WalBase; a > done {
			pending = a - done
		}
	} else {
		pending = a + 1
	}
	return pending >= uint64(w.flushSlots)
}

// Status implements slate.WalWriter.
func (w *walWriter) Status() slate.WalStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statusLocked()
}

// Subscribe implements slate.WalWriter.
func (w *walWriter) Subscribe(fn func(slate.WalEvent)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs = append(w.subs, fn)
}

// Close stops the writer (there is nothing to flush: the slots are the
// record).
func (w *walWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed == nil {
		w.closed = slate.ErrClosed
		w.signalLocked()
	}
	w.mu.Unlock()
	w.stopOnce.Do(func() {
		close(w.stop)
		w.cancel()
	})
	<-w.done
	return nil
}

// Reader is the log's WAL reader (slate.WalReader): WAL id WalBase+k is
// slot k, its rows carry seq SeqBase+k.
type Reader struct{ l *sharedLog }

// Iterator walks the slots whose WAL ids are in rng. Ids below the log's WAL
// base belong to the store's own WAL, which adoption flushed into the
// tree: they are skipped. An open-ended iterator returns (nil, nil) at the
// current tail and continues on the next call (one LIST each time it
// reaches the tail). A missing slot below the truncation floor is
// slate.ErrWalTruncated; a missing slot above it is corruption.
func (r *Reader) Iterator(ctx context.Context, rng slate.WalRange) (slate.WalIterator, error) {
	if rng.Start == 0 {
		return nil, fmt.Errorf("%w: WAL ids start at 1", slate.ErrInvalid)
	}
	return &slotIter{l: r.l, rng: rng}, nil
}

// LastWalID returns the WAL id of the log's tail slot, or lowerBound when
// that is not above it (or the log is not adopted).
func (r *Reader) LastWalID(ctx context.Context, lowerBound uint64) (uint64, error) {
	base, ok, err := r.l.getBase(ctx)
	if err != nil || !ok {
		return lowerBound, err
	}
	tail, ok, err := r.l.tail(ctx)
	if err != nil || !ok {
		return lowerBound, err
	}
	return max(lowerBound, base.WalID(tail)), nil
}

// slotIter iterates slots for a WAL id range.
type slotIter struct {
	l       *sharedLog
	rng     slate.WalRange // as asked (resolved against the base lazily)
	base    core.LogBase
	baseOK  bool
	next    uint64 // next slot to yield
	end     uint64 // exclusive (bounded only)
	bounded bool

	listed   []uint64 // present slots from next on, from the last LIST
	complete bool     // that LIST reached the end of the log
	ready    []fetched
	atTail   bool // drained a complete listing: report the tail once
}

func (it *slotIter) setBase(b core.LogBase) {
	it.base, it.baseOK = b, true
	if it.rng.Start > b.WalBase {
		it.next = it.rng.Start - b.WalBase
	}
	if it.rng.End != 0 {
		it.bounded = true
		if it.rng.End > b.WalBase {
			it.end = it.rng.End - b.WalBase
		}
	}
}

func (it *slotIter) reset() {
	it.listed, it.ready, it.atTail, it.complete = nil, nil, false, false
}

// Next implements slate.WalIterator: the rows of one slot per call.
func (it *slotIter) Next(ctx context.Context) (*slate.WalRows, error) {
	if !it.baseOK {
		b, ok, err := it.l.getBase(ctx)
		if err != nil || !ok {
			return nil, err // unadopted: nothing yet
		}
		it.setBase(b)
	}
	if it.bounded && it.next >= it.end {
		return nil, nil
	}
	if len(it.ready) == 0 {
		if err := it.fill(ctx); err != nil {
			return nil, err
		}
		if len(it.ready) == 0 {
			return nil, nil
		}
	}
	f := it.ready[0]
	if !f.found {
		it.reset()
		return nil, it.l.holeOrTruncated(ctx, f.slot, " (it was listed, then gone)")
	}
	it.ready = it.ready[1:]
	it.next = f.slot + 1
	return &slate.WalRows{Rows: rowsOf(f.batch, it.base.Seq(f.slot)), LastConsumedWalID: it.base.WalID(f.slot)}, nil
}

// fill lists (one page) when nothing listed is left, then fetches the next
// contiguous run of listed slots.
func (it *slotIter) fill(ctx context.Context) error {
	l := it.l
	if len(it.listed) == 0 {
		if it.atTail {
			it.atTail = false
			return nil
		}
		if b, ok := l.remembered(it.next); ok {
			// Won or read by this session: no request. If it is the tail
			// as last seen, report the tail after it without a LIST too.
			it.ready = []fetched{{slot: it.next, found: true, batch: b}}
			if hi, _, at := l.known(); !it.bounded && hi == it.next && !at.IsZero() {
				it.atTail = true
			}
			return nil
		}
		var through uint64
		if it.bounded {
			through = it.end - 1
		}
		listed, complete, err := l.listSlots(ctx, it.next, through, false)
		if err != nil {
			return err
		}
		it.listed = it.listed[:0]
		for _, s := range listed {
			it.listed = append(it.listed, s.slot)
		}
		it.complete = complete
		if len(it.listed) == 0 {
			if !it.bounded {
				return nil // the current tail
			}
			// The engine needs it.next: read it directly before calling it
			// missing (a listing can skip it).
			got, err := l.fetch(ctx, []uint64{it.next})
			if err != nil {
				return err
			}
			if got[0].found {
				it.ready = got
				return nil
			}
			return l.holeOrTruncated(ctx, it.next, fmt.Sprintf(" (the engine asked for WAL ids up to %d; the log ends before)", it.rng.End-1))
		}
	}
	if it.listed[0] != it.next {
		// The listing skipped it.next but shows a later slot. A listing is
		// not a snapshot (see readRange): read the slot directly; only if
		// that does not find it either is it missing.
		missing, present := it.next, it.listed[0]
		got, err := l.fetch(ctx, []uint64{missing})
		if err != nil {
			it.reset()
			return err
		}
		if !got[0].found {
			it.reset()
			return l.holeOrTruncated(ctx, missing, fmt.Sprintf(" (slot %d is present)", present))
		}
		it.ready = got
		return nil
	}
	if b, ok := l.remembered(it.next); ok {
		// Listed, and won or read by this session: a slot object never
		// changes once landed, so its copy is served without a GET (a
		// cadence fold replays the slots its own session just won).
		it.listed = it.listed[1:]
		it.ready = []fetched{{slot: it.next, found: true, batch: b}}
		if len(it.listed) == 0 && it.complete && !it.bounded {
			it.atTail = true
		}
		return nil
	}
	n := 1
	for n < len(it.listed) && n < 2*l.opts.ReadConcurrency && it.listed[n] == it.next+uint64(n) {
		if _, ok := l.remembered(it.listed[n]); ok {
			break // served from its copy on the next call
		}
		n++
	}
	got, err := l.fetch(ctx, it.listed[:n])
	if err != nil {
		it.reset()
		return err
	}
	it.listed = it.listed[n:]
	it.ready = got
	if len(it.listed) == 0 && it.complete && !it.bounded {
		it.atTail = true
	}
	return nil
}

// Close implements slate.WalIterator.
func (it *slotIter) Close() error { return nil }

// rowsOf turns a slot's writes into engine rows at seq: a delete is a
// tombstone, a later write of a key replaces an earlier one, rows in key
// order.
func rowsOf(b core.LogBatch, seq uint64) []slate.Row {
	rows := make([]slate.Row, 0, len(b.Writes))
	idx := make(map[string]int, len(b.Writes))
	for _, w := range b.Writes {
		r := slate.Row{Key: w.Key, Value: w.Value, Kind: slate.RowPut, Seq: seq}
		if w.Delete {
			r.Kind, r.Value = slate.RowDelete, nil
		} else if r.Value == nil {
			r.Value = []byte{}
		}
		if i, ok := idx[string(w.Key)]; ok {
			rows[i] = r
			continue
		}
		idx[string(w.Key)] = len(rows)
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return string(rows[i].Key) < string(rows[j].Key) })
	return rows
}

var (
	_ slate.WriterInit  = (*WriterInit)(nil)
	_ slate.WalGC       = (*WriterInit)(nil)
	_ slate.WalGC       = (*Collector)(nil)
	_ slate.WalWriter   = (*walWriter)(nil)
	_ slate.WalReader   = (*Reader)(nil)
	_ slate.WalIterator = (*slotIter)(nil)
)
