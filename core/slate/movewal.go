package slate

import (
	"context"
	"errors"
	"fmt"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// MoveWalReport describes a MoveWalStore.
type MoveWalReport struct {
	// From and To name the old and new WAL stores ("" = the main store).
	From, To string
	// LastOldID is the highest WAL id used in the old store; FirstNewID
	// the fence written in the new one (LastOldID + 1). Every later WAL id
	// is above it.
	LastOldID, FirstNewID uint64
	// WriterEpoch is the epoch the move held (every older writer is fenced).
	WriterEpoch uint64
}

// MoveWalStore moves the native WAL of the database at root from one
// object store to another (nil means the main store). It is what a
// catalog's move_wal_store verb calls, with no writer running:
//
//  1. it opens the database as its writer with the old WAL store, which
//     fences every older writer and replays the WAL;
//  2. flushes everything into L0 and closes, so no WAL file holds a row
//     the tree lacks;
//  3. writes a zero-byte fence in the new store at the id after the last
//     one used in the old store (refusing a new store that already holds
//     WAL files above it), so WAL ids never move backwards;
//  4. records the new store's identity in the manifest, with the replay
//     point at the old store's last id, by a CAS under the move's writer
//     epoch (ErrFenced if a writer opened meanwhile: nothing changes).
//
// Afterwards Open and OpenReader need WithWalStore(to) (or no WAL store
// option when to is the main store); opening with the old one is
// ErrWalStoreMismatch. A crash before step 4 leaves the old store in
// charge and the move can simply be run again.
//
// The old store keeps its files: its zero-byte fences must stay (a stalled
// writer configured with it must find its next id taken) and its other
// files are no longer read by the writer, but a pinned reader of a
// checkpoint taken before the move replays that checkpoint's WAL range from
// the old store (open it WithWalStore(from)). GC collects only the current
// WAL store.
func MoveWalStore(ctx context.Context, store objstore.Store, root string, from, to objstore.Store, opts ...Option) (MoveWalReport, error) {
	if from == nil {
		from = store
	}
	if to == nil {
		to = store
	}
	ident := func(s objstore.Store) string {
		if s.String() == store.String() {
			return ""
		}
		return s.String()
	}
	rep := MoveWalReport{From: ident(from), To: ident(to)}
	if rep.From == rep.To {
		return rep, fmt.Errorf("%w: the WAL is already in %s", ErrInvalid, from)
	}
	o := buildOptions(opts)
	if o.walWriter != nil {
		return rep, fmt.Errorf("%w: MoveWalStore moves the native WAL; a plugged WAL moves itself", ErrInvalid)
	}
	opts = append(opts, WithWalStore(from), WithCompactor(CompactorOptions{PollInterval: -1}), WithGC(GCOptions{Interval: -1}))
	// 1-2. Fence, replay, flush everything into L0, stop.
	db, err := Open(ctx, store, root, opts...)
	if err != nil {
		return rep, fmt.Errorf("slate: move WAL store: opening the writer: %w", err)
	}
	rep.WriterEpoch = db.mh.epoch
	lastSeq := db.LastCommittedSeq()
	if err := db.Close(ctx); err != nil {
		return rep, fmt.Errorf("slate: move WAL store: flushing into L0: %w", err)
	}
	if err := db.mh.refresh(ctx); err != nil {
		return rep, fmt.Errorf("slate: move WAL store: %w", err)
	}
	_, m := db.mh.current()
	if m.LastL0Seq < lastSeq {
		return rep, fmt.Errorf("%w: move WAL store: the tree holds seqs up to %d, the WAL up to %d", ErrCorrupt, m.LastL0Seq, lastSeq)
	}
	// The old store's last id: our fence or later (Close wrote nothing
	// after the flush, and a newer writer would fail the CAS below).
	oldWAL := newNativeWAL(from, root, o.settings, o.logger)
	last, err := oldWAL.LastWalID(ctx, m.ReplayAfterWalID)
	if err != nil {
		return rep, fmt.Errorf("slate: move WAL store: finding the old WAL's tail: %w", err)
	}
	rep.LastOldID, rep.FirstNewID = last, last+1
	// 3. Claim the next id in the new store.
	newWAL := newNativeWAL(to, root, o.settings, o.logger)
	if above, err := newWAL.LastWalID(ctx, last); err != nil {
		return rep, fmt.Errorf("slate: move WAL store: probing the new store: %w", err)
	} else if above != last {
		return rep, fmt.Errorf("%w: move WAL store: %s already holds WAL files up to id %d, above the old store's last id %d", ErrInvalid, to, above, last)
	}
	if _, err := to.PutIfAbsent(ctx, newWAL.key(rep.FirstNewID), nil); err != nil {
		if errors.Is(err, objstore.ErrExists) {
			return rep, fmt.Errorf("%w: move WAL store: WAL id %d already exists in %s", ErrInvalid, rep.FirstNewID, to)
		}
		return rep, fmt.Errorf("slate: move WAL store: fencing the new store: %w", err)
	}
	// 4. Switch the manifest over, under our writer epoch.
	_, err = db.mh.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		if m.WalStore == rep.To && m.ReplayAfterWalID >= last {
			return errNoChange
		}
		if m.WalStore != rep.From {
			return fmt.Errorf("%w: the manifest now records the WAL in %q", ErrWalStoreMismatch, m.WalStore)
		}
		m.WalStore = rep.To
		m.ReplayAfterWalID = max(m.ReplayAfterWalID, last)
		m.NextWalID = max(m.NextWalID, rep.FirstNewID+1)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("slate: move WAL store: recording the new store: %w", err)
	}
	return rep, nil
}
