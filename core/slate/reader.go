package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/base"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// ReaderMode selects how a Reader pins the state it reads.
type ReaderMode int

const (
	// ReaderManagedCheckpoint (default): the reader creates a checkpoint in
	// the manifest, moves it forward as it polls, refreshes it before it
	// expires and deletes it on Close, so GC never removes what it reads.
	ReaderManagedCheckpoint ReaderMode = iota
	// ReaderPinned: the reader reads the state a named checkpoint pins and
	// nothing newer. It never polls and writes nothing at all.
	ReaderPinned
	// ReaderFollowLatest: no checkpoint and no writes; reads may fail if GC
	// deletes objects under it.
	ReaderFollowLatest
)

func (m ReaderMode) String() string {
	switch m {
	case ReaderManagedCheckpoint:
		return "managed-checkpoint"
	case ReaderPinned:
		return "pinned"
	case ReaderFollowLatest:
		return "follow-latest"
	}
	return fmt.Sprintf("ReaderMode(%d)", int(m))
}

// ReaderOptions configure OpenReader. Zero values take defaults.
type ReaderOptions struct {
	Mode ReaderMode
	// Checkpoint is the checkpoint a ReaderPinned reader reads.
	Checkpoint uuid.UUID
	// PollInterval: how often the reader looks for new data (default 10s;
	// negative: only on Refresh). It is also the staleness bound: a read
	// arriving when the last poll started longer ago than this (a Lazy
	// reader's idle spell), or 1.5 times this for an eager reader (a tick
	// delayed), polls before it is served.
	PollInterval time.Duration
	// CheckpointLifetime of a managed checkpoint (default 10 min). The
	// reader's poll loop replaces it with a fresh one once half of it has
	// passed (with PollInterval < 0 the loop still runs, every quarter
	// lifetime, only to do that), so it never expires while the reader is
	// open. It must be at least twice PollInterval.
	CheckpointLifetime time.Duration
	// Lazy polls only after a read: a read sets a flag and the next tick
	// refreshes, so a reader nothing reads makes no requests (beyond keeping
	// a managed checkpoint alive). The staleness bound stays PollInterval:
	// the first read after an idle spell polls before it is served.
	Lazy bool
	// NoTail replays the WAL once at open and afterwards follows only the
	// manifest: data newer than the writer's last L0 flush waits for the
	// next one. A log-resident catalog's non-tailing readers use it.
	NoTail bool
}

func (o *ReaderOptions) fill() error {
	if o.PollInterval == 0 {
		o.PollInterval = 10 * time.Second
	}
	if o.CheckpointLifetime <= 0 {
		o.CheckpointLifetime = 10 * time.Minute
	}
	if o.Mode == ReaderManagedCheckpoint && o.PollInterval > 0 && o.CheckpointLifetime < 2*o.PollInterval {
		return fmt.Errorf("%w: CheckpointLifetime %v must be at least twice PollInterval %v", ErrInvalid, o.CheckpointLifetime, o.PollInterval)
	}
	return nil
}

// Reader is a read-only handle. It serves only durable data: the tree as
// the manifest describes it plus the WAL files it has replayed itself.
type Reader struct {
	store  objstore.Store
	root   string
	ropts  ReaderOptions
	log    *slog.Logger
	ms     *manifest.Store
	wal    WalReader
	tables *tableCache

	// pollMu: one manifest poll at a time (Refresh); refreshMu: one change
	// of what the reader serves at a time (installing a manifest, moving
	// the checkpoint, replaying the WAL). A poll takes refreshMu after
	// reading the manifests; nothing holding refreshMu takes pollMu (a
	// Tail that finds the WAL truncated reads the manifests under
	// refreshMu itself).
	pollMu    sync.Mutex
	refreshMu sync.Mutex

	mu         sync.Mutex
	closed     error
	latestID   uint64
	latest     *manifest.Manifest
	baseID     uint64 // the manifest the tree comes from
	base       *manifest.Manifest
	tree       tree
	mem        *memtable // replayed WAL rows newer than base.LastL0Seq
	seq        uint64    // highest seq served
	nextWal    uint64    // next WAL id to replay
	walEnd     uint64    // pinned: exclusive end; 0: follow the tail
	walIter    WalIterator
	tailedOnce bool
	readSince  atomic.Bool  // Lazy: a read happened since the last poll
	opened     time.Time    // OpenReader's start: the monotonic origin of polledAt
	polledAt   atomic.Int64 // when the last successful poll started, as time since opened (0: the open; written under refreshMu)
	checkpoint uuid.UUID    // managed mode
	cpExpires  time.Time
	progress   chan struct{}
	stats      readStats

	stop chan struct{}
	wg   sync.WaitGroup
}

