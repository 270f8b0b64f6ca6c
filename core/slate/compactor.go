package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/base"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/moraine-go/moraine/core/slate/internal/sst"
	"github.com/oklog/ulid/v2"
)

// CompactorOptions configure compaction. Zero values take the defaults,
// which follow SlateDB's (reference-slatedb.md §8).
type CompactorOptions struct {
	// PollInterval: how often the writer's background compactor looks for
	// work (default 5 s; it is also woken when L0 fills up). Negative: no
	// background compaction (DB.Compact still works, and L0 flushes never
	// wait for compaction). OpenCompactor's Run uses it too.
	PollInterval time.Duration
	// MinSources: compact when L0 holds at least this many tables
	// (default 4).
	MinSources int
	// MaxSources: at most this many sources per compaction, L0 tables and
	// runs together (default 8).
	MaxSources int
	// IncludeSizeThreshold: a sorted run joins a compaction when its size
	// is at most this many times the size of the source just newer than it
	// (the compacted L0 tables count as one source; default 4.0).
	IncludeSizeThreshold float64
	// MaxSSTSize: output SSTs are cut, between keys, at about this many
	// bytes (default 256 MiB).
	MaxSSTSize int
	// RetainInputs: each compaction adds a checkpoint with this lifetime on
	// the manifest its inputs came from, so reads already using them (the
	// writer's in-flight scans, readers until their next poll) finish before
	// GC may delete them (default 15 min, as SlateDB; negative: none).
	RetainInputs time.Duration
}

func (o *CompactorOptions) fill() {
	if o.PollInterval == 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.MinSources <= 0 {
		o.MinSources = 4
	}
	if o.MaxSources <= 0 {
		o.MaxSources = 8
	}
	o.MaxSources = max(o.MaxSources, 2)
	if o.IncludeSizeThreshold <= 0 {
		o.IncludeSizeThreshold = 4
	}
	if o.MaxSSTSize <= 0 {
		o.MaxSSTSize = 256 << 20
	}
	if o.RetainInputs == 0 {
		o.RetainInputs = 15 * time.Minute
	}
}

// CompactionReport describes one compaction (Compacted false: there was
// nothing to do).
type CompactionReport struct {
	Compacted bool
	// RunID is the output run's id (0 when every row was dropped).
	RunID uint32
	// SourceL0 and SourceRuns count the merged sources.
	SourceL0, SourceRuns int
	// Bottom: the output is the oldest run, so tombstones were dropped.
	Bottom bool
	// RetentionSeq: the newest version at or below it was kept per key,
	// older ones dropped.
	RetentionSeq uint64
	// Input and output sizes.
	InputSSTs, OutputSSTs   int
	InputBytes, OutputBytes int64
	InputRows, OutputRows   int64
}

// Compactor merges L0 tables and sorted runs into sorted runs. The writer
// runs one in-process (DB.Compact, the background loop); OpenCompactor
// runs one standalone. A Compactor holds the manifest's compactor epoch:
// when a newer compactor claims it, every later publish of this one fails
// with ErrFenced and writes nothing.
type Compactor struct {
	store    objstore.Store
	root     string
	opts     CompactorOptions
	settings Settings
	log      *slog.Logger
	ms       *manifest.Store
	tables   *tableCache
	db       *DB // in-process: retention from its snapshots; nil standalone

	run sync.Mutex      // one compaction at a time
	h   *manifestHandle // nil until the epoch is claimed (in-process: lazily)

	mu         sync.Mutex
	background bool  // the writer's loop runs
	fenced     error // the loop stopped: another compactor took the epoch
	lastErr    error // the loop's last compaction failed
	kickCh     chan struct{}

	// hookBeforePublish, when set (tests), runs after the outputs are
	// written and before the manifest CAS publishes them.
	hookBeforePublish func()
}

func newCompactor(store objstore.Store, root string, o options, db *DB) *Compactor {
	c := &Compactor{store: store, root: root, opts: o.compactor, settings: o.settings, log: o.logger,
		ms: manifest.NewStore(store, root), db: db, kickCh: make(chan struct{}, 1)}
	if db != nil {
		c.tables = db.tables
	} else {
		c.tables = newTableCache(store, root, o.settings.WholeObjectBytes)
	}
	return c
}

