package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// sharedLog is one log (one store handle and path) as one provider session
// sees it: the object names, and a cache of facts about the bucket that
// only ever grow (the base, the floor, the highest slot known present and
// when it was last known to be the tail). The writer, reader, collector and
// committer a session hands out for the same store and path share one, so
// what one learns the others need not ask again.
type sharedLog struct {
	store objstore.Store
	root  string // the engine's root path (for the native WAL check)
	dir   string // "<root>/log/"
	opts  Options
	log   *slog.Logger

	mu         sync.Mutex
	base       core.LogBase
	baseOK     bool
	baseTxn    uuid.UUID // the stamp holding slot 0
	baseCopied bool      // log/base is known to exist
	floor      uint64    // highest floor seen
	hi         uint64    // highest slot known present
	hiOK       bool
	tailAt     time.Time // no slot above hi existed at tailAt (zero: unknown)
	// recent holds the newest slots this session won or read, so its
	// reader serves them without a request.
	recent map[uint64]core.LogBatch
}

// recentSlots bounds sharedLog.recent.
const recentSlots = 64

// remember keeps copies of landed slots for the session's reader.
func (l *sharedLog) remember(batches ...core.LogBatch) {
	if len(batches) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.recent == nil {
		l.recent = map[uint64]core.LogBatch{}
	}
	top := uint64(0)
	for _, b := range batches {
		l.recent[b.Slot] = cloneBatch(b)
		top = max(top, b.Slot)
	}
	for s := range l.recent {
		if s+recentSlots <= top {
			delete(l.recent, s)
		}
	}
}

// remembered returns a slot this session won or read.
func (l *sharedLog) remembered(slot uint64) (core.LogBatch, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.recent[slot]
	return b, ok
}

func cloneBatch(b core.LogBatch) core.LogBatch {
	out := b
	out.DeletedDataFiles = append([]core.DataFileID(nil), b.DeletedDataFiles...)
	out.Writes = make([]core.LogWrite, len(b.Writes))
	for i, w := range b.Writes {
		out.Writes[i] = core.LogWrite{Key: append([]byte{}, w.Key...), Delete: w.Delete}
		if !w.Delete {
			out.Writes[i].Value = append([]byte{}, w.Value...)
		}
	}
	if len(out.Writes) == 0 {
		out.Writes = nil
	}
	return out
}

func newLogState(store objstore.Store, root string, opts Options) *sharedLog {
	root = trimPath(root)
	dir := "log/"
	if root != "" {
		dir = root + "/log/"
	}
	return &sharedLog{store: store, root: root, dir: dir, opts: opts, log: opts.Logger}
}

// Object names.

func (l *sharedLog) slotKey(slot uint64) string { return fmt.Sprintf("%s%020d", l.dir, slot) }
func (l *sharedLog) baseKey() string            { return l.dir + "base" }
func (l *sharedLog) floorKey() string           { return l.dir + "floor" }

// parseSlotKey extracts the slot from a slot object's key (false for the
// base, the floor and anything else under the directory).
func (l *sharedLog) parseSlotKey(key string) (uint64, bool) {
	name, ok := strings.CutPrefix(key, l.dir)
	if !ok || len(name) != 20 {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	slot, err := strconv.ParseUint(name, 10, 64)
	return slot, err == nil
}

// startAfter is the LIST cursor that starts at slot from.
func (l *sharedLog) startAfter(from uint64) string {
	if from == 0 {
		return ""
	}
	return l.slotKey(from - 1)
}

// Facts about the tail.

// observeTail records that slot was present and nothing above it existed
// at time at.
func (l *sharedLog) observeTail(slot uint64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !l.hiOK || slot > l.hi:
		l.hi, l.hiOK, l.tailAt = slot, true, at
	case slot == l.hi && at.After(l.tailAt):
		l.tailAt = at
	}
}

// observePresent records that slot exists (saying nothing about what lies
// above it).
func (l *sharedLog) observePresent(slot uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.hiOK || slot > l.hi {
		l.hi, l.hiOK, l.tailAt = slot, true, time.Time{}
	}
}

