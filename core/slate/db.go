// Package slate is moraine's storage engine: an LSM key-value store whose
// whole state is objects in an object store, with SlateDB's contracts
// (reference-slatedb.md): one fenced writer per database, any number of
// readers, a write-ahead log that can be swapped for another (the commit
// log), and a manifest updated by create-if-absent versions.
//
// Layout under a database's root path:
//
//	manifest/<20-digit id>.manifest   full state, version N+1 written create-if-absent
//	wal/<20-digit id>.sst             WAL files, contiguous ids; zero bytes = a fence
//	compacted/<ULID>.sst              L0 and sorted-run tables
//	gc/manifest.boundary              ASCII u64: GC may have deleted manifests <= it
//
// The engine knows nothing about catalogs: keys and values are opaque
// bytes. It must not import core (the catalog) or anything above it.
//
// Write path: a WriteBatch gets one seq, is appended to the WAL, inserted
// into the memtable and becomes visible; Write returns once the WAL has made
// it durable (unless asked not to). A memtable frozen at the WAL's last
// flushed id W is uploaded as an L0 table and published by a manifest CAS
// that sets ReplayAfterWalID = W, only once the WAL is durable past the
// memtable's last seq. On open, the writer fences (epoch bump, WAL fence,
// re-check) and replays WAL ids above the replay point.
//
// # Fencing
//
// Open claims a new writer epoch (manifest CAS), then writes a zero-byte
// fence at the next free WAL id (moving past ids an older writer takes
// meanwhile, after checking that its epoch still stands), then re-reads
// the manifest. An older writer learns it is fenced from its next WAL
// upload (the id is taken), its manifest poll or any manifest update (a
// newer epoch); it then stays closed with ErrFenced.
//
// A fenced writer writes nothing after the newer writer's fence: its WAL
// uploads fail, and its L0 flush re-reads the manifest and stops with
// ErrFenced before it uploads the table (its WAL may have been durable
// before the fence, so no WAL write would tell it first). One window
// remains, and no object store can close it: a writer fenced between that
// re-read and the upload uploads one SST. That SST is an orphan: the
// publishing CAS fails with ErrFenced, so no manifest ever lists it, and GC
// deletes it like any unreferenced SST once it is older than MinAge and the
// live writer's newest L0 (or the compaction marker) is newer than it.
//
// A taken WAL id is not always a newer writer's fence. When two writers
// open at once, the loser (the older epoch) may probe the tail after the
// winner fenced and fence the id after the winner's, just before its own
// re-check fails. The winner, finding its next id taken, re-reads the
// manifest: if its epoch still stands (every opener claims its epoch
// before it fences), the empty object there is such a loser's fence, and
// the winner moves past it. So of two racing opens exactly one writer
// stays live.
//
// # Manifest ownership
//
// Several parties write manifest versions, each through a CAS that, on
// conflict, re-reads the latest version and re-applies its own change, so
// none loses another's: the writer owns L0 additions and the WAL, seq and
// snapshot fields (ReplayAfterWalID, NextWalID, LastL0Seq,
// RecentSnapshotMinSeq); the compactor owns the sorted runs, the removal of
// the L0 tables it compacted, the LastCompactedL0 marker and its
// RunningCompactions records; readers and admin calls own checkpoints; GC
// removes expired checkpoints. Every change is idempotent (see
// manifestHandle.update). The writer adopts the runs and marker from the
// latest version on its manifest poll and after each of its own updates.
//
// # Compaction
//
// Size-tiered, as SlateDB's default scheduler (compactor.go): when L0 holds
// at least MinSources tables, the oldest L0 tables (up to MaxSources) are
// merged, together with the newest sorted runs whose size is at most
// IncludeSizeThreshold times the source just newer than them, into one new
// sorted run: non-overlapping SSTs in key order, cut at MaxSSTSize between
// keys. Tables and runs always partition seqs newest to oldest (L0 newest
// first, then runs newest first), so the merged sources are contiguous in
// age and the new run takes their place. Versions are dropped when no
// reader can see them: for each key, every version newer than the retention
// seq (the oldest seq an active Snapshot or Txn of the writer reads; a
// standalone compactor uses the manifest's RecentSnapshotMinSeq, which the
// writer records with every L0 flush and which never exceeds that) is kept,
// plus the newest version at or below it, which is dropped too when it is a
// tombstone and the output is the bottom-most run. Checkpoints need no
// retention: the versions they see live in the SSTs their manifests list,
// which GC keeps. A compactor holds compactor_epoch (claimed by CAS; an
// older compactor then gets ErrFenced and publishes nothing; the writer's
// in-process compactor also stops publishing once its writer is fenced)
// and records each compaction in the manifest before writing outputs, so
// GC keeps the unpublished outputs. The writer's L0 flush waits while L0
// holds Settings.L0MaxSSTs tables and its compactor is running.
//
// # Garbage collection
//
// GC (gc.go) deletes only what no party can still need. Each run first
// removes expired checkpoints (a manifest CAS), then reads the latest
// manifest and every manifest a checkpoint pins ("live" manifests), and:
//   - deletes manifests that are not the latest, not pinned and older than
//     MinAge, after raising gc/manifest.boundary to the largest id it
//     deletes; a process with a stale view that writes an id at or below
//     the boundary treats its write as a conflict (manifest.Store);
//   - deletes WAL files older than MinAge outside every live range: ids
//     above the latest ReplayAfterWalID (the writer and any new writer
//     replay from there), and (ReplayAfterWalID, NextWalID) of each pinned
//     manifest (what a pinned reader replays); zero-byte fences are never
//     deleted, so a stalled older writer always finds its next id taken;
//   - deletes SSTs under compacted/ that no live manifest lists, whose ULID
//     is at most the floor (the newest L0 table of the latest manifest, or
//     its LastCompactedL0 marker) and whose ULID time is below
//     min(now - MinAge, the start of every running compaction). A writer
//     mints each L0 ULID above the newest L0 and marker it knows (at least
//     GC's floor), and a compactor mints its outputs after its recorded
//     start, so an SST uploaded but not yet published is never taken. The
//     compactor also writes a short-lived checkpoint on the manifest its
//     inputs came from, so the writer's and readers' in-flight reads of
//     those inputs finish before GC may take them.
//
// The writer runs GC in the background every GCOptions.Interval (on by
// default: 10 min, first run one interval after Open) and compaction every
// CompactorOptions.PollInterval (on by default: 5 s); DB.RunGC, DB.Compact,
// and the standalone RunGC and OpenCompactor run them on request.
//
// Who may be hurt by GC, and why they are not: the writer needs WAL ids
// above its replay point (never below the latest manifest's), the tables of
// its tree (listed by the latest manifest, or by a compactor checkpoint
// while it adopts a compaction) and its pending uploads (above the floor or
// after a compaction's start); a stalled older writer needs its next WAL id
// to stay taken (fences are kept); a managed reader needs its checkpoint's
// manifest and tables (pinned; the reader refreshes the checkpoint at half
// its lifetime) and WAL files it has not tailed yet (if GC passes them the
// reader's next poll moves its checkpoint to a newer manifest that holds
// their rows); a pinned reader needs its checkpoint's manifest, tables and
// WAL range (all pinned until the checkpoint is deleted or expires). A
// follow-latest reader holds nothing and may see ErrNotFound from objects
// GC removed (SlateDB's contract).
package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/base"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/moraine-go/moraine/core/slate/internal/sst"
	"github.com/oklog/ulid/v2"
)