// OpenCompactor starts a standalone compactor for the database at root: it
// claims the compactor epoch now, fencing every other compactor (including
// a writer's in-process one, which then stops). Its retention seq comes
// from the manifest's RecentSnapshotMinSeq, which the writer records with
// every L0 flush.
func OpenCompactor(ctx context.Context, store objstore.Store, root string, copts CompactorOptions, opts ...Option) (*Compactor, error) {
	o := buildOptions(append(opts, WithCompactor(copts)))
	c := newCompactor(store, root, o, nil)
	if err := c.claim(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// claim takes a new compactor epoch; records of running compactions are
// cleared in the same version (their compactors are fenced by it).
func (c *Compactor) claim(ctx context.Context) error {
	h, err := openHandleClaim(ctx, c.ms, roleCompactor, false, func(m *manifest.Manifest) error {
		if err := c.checkWriter(m); err != nil {
			return err // a fenced writer's compactor must not fence the newer writer's
		}
		m.RunningCompactions = nil
		return nil
	})
	if err != nil {
		return fmt.Errorf("slate: claiming the compactor epoch: %w", err)
	}
	c.h = h
	return nil
}

// Epoch is the compactor epoch this compactor holds (0 before it claimed
// one: the in-process compactor claims on its first compaction).
func (c *Compactor) Epoch() uint64 {
	c.run.Lock()
	defer c.run.Unlock()
	if c.h == nil {
		return 0
	}
	return c.h.epoch
}

// Compact runs one compaction if the size-tiered policy has one due.
func (c *Compactor) Compact(ctx context.Context) (CompactionReport, error) {
	return c.compact(ctx, false)
}

// CompactAll merges every L0 table and sorted run into one bottom run (a
// major compaction), if there is more than one source.
func (c *Compactor) CompactAll(ctx context.Context) (CompactionReport, error) {
	return c.compact(ctx, true)
}

// Run compacts whenever work is due, checking every PollInterval, until ctx
// ends or another compactor fences this one (ErrFenced).
func (c *Compactor) Run(ctx context.Context) error {
	return c.loop(ctx)
}

// Compact runs one compaction with the writer's in-process compactor if one
// is due (L0 holds at least MinSources tables); see CompactorOptions.
func (db *DB) Compact(ctx context.Context) (CompactionReport, error) {
	if err := db.CloseReason(); err != nil {
		return CompactionReport{}, err
	}
	return db.compactor.Compact(ctx)
}

// CompactAll merges every L0 table and sorted run into one run (see
// Compactor.CompactAll).
func (db *DB) CompactAll(ctx context.Context) (CompactionReport, error) {
	if err := db.CloseReason(); err != nil {
		return CompactionReport{}, err
	}
	return db.compactor.CompactAll(ctx)
}

func (c *Compactor) kick() {
	select {
	case c.kickCh <- struct{}{}:
	default:
	}
}

// healthy: the background loop runs and its last attempt did not fail (the
// writer's L0 backpressure waits only for a compactor that can make room).
func (c *Compactor) healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.background && c.fenced == nil && c.lastErr == nil
}

func (c *Compactor) setState(fenced, lastErr error) {
	c.mu.Lock()
	c.fenced, c.lastErr = fenced, lastErr
	c.mu.Unlock()
	if c.db != nil {
		c.db.mu.Lock()
		c.db.signalLocked()
		c.db.mu.Unlock()
	}
}

// loop compacts until ctx ends or the compactor is fenced.
func (c *Compactor) loop(ctx context.Context) error {
	t := time.NewTicker(c.opts.PollInterval)
	defer t.Stop()
	defer func() {
		c.mu.Lock()
		c.background = false
		c.mu.Unlock()
		c.setState(c.fencedErr(), nil)
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-c.kickCh:
		}
		for {
			if c.db != nil && c.db.CloseReason() != nil {
				return nil
			}
			rep, err := c.compact(ctx, false)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, ErrFenced) {
				c.log.Warn("slate: compactor fenced; stopping", "root", c.root, "err", err)
				c.setState(err, nil)
				return err
			}
			if err != nil {
				c.log.Warn("slate: compaction failed; retrying at the next poll", "root", c.root, "err", err)
				c.setState(nil, err)
				break
			}
			c.setState(nil, nil)
			if !rep.Compacted {
				break
			}
		}
	}
}

func (c *Compactor) fencedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fenced
}

// plan is one compaction: a contiguous, oldest-first-aged group of sources.
type plan struct {
	l0     []manifest.SST // newest first (the oldest tables of L0)
	runs   []manifest.Run // newest first (the newest runs)
	bottom bool           // the sources include the oldest run: nothing older beneath
}