func (l *sharedLog) known() (hi uint64, ok bool, tailAt time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hi, l.hiOK, l.tailAt
}

// knownPresent reports, without I/O, whether slot is known to have landed.
func (l *sharedLog) knownPresent(slot uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hiOK && l.hi >= slot
}

// fresh reports whether a tail observation made at t is recent enough that
// no slot created after it can have been truncated yet (see the package
// doc: half the retention).
func (l *sharedLog) fresh(t time.Time) bool {
	w := l.opts.freshWindow()
	return w > 0 && !t.IsZero() && time.Since(t) < w
}

// The base.

// getBase returns the log's base: from the cache, else the base copy, else
// slot 0 (whose envelope carries it; the copy is then repaired). ok is
// false while the log has no slot 0.
func (l *sharedLog) getBase(ctx context.Context) (core.LogBase, bool, error) {
	l.mu.Lock()
	if l.baseOK {
		b := l.base
		l.mu.Unlock()
		return b, true, nil
	}
	l.mu.Unlock()
	data, _, err := l.store.Get(ctx, l.baseKey())
	switch {
	case err == nil:
		b, txn, err := decodeBaseCopy(data)
		if err != nil {
			return core.LogBase{}, false, err
		}
		l.setBase(b, txn, true)
		return b, true, nil
	case !errors.Is(err, objstore.ErrNotFound):
		return core.LogBase{}, false, fmt.Errorf("reading the commit log's base: %w", err)
	}
	data, _, err = l.store.Get(ctx, l.slotKey(0))
	if errors.Is(err, objstore.ErrNotFound) {
		// Slot 0 is only ever deleted after the base copy exists, so both
		// missing means nothing adopted the log yet (or the copy landed
		// between the two reads: look once more).
		data, _, err = l.store.Get(ctx, l.baseKey())
		if errors.Is(err, objstore.ErrNotFound) {
			return core.LogBase{}, false, nil
		}
		if err != nil {
			return core.LogBase{}, false, fmt.Errorf("reading the commit log's base: %w", err)
		}
		b, txn, err := decodeBaseCopy(data)
		if err != nil {
			return core.LogBase{}, false, err
		}
		l.setBase(b, txn, true)
		return b, true, nil
	}
	if err != nil {
		return core.LogBase{}, false, fmt.Errorf("reading the commit log's slot 0: %w", err)
	}
	stamp, b, err := l.decodeAt(0, data)
	if err != nil {
		return core.LogBase{}, false, err
	}
	slot0Base, _, err := l.reconcileBase(ctx, *b, stamp.TxnID)
	if err != nil {
		return core.LogBase{}, false, err
	}
	return slot0Base, true, nil
}

// reconcileBase writes (or checks) the base copy for slot 0's base b from
// stamp txn. If the copy holds another base, slot 0 is a zombie when the
// floor is above it (re-created after truncation: the copy wins, and
// zombie is true); otherwise the log is corrupt.
func (l *sharedLog) reconcileBase(ctx context.Context, b core.LogBase, txn uuid.UUID) (slot0Base core.LogBase, zombie bool, err error) {
	err = l.ensureBaseCopy(ctx, b, txn)
	var mm *errBaseMismatch
	if !errors.As(err, &mm) {
		return b, false, err
	}
	floor, _, ferr := l.readFloor(ctx)
	if ferr != nil {
		return core.LogBase{}, false, ferr
	}
	if floor == 0 {
		return core.LogBase{}, false, corruptf("slot 0 holds base %+v from stamp %s, the base copy %+v from stamp %s", b, txn, mm.have, mm.haveTxn)
	}
	l.setBase(mm.have, mm.haveTxn, true)
	return mm.have, true, nil
}

func (l *sharedLog) setBase(b core.LogBase, txn uuid.UUID, copied bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base, l.baseTxn, l.baseOK = b, txn, true
	l.baseCopied = l.baseCopied || copied
}

