package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// writeSlot writes a slot once (create-if-absent) and sorts the result:
// nil (written), objstore.ErrExists (taken), a definite failure (nothing
// written: a *core.Error of kind Store or the context's), or ambiguous
// (true with the cause: the slot's content decides). Retrying transient
// failures is the transport's (objstore.WithRetry, in front of every store
// core hands a provider), never this package's: see the package doc, "One
// retry policy".
func (l *sharedLog) writeSlot(ctx context.Context, k uint64, data []byte) (ambiguous bool, err error) {
	_, err = l.store.PutIfAbsent(ctx, l.slotKey(k), data)
	switch {
	case err == nil, errors.Is(err, objstore.ErrExists):
		return false, err
	case ctx.Err() != nil:
		return false, outcomeUnknown(err, "the write of slot %d was interrupted; it may or may not have landed", k)
	case definite(err):
		return false, &core.Error{Kind: core.Store, Msg: fmt.Sprintf("writing slot %d failed; nothing was written", k), Err: err}
	}
	return true, err
}

// definite reports a store failure that says the write did not happen: an
// access denied, an invalid request, a precondition or a missing object.
// Transient failures, ErrOutcomeUnknown and errors that are not the
// store's own are ambiguous.
func definite(err error) bool {
	for _, kind := range []error{objstore.ErrAccessDenied, objstore.ErrInvalid, objstore.ErrPrecondition, objstore.ErrNotFound} {
		if errors.Is(err, kind) && !objstore.IsTransient(err) && !errors.Is(err, objstore.ErrOutcomeUnknown) {
			return true
		}
	}
	return false
}

// Committer races batches into slots (core.Committer). It is safe for
// concurrent use. It keeps no connection and no timer: an idle committer
// makes no requests, and what it knows of the tail (shared with the
// session's reader and writer) only saves requests later.
type Committer struct{ l *sharedLog }

// Base returns the log's base; ok is false while no slot 0 exists.
func (c *Committer) Base(ctx context.Context) (core.LogBase, bool, error) {
	b, ok, err := c.l.getBase(ctx)
	if err != nil {
		return core.LogBase{}, false, coreErr(err, "reading the commit log's base")
	}
	return b, ok, nil
}

// Tail returns the highest landed slot: one LIST page from the highest
// slot known present. ok is false when the log holds no slot.
func (c *Committer) Tail(ctx context.Context) (uint64, bool, error) {
	t, ok, err := c.l.tail(ctx)
	if err != nil {
		return 0, false, coreErr(err, "finding the commit log's tail")
	}
	return t, ok, nil
}

// Read returns the slots in [from, through] (through 0: to the tail) in
// order. A missing slot above the truncation floor is a hole: Corruption.
// Slots below the floor are gone (the folded store holds them): asking for
// one is SnapshotExpired, matching slate.ErrWalTruncated.
func (c *Committer) Read(ctx context.Context, from, through uint64) ([]core.LogBatch, error) {
	out, err := c.l.readRange(ctx, from, through)
	if err != nil {
		return nil, coreErr(err, "reading commit-log slots %d..%s", from, throughText(through))
	}
	return out, nil
}

// Probe returns the slots landed from slot to the tail, read directly
// one after another (one GET per slot and one for the first absent; a
// LIST only past eight), or none when slot has not landed (or was
// truncated: Probe says nothing about the floor). The catalog's
// contention policy looks before it offers a slot a peer's turn is likely
// to have taken.
func (c *Committer) Probe(ctx context.Context, slot uint64) ([]core.LogBatch, error) {
	landed, err := c.l.readOn(ctx, slot)
	if err != nil {
		return nil, coreErr(err, "probing commit-log slot %d", slot)
	}
	return landed, nil
}

var _ core.SlotProber = (*Committer)(nil)

func throughText(through uint64) string {
	if through == 0 {
		return "tail"
	}
	return fmt.Sprint(through)
}