// DB is the read-write handle: the one fenced writer of a database.
type DB struct {
	store     objstore.Store
	root      string
	opts      options
	log       *slog.Logger
	mh        *manifestHandle
	wal       WalWriter
	walStore  objstore.Store // where the native WAL lives (main store unless WithWalStore)
	walGC     WalGC          // nil: WAL files are not collected (plugged WAL without WalGC)
	tables    *tableCache
	compactor *Compactor
	stats     readStats

	mu          sync.Mutex
	closed      error // sticky close reason
	lastSeq     uint64
	committed   uint64
	durable     uint64
	mem         *memtable
	imms        []*memtable // frozen, oldest first
	tree        tree
	treeID      uint64 // manifest id tree comes from
	lastL0Seq   uint64
	replayAfter uint64
	progress    chan struct{} // closed and replaced on any progress
	txns        map[*Txn]struct{}
	recent      []committedBatch
	snapshots   map[*Snapshot]struct{}
	flushErr    error

	flushKick chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once

	// Background compaction and GC stop before the rest (Close).
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup
}

type committedBatch struct {
	seq  uint64
	keys map[string]struct{}
}

// Open opens the database at root in store as its writer, creating it if
// it does not exist. It fences every older writer: their next WAL flush or
// manifest update fails with ErrFenced and writes nothing.
func Open(ctx context.Context, store objstore.Store, root string, opts ...Option) (*DB, error) {
	o := buildOptions(opts)
	ms := manifest.NewStore(store, root)
	// 1. Claim a writer epoch (creating manifest 1 if needed).
	mh, err := openHandle(ctx, ms, roleWriter, true)
	if err != nil {
		return nil, fmt.Errorf("slate: open %s/%s: %w", store, root, err)
	}
	walStore := store
	if o.walStore != nil {
		walStore = o.walStore
	}
	if err := checkWalStore(ctx, mh, store, o.walStore); err != nil {
		return nil, err
	}
	init := o.walWriter
	if init == nil {
		init = newNativeWAL(walStore, root, o.settings, o.logger)
	}
	// 2. Fence the WAL under our epoch.
	replay, wal, err := init.FenceAndInit(ctx, writerManifest{mh})
	if err != nil {
		return nil, fmt.Errorf("slate: fencing the WAL: %w", err)
	}
	// 3. Re-check that the epoch is still ours.
	if err := mh.refresh(ctx); err != nil {
		wal.Close(ctx)
		return nil, err
	}
	mid, m := mh.current()
	db := &DB{
		store:       store,
		root:        root,
		opts:        o,
		log:         o.logger,
		mh:          mh,
		wal:         wal,
		walStore:    walStore,
		walGC:       o.walGC,
		tables:      newTableCache(store, root, o.settings.WholeObjectBytes),
		mem:         newMemtable(),
		tree:        treeOf(m),
		treeID:      mid,
		lastL0Seq:   m.LastL0Seq,
		replayAfter: m.ReplayAfterWalID,
		progress:    make(chan struct{}),
		txns:        map[*Txn]struct{}{},
		snapshots:   map[*Snapshot]struct{}{},
		flushKick:   make(chan struct{}, 1),
		stop:        make(chan struct{}),
	}
	db.lastSeq = m.LastL0Seq
	// 4. Replay the WAL past the replay point.
	if err := db.replay(ctx, replay, m.LastL0Seq); err != nil {
		wal.Close(ctx)
		return nil, err
	}
	db.committed, db.durable = db.lastSeq, db.lastSeq
	if db.walGC == nil {
		if o.walWriter == nil {
			db.walGC = newNativeWAL(walStore, root, o.settings, o.logger)
		} else if g, ok := o.walWriter.(WalGC); ok {
			db.walGC = g
		}
	}
	db.compactor = newCompactor(store, root, o, db)
	wal.Subscribe(db.onWalEvent)
	db.wg.Add(2)
	go db.flusher()
	go db.poller()
	bg, cancel := context.WithCancel(context.Background())
	db.bgCancel = cancel
	if o.compactor.PollInterval > 0 {
		db.compactor.background = true
		db.bgWG.Add(1)
		go func() { defer db.bgWG.Done(); db.compactor.loop(bg) }()
	}
	if o.gc.Interval > 0 {
		db.bgWG.Add(1)
		go func() { defer db.bgWG.Done(); db.gcLoop(bg) }()
	}
	if len(db.imms) > 0 {
		db.kickFlush()
	}
	return db, nil
}

