package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/oklog/ulid/v2"
)

// GCOptions configure garbage collection (see the package doc for what is
// kept and why). Zero values take SlateDB's defaults.
type GCOptions struct {
	// Interval between the writer's background runs (default 600 s; the
	// first run comes one interval after Open, so short-lived processes and
	// unit tests never see one). Negative: no background GC. RunGC ignores
	// it.
	Interval time.Duration
	// MinAge: manifests and WAL files modified, and SSTs minted (ULID
	// time), less than MinAge ago are kept (default 300 s). It also absorbs
	// clock skew between the processes sharing the database. Negative: no
	// minimum age (tests and tools; still safe against this process's
	// writer and compactor, whose clock GC shares).
	MinAge time.Duration
	// DryRun reports what a run would delete and changes nothing (expired
	// checkpoints stay too).
	DryRun bool
	// Now is the clock GC judges ages and checkpoint expiry by (nil:
	// time.Now). A clock running ahead makes objects and checkpoints look
	// older (tests use it instead of sleeping). It never moves a cutoff
	// past the real time a run starts: an object written after that moment
	// is never old enough, whatever Now says (see runOnce).
	Now func() time.Time
}

// Defaults of GCOptions.
const (
	DefaultGCInterval = 600 * time.Second
	DefaultGCMinAge   = 300 * time.Second
)

func (o *GCOptions) fill() {
	if o.Interval == 0 {
		o.Interval = DefaultGCInterval
	}
	if o.MinAge == 0 {
		o.MinAge = DefaultGCMinAge
	}
}

// GCReport lists what one run deleted (with DryRun: would delete).
type GCReport struct {
	DryRun bool
	// ExpiredCheckpoints were removed from the manifest.
	ExpiredCheckpoints []uuid.UUID
	// Manifests: deleted manifest ids; ManifestBoundary the GC boundary
	// after the run.
	Manifests        []uint64
	ManifestBoundary uint64
	// WalFiles: deleted WAL ids. WalSkipped: the WAL is plugged in and no
	// WalGC was given, so no WAL file was considered.
	WalFiles   []uint64
	WalSkipped bool
	// SSTs: deleted tables under compacted/. Unreferenced tables were taken
	// when their ULID was at most SSTFloor (the newest L0 table or the
	// LastCompactedL0 marker of the latest manifest) and their ULID time
	// below SSTCutoff (now - MinAge, at most the run's start, or the start
	// of a running compaction).
	SSTs      []ulid.ULID
	SSTFloor  ulid.ULID
	SSTCutoff time.Time
}

// Deleted is the number of objects (and checkpoints) removed.
func (r GCReport) Deleted() int {
	return len(r.ExpiredCheckpoints) + len(r.Manifests) + len(r.WalFiles) + len(r.SSTs)
}

// collector is one database's garbage collector.
type collector struct {
	store  objstore.Store
	root   string
	ms     *manifest.Store
	tables *tableCache // for key names only
	walGC  WalGC       // nil: skip WAL files
	log    *slog.Logger
}

// RunGC runs garbage collection once, from the writer (the WAL collector is
// the writer's: native, WithWalGC, or a plugged WriterInit implementing
// WalGC).
func (db *DB) RunGC(ctx context.Context, opts GCOptions) (GCReport, error) {
	if err := db.CloseReason(); err != nil {
		return GCReport{}, err
	}
	opts.fill()
	c := &collector{store: db.store, root: db.root, ms: manifest.NewStore(db.store, db.root), tables: db.tables,
		walGC: db.walGC, log: db.log}
	return c.run(ctx, opts)
}