// Adopt races stamp as slot 0 with base inside its envelope, so base and
// slot 0 land in one PUT. Whoever holds slot 0 defines the base: the held
// base and stamp are returned, ours when won. Either way the base copy at
// log/base is written (or checked) before Adopt returns.
func (c *Committer) Adopt(ctx context.Context, base core.LogBase, stamp core.LogBatch) (core.LogBase, core.LogBatch, bool, error) {
	l := c.l
	switch {
	case stamp.Slot != 0:
		return core.LogBase{}, core.LogBatch{}, false, invalidf("the adoption stamp races slot 0, not %d", stamp.Slot)
	case stamp.TxnID == uuid.Nil:
		return core.LogBase{}, core.LogBatch{}, false, invalidf("the adoption stamp needs a txn id (it resolves an ambiguous write)")
	}
	if err := checkBase(base); err != nil {
		return core.LogBase{}, core.LogBatch{}, false, invalidf("adoption base %+v: %v", base, err)
	}
	data := encodeSlot(stamp, &base)
	// Nothing can race slot 1 before slot 0 exists: nothing above slot 0
	// existed when the write started.
	started := time.Now()
	ambiguous, err := l.writeSlot(ctx, 0, data)
	switch {
	case err == nil:
		return c.adoptWon(ctx, base, stamp, started)
	case errors.Is(err, objstore.ErrExists):
		return c.adoptLost(ctx, nil)
	case !ambiguous:
		return core.LogBase{}, core.LogBatch{}, false, err
	}
	// Ambiguous: slot 0's content decides.
	got, gerr := l.fetch(ctx, []uint64{0})
	switch {
	case gerr != nil:
		return core.LogBase{}, core.LogBatch{}, false, outcomeUnknown(errors.Join(err, gerr), "adoption: the write of slot 0 may or may not have landed, and reading it back failed")
	case !got[0].found:
		return core.LogBase{}, core.LogBatch{}, false, outcomeUnknown(err, "adoption: the write of slot 0 failed and slot 0 is absent; a late write may still land")
	case got[0].batch.TxnID == stamp.TxnID:
		return c.adoptWon(ctx, base, stamp, started)
	}
	return c.adoptLost(ctx, &got[0])
}

// adoptWon completes a won slot 0: the base copy, unless one already names
// another stamp while the floor is above 0, which means slot 0 had been
// adopted and truncated before our write (a zombie, below the floor): then
// ours is deleted and the adoption is lost.
func (c *Committer) adoptWon(ctx context.Context, base core.LogBase, stamp core.LogBatch, started time.Time) (core.LogBase, core.LogBatch, bool, error) {
	l := c.l
	slot0Base, zombie, err := l.reconcileBase(ctx, base, stamp.TxnID)
	if err != nil {
		return core.LogBase{}, core.LogBatch{}, false, coreErr(err, "adoption: slot 0 is ours but writing the base copy failed (Base repairs it)")
	}
	if zombie {
		if derr := l.store.Delete(ctx, l.slotKey(0)); derr != nil {
			l.log.Warn("provider: could not delete a slot 0 written below the floor; readers ignore it", "err", derr)
		}
		return slot0Base, core.LogBatch{Slot: 0}, false, nil
	}
	l.observeTail(0, started)
	return base, stamp, true, nil
}

// adoptLost returns the stamp holding slot 0 (read now unless given) and
// repairs the base copy from it.
func (c *Committer) adoptLost(ctx context.Context, got *fetched) (core.LogBase, core.LogBatch, bool, error) {
	l := c.l
	if got == nil {
		fs, err := l.fetch(ctx, []uint64{0})
		if err != nil {
			return core.LogBase{}, core.LogBatch{}, false, coreErr(err, "adoption: reading the stamp that holds slot 0")
		}
		got = &fs[0]
	}
	if !got.found {
		// Taken, then truncated: the base copy exists (slot 0 is never
		// deleted before it), the stamp is gone.
		b, ok, err := l.getBase(ctx)
		if err == nil && !ok {
			err = corruptf("slot 0 was taken, then vanished, and no base copy exists")
		}
		if err != nil {
			return core.LogBase{}, core.LogBatch{}, false, coreErr(err, "adoption")
		}
		return b, core.LogBatch{Slot: 0}, false, nil
	}
	slot0Base, zombie, err := l.reconcileBase(ctx, *got.base, got.batch.TxnID)
	if err != nil {
		return core.LogBase{}, core.LogBatch{}, false, coreErr(err, "adoption")
	}
	if zombie {
		return slot0Base, core.LogBatch{Slot: 0}, false, nil
	}
	return slot0Base, got.batch, false, nil
}