// OpenReader opens a read-only handle on the database at root. It never
// creates a database: an empty path is ErrNotInitialized.
func OpenReader(ctx context.Context, store objstore.Store, root string, ropts ReaderOptions, opts ...Option) (*Reader, error) {
	o := buildOptions(opts)
	if err := ropts.fill(); err != nil {
		return nil, err
	}
	start := time.Now()
	ms := manifest.NewStore(store, root)
	latestID, latest, err := ms.Latest(ctx)
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, fmt.Errorf("%w (%s, root %q)", ErrNotInitialized, store, root)
	}
	r := &Reader{store: store, root: root, ropts: ropts, log: o.logger, ms: ms,
		tables: newTableCache(store, root, o.settings.WholeObjectBytes), latestID: latestID, latest: latest, opened: start,
		progress: make(chan struct{}), stop: make(chan struct{})}
	// walFor picks the WAL reader for the state m (a pinned reader's WAL
	// range lives in the store its own manifest records, which differs
	// from the latest one's after MoveWalStore).
	walFor := func(m *manifest.Manifest) error {
		switch {
		case o.walReader != nil:
			r.wal = o.walReader
		case m.WalStore != "" && (o.walStore == nil || o.walStore.String() != m.WalStore):
			return fmt.Errorf("%w: the manifest records the WAL in %s; open the reader WithWalStore on it", ErrWalStoreMismatch, m.WalStore)
		case m.WalStore == "" && o.walStore != nil && o.walStore.String() != store.String():
			return fmt.Errorf("%w: the manifest records the WAL in the main store, but the reader was given %s", ErrWalStoreMismatch, o.walStore)
		default:
			ws := store
			if o.walStore != nil {
				ws = o.walStore
			}
			r.wal = newNativeWAL(ws, root, o.settings, o.logger)
		}
		return nil
	}
	switch ropts.Mode {
	case ReaderPinned:
		cp, ok := latest.Checkpoint(ropts.Checkpoint)
		if !ok {
			return nil, fmt.Errorf("%w: %s (the reader never falls back to the latest state)", ErrCheckpointMissing, ropts.Checkpoint)
		}
		base, err := ms.Get(ctx, cp.ManifestID)
		if err != nil {
			return nil, fmt.Errorf("slate: reading the manifest checkpoint %s pins (%d): %w", cp.ID, cp.ManifestID, err)
		}
		if err := walFor(base); err != nil {
			return nil, err
		}
		r.install(cp.ManifestID, base)
		r.walEnd = base.NextWalID
	case ReaderManagedCheckpoint:
		if err := walFor(latest); err != nil {
			return nil, err
		}
		if err := r.moveCheckpoint(ctx); err != nil {
			return nil, err
		}
	case ReaderFollowLatest:
		if err := walFor(latest); err != nil {
			return nil, err
		}
		r.install(latestID, latest)
	default:
		return nil, fmt.Errorf("%w: unknown reader mode %d", ErrInvalid, ropts.Mode)
	}
	if err := r.tail(ctx); err != nil && !errors.Is(err, errBehindTruncation) {
		r.dropCheckpoint(ctx)
		return nil, err
	}
	switch {
	case ropts.Mode == ReaderPinned:
	case ropts.PollInterval > 0:
		r.wg.Add(1)
		go r.poll(ropts.PollInterval, r.pollOnce)
	case ropts.Mode == ReaderManagedCheckpoint:
		// No polling for data, but the checkpoint must not expire.
		r.wg.Add(1)
		go r.poll(ropts.CheckpointLifetime/4, r.keepAlive)
	}
	return r, nil
}