// errBaseMismatch: log/base holds another base (or stamp) than the one
// being copied.
type errBaseMismatch struct {
	have    core.LogBase
	haveTxn uuid.UUID
}

func (e *errBaseMismatch) Error() string {
	return fmt.Sprintf("the base copy holds %+v from stamp %s", e.have, e.haveTxn)
}

// ensureBaseCopy writes log/base from slot 0's base, create-if-absent, or
// checks that the copy there agrees. A disagreement is returned as
// *errBaseMismatch for the caller to judge.
func (l *sharedLog) ensureBaseCopy(ctx context.Context, b core.LogBase, txn uuid.UUID) error {
	data := encodeBaseCopy(b, txn)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		_, err := l.store.PutIfAbsent(ctx, l.baseKey(), data)
		if err == nil {
			l.setBase(b, txn, true)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Taken, or an ambiguous write: the copy decides.
		have, _, gerr := l.store.Get(ctx, l.baseKey())
		if errors.Is(gerr, objstore.ErrNotFound) {
			lastErr = err
			continue // our write did not land: try again
		}
		if gerr != nil {
			return fmt.Errorf("writing the commit log's base copy: %w (and reading it back: %v)", err, gerr)
		}
		if bytes.Equal(have, data) {
			l.setBase(b, txn, true)
			return nil
		}
		hb, htxn, derr := decodeBaseCopy(have)
		if derr != nil {
			return derr
		}
		return &errBaseMismatch{have: hb, haveTxn: htxn}
	}
	return fmt.Errorf("writing the commit log's base copy: %w", lastErr)
}

// The floor.

// readFloor reads the truncation floor (0 when none was ever written).
func (l *sharedLog) readFloor(ctx context.Context) (uint64, string, error) {
	data, info, err := l.store.Get(ctx, l.floorKey())
	if errors.Is(err, objstore.ErrNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("reading the commit log's floor: %w", err)
	}
	f, err := decodeFloor(data)
	if err != nil {
		return 0, "", err
	}
	l.mu.Lock()
	if f > l.floor {
		l.floor = f
	}
	l.mu.Unlock()
	return f, info.ETag, nil
}

// advanceFloor raises the floor to at least to, by compare-and-swap, so it
// never moves backwards whatever collectors run at once.
func (l *sharedLog) advanceFloor(ctx context.Context, to uint64) error {
	for attempt := 0; attempt < 16; attempt++ {
		cur, etag, err := l.readFloor(ctx)
		if err != nil {
			return err
		}
		if cur >= to {
			return nil
		}
		data := encodeFloor(to)
		if etag == "" {
			_, err = l.store.PutIfAbsent(ctx, l.floorKey(), data)
		} else {
			_, err = l.store.PutIfMatch(ctx, l.floorKey(), data, etag)
		}
		switch {
		case err == nil:
			l.mu.Lock()
			l.floor = max(l.floor, to)
			l.mu.Unlock()
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, objstore.ErrExists), errors.Is(err, objstore.ErrPrecondition),
			errors.Is(err, objstore.ErrNotFound), errors.Is(err, objstore.ErrOutcomeUnknown), objstore.IsTransient(err):
			// Someone else moved it, or our write may have landed: re-read.
			continue
		default:
			return fmt.Errorf("advancing the commit log's floor to %d: %w", to, err)
		}
	}
	return fmt.Errorf("advancing the commit log's floor to %d: too much contention", to)
}

// holeOrTruncated explains a slot found missing: below the floor it was
// truncated (the folded store holds it); at or above it, it is a hole, which
// is corruption, never an end of log. The floor is read fresh: it moves
// before any slot below it is deleted, so a reader that raced a collector
// sees the floor that explains the deletion.
func (l *sharedLog) holeOrTruncated(ctx context.Context, slot uint64, context string) error {
	floor, _, err := l.readFloor(ctx)
	if err != nil {
		return err
	}
	if slot < floor {
		return truncatedf("commit-log slot %d is below the truncation floor %d%s", slot, floor, context)
	}
	return corruptf("slot %d is missing at or above the truncation floor %d%s: a hole in the log", slot, floor, context)
}