// installTreeLocked makes manifest id the source of the writer's tree if it
// is newer than the current one (the L0 tables, runs and marker as the
// latest manifest has them, compactions included), and drops cached tables
// the new tree no longer lists.
func (db *DB) installTreeLocked(id uint64, m *manifest.Manifest) {
	if id <= db.treeID {
		return
	}
	old := db.tree.ids()
	db.tree, db.treeID = treeOf(m), id
	now := db.tree.ids()
	for tid := range old {
		if !now[tid] {
			db.tables.drop(tid)
		}
	}
	db.signalLocked()
}

// adoptCurrent installs the writer handle's latest manifest as the tree.
func (db *DB) adoptCurrent() {
	id, m := db.mh.current()
	db.mu.Lock()
	db.installTreeLocked(id, m)
	db.mu.Unlock()
}

// adoptLatest reads the latest manifest and installs it (after the
// in-process compactor published).
func (db *DB) adoptLatest(ctx context.Context) error {
	if err := db.mh.refresh(ctx); err != nil {
		return err
	}
	db.adoptCurrent()
	return nil
}

// snapshotMinSeq is the oldest seq any active Snapshot or Txn of this
// writer reads (the committed seq when there is none): compaction keeps
// every version such a read can see.
func (db *DB) snapshotMinSeq() uint64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	v := db.committed
	for s := range db.snapshots {
		v = min(v, s.seq)
	}
	for t := range db.txns {
		v = min(v, t.startSeq)
	}
	return v
}