// RunGC runs garbage collection once on the database at root without a
// writer (operators, tools). It reads only the manifest to decide, and is
// safe while a writer, compactor and readers run elsewhere. WAL files are
// collected with WithWalGC's collector if given, else the native WAL's
// (in WithWalStore's store when the manifest records a separate WAL
// store: opening without it is ErrWalStoreMismatch).
func RunGC(ctx context.Context, store objstore.Store, root string, gopts GCOptions, opts ...Option) (GCReport, error) {
	o := buildOptions(opts)
	gopts.fill()
	c := &collector{store: store, root: root, ms: manifest.NewStore(store, root),
		tables: newTableCache(store, root, 0), walGC: o.walGC, log: o.logger}
	if c.walGC == nil {
		_, latest, err := c.ms.Latest(ctx)
		if err != nil {
			return GCReport{}, err
		}
		if latest == nil {
			return GCReport{}, fmt.Errorf("%w (%s, root %q)", ErrNotInitialized, store, root)
		}
		ws := store
		if latest.WalStore != "" {
			if o.walStore == nil || o.walStore.String() != latest.WalStore {
				return GCReport{}, fmt.Errorf("%w: the manifest records the WAL in %s; run GC WithWalStore on it", ErrWalStoreMismatch, latest.WalStore)
			}
			ws = o.walStore
		}
		c.walGC = newNativeWAL(ws, root, o.settings, o.logger)
	}
	return c.run(ctx, gopts)
}

// gcLoop runs the writer's background GC every Interval.
func (db *DB) gcLoop(ctx context.Context) {
	t := time.NewTicker(db.opts.gc.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := db.RunGC(ctx, db.opts.gc)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			db.log.Warn("slate: garbage collection failed; retrying at the next interval", "root", db.root, "err", err)
			continue
		}
		if n := rep.Deleted(); n > 0 {
			db.log.Info("slate: garbage collected", "root", db.root, "checkpoints", len(rep.ExpiredCheckpoints),
				"manifests", len(rep.Manifests), "wal_files", len(rep.WalFiles), "ssts", len(rep.SSTs))
		}
	}
}

// errStaleView: a concurrent collector moved the manifest on under this run
// before it deleted anything; the run starts over from the new latest.
var errStaleView = errors.New("slate: GC view went stale")

func (c *collector) run(ctx context.Context, o GCOptions) (GCReport, error) {
	for attempt := 0; ; attempt++ {
		rep, err := c.runOnce(ctx, o)
		if errors.Is(err, errStaleView) && attempt < 8 {
			continue
		}
		return rep, err
	}
}