// Listing.

// slotInfo is one listed slot object.
type slotInfo struct {
	slot uint64
	info objstore.ObjectInfo
}

// listSlots lists slot objects from slot from on: one page, or (all) every
// page until the end or until a slot above through (through 0: no bound).
// complete reports that the listing reached the end of the log. A complete
// listing is a tail observation, recorded with the time it started.
func (l *sharedLog) listSlots(ctx context.Context, from, through uint64, all bool) (out []slotInfo, complete bool, err error) {
	started := time.Now()
	after := l.startAfter(from)
	for {
		page, more, err := l.store.ListPage(ctx, l.dir, after)
		if err != nil {
			return nil, false, fmt.Errorf("listing the commit log: %w", err)
		}
		past := false
		for _, o := range page {
			slot, ok := l.parseSlotKey(o.Key)
			if !ok || slot < from {
				continue
			}
			if through != 0 && slot > through {
				past = true
				break
			}
			out = append(out, slotInfo{slot: slot, info: o})
		}
		if past {
			break // slots above through exist: not a tail observation
		}
		if !more || len(page) == 0 {
			complete = true
			break
		}
		if !all {
			break
		}
		after = page[len(page)-1].Key
	}
	switch {
	case len(out) > 0 && complete:
		l.observeTail(out[len(out)-1].slot, started)
	case len(out) > 0:
		l.observePresent(out[len(out)-1].slot)
	case complete && from > 0:
		// Nothing at or after from: if from-1 is the known tail, it still is.
		l.mu.Lock()
		if l.hiOK && l.hi+1 == from && started.After(l.tailAt) {
			l.tailAt = started
		}
		l.mu.Unlock()
	}
	return out, complete, nil
}

// tail finds the highest landed slot with one LIST from the highest slot
// known present (more pages only if more than a page of slots landed
// since). ok is false when the log holds no slot at all.
func (l *sharedLog) tail(ctx context.Context) (uint64, bool, error) {
	hi, hiOK, _ := l.known()
	from := uint64(0)
	if hiOK {
		from = hi + 1
	}
	slots, _, err := l.listSlots(ctx, from, 0, true)
	if err != nil {
		return 0, false, err
	}
	if len(slots) > 0 {
		return slots[len(slots)-1].slot, true, nil
	}
	return hi, hiOK, nil
}

// Reading slots.

// fetched is one slot read back.
type fetched struct {
	slot  uint64
	found bool
	batch core.LogBatch
	base  *core.LogBase
}

// decodeAt decodes slot's object and checks it is slot's envelope: the slot
// it names, and a base exactly when it is slot 0.
func (l *sharedLog) decodeAt(slot uint64, data []byte) (core.LogBatch, *core.LogBase, error) {
	batch, b, err := decodeSlot(data)
	if err != nil {
		return core.LogBatch{}, nil, fmt.Errorf("slot %d: %w", slot, err)
	}
	switch {
	case batch.Slot != slot:
		return core.LogBatch{}, nil, corruptf("object for slot %d holds slot %d's envelope", slot, batch.Slot)
	case slot == 0 && b == nil:
		return core.LogBatch{}, nil, corruptf("slot 0 carries no base")
	case slot != 0 && b != nil:
		return core.LogBatch{}, nil, corruptf("slot %d carries a base (only slot 0 may)", slot)
	}
	return batch, b, nil
}

// fetch reads slots with up to ReadConcurrency GETs in flight, in order. A
// missing slot comes back with found false.
func (l *sharedLog) fetch(ctx context.Context, slots []uint64) ([]fetched, error) {
	out := make([]fetched, len(slots))
	errs := make([]error, len(slots))
	sem := make(chan struct{}, l.opts.ReadConcurrency)
	var wg sync.WaitGroup
	for i, slot := range slots {
		out[i].slot = slot
		if len(slots) == 1 {
			errs[i] = l.fetchOne(ctx, &out[i])
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = l.fetchOne(ctx, &out[i])
		}()
	}
	wg.Wait()
	var top uint64
	for i := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if out[i].found {
			top = max(top, out[i].slot)
		}
	}
	for i := range out {
		if out[i].found {
			l.observePresent(top)
			break
		}
	}
	return out, nil
}