// checkWalStore records the WAL store's identity on first use and refuses a
// mismatch later.
func checkWalStore(ctx context.Context, mh *manifestHandle, main, wal objstore.Store) error {
	want := ""
	if wal != nil && wal.String() != main.String() {
		want = wal.String()
	}
	_, m := mh.current()
	if m.WalStore == want {
		return nil
	}
	if m.WalStore == "" && want != "" && m.NextWalID <= 1 && len(m.L0) == 0 && m.LastL0Seq == 0 {
		// A new database: record where its WAL lives.
		_, err := mh.update(ctx, func(m *manifest.Manifest, _ uint64) error { m.WalStore = want; return nil })
		return err
	}
	have := m.WalStore
	if have == "" {
		have = "the main store"
	}
	if want == "" {
		want = "the main store"
	}
	return fmt.Errorf("%w: the manifest records the WAL in %s, but this open uses %s (move it with MoveWalStore)", ErrWalStoreMismatch, have, want)
}

// replay loads WAL rows newer than lastL0Seq into frozen memtables, split at
// file boundaries and tagged with the last file they hold.
func (db *DB) replay(ctx context.Context, it WalIterator, lastL0Seq uint64) error {
	defer it.Close()
	cur := newMemtable()
	var lastID uint64
	for {
		rows, err := it.Next(ctx)
		if err != nil {
			if errors.Is(err, ErrWalTruncated) {
				// A file vanished under us: a newer writer's GC, or a fence.
				if ferr := db.mh.refresh(ctx); ferr != nil {
					return ferr
				}
			}
			return fmt.Errorf("slate: WAL replay: %w", err)
		}
		if rows == nil {
			break
		}
		lastID = rows.LastConsumedWalID
		var batch []base.Row
		flushBatch := func() {
			if len(batch) > 0 {
				cur.add(batch)
				batch = batch[:0]
			}
		}
		for _, r := range rows.Rows {
			if r.Seq <= lastL0Seq {
				continue
			}
			if len(batch) > 0 && batch[0].Seq != r.Seq {
				flushBatch()
			}
			batch = append(batch, r)
			if r.Seq > db.lastSeq {
				db.lastSeq = r.Seq
			}
		}
		flushBatch()
		if cur.estimatedSize() >= db.opts.settings.L0SSTSizeBytes {
			cur.replayPoint = lastID
			db.imms = append(db.imms, cur)
			cur = newMemtable()
		}
	}
	if !cur.empty() {
		cur.replayPoint = lastID
		db.imms = append(db.imms, cur)
	}
	return nil
}

func (db *DB) signalLocked() {
	close(db.progress)
	db.progress = make(chan struct{})
}

// onWalEvent may be called from inside WalWriter.Append (which runs under
// db.mu), so it never blocks on the engine's lock itself.
func (db *DB) onWalEvent(ev WalEvent) { go db.applyWalEvent(ev) }