// install makes m the base of the tree, keeping replayed rows newer than
// its LastL0Seq.
func (r *Reader) install(id uint64, m *manifest.Manifest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.installLocked(id, m)
}

func (r *Reader) installLocked(id uint64, m *manifest.Manifest) {
	old := r.mem
	r.mem = newMemtable()
	if old != nil {
		var keep []base.Row
		for _, row := range old.allRows() {
			if row.Seq > m.LastL0Seq {
				keep = append(keep, row)
			}
		}
		if len(keep) > 0 {
			r.mem.add(keep)
		}
	}
	r.baseID, r.base = id, m
	r.tree = treeOf(m)
	r.tables.retain(r.tree.ids())
	if r.nextWal <= m.ReplayAfterWalID {
		r.nextWal = m.ReplayAfterWalID + 1
		if r.walIter != nil {
			r.walIter.Close()
			r.walIter = nil
		}
	}
	if m.LastL0Seq > r.seq {
		r.seq = m.LastL0Seq
		// WaitSeq waits on progress: a seq the tree brings is progress as
		// much as one the WAL does.
		close(r.progress)
		r.progress = make(chan struct{})
	}
}

// moveCheckpoint (managed mode) replaces the reader's checkpoint with one
// pinning the manifest being written, and installs that state.
func (r *Reader) moveCheckpoint(ctx context.Context) error {
	h := &manifestHandle{store: r.ms, role: roleNone, id: r.latestID, m: r.latest}
	old := r.checkpoint
	newID := uuid.New()
	now := time.Now()
	expires := now.Add(r.ropts.CheckpointLifetime)
	_, err := h.update(ctx, func(m *manifest.Manifest, id uint64) error {
		if _, ok := m.Checkpoint(newID); ok {
			return errNoChange // this very change landed already
		}
		m.Checkpoints = slices.DeleteFunc(m.Checkpoints, func(c manifest.Checkpoint) bool { return c.ID == old })
		m.Checkpoints = append(m.Checkpoints, manifest.Checkpoint{ID: newID, ManifestID: id, Created: now, Expires: expires, Name: "reader"})
		return nil
	})
	if err != nil {
		return fmt.Errorf("slate: creating the reader's checkpoint: %w", err)
	}
	hid, hm := h.current()
	cp, _ := hm.Checkpoint(newID)
	id := cp.ManifestID
	m := hm
	if id != hid {
		// The checkpoint landed in an earlier version than the latest one
		// (see manifestHandle.update): install the state it pins.
		if m, err = r.ms.Get(ctx, id); err != nil {
			return fmt.Errorf("slate: reading the reader's checkpointed manifest %d: %w", id, err)
		}
	}
	r.mu.Lock()
	r.latestID, r.latest = hid, hm
	r.checkpoint, r.cpExpires = newID, expires
	r.installLocked(id, m)
	r.mu.Unlock()
	return nil
}

// keepAlive (managed mode without data polling) extends the checkpoint's
// expiry once half its lifetime has passed, without moving the state the
// reader serves; if GC already removed it, it takes a new one.
func (r *Reader) keepAlive(ctx context.Context) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	r.mu.Lock()
	closed, due := r.closed, time.Until(r.cpExpires) < r.ropts.CheckpointLifetime/2
	cp, id, m := r.checkpoint, r.latestID, r.latest
	r.mu.Unlock()
	if closed != nil || !due {
		return closed
	}
	h := &manifestHandle{store: r.ms, role: roleNone, id: id, m: m}
	expires := time.Now().Add(r.ropts.CheckpointLifetime)
	found := true
	if _, err := h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		found = true
		for i := range m.Checkpoints {
			if m.Checkpoints[i].ID == cp {
				m.Checkpoints[i].Expires = expires
				return nil
			}
		}
		found = false
		return errNoChange
	}); err != nil {
		return fmt.Errorf("slate: extending the reader's checkpoint: %w", err)
	}
	hid, hm := h.current()
	r.mu.Lock()
	r.latestID, r.latest = hid, hm
	if found {
		r.cpExpires = expires
	}
	r.mu.Unlock()
	if !found {
		return r.moveCheckpoint(ctx)
	}
	return nil
}