func (l *sharedLog) fetchOne(ctx context.Context, f *fetched) error {
	data, _, err := l.store.Get(ctx, l.slotKey(f.slot))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading commit-log slot %d: %w", f.slot, err)
	}
	f.batch, f.base, err = l.decodeAt(f.slot, data)
	if err != nil {
		return err
	}
	f.found = true
	return nil
}

// readRange returns the slots in [from, through] (through 0: to the tail),
// in order, checking that they are contiguous: a missing slot is
// truncation below the floor and a hole (corruption) above it. A listing
// is not a snapshot (a directory walk, or an S3 listing on some servers,
// can skip an object created while it runs and return a later one), so a
// slot missing from the listing below one it shows, or the first one
// asked for when the listing is empty although it is known to exist, is
// read directly; only a slot the read does not find either is missing.
func (l *sharedLog) readRange(ctx context.Context, from, through uint64) ([]core.LogBatch, error) {
	if through != 0 && through < from {
		return nil, nil
	}
	listed, _, err := l.listSlots(ctx, from, through, true)
	if err != nil {
		return nil, err
	}
	top := from
	switch {
	case len(listed) > 0:
		top = listed[len(listed)-1].slot
	case !l.knownPresent(from):
		return nil, nil // nothing landed there yet
	}
	// Every slot from..top: those the listing showed and those it skipped.
	slots := make([]uint64, 0, top-from+1)
	for s := from; s <= top; s++ {
		slots = append(slots, s)
	}
	got, err := l.fetch(ctx, slots)
	if err != nil {
		return nil, err
	}
	shown := make(map[uint64]bool, len(listed))
	for _, s := range listed {
		shown[s.slot] = true
	}
	out := make([]core.LogBatch, 0, len(got))
	for _, f := range got {
		if !f.found {
			why := " (it was listed, then gone)"
			if !shown[f.slot] {
				why = fmt.Sprintf(" (slot %d is present)", top)
				if len(listed) == 0 {
					why = ""
				}
			}
			return nil, l.holeOrTruncated(ctx, f.slot, why)
		}
		out = append(out, f.batch)
	}
	l.remember(out...)
	return out, nil
}

// maxForward bounds the slots readOn reads one by one before it lists
// the rest.
const maxForward = 8

// readOn returns the slots from `from` to the tail by direct reads, one
// after another until one is absent: a read is authoritative where a
// listing is not, and the absent one is a tail observation (when the slot
// below it is known present) without a LIST. After maxForward slots it
// lists the rest (readRange). Nothing landed from `from` on is an empty
// result, not an error.
func (l *sharedLog) readOn(ctx context.Context, from uint64) ([]core.LogBatch, error) {
	var out []core.LogBatch
	for s := from; ; s++ {
		if len(out) == maxForward {
			rest, err := l.readRange(ctx, s, 0)
			if err != nil {
				return nil, err
			}
			l.remember(out...)
			return append(out, rest...), nil
		}
		asked := time.Now()
		got, err := l.fetch(ctx, []uint64{s})
		if err != nil {
			return nil, err
		}
		if !got[0].found {
			if s > 0 && (len(out) > 0 || l.knownPresent(s-1)) {
				// s-1 is present and s is not: nothing above it can be (a
				// slot is only raced once the one below it exists).
				l.observeTail(s-1, asked)
			}
			l.remember(out...)
			return out, nil
		}
		out = append(out, got[0].batch)
	}
}

// readForward is readOn from a slot known to have landed: an absent first
// slot goes through readRange, which tells truncation from a hole.
func (l *sharedLog) readForward(ctx context.Context, from uint64) ([]core.LogBatch, error) {
	out, err := l.readOn(ctx, from)
	if err == nil && len(out) == 0 {
		return l.readRange(ctx, from, 0)
	}
	return out, err
}