func (db *DB) applyWalEvent(ev WalEvent) {
	switch ev.Kind {
	case WalFlushed:
		db.mu.Lock()
		if ev.Status.HasFlushedSeq && ev.Status.LastFlushedSeq > db.durable {
			db.durable = ev.Status.LastFlushedSeq
			if db.durable > db.lastSeq {
				db.durable = db.lastSeq
			}
			db.signalLocked()
		}
		db.mu.Unlock()
	case WalClosed:
		reason := ev.Status.Closed
		if reason == nil || errors.Is(reason, ErrClosed) {
			return
		}
		db.fail(reason)
	}
}

// fail closes the database with reason (first reason wins).
func (db *DB) fail(reason error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed == nil {
		db.closed = reason
		if !errors.Is(reason, ErrClosed) {
			db.log.Error("slate: database closed", "root", db.root, "reason", reason)
		}
		db.signalLocked()
	}
}

// CloseReason returns why the database stopped (nil while it is open).
func (db *DB) CloseReason() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.checkOpenLocked()
}

func (db *DB) kickFlush() {
	select {
	case db.flushKick <- struct{}{}:
	default:
	}
}

// maybeFreezeLocked freezes the active memtable when it is large or the WAL
// asks.
func (db *DB) maybeFreezeLocked() {
	if db.mem.estimatedSize() >= db.opts.settings.L0SSTSizeBytes || db.wal.ShouldFlushMemtable(db.replayAfter) {
		db.freezeLocked()
	}
}

func (db *DB) freezeLocked() {
	if db.mem.empty() {
		return
	}
	db.mem.replayPoint = db.wal.Status().LastFlushedWalID
	db.imms = append(db.imms, db.mem)
	db.mem = newMemtable()
	db.kickFlush()
}

// flusher uploads frozen memtables as L0 tables, oldest first.
func (db *DB) flusher() {
	defer db.wg.Done()
	for {
		select {
		case <-db.stop:
			return
		case <-db.flushKick:
		}
		for {
			db.mu.Lock()
			if db.closed != nil || len(db.imms) == 0 {
				db.mu.Unlock()
				break
			}
			imm := db.imms[0]
			db.mu.Unlock()
			if err := db.flushImm(context.Background(), imm); err != nil {
				db.mu.Lock()
				db.flushErr = err
				db.mu.Unlock()
				if errors.Is(err, ErrFenced) {
					db.fail(err) // the same close reason as any other fencing
				} else {
					db.fail(fmt.Errorf("slate: L0 flush failed; the database is closed: %w", err))
				}
				break
			}
		}
	}
}