// dropCheckpoint deletes a managed reader's checkpoint (best effort).
func (r *Reader) dropCheckpoint(ctx context.Context) {
	r.mu.Lock()
	cp := r.checkpoint
	id, m := r.latestID, r.latest
	r.checkpoint = uuid.UUID{}
	r.mu.Unlock()
	if cp == (uuid.UUID{}) {
		return
	}
	h := &manifestHandle{store: r.ms, role: roleNone, id: id, m: m}
	if _, err := h.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		m.Checkpoints = slices.DeleteFunc(m.Checkpoints, func(c manifest.Checkpoint) bool { return c.ID == cp })
		return nil
	}); err != nil {
		r.log.Warn("slate: could not delete the reader's checkpoint; GC will expire it", "checkpoint", cp, "err", err)
	}
}

// errBehindTruncation: the WAL was truncated past what the reader has
// replayed (GC moved on after a flush); a manifest poll rebuilds it.
var errBehindTruncation = errors.New("slate: the WAL was truncated past the reader's position")

// tail replays WAL files past what the reader has. errBehindTruncation
// means only a manifest poll can bring the reader forward.
func (r *Reader) tail(ctx context.Context) error {
	r.mu.Lock()
	if r.ropts.NoTail && r.tailedOnce {
		r.mu.Unlock()
		return nil
	}
	r.tailedOnce = true
	if r.walEnd != 0 && r.nextWal >= r.walEnd {
		r.mu.Unlock()
		return nil
	}
	it := r.walIter
	if it == nil {
		var err error
		it, err = r.wal.Iterator(ctx, WalRange{Start: r.nextWal, End: r.walEnd})
		if err != nil {
			r.mu.Unlock()
			return err
		}
		r.walIter = it
	}
	r.mu.Unlock()
	for {
		rows, err := it.Next(ctx)
		if err != nil {
			if errors.Is(err, ErrWalTruncated) && r.walEnd == 0 {
				return errBehindTruncation
			}
			return err
		}
		if rows == nil {
			return nil
		}
		r.mu.Lock()
		if r.walIter != it {
			r.mu.Unlock()
			return nil // rebuilt meanwhile
		}
		floor := r.base.LastL0Seq
		var batch []base.Row
		for _, row := range rows.Rows {
			if row.Seq <= floor {
				continue
			}
			batch = append(batch, row)
			if row.Seq > r.seq {
				r.seq = row.Seq
			}
		}
		if len(batch) > 0 {
			r.mem.add(batch)
		}
		r.nextWal = rows.LastConsumedWalID + 1
		close(r.progress)
		r.progress = make(chan struct{})
		r.mu.Unlock()
	}
}

// Refresh polls now: it reads newer manifests (moving a managed checkpoint
// forward when the tree changed) and replays new WAL files. On return the
// reader serves everything durable at the moment it started.
//
// The manifest reads, which after a fold can be several GETs (every
// managed reader moving its checkpoint writes a version), hold pollMu
// only, so a Tail (a committer waiting to be served a slot) is not queued
// behind them; installing what they found and replaying the WAL hold
// refreshMu.
func (r *Reader) Refresh(ctx context.Context) error {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	return r.pollAndApply(ctx, false)
}

// pollAndApply reads the manifests, then installs what it found and replays the
// WAL under refreshMu: taken here, unless the caller already holds it
// (holdsRefreshMu: a Tail that found the WAL truncated).
func (r *Reader) pollAndApply(ctx context.Context, holdsRefreshMu bool) error {
	start := time.Now()
	id, m, err := r.pollManifest(ctx)
	if err != nil || m == nil {
		return err
	}
	if !holdsRefreshMu {
		r.refreshMu.Lock()
		defer r.refreshMu.Unlock()
	}
	return r.applyPoll(ctx, start, id, m)
}

