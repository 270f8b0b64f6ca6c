package slate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// role says which epoch a manifest handle holds.
type role int

const (
	roleNone      role = iota // readers: no epoch, never fenced
	roleWriter                // holds writer_epoch
	roleCompactor             // holds compactor_epoch
)

// manifestHandle is one process's view of the manifest: the latest version
// it has read or written, and (for the writer and compactor) the epoch it
// holds. All updates go through update, which writes version id+1
// create-if-absent and, on conflict, refreshes and re-applies.
type manifestHandle struct {
	store *manifest.Store
	role  role

	mu    sync.Mutex
	id    uint64
	m     *manifest.Manifest
	epoch uint64
}

// updateTimeout bounds one update's CAS loop (SlateDB: 300 s).
const updateTimeout = 5 * time.Minute

func (h *manifestHandle) epochOf(m *manifest.Manifest) uint64 {
	switch h.role {
	case roleWriter:
		return m.WriterEpoch
	case roleCompactor:
		return m.CompactorEpoch
	}
	return 0
}

// checkEpochLocked fails with ErrFenced if m carries a newer epoch.
func (h *manifestHandle) checkEpochLocked(m *manifest.Manifest) error {
	if h.role == roleNone {
		return nil
	}
	stored := h.epochOf(m)
	if stored > h.epoch {
		return fmt.Errorf("%w (our epoch %d, manifest holds %d)", ErrFenced, h.epoch, stored)
	}
	return nil
}

// loadManifest returns the latest manifest, creating the first one when
// create is set and none exists.
func loadManifest(ctx context.Context, store *manifest.Store, create bool) (uint64, *manifest.Manifest, error) {
	for {
		id, m, err := store.Latest(ctx)
		if err != nil {
			return 0, nil, err
		}
		if m != nil {
			if !m.Initialized {
				return 0, nil, fmt.Errorf("%w: manifest %d is not initialized", ErrCorrupt, id)
			}
			return id, m, nil
		}
		if !create {
			return 0, nil, ErrNotInitialized
		}
		err = store.Create(ctx, 1, manifest.New())
		if err != nil && !errors.Is(err, manifest.ErrConflict) {
			return 0, nil, err
		}
		// Created, or someone else did: either way read it back.
	}
}

// openHandle loads the latest manifest; for the writer and compactor roles
// it then claims a new epoch (stored epoch + 1) by CAS.
func openHandle(ctx context.Context, store *manifest.Store, r role, create bool) (*manifestHandle, error) {
	return openHandleClaim(ctx, store, r, create, nil)
}

// openHandleClaim is openHandle with extra changes written in the same
// version as the epoch claim (the compactor clears the in-flight records
// of the compactors it fences).
func openHandleClaim(ctx context.Context, store *manifest.Store, r role, create bool, claim func(*manifest.Manifest) error) (*manifestHandle, error) {
	id, m, err := loadManifest(ctx, store, create)
	if err != nil {
		return nil, err
	}
	h := &manifestHandle{store: store, role: r, id: id, m: m}
	if r == roleNone {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	for {
		next := h.m.Clone()
		switch r {
		case roleWriter:
			next.WriterEpoch++
		case roleCompactor:
			next.CompactorEpoch++
		}
		if claim != nil {
			if err := claim(next); err != nil {
				return nil, err
			}
		}
		err := store.Create(ctx, h.id+1, next)
		if err == nil {
			h.id++
			h.m = next
			h.epoch = h.epochOf(next)
			return h, nil
		}
		if !errors.Is(err, manifest.ErrConflict) {
			return nil, err
		}
		nid, nm, err := store.Refresh(ctx, h.id, h.m)
		if err != nil {
			return nil, err
		}
		h.id, h.m = nid, nm
	}
}

// current returns the handle's manifest id and a copy of its state.
func (h *manifestHandle) current() (uint64, *manifest.Manifest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.id, h.m.Clone()
}

// refresh reads newer versions, failing with ErrFenced if our epoch is
// gone.
func (h *manifestHandle) refresh(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refreshLocked(ctx)
}

func (h *manifestHandle) refreshLocked(ctx context.Context) error {
	id, m, err := h.store.Refresh(ctx, h.id, h.m)
	if err != nil {
		if errors.Is(err, manifest.ErrCorrupt) {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return err
	}
	if err := h.checkEpochLocked(m); err != nil {
		return err
	}
	h.id, h.m = id, m
	return nil
}

// update applies mutate to the latest manifest and writes it as the next
// version, refreshing and re-applying on conflict. mutate must be safe to
// run more than once (it always sees the latest state); id is the version
// being written (a checkpoint taken in this update pins it).
//
// mutate must also be idempotent: applied to a manifest that already holds
// its effect, it must change nothing (or only refresh times). A write that
// landed but whose id GC passed right after is reported as a conflict (see
// manifest.Store), and the retry then sees the first write's effect.
func (h *manifestHandle) update(ctx context.Context, mutate func(m *manifest.Manifest, id uint64) error) (uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	for {
		if err := h.checkEpochLocked(h.m); err != nil {
			return 0, err
		}
		next := h.m.Clone()
		if err := mutate(next, h.id+1); err != nil {
			if errors.Is(err, errNoChange) {
				return h.id, nil
			}
			return 0, err
		}
		err := h.store.Create(ctx, h.id+1, next)
		if err == nil {
			h.id++
			h.m = next
			return h.id, nil
		}
		if !errors.Is(err, manifest.ErrConflict) {
			return 0, err
		}
		if err := h.refreshLocked(ctx); err != nil {
			return 0, err
		}
	}
}

// errNoChange, returned by an update's mutate, ends the update without
// writing: the latest manifest already says what it would write.
var errNoChange = errors.New("slate: manifest already up to date")

// writerManifest adapts the writer's handle for WriterInit.
type writerManifest struct{ h *manifestHandle }

func (w writerManifest) ReplayAfterWalID() uint64 {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.m.ReplayAfterWalID
}

func (w writerManifest) NextWalID() uint64 {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.m.NextWalID
}

func (w writerManifest) LastL0Seq() uint64 {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.m.LastL0Seq
}

func (w writerManifest) Epoch() uint64                     { return w.h.epoch }
func (w writerManifest) Refresh(ctx context.Context) error { return w.h.refresh(ctx) }