func runSize(r manifest.Run) int64 {
	var n int64
	for _, s := range r.SSTs {
		n += s.Size
	}
	return n
}

// pick chooses the next compaction (nil: none due). Size-tiered: the oldest
// L0 tables, then each next-newest run while it is at most
// IncludeSizeThreshold times the size of the source just newer than it.
func (c *Compactor) pick(m *manifest.Manifest, all bool) *plan {
	if all {
		if len(m.L0)+len(m.Runs) < 2 {
			return nil
		}
		return &plan{l0: slices.Clone(m.L0), runs: slices.Clone(m.Runs), bottom: true}
	}
	trigger := c.opts.MinSources
	if c.db != nil {
		trigger = min(trigger, c.settings.L0MaxSSTs) // never let backpressure wait for nothing
	}
	if len(m.L0) < max(trigger, 1) {
		return nil
	}
	k := min(len(m.L0), c.opts.MaxSources)
	p := &plan{l0: slices.Clone(m.L0[len(m.L0)-k:])}
	var newer int64
	for _, s := range p.l0 {
		newer += s.Size
	}
	for _, r := range m.Runs {
		if k+len(p.runs) >= c.opts.MaxSources {
			break
		}
		size := runSize(r)
		if float64(size) > c.opts.IncludeSizeThreshold*float64(max(newer, 1)) {
			break
		}
		p.runs = append(p.runs, r)
		newer = size
	}
	p.bottom = len(p.runs) == len(m.Runs)
	return p
}

func (c *Compactor) compact(ctx context.Context, all bool) (rep CompactionReport, err error) {
	c.run.Lock()
	defer c.run.Unlock()
	if c.h == nil {
		if err := c.claim(ctx); err != nil {
			return rep, err
		}
	} else if err := c.h.refresh(ctx); err != nil {
		return rep, err
	}
	_, m := c.h.current()
	p := c.pick(m, all)
	if p == nil {
		return rep, nil
	}
	retention := m.RecentSnapshotMinSeq
	if c.db != nil {
		retention = c.db.snapshotMinSeq()
	}
	// Record the compaction before writing outputs: GC keeps unpublished
	// SSTs at or after its start.
	start := mintAfter(ulid.ULID{})
	if _, err := c.h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		if err := c.checkWriter(m); err != nil {
			return err
		}
		if slices.Contains(m.RunningCompactions, start) {
			return errNoChange
		}
		m.RunningCompactions = append(m.RunningCompactions, start)
		return nil
	}); err != nil {
		return rep, fmt.Errorf("slate: recording a compaction: %w", err)
	}
	published := false
	defer func() {
		if !published {
			c.dropRecord(start)
		}
	}()
	outs, rep, err := c.merge(ctx, p, retention, start)
	if err != nil {
		return rep, err
	}
	if c.hookBeforePublish != nil {
		c.hookBeforePublish()
	}
	var runID uint32
	cpID := uuid.New()
	_, err = c.h.update(ctx, func(m *manifest.Manifest, id uint64) error {
		var err error
		runID, err = c.apply(m, id, p, outs, start, cpID)
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("slate: publishing compaction: %w", err)
	}
	published = true
	rep.Compacted, rep.RunID = true, runID
	if c.db != nil {
		// The writer takes the new tree now (and forgets the inputs'
		// cached tables with it).
		if err := c.db.adoptLatest(ctx); err != nil && !errors.Is(err, context.Canceled) {
			c.log.Warn("slate: the writer could not adopt the compaction yet; its manifest poll will", "err", err)
		}
		return rep, nil
	}
	for _, s := range p.l0 {
		c.tables.drop(s.ID)
	}
	for _, r := range p.runs {
		for _, s := range r.SSTs {
			c.tables.drop(s.ID)
		}
	}
	return rep, nil
}

// checkWriter: an in-process compactor publishes only while its writer
// holds the writer epoch. Its retention seq comes from that writer's
// snapshots, which say nothing about a newer writer's (whose seqs may even
// reuse the older writer's undurable ones).
func (c *Compactor) checkWriter(m *manifest.Manifest) error {
	if c.db != nil && m.WriterEpoch != c.db.mh.epoch {
		return fmt.Errorf("%w: the writer this compactor runs in (epoch %d) was fenced (manifest holds %d)", ErrFenced, c.db.mh.epoch, m.WriterEpoch)
	}
	return nil
}