// flushImm uploads one frozen memtable and publishes it. It first waits
// until the WAL holds everything the memtable holds (#1255: data in L0 is
// always in the WAL too), so a writer whose WAL was fenced uploads nothing,
// and re-checks its epoch just before the upload, so a writer whose WAL was
// durable before the fence uploads nothing either (but see the residual
// window below).
// While L0 is full and the compactor is running it waits for compaction
// (backpressure).
func (db *DB) flushImm(ctx context.Context, imm *memtable) error {
	if db.awaitDurable(imm.lastSeq) != nil {
		if err := db.wal.Flush(ctx); err != nil {
			return err
		}
		if err := db.waitFor(ctx, func() bool { return db.durable >= imm.lastSeq }); err != nil {
			return err
		}
	}
	if err := db.waitL0Room(ctx); err != nil {
		return err
	}
	rows := imm.allRows()
	b := sst.NewBuilder(sst.Options{Kind: sst.KindSorted, BlockSize: db.opts.settings.BlockSize,
		BloomBitsPerKey: db.opts.settings.BloomBitsPerKey, MinFilterKeys: db.opts.settings.MinFilterKeys})
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			return err
		}
	}
	data, info, err := b.Finish()
	if err != nil {
		return err
	}
	// A writer fenced since it last read the manifest must not upload: its
	// WAL may be durable already (nothing else it writes would fail first),
	// and the manifest CAS below would fail only after the upload, leaving
	// an orphan SST. Re-reading the manifest (one GET of the next version
	// and one of the GC boundary when nothing changed) finds a newer epoch
	// and fails with ErrFenced. A newer writer may still fence this one
	// between this check and the upload: no object store can make the check
	// and the PUT one step. The SST then uploaded is never referenced (the
	// CAS below fails with ErrFenced) and GC deletes it once it is older
	// than MinAge and below the newest L0 or marker of the live writer.
	// Only fencing stops the flush here: any other failure of this check
	// is logged and the upload goes on (the CAS below still fences).
	if err := db.mh.refresh(ctx); errors.Is(err, ErrFenced) {
		return err
	} else if err != nil {
		db.log.Warn("slate: could not re-read the manifest before an L0 upload; uploading anyway (the publish still checks the epoch)", "err", err)
	}
	// Above every L0 and the marker this writer knows (it published all of
	// them): GC's cutoff never passes an L0 uploaded but not yet published.
	_, cur := db.mh.current()
	id := mintAfter(newestL0(cur))
	if _, err := db.store.Put(ctx, db.tables.key(id), data); err != nil {
		return fmt.Errorf("uploading L0 %s: %w", id, err)
	}
	db.tables.add(id, data)
	h := manifest.SST{ID: id, Size: int64(len(data)), FirstKey: info.FirstKey, LastKey: info.LastKey,
		MinSeq: info.MinSeq, MaxSeq: info.MaxSeq, Rows: int64(info.Rows)}
	walTail := db.wal.Status().LastFlushedWalID
	minSnap := db.snapshotMinSeq()
	_, err = db.mh.update(ctx, func(m *manifest.Manifest, _ uint64) error {
		if slices.ContainsFunc(m.L0, func(s manifest.SST) bool { return s.ID == id }) ||
			(m.LastCompactedL0 != (ulid.ULID{}) && id.Compare(m.LastCompactedL0) <= 0) {
			return errNoChange // published already (and maybe compacted since)
		}
		m.L0 = append([]manifest.SST{h}, m.L0...)
		if imm.replayPoint > m.ReplayAfterWalID {
			m.ReplayAfterWalID = imm.replayPoint
		}
		if imm.lastSeq > m.LastL0Seq {
			m.LastL0Seq = imm.lastSeq
		}
		if walTail+1 > m.NextWalID {
			m.NextWalID = walTail + 1
		}
		m.RecentSnapshotMinSeq = minSnap
		return nil
	})
	if err != nil {
		return err
	}
	mid, m := db.mh.current()
	db.mu.Lock()
	db.imms = db.imms[1:]
	db.installTreeLocked(mid, m)
	db.lastL0Seq = m.LastL0Seq
	db.replayAfter = m.ReplayAfterWalID
	db.signalLocked()
	db.mu.Unlock()
	return nil
}

// newestL0 is the newest L0 table's id, or the marker when L0 is empty.
func newestL0(m *manifest.Manifest) ulid.ULID {
	if len(m.L0) > 0 {
		return m.L0[0].ID
	}
	return m.LastCompactedL0
}

// waitL0Room blocks while L0 holds L0MaxSSTs tables and the in-process
// compactor is running and healthy, kicking it.
func (db *DB) waitL0Room(ctx context.Context) error {
	limit := db.opts.settings.L0MaxSSTs
	for {
		db.mu.Lock()
		n, closed, ch := len(db.tree.l0), db.closed, db.progress
		db.mu.Unlock()
		if closed != nil {
			return closed
		}
		if n < limit || !db.compactor.healthy() {
			return nil
		}
		db.compactor.kick()
		t := time.NewTimer(time.Second)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// awaitDurable reports whether seq is durable (nil) or not yet.
func (db *DB) awaitDurable(seq uint64) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.durable >= seq {
		return nil
	}
	return errNotYet
}

var errNotYet = errors.New("not yet durable")

// poller re-reads the manifest to notice a newer writer.
func (db *DB) poller() {
	defer db.wg.Done()
	if db.opts.settings.ManifestPollInterval < 0 {
		<-db.stop
		return
	}
	t := time.NewTicker(db.opts.settings.ManifestPollInterval)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		if err := db.mh.refresh(context.Background()); err != nil {
			if errors.Is(err, ErrFenced) {
				db.fail(err)
				return
			}
			db.log.Warn("slate: manifest poll failed", "err", err)
			continue
		}
		// Take the runs and marker a compactor published.
		db.adoptCurrent()
	}
}