func (c *collector) runOnce(ctx context.Context, o GCOptions) (GCReport, error) {
	rep := GCReport{DryRun: o.DryRun}
	// start is taken before anything is read, and no cutoff lies after it:
	// an SST minted or a manifest written after this moment is never below
	// a cutoff (see the package doc). now is the clock ages and expiry are
	// judged by (the real one unless o.Now is set).
	start := time.Now()
	now := start
	if o.Now != nil {
		now = o.Now()
	}
	minAge := max(o.MinAge, 0)
	cutoff := now.Add(-minAge)
	if cutoff.After(start) {
		cutoff = start
	}

	// 1. Expired checkpoints.
	h, err := openHandle(ctx, c.ms, roleNone, false)
	if err != nil {
		return rep, err
	}
	latestID, latest := h.current()
	// effLatest: the id of the latest version once the expired checkpoints
	// are gone (a dry run only pretends to write it).
	effLatest := latestID
	expired := func(cp manifest.Checkpoint) bool { return cp.Expired(now) }
	for _, cp := range latest.Checkpoints {
		if expired(cp) {
			rep.ExpiredCheckpoints = append(rep.ExpiredCheckpoints, cp.ID)
		}
	}
	if len(rep.ExpiredCheckpoints) > 0 {
		if o.DryRun {
			latest.Checkpoints = slices.DeleteFunc(latest.Checkpoints, expired)
			effLatest++
		} else {
			var removed []uuid.UUID
			if _, err := h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
				removed = removed[:0]
				for _, cp := range m.Checkpoints {
					if expired(cp) {
						removed = append(removed, cp.ID)
					}
				}
				if len(removed) == 0 {
					return errNoChange
				}
				m.Checkpoints = slices.DeleteFunc(m.Checkpoints, expired)
				return nil
			}); err != nil {
				return rep, fmt.Errorf("slate: GC removing expired checkpoints: %w", err)
			}
			rep.ExpiredCheckpoints = removed
			latestID, latest = h.current()
			effLatest = latestID
		}
	}

	// 2. The live manifests: the latest and every one a checkpoint pins. A
	// pinned manifest that cannot be read stops the run before anything is
	// deleted.
	live := map[uint64]*manifest.Manifest{latestID: latest}
	pinned := map[uint64]bool{}
	for _, cp := range latest.Checkpoints {
		pinned[cp.ManifestID] = true
		if _, ok := live[cp.ManifestID]; ok {
			continue
		}
		m, err := c.ms.Get(ctx, cp.ManifestID)
		if err != nil {
			if errors.Is(err, objstore.ErrNotFound) {
				// Another collector, whose view of the latest manifest is
				// newer, saw this checkpoint replaced and took the version
				// it pinned: our view is stale. Start over (see run).
				return rep, fmt.Errorf("%w: manifest %d pinned by checkpoint %s is gone", errStaleView, cp.ManifestID, cp.ID)
			}
			return rep, fmt.Errorf("slate: GC reading manifest %d pinned by checkpoint %s: %w", cp.ManifestID, cp.ID, err)
		}
		live[cp.ManifestID] = m
	}

	// 3. Manifests: not the latest, not pinned, older than the cutoff. The
	// boundary goes up first, so nobody can write one of these ids again
	// and take it for the latest.
	infos, ids, err := c.ms.List(ctx)
	if err != nil {
		return rep, err
	}
	for i, id := range ids {
		if id >= effLatest || pinned[id] || infos[i].LastModified.After(cutoff) {
			continue
		}
		rep.Manifests = append(rep.Manifests, id)
	}
	if len(rep.Manifests) > 0 && !o.DryRun {
		if rep.ManifestBoundary, err = c.ms.AdvanceBoundary(ctx, slices.Max(rep.Manifests)); err != nil {
			return rep, fmt.Errorf("slate: GC advancing the manifest boundary: %w", err)
		}
		for _, id := range rep.Manifests {
			if err := c.ms.Delete(ctx, id); err != nil {
				return rep, fmt.Errorf("slate: GC deleting manifest %d: %w", id, err)
			}
		}
	} else if rep.ManifestBoundary, err = c.ms.Boundary(ctx); err != nil {
		return rep, err
	}

	// 4. WAL files outside every live range (the collector keeps fences).
	if c.walGC == nil {
		rep.WalSkipped = true
	} else {
		ranges := []WalRange{{Start: latest.ReplayAfterWalID + 1}}
		for id, m := range live {
			if id != latestID && m.NextWalID > m.ReplayAfterWalID+1 {
				ranges = append(ranges, WalRange{Start: m.ReplayAfterWalID + 1, End: m.NextWalID})
			}
		}
		// The collector takes an age and judges it by the real clock when
		// it lists: the age, as of now, of our cutoff (a little over
		// minAge with the real clock), so WAL files face the same cutoff as
		// manifests and SSTs.
		walMinAge := max(time.Since(cutoff), 0)
		got, err := c.walGC.Collect(ctx, ranges, walMinAge, o.DryRun)
		rep.WalFiles = got
		if err != nil {
			return rep, fmt.Errorf("slate: GC collecting WAL files: %w", err)
		}
		slices.Sort(rep.WalFiles)
	}

	// 5. SSTs no live manifest lists, minted before the cutoff and at or
	// below the floor. A writer mints every L0 above the floor it knows,
	// which is at least this one, so an L0 uploaded and not yet published
	// is above it; an unpublished compaction output is at or after its
	// compaction's start.
	sstCutoff := cutoff
	rep.SSTFloor = newestL0(latest)
	for _, rc := range latest.RunningCompactions {
		if t := ulid.Time(rc.Time()); t.Before(sstCutoff) {
			sstCutoff = t
		}
	}
	rep.SSTCutoff = sstCutoff
	cutoffMs := uint64(max(sstCutoff.UnixMilli(), 0))
	keep := map[ulid.ULID]bool{}
	for _, m := range live {
		for id := range treeOf(m).ids() {
			keep[id] = true
		}
	}
	objs, err := objstore.ListAll(ctx, c.store, c.tables.dir, "")
	if err != nil {
		return rep, err
	}
	for _, obj := range objs {
		id, ok := c.tables.parseKey(obj.Key)
		if !ok || keep[id] || id.Compare(rep.SSTFloor) > 0 || id.Time() >= cutoffMs {
			continue
		}
		if !o.DryRun {
			if err := c.store.Delete(ctx, obj.Key); err != nil {
				return rep, fmt.Errorf("slate: GC deleting SST %s: %w", id, err)
			}
		}
		rep.SSTs = append(rep.SSTs, id)
	}
	return rep, nil
}