// pollManifest reads the newest manifest at or after the latest the reader
// knows; none for a pinned reader (it never moves), the close error for a
// closed one.
func (r *Reader) pollManifest(ctx context.Context) (uint64, *manifest.Manifest, error) {
	r.mu.Lock()
	if r.closed != nil {
		err := r.closed
		r.mu.Unlock()
		return 0, nil, err
	}
	pinned := r.ropts.Mode == ReaderPinned
	id, m := r.latestID, r.latest
	r.mu.Unlock()
	if pinned {
		return 0, nil, nil
	}
	nid, nm, err := r.ms.Refresh(ctx, id, m)
	if errors.Is(err, objstore.ErrNotFound) {
		nid, nm, err = r.ms.Latest(ctx)
	}
	return nid, nm, err
}

// applyPoll (under refreshMu) installs manifest nid, found by a poll that
// started at start, unless the reader knows a newer one by now (a Tail's
// poll, or a checkpoint move, got there first), then replays the WAL.
func (r *Reader) applyPoll(ctx context.Context, start time.Time, nid uint64, nm *manifest.Manifest) error {
	r.mu.Lock()
	if r.closed != nil {
		err := r.closed
		r.mu.Unlock()
		return err
	}
	if nid < r.latestID {
		nid, nm = r.latestID, r.latest
	}
	r.latestID, r.latest = nid, nm
	changed := treeChanged(r.base, nm)
	expiring := r.ropts.Mode == ReaderManagedCheckpoint && time.Until(r.cpExpires) < r.ropts.CheckpointLifetime/2
	_, cpAlive := nm.Checkpoint(r.checkpoint)
	r.mu.Unlock()
	if r.ropts.Mode == ReaderManagedCheckpoint && (changed || expiring || !cpAlive) {
		if err := r.moveCheckpoint(ctx); err != nil {
			return err
		}
	} else if changed {
		r.install(nid, nm)
	}
	// Truncated past us even after this manifest: the next poll's manifest
	// rebuilds the reader.
	if err := r.tail(ctx); err != nil && !errors.Is(err, errBehindTruncation) {
		return err
	}
	r.polledAt.Store(int64(start.Sub(r.opened)))
	return nil
}

// fresh runs before every read. It flags the read for a Lazy reader's
// next tick, and when the last poll started longer ago than the staleness
// bound (PollInterval for a Lazy reader nothing read for a while; 1.5
// times it for an eager reader whose tick is late on a busy machine) it
// polls now, so no read is served staler than that.
func (r *Reader) fresh(ctx context.Context) error {
	r.readSince.Store(true)
	if r.ropts.Mode == ReaderPinned || r.ropts.PollInterval <= 0 {
		return nil
	}
	// A Lazy reader polls only after reads, so the bound is the interval
	// itself. An eager one's ticks keep it within the interval; the read
	// steps in only once a tick is half an interval late, so it does not
	// race the tick that is about to poll anyway.
	bound := r.ropts.PollInterval
	if !r.ropts.Lazy {
		bound += bound / 2
	}
	stale := func() bool { return time.Since(r.opened)-time.Duration(r.polledAt.Load()) > bound }
	if !stale() {
		return nil
	}
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	if !stale() { // a poll finished while we waited for it
		return nil
	}
	return r.pollAndApply(ctx, false)
}

// Tail reads WAL files past what the reader has, without looking at the
// manifest (a committer waiting for its own slot: one round trip, no
// manifest reads). Refresh does both.
func (r *Reader) Tail(ctx context.Context) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed != nil {
		return closed
	}
	start := time.Now()
	err := r.tail(ctx)
	if errors.Is(err, errBehindTruncation) {
		return r.pollAndApply(ctx, true) // only a newer manifest has the rest
	}
	if err != nil {
		return err
	}
	if !r.ropts.NoTail {
		r.polledAt.Store(int64(start.Sub(r.opened))) // a listing of the log is a poll of the data
	}
	return nil
}

func treeChanged(a, b *manifest.Manifest) bool {
	if a.LastL0Seq != b.LastL0Seq || len(a.L0) != len(b.L0) || len(a.Runs) != len(b.Runs) || a.LastCompactedL0 != b.LastCompactedL0 {
		return true
	}
	for i := range a.L0 {
		if a.L0[i].ID != b.L0[i].ID {
			return true
		}
	}
	for i := range a.Runs {
		if a.Runs[i].ID != b.Runs[i].ID || len(a.Runs[i].SSTs) != len(b.Runs[i].SSTs) {
			return true
		}
		for j := range a.Runs[i].SSTs {
			if a.Runs[i].SSTs[j].ID != b.Runs[i].SSTs[j].ID {
				return true
			}
		}
	}
	return false
}