// checkOpen returns the close reason, if any.
func (db *DB) checkOpenLocked() error {
	if db.closed == nil {
		// A WAL that stopped (fenced) is noticed at once, not only when its
		// event arrives.
		if st := db.wal.Status(); st.Closed != nil && !errors.Is(st.Closed, ErrClosed) {
			db.closed = st.Closed
			db.signalLocked()
		}
	}
	return db.closed
}

// Flush makes every write so far durable in the WAL.
func (db *DB) Flush(ctx context.Context) error {
	if err := db.CloseReason(); err != nil {
		return err
	}
	if err := db.wal.Flush(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	target := db.committed
	db.mu.Unlock()
	return db.waitFor(ctx, func() bool { return db.durable >= target })
}

// FlushMemtable freezes the memtable and waits until every frozen memtable
// is in L0.
func (db *DB) FlushMemtable(ctx context.Context) error {
	db.mu.Lock()
	if err := db.checkOpenLocked(); err != nil {
		db.mu.Unlock()
		return err
	}
	db.freezeLocked()
	var last *memtable
	if n := len(db.imms); n > 0 {
		last = db.imms[n-1]
	}
	db.mu.Unlock()
	if last == nil {
		return nil
	}
	if err := db.wal.Flush(ctx); err != nil {
		return err
	}
	db.kickFlush()
	return db.waitFor(ctx, func() bool {
		for _, m := range db.imms {
			if m == last {
				return false
			}
		}
		return true
	})
}

// waitFor blocks until cond (evaluated under db.mu) holds, the database
// closes, or ctx ends.
func (db *DB) waitFor(ctx context.Context, cond func() bool) error {
	for {
		db.mu.Lock()
		if cond() {
			db.mu.Unlock()
			return nil
		}
		if db.closed != nil {
			err := db.closed
			db.mu.Unlock()
			return err
		}
		ch := db.progress
		db.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close flushes the memtable to L0 and stops the database. Closing a
// database that a newer writer fenced releases it and returns ErrFenced.
func (db *DB) Close(ctx context.Context) error {
	var err error
	db.closeOnce.Do(func() {
		reason := db.CloseReason()
		if reason == nil {
			err = db.FlushMemtable(ctx)
		} else if !errors.Is(reason, ErrClosed) {
			err = reason
		}
		db.bgCancel()
		db.bgWG.Wait()
		db.fail(ErrClosed)
		close(db.stop)
		db.wg.Wait()
		if cerr := db.wal.Close(ctx); err == nil && cerr != nil && !errors.Is(cerr, ErrClosed) && reason == nil {
			err = cerr
		}
	})
	return err
}

// Stats describes the database for tests, tools and benchmarks.
type Stats struct {
	ManifestID       uint64
	WriterEpoch      uint64
	LastSeq          uint64
	DurableSeq       uint64
	ReplayAfterWalID uint64
	LastL0Seq        uint64
	L0               int
	SortedRuns       int
	SortedRunSSTs    int
	FrozenMemtables  int
	WalLastFlushedID uint64
	CompactorEpoch   uint64
	Checkpoints      int
}

// Stats returns the current state.
func (db *DB) Stats() Stats {
	id, m := db.mh.current()
	db.mu.Lock()
	defer db.mu.Unlock()
	runSSTs := 0
	for _, r := range m.Runs {
		runSSTs += len(r.SSTs)
	}
	return Stats{ManifestID: id, WriterEpoch: db.mh.epoch, LastSeq: db.lastSeq, DurableSeq: db.durable,
		ReplayAfterWalID: m.ReplayAfterWalID, LastL0Seq: m.LastL0Seq, L0: len(m.L0), SortedRuns: len(m.Runs),
		SortedRunSSTs: runSSTs, FrozenMemtables: len(db.imms), WalLastFlushedID: db.wal.Status().LastFlushedWalID,
		CompactorEpoch: m.CompactorEpoch, Checkpoints: len(m.Checkpoints)}
}

// ReadStats returns the point-read counters since Open.
func (db *DB) ReadStats() ReadStats { return db.stats.snapshot() }
