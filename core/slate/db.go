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
package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	store  objstore.Store
	root   string
	opts   options
	log    *slog.Logger
	mh     *manifestHandle
	wal    WalWriter
	tables *tableCache

	mu          sync.Mutex
	closed      error // sticky close reason
	lastSeq     uint64
	committed   uint64
	durable     uint64
	mem         *memtable
	imms        []*memtable // frozen, oldest first
	tree        tree
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
	_, m := mh.current()
	db := &DB{
		store:       store,
		root:        root,
		opts:        o,
		log:         o.logger,
		mh:          mh,
		wal:         wal,
		tables:      newTableCache(store, root, o.settings.WholeObjectBytes),
		mem:         newMemtable(),
		tree:        treeOf(m),
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
	wal.Subscribe(db.onWalEvent)
	db.wg.Add(2)
	go db.flusher()
	go db.poller()
	if len(db.imms) > 0 {
		db.kickFlush()
	}
	return db, nil
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
				db.fail(fmt.Errorf("slate: L0 flush failed; the database is closed: %w", err))
				break
			}
		}
	}
}

// flushImm uploads one frozen memtable and publishes it. It first waits
// until the WAL holds everything the memtable holds (#1255: data in L0 is
// always in the WAL too), so a writer whose WAL was fenced uploads nothing.
func (db *DB) flushImm(ctx context.Context, imm *memtable) error {
	if db.awaitDurable(imm.lastSeq) != nil {
		if err := db.wal.Flush(ctx); err != nil {
			return err
		}
		if err := db.waitFor(ctx, func() bool { return db.durable >= imm.lastSeq }); err != nil {
			return err
		}
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
	id := ulid.Make()
	if _, err := db.store.Put(ctx, db.tables.key(id), data); err != nil {
		return fmt.Errorf("uploading L0 %s: %w", id, err)
	}
	db.tables.add(id, data)
	h := manifest.SST{ID: id, Size: int64(len(data)), FirstKey: info.FirstKey, LastKey: info.LastKey,
		MinSeq: info.MinSeq, MaxSeq: info.MaxSeq, Rows: int64(info.Rows)}
	walTail := db.wal.Status().LastFlushedWalID
	_, err = db.mh.update(ctx, func(m *manifest.Manifest, _ uint64) error {
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
		return nil
	})
	if err != nil {
		return err
	}
	_, m := db.mh.current()
	db.mu.Lock()
	db.imms = db.imms[1:]
	db.tree = treeOf(m)
	db.lastL0Seq = m.LastL0Seq
	db.replayAfter = m.ReplayAfterWalID
	db.signalLocked()
	db.mu.Unlock()
	return nil
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
		}
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
	FrozenMemtables  int
	WalLastFlushedID uint64
}

// Stats returns the current state.
func (db *DB) Stats() Stats {
	id, m := db.mh.current()
	db.mu.Lock()
	defer db.mu.Unlock()
	return Stats{ManifestID: id, WriterEpoch: db.mh.epoch, LastSeq: db.lastSeq, DurableSeq: db.durable,
		ReplayAfterWalID: m.ReplayAfterWalID, LastL0Seq: m.LastL0Seq, L0: len(m.L0), SortedRuns: len(m.Runs),
		FrozenMemtables: len(db.imms), WalLastFlushedID: db.wal.Status().LastFlushedWalID}
}