// dropRecord removes an unpublished compaction's record (best effort: the
// next compactor epoch clears it too).
func (c *Compactor) dropRecord(start ulid.ULID) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		n := len(m.RunningCompactions)
		m.RunningCompactions = slices.DeleteFunc(m.RunningCompactions, func(id ulid.ULID) bool { return id == start })
		if len(m.RunningCompactions) == n {
			return errNoChange
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrFenced) {
		c.log.Warn("slate: could not remove a failed compaction's record", "id", start, "err", err)
	}
}

// apply publishes a compaction into the latest manifest m (being written as
// id): it removes the sources, puts the output run in their place, moves
// the marker, drops the in-flight record and pins the input manifest
// (id-1) with a short-lived checkpoint. L0 tables the writer added since
// the compaction started stay. Idempotent: when the sources are already
// gone it changes nothing.
func (c *Compactor) apply(m *manifest.Manifest, id uint64, p *plan, outs []manifest.SST, start ulid.ULID, cpID uuid.UUID) (uint32, error) {
	inL0 := func(x ulid.ULID) bool {
		return slices.ContainsFunc(m.L0, func(s manifest.SST) bool { return s.ID == x })
	}
	inRuns := func(rid uint32) bool {
		return slices.ContainsFunc(m.Runs, func(r manifest.Run) bool { return r.ID == rid })
	}
	present := 0
	for _, s := range p.l0 {
		if inL0(s.ID) {
			present++
		}
	}
	for _, r := range p.runs {
		if inRuns(r.ID) {
			present++
		}
	}
	if present == 0 {
		return 0, errNoChange // published already
	}
	if err := c.checkWriter(m); err != nil {
		return 0, err
	}
	if present != len(p.l0)+len(p.runs) {
		return 0, fmt.Errorf("%w: compaction sources changed under the compactor (%d of %d present)", ErrCorrupt, present, len(p.l0)+len(p.runs))
	}
	// The L0 sources are the oldest tables and the run sources the newest
	// runs (contiguous in age): check, then cut them out.
	nl0 := len(m.L0) - len(p.l0)
	for i, s := range p.l0 {
		if m.L0[nl0+i].ID != s.ID {
			return 0, fmt.Errorf("%w: compaction L0 sources are not the oldest L0 tables", ErrCorrupt)
		}
	}
	for i, r := range p.runs {
		if m.Runs[i].ID != r.ID {
			return 0, fmt.Errorf("%w: compaction run sources are not the newest runs", ErrCorrupt)
		}
	}
	m.L0 = m.L0[:nl0]
	rest := m.Runs[len(p.runs):]
	var runID uint32
	if len(outs) > 0 {
		for _, r := range m.Runs {
			runID = max(runID, r.ID)
		}
		runID++
		m.Runs = append([]manifest.Run{{ID: runID, SSTs: outs}}, rest...)
	} else {
		m.Runs = slices.Clone(rest)
	}
	if len(p.l0) > 0 {
		if newest := p.l0[0].ID; newest.Compare(m.LastCompactedL0) > 0 {
			m.LastCompactedL0 = newest
		}
	}
	m.RunningCompactions = slices.DeleteFunc(m.RunningCompactions, func(x ulid.ULID) bool { return x == start })
	if c.opts.RetainInputs > 0 && id > 1 {
		now := time.Now()
		m.Checkpoints = append(m.Checkpoints, manifest.Checkpoint{ID: cpID, ManifestID: id - 1, Created: now,
			Expires: now.Add(c.opts.RetainInputs), Name: "compactor"})
	}
	return runID, nil
}

