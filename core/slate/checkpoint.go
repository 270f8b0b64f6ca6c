package slate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// CheckpointOptions configure a new checkpoint.
type CheckpointOptions struct {
	// Lifetime after which GC may remove the checkpoint (0: never expires).
	Lifetime time.Duration
	// Name is a free-form label shown by listings.
	Name string
	// Source, when set, makes the new checkpoint pin the same manifest as
	// that existing checkpoint instead of the current state.
	Source uuid.UUID
}

// CheckpointInfo describes a checkpoint.
type CheckpointInfo struct {
	ID         uuid.UUID
	ManifestID uint64
	Created    time.Time
	Expires    time.Time // zero: never
	Name       string
}

func infoOf(c manifest.Checkpoint) CheckpointInfo {
	return CheckpointInfo{ID: c.ID, ManifestID: c.ManifestID, Created: c.Created, Expires: c.Expires, Name: c.Name}
}

// addCheckpoint returns a manifest mutation adding a checkpoint. It is
// idempotent: re-applied to a manifest that already holds the checkpoint it
// keeps that one (and the manifest it pins).
func addCheckpoint(opts CheckpointOptions, out *CheckpointInfo) func(m *manifest.Manifest, id uint64) error {
	newID := uuid.New()
	return func(m *manifest.Manifest, id uint64) error {
		if c, ok := m.Checkpoint(newID); ok {
			*out = infoOf(c)
			return errNoChange
		}
		now := time.Now()
		c := manifest.Checkpoint{ID: newID, ManifestID: id, Created: now, Name: opts.Name}
		if opts.Lifetime > 0 {
			c.Expires = now.Add(opts.Lifetime)
		}
		if opts.Source != (uuid.UUID{}) {
			src, ok := m.Checkpoint(opts.Source)
			if !ok {
				return fmt.Errorf("%w: source checkpoint %s", ErrCheckpointMissing, opts.Source)
			}
			c.ManifestID = src.ManifestID
		}
		m.Checkpoints = append(m.Checkpoints, c)
		*out = infoOf(c)
		return nil
	}
}

// CreateCheckpoint flushes every write so far into the tree and creates a
// checkpoint pinning the resulting state (all of it, WAL included).
func (db *DB) CreateCheckpoint(ctx context.Context, opts CheckpointOptions) (CheckpointInfo, error) {
	if opts.Source == (uuid.UUID{}) {
		if err := db.FlushMemtable(ctx); err != nil {
			return CheckpointInfo{}, err
		}
	}
	var info CheckpointInfo
	if _, err := db.mh.update(ctx, addCheckpoint(opts, &info)); err != nil {
		return CheckpointInfo{}, err
	}
	return info, nil
}

// detached returns a manifest handle that holds no epoch (admin edits).
func detached(ctx context.Context, store objstore.Store, root string) (*manifestHandle, error) {
	return openHandle(ctx, manifest.NewStore(store, root), roleNone, false)
}

// CreateDetachedCheckpoint creates a checkpoint against the latest durable
// manifest without a writer (nothing is flushed: rows only in the WAL past
// the replay point are pinned as WAL ids, see GC).
func CreateDetachedCheckpoint(ctx context.Context, store objstore.Store, root string, opts CheckpointOptions) (CheckpointInfo, error) {
	h, err := detached(ctx, store, root)
	if err != nil {
		return CheckpointInfo{}, err
	}
	var info CheckpointInfo
	if _, err := h.update(ctx, addCheckpoint(opts, &info)); err != nil {
		return CheckpointInfo{}, err
	}
	return info, nil
}

// ListCheckpoints returns the checkpoints in the latest manifest.
func ListCheckpoints(ctx context.Context, store objstore.Store, root string) ([]CheckpointInfo, error) {
	h, err := detached(ctx, store, root)
	if err != nil {
		return nil, err
	}
	_, m := h.current()
	out := make([]CheckpointInfo, 0, len(m.Checkpoints))
	for _, c := range m.Checkpoints {
		out = append(out, infoOf(c))
	}
	return out, nil
}

// RefreshCheckpoint moves a checkpoint's expiry to now + lifetime (0: never).
func RefreshCheckpoint(ctx context.Context, store objstore.Store, root string, id uuid.UUID, lifetime time.Duration) (CheckpointInfo, error) {
	h, err := detached(ctx, store, root)
	if err != nil {
		return CheckpointInfo{}, err
	}
	var info CheckpointInfo
	_, err = h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		for i := range m.Checkpoints {
			if m.Checkpoints[i].ID == id {
				m.Checkpoints[i].Expires = time.Time{}
				if lifetime > 0 {
					m.Checkpoints[i].Expires = time.Now().Add(lifetime)
				}
				info = infoOf(m.Checkpoints[i])
				return nil
			}
		}
		return fmt.Errorf("%w: %s", ErrCheckpointMissing, id)
	})
	return info, err
}

// DeleteCheckpoint removes a checkpoint; deleting a missing one is
// ErrCheckpointMissing.
func DeleteCheckpoint(ctx context.Context, store objstore.Store, root string, id uuid.UUID) error {
	h, err := detached(ctx, store, root)
	if err != nil {
		return err
	}
	found := false // once seen, a retry that finds it gone is our own delete
	_, err = h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		n := len(m.Checkpoints)
		m.Checkpoints = slices.DeleteFunc(m.Checkpoints, func(c manifest.Checkpoint) bool { return c.ID == id })
		if len(m.Checkpoints) == n {
			if found {
				return errNoChange
			}
			return fmt.Errorf("%w: %s", ErrCheckpointMissing, id)
		}
		found = true
		return nil
	})
	return err
}

// ManifestInfo summarizes the latest manifest (tools, the catalog's log
// bookkeeping).
type ManifestInfo struct {
	ID               uint64
	WriterEpoch      uint64
	CompactorEpoch   uint64
	ReplayAfterWalID uint64
	NextWalID        uint64
	LastL0Seq        uint64
	L0               int
	SortedRuns       int
	Checkpoints      int
	WalStore         string
}

// DescribeManifest reads the latest manifest without opening the database.
func DescribeManifest(ctx context.Context, store objstore.Store, root string) (ManifestInfo, error) {
	h, err := detached(ctx, store, root)
	if err != nil {
		return ManifestInfo{}, err
	}
	id, m := h.current()
	return ManifestInfo{ID: id, WriterEpoch: m.WriterEpoch, CompactorEpoch: m.CompactorEpoch, ReplayAfterWalID: m.ReplayAfterWalID,
		NextWalID: m.NextWalID, LastL0Seq: m.LastL0Seq, L0: len(m.L0), SortedRuns: len(m.Runs), Checkpoints: len(m.Checkpoints), WalStore: m.WalStore}, nil
}