// Offer races batch.Slot (see the package doc, "The race"). Won: the slot
// holds our envelope. Lost: Landed holds every slot from the raced one to
// the tail (from the floor, when the raced slot is already truncated). A
// write whose outcome stays unknown is an error matching
// core.OutcomeUnknown.
func (c *Committer) Offer(ctx context.Context, batch core.LogBatch) (core.OfferResult, error) {
	l := c.l
	k := batch.Slot
	switch {
	case k == 0:
		return core.OfferResult{}, invalidf("slot 0 is the adoption stamp: race it with Adopt")
	case batch.TxnID == uuid.Nil:
		return core.OfferResult{}, invalidf("a batch needs a txn id (it resolves an ambiguous write)")
	}
	if _, ok, err := l.getBase(ctx); err != nil || !ok {
		if err == nil {
			err = ErrNotAdopted
		}
		return core.OfferResult{}, coreErr(err, "offering slot %d", k)
	}
	data := encodeSlot(batch, nil)
	// Only race k while k-1 is the tail, seen recently enough that a slot k
	// taken since cannot have been truncated yet.
	hi, hiOK, seen := l.known()
	switch {
	case hiOK && hi >= k:
		return c.lost(ctx, k)
	case hiOK && hi == k-1 && l.fresh(seen):
	default:
		t, ok, err := l.tail(ctx)
		if err != nil {
			return core.OfferResult{}, coreErr(err, "offering slot %d: finding the tail", k)
		}
		switch {
		case ok && t >= k:
			return c.lost(ctx, k)
		case !ok || t < k-1:
			tail := "none"
			if ok {
				tail = fmt.Sprint(t)
			}
			return core.OfferResult{}, invalidf("slot %d is past the log's tail (%s) + 1: racing it would leave a hole", k, tail)
		}
		_, _, seen = l.known()
	}
	ambiguous, err := l.writeSlot(ctx, k, data)
	switch {
	case err == nil:
		return c.won(ctx, batch, seen)
	case errors.Is(err, objstore.ErrExists):
		l.observePresent(k)
		return c.lost(ctx, k)
	case !ambiguous:
		return core.OfferResult{}, err
	}
	// Ambiguous (a lost acknowledgement, a timeout, the transport's
	// ErrOutcomeUnknown): slot k's content decides.
	got, gerr := l.fetch(ctx, []uint64{k})
	switch {
	case gerr != nil:
		return core.OfferResult{}, outcomeUnknown(errors.Join(err, gerr), "the write of slot %d may or may not have landed, and reading it back failed", k)
	case !got[0].found:
		return core.OfferResult{}, outcomeUnknown(err, "the write of slot %d failed and slot %d is absent; a late write may still land", k, k)
	case got[0].batch.TxnID == batch.TxnID:
		return c.won(ctx, batch, seen)
	}
	return c.lost(ctx, k)
}

// won completes a won slot k = batch.Slot, raced when k-1 was seen as the
// tail at seen. The session's reader is handed the batch (it serves it
// without a request).
// If that observation is older than the fresh window, slot k may have been
// taken, folded and truncated meanwhile, and our create-if-absent then
// re-created it below the floor: the floor tells (it moves past a slot
// before the slot is deleted). Such a zombie is deleted and the race lost.
func (c *Committer) won(ctx context.Context, batch core.LogBatch, seen time.Time) (core.OfferResult, error) {
	l, k := c.l, batch.Slot
	if !l.fresh(seen) {
		floor, _, err := l.readFloor(ctx)
		if err != nil {
			return core.OfferResult{}, outcomeUnknown(err, "slot %d was written but checking it against the truncation floor failed", k)
		}
		if floor > k {
			if derr := l.store.Delete(ctx, l.slotKey(k)); derr != nil {
				l.log.Warn("provider: could not delete a slot written below the floor; readers ignore it", "slot", k, "err", derr)
			}
			return c.lost(ctx, k)
		}
	}
	// Nothing can race k+1 before k exists: k was the tail when we wrote it.
	l.observeTail(k, seen)
	l.remember(batch)
	return core.OfferResult{Won: true}, nil
}

// lost reads every slot from k to the tail (from the floor if k is gone).
func (c *Committer) lost(ctx context.Context, k uint64) (core.OfferResult, error) {
	l := c.l
	l.observePresent(k)
	landed, err := l.readForward(ctx, k)
	if errors.Is(err, slate.ErrWalTruncated) {
		floor, _, ferr := l.readFloor(ctx)
		if ferr != nil {
			return core.OfferResult{}, coreErr(ferr, "lost slot %d", k)
		}
		landed, err = l.readRange(ctx, floor, 0)
	}
	if err != nil {
		return core.OfferResult{}, coreErr(err, "lost slot %d: reading the slots that landed", k)
	}
	if len(landed) == 0 {
		return core.OfferResult{}, coreErr(corruptf("slot %d is taken but no slot from it on can be read", k), "lost slot %d", k)
	}
	return core.OfferResult{Landed: landed}, nil
}

var _ core.Committer = (*Committer)(nil)