func (r *Reader) pollOnce(ctx context.Context) error {
	if r.ropts.Lazy && !r.readSince.Swap(false) {
		if r.ropts.Mode == ReaderManagedCheckpoint {
			return r.keepAlive(ctx)
		}
		return nil
	}
	return r.Refresh(ctx)
}

// poll runs fn every interval until Close.
func (r *Reader) poll(interval time.Duration, fn func(context.Context) error) {
	defer r.wg.Done()
	t := time.NewTicker(max(interval, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		if err := fn(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			r.log.Warn("slate: reader poll failed; serving the last good state", "root", r.root, "err", err)
		}
	}
}

func (r *Reader) viewNow(ctx context.Context) (*view, error) {
	if err := r.fresh(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed != nil {
		return nil, r.closed
	}
	return &view{seq: r.seq, mems: []*memtable{r.mem}, tree: r.tree, tables: r.tables, stats: &r.stats}, nil
}

// ReadStats returns the point-read counters since OpenReader.
func (r *Reader) ReadStats() ReadStats { return r.stats.snapshot() }

// ReplayAfterWalID is the replay point of the manifest the reader's tree
// comes from: WAL ids at or below it are folded into that tree.
func (r *Reader) ReplayAfterWalID() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.base.ReplayAfterWalID
}

// ReaderSnapshot pins what a Reader serves at one moment: later polls do
// not change it.
type ReaderSnapshot struct{ v *view }

// Snapshot pins the reader's current state (a Lazy reader polls first
// when its last poll is older than PollInterval).
func (r *Reader) Snapshot(ctx context.Context) (*ReaderSnapshot, error) {
	v, err := r.viewNow(ctx)
	if err != nil {
		return nil, err
	}
	return &ReaderSnapshot{v: v}, nil
}

// Seq is the seq the snapshot serves.
func (s *ReaderSnapshot) Seq() uint64 { return s.v.seq }

// Get reads key at the snapshot.
func (s *ReaderSnapshot) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return getValue(ctx, s.v, key)
}

// Scan iterates [start, end) at the snapshot.
func (s *ReaderSnapshot) Scan(ctx context.Context, start, end []byte) *Iterator {
	return &Iterator{it: s.v.scan(ctx, start, end, nil)}
}

// Seq is the highest seq the reader serves.
func (r *Reader) Seq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// WaitSeq blocks until the reader serves seq (polling or a Refresh must
// bring it), ctx ends, or the reader closes.
func (r *Reader) WaitSeq(ctx context.Context, seq uint64) error {
	for {
		r.mu.Lock()
		if r.seq >= seq {
			r.mu.Unlock()
			return nil
		}
		if r.closed != nil {
			err := r.closed
			r.mu.Unlock()
			return err
		}
		ch := r.progress
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Checkpoint returns the managed checkpoint's id (zero in other modes).
func (r *Reader) Checkpoint() uuid.UUID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkpoint
}

// Get reads key at the reader's seq.
func (r *Reader) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	v, err := r.viewNow(ctx)
	if err != nil {
		return nil, false, err
	}
	return getValue(ctx, v, key)
}

// Scan iterates [start, end) at the reader's seq.
func (r *Reader) Scan(ctx context.Context, start, end []byte) *Iterator {
	v, err := r.viewNow(ctx)
	if err != nil {
		return errIterator(err)
	}
	return &Iterator{it: v.scan(ctx, start, end, nil)}
}

// Close stops polling and deletes a managed checkpoint.
func (r *Reader) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed != nil {
		r.mu.Unlock()
		return nil
	}
	r.closed = ErrClosed
	close(r.progress)
	r.progress = make(chan struct{})
	r.mu.Unlock()
	close(r.stop)
	r.wg.Wait()
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	r.dropCheckpoint(ctx)
	return nil
}
