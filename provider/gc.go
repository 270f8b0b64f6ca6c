package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// collect truncates a prefix of the log (see the package doc,
// "Truncation"). The engine hands it the WAL ranges someone still reads:
// the latest manifest's (ReplayAfterWalID, ∞) and (ReplayAfterWalID,
// NextWalID) of every manifest a reader's checkpoint pins. The replay-point
// slot R is the slot just below the lowest referenced start; slots below R
// that are older than max(minAge, Retention) are deleted, in order, after
// the floor is raised past them, stopping at the first slot too young (the
// listing stops there too: listUntil). R
// itself is kept, so the log's tail is never empty and a committer always
// finds the slot its next race follows. Slot 0 is deleted only once the
// base copy exists. It returns the WAL ids deleted (with dryRun: those it
// would delete).
func (l *sharedLog) collect(ctx context.Context, referenced []slate.WalRange, minAge time.Duration, dryRun bool) ([]uint64, error) {
	base, ok, err := l.getBase(ctx)
	if err != nil || !ok || len(referenced) == 0 {
		return nil, err // unadopted, or nothing says where the replay point is: keep all
	}
	minStart := referenced[0].Start
	for _, r := range referenced[1:] {
		minStart = min(minStart, r.Start)
	}
	if minStart <= base.WalBase {
		return nil, nil // slot 0 (or the store's own WAL) is still needed
	}
	keep := minStart - 1 - base.WalBase
	cutoff := time.Now().Add(-max(minAge, l.opts.retention()))
	floor, _, err := l.readFloor(ctx)
	if err != nil {
		return nil, err
	}
	// The first slot at or above the floor that is too young stays, and
	// so does every slot above it.
	young := func(s slotInfo) bool {
		return s.slot >= floor && s.slot < keep && s.info.LastModified.After(cutoff)
	}
	listed, err := l.listUntil(ctx, keep, young)
	if err != nil {
		return nil, err
	}
	reachedKeep := len(listed) == 0 || !young(listed[len(listed)-1])
	if reachedKeep && (len(listed) == 0 || listed[len(listed)-1].slot != keep) {
		// A listing is not a snapshot (see readRange): read the slot
		// before calling it missing. Slots the listing skipped below it
		// stay this time; a later pass deletes them as leftovers.
		got, err := l.fetch(ctx, []uint64{keep})
		if err != nil {
			return nil, err
		}
		if !got[0].found {
			return nil, corruptf("the replay point's slot %d (WAL id %d) is not in the log; not truncating", keep, base.WalID(keep))
		}
		listed = append(listed, slotInfo{slot: keep, info: objstore.ObjectInfo{Key: l.slotKey(keep), LastModified: time.Now()}})
	}
	newFloor := max(keep, floor)
	for _, s := range listed {
		if young(s) {
			newFloor = s.slot // too young: it and everything above stay
			break
		}
	}
	var doomed []uint64
	for _, s := range listed {
		if s.slot < newFloor {
			doomed = append(doomed, s.slot) // below the old floor: leftovers of an interrupted run
		}
	}
	ids := make([]uint64, len(doomed))
	for i, s := range doomed {
		ids[i] = base.WalID(s)
	}
	if len(doomed) == 0 || dryRun {
		return ids, nil
	}
	if doomed[0] == 0 {
		if err := l.ensureCopied(ctx); err != nil {
			return nil, fmt.Errorf("keeping slot 0 until the base copy exists: %w", err)
		}
	}
	if newFloor > floor {
		if err := l.advanceFloor(ctx, newFloor); err != nil {
			return nil, err
		}
	}
	for i, s := range doomed {
		if err := l.store.Delete(ctx, l.slotKey(s)); err != nil {
			return ids[:i], fmt.Errorf("truncating commit-log slot %d: %w", s, err)
		}
	}
	return ids, nil
}

// listUntil lists the slots from 0 through `through`, page by page, and
// stops after the page holding the first slot stop accepts (which ends
// the result). Slots only grow younger upward (a slot is created after
// the one below it exists), so a collector that stops at the first slot
// too young to delete lists one page however many young slots the
// retention keeps, where listing them all would cost a page per
// thousand.
func (l *sharedLog) listUntil(ctx context.Context, through uint64, stop func(slotInfo) bool) ([]slotInfo, error) {
	var out []slotInfo
	for from := uint64(0); ; {
		page, complete, err := l.listSlots(ctx, from, through, false)
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			out = append(out, s)
			if stop(s) {
				return out, nil
			}
		}
		if complete || len(page) == 0 || page[len(page)-1].slot >= through {
			return out, nil
		}
		from = page[len(page)-1].slot + 1
	}
}

// ensureCopied makes sure log/base exists (repairing it from slot 0).
func (l *sharedLog) ensureCopied(ctx context.Context) error {
	l.mu.Lock()
	copied := l.baseCopied
	l.mu.Unlock()
	if copied {
		return nil
	}
	data, _, err := l.store.Get(ctx, l.baseKey())
	if err == nil {
		b, txn, err := decodeBaseCopy(data)
		if err != nil {
			return err
		}
		l.setBase(b, txn, true)
		return nil
	}
	if !errors.Is(err, objstore.ErrNotFound) {
		return err
	}
	data, _, err = l.store.Get(ctx, l.slotKey(0))
	if err != nil {
		return fmt.Errorf("reading slot 0 to copy the base: %w", err)
	}
	stamp, b, err := l.decodeAt(0, data)
	if err != nil {
		return err
	}
	_, _, err = l.reconcileBase(ctx, *b, stamp.TxnID)
	return err
}