// merge writes the plan's output run: the sources' rows merged newest
// source first, old versions dropped per the retention seq, cut into SSTs
// of about MaxSSTSize between keys.
func (c *Compactor) merge(ctx context.Context, p *plan, retention uint64, start ulid.ULID) ([]manifest.SST, CompactionReport, error) {
	rep := CompactionReport{SourceL0: len(p.l0), SourceRuns: len(p.runs), Bottom: p.bottom, RetentionSeq: retention}
	var srcs []rowIter
	add := func(s manifest.SST) {
		rep.InputSSTs++
		rep.InputBytes += s.Size
		rep.InputRows += s.Rows
	}
	for _, s := range p.l0 {
		add(s)
		srcs = append(srcs, &scanSST{ctx: ctx, tables: c.tables, h: s})
	}
	for _, r := range p.runs {
		for _, s := range r.SSTs {
			add(s)
		}
		srcs = append(srcs, &scanRun{ctx: ctx, tables: c.tables, ssts: r.SSTs})
	}
	in := newMergeIter(srcs)
	defer in.close()

	var outs []manifest.SST
	var b *sst.Builder
	last := start
	finish := func() error {
		if b == nil || b.Len() == 0 {
			return nil
		}
		data, info, err := b.Finish()
		b = nil
		if err != nil {
			return err
		}
		id := mintAfter(last) // at or after the recorded start: GC keeps it
		last = id
		if _, err := c.store.Put(ctx, c.tables.key(id), data); err != nil {
			return fmt.Errorf("uploading compaction output %s: %w", id, err)
		}
		if c.db != nil {
			c.tables.add(id, data) // the writer reads it next (small tables only)
		}
		outs = append(outs, manifest.SST{ID: id, Size: int64(len(data)), FirstKey: info.FirstKey, LastKey: info.LastKey,
			MinSeq: info.MinSeq, MaxSeq: info.MaxSeq, Rows: int64(info.Rows)})
		rep.OutputSSTs++
		rep.OutputBytes += int64(len(data))
		rep.OutputRows += int64(info.Rows)
		return nil
	}
	var prev base.Row
	havePrev, keptOld := false, false
	for {
		r, ok := in.next()
		if !ok {
			break
		}
		newKey := !havePrev || string(r.Key) != string(prev.Key)
		if !newKey && r.Seq == prev.Seq {
			continue // the same row in two sources: keep the newer source's
		}
		if newKey {
			keptOld = false
			// Cut between keys only: a key's versions stay in one SST.
			if b != nil && b.EstimatedSize() >= c.opts.MaxSSTSize {
				if err := finish(); err != nil {
					return nil, rep, err
				}
			}
		}
		prev, havePrev = r, true
		if r.Seq <= retention {
			if keptOld {
				continue // older than the newest version any reader can see
			}
			keptOld = true
			if r.Kind == base.KindDelete && p.bottom {
				continue // nothing older beneath for it to hide
			}
		}
		if b == nil {
			b = sst.NewBuilder(sst.Options{Kind: sst.KindSorted, BlockSize: c.settings.BlockSize,
				BloomBitsPerKey: c.settings.BloomBitsPerKey, MinFilterKeys: c.settings.MinFilterKeys})
		}
		if err := b.Add(r); err != nil {
			return nil, rep, err
		}
	}
	if err := in.err(); err != nil {
		return nil, rep, err
	}
	if err := finish(); err != nil {
		return nil, rep, err
	}
	return outs, rep, nil
}

// scanSST walks one table from its first row (compaction reads).
type scanSST struct {
	ctx    context.Context
	tables *tableCache
	h      manifest.SST
	it     *sst.Iterator
	e      error
}

func (s *scanSST) next() (base.Row, bool) {
	if s.e != nil {
		return base.Row{}, false
	}
	if s.it == nil {
		t, err := s.tables.openScan(s.ctx, s.h)
		if err != nil {
			s.e = err
			return base.Row{}, false
		}
		s.it = t.Iter(s.ctx, nil)
	}
	r, ok := s.it.Next()
	if !ok {
		if err := s.it.Err(); err != nil {
			s.e = wrapCorrupt(err)
		}
	}
	return r, ok
}
func (s *scanSST) err() error { return s.e }
func (s *scanSST) close()     {}

// scanRun walks a sorted run's SSTs in key order.
type scanRun struct {
	ctx    context.Context
	tables *tableCache
	ssts   []manifest.SST
	cur    *scanSST
	e      error
}

func (s *scanRun) next() (base.Row, bool) {
	for {
		if s.cur == nil {
			if len(s.ssts) == 0 {
				return base.Row{}, false
			}
			s.cur = &scanSST{ctx: s.ctx, tables: s.tables, h: s.ssts[0]}
			s.ssts = s.ssts[1:]
		}
		r, ok := s.cur.next()
		if ok {
			return r, true
		}
		if err := s.cur.err(); err != nil {
			s.e = err
			return base.Row{}, false
		}
		s.cur = nil
	}
}
func (s *scanRun) err() error { return s.e }
func (s *scanRun) close()     {}
