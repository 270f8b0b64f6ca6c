package core

// commitlog_roles.go: how a catalog open uses a commit-log provider
// (RFC 0024 "What the plug reaches", "The committer", "Folding").
//
//   - A read-only open is a reader: an engine DbReader over the provider's
//     WAL reader. With CommitLogTail it tails the log on every poll;
//     without, it replays the log once at open and then follows folds.
//   - A read-write open is a committer: a tailing reader (polled every
//     CommitLogPollInterval) plus the provider's committer. Commits stage
//     against a pinned view of that reader and become one slot each; the
//     committer writes nothing into the store it reads. If the log is not
//     adopted yet, the open adopts it first; if its unfolded tail is long,
//     the open folds first.
//   - Folding is a cadence, not a role: every CommitLogFoldSlots slots the
//     committer that lands one folds (opens the store over the plug, which
//     replays every slot the store lacks, writes it out, truncates the log
//     below the replay point, closes). A failed fold is logged and let go.
//   - TakeStore makes a committer a holder: it keeps the store open over
//     the plug, lands each won slot into it directly, and folds peers'
//     slots on an idle poll, until Close (or until another process fences
//     it: then it gives the store up and keeps committing through the log).
//
// This file opens the roles and adopts a log; commitlog_fold.go folds,
// commitlog_session.go commits (the contention policy is contention.go),
// commitlog_holder.go holds the store.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

const (
	servedWait      = 30 * time.Second
	walBaseHeadroom = 1 << 20 // WAL ids kept free above the store's own WAL at adoption
	seqBaseHeadroom = 1 << 32 // seqs kept free above the store's at adoption
)

// commitLogOpen is a catalog open's commit-log machinery: its provider,
// committer, base and role (what a provider keeps of the log itself is the
// provider's).
type commitLogOpen struct {
	c         *Catalog
	p         CommitLogProvider
	committer Committer
	logStore  objstore.Store
	base      LogBase
	path      string

	mu   sync.Mutex
	role Role
	// behind is set when a commit of this committer lost its slot: peers
	// are committing, so the next read of the head tails the log first
	// instead of waiting for the poll (a retry prepared against the head
	// the poll last saw would lose again).
	behind atomic.Bool
	// race is the contention policy's state (contention.go).
	race contention
	// foldMu serializes folds, idle polls and a holder's own landing.
	foldMu sync.Mutex
	// truncatedAt is when a fold of this open last truncated the log, and
	// truncations how many did (guarded by foldMu; see truncationDue).
	truncatedAt time.Time
	truncations int
	stop        chan struct{}
	wg          sync.WaitGroup
}

// logStoreFor is the store the log lives in, wrapped like the catalog's.
func logStoreFor(store objstore.Store, opts CatalogOptions) objstore.Store {
	if opts.WalStore != nil {
		return engineStore(opts.WalStore, opts)
	}
	return engineStore(store, opts)
}

// plugOptions are the engine options of a store opened over the log.
func (l *commitLogOpen) plugOptions(init slate.WriterInit) []slate.Option {
	opts := l.c.opts
	// The replay is checked slot by slot (slotcheck.go): a fold refuses a
	// slot that breaks the head-stamp rule.
	eo := []slate.Option{slate.WithSettings(opts.engineSettings()), slate.WithLogger(opts.Logger),
		slate.WithWalWriter(checkedWriterInit{WriterInit: init, base: l.base}),
		slate.WithGC(slate.GCOptions{Interval: -1}), slate.WithCompactor(slate.CompactorOptions{PollInterval: -1})}
	if gc, ok := init.(slate.WalGC); ok {
		eo = append(eo, slate.WithWalGC(gc))
	}
	if opts.WalStore != nil {
		// The log lives in the WAL store; naming it lets the engine check
		// it is the one the manifest records (the plug carries the WAL).
		eo = append(eo, slate.WithWalStore(engineStore(opts.WalStore, opts)))
	}
	return eo
}

// openLogReader opens a read-only handle over the provider's reader.
func openLogReader(ctx context.Context, store objstore.Store, opts CatalogOptions, p CommitLogProvider) (*Catalog, error) {
	es := engineStore(store, opts)
	ls := logStoreFor(store, opts)
	// A read sets a flag and the next tick lists: a reader nothing reads
	// lists nothing, and the first read after an idle spell lists before it
	// is served (the staleness bound stays ReaderPollInterval).
	ro := opts.readerOptions()
	ro.NoTail, ro.Lazy = !opts.CommitLogTail, true
	r, err := slate.OpenReader(ctx, es, opts.Path, ro, slate.WithWalReader(p.Reader(ls, opts.Path)), slate.WithLogger(opts.Logger))
	if err != nil {
		if errors.Is(err, slate.ErrNotInitialized) {
			return nil, errorf(NotFound, "no moraine catalog at %s (path %q): open it read-write once to create it", store, opts.Path)
		}
		return nil, storeErr(err, "opening the catalog at %s (path %q) read-only over the commit log", store, opts.Path)
	}
	c := &Catalog{store: es, opts: opts, log: opts.Logger, readOnly: true, reader: r}
	c.clog = &commitLogOpen{c: c, p: p, logStore: ls, path: opts.Path, role: RoleReader}
	err = c.loadFormat(ctx, r, true)
	if err == nil {
		err = c.noteEmpty(ctx)
	}
	if err != nil {
		r.Close(ctx)
		return nil, err
	}
	return c, nil
}

// noteEmpty marks a handle on a log whose store holds no lake yet: one a
// LeaveEmpty committer adopted empty, whose lake a later slot creates (a
// commit of this handle's, or of a peer's, which HasLake notices). Only a
// LeaveEmpty committer or a reader may open such a log.
func (c *Catalog) noteEmpty(ctx context.Context) error {
	_, ok, err := readHead(ctx, c.reader)
	if err != nil || ok {
		return err
	}
	if !c.readOnly && !c.opts.LeaveEmpty {
		return errorf(NotFound, "the commit log at %s was adopted empty (by a DuckLake attach) and no lake has been created in it yet: create it by attaching it with DuckLake, or open it with LeaveEmpty", c.clog.logStore)
	}
	c.mu.Lock()
	c.empty = true
	c.mu.Unlock()
	return nil
}

// loadFormat reads and validates the format record through kv.
func (c *Catalog) loadFormat(ctx context.Context, kv kvReader, hasProvider bool) error {
	f, ok, err := readFormat(ctx, kv)
	if err == nil && !ok {
		err = errorf(NotFound, "no moraine catalog at %s (path %q): the store holds an engine but no catalog; open it read-write once to create it", c.store, c.opts.Path)
	}
	if err == nil {
		err = validateFormat(ctx, kv, f, hasProvider)
	}
	if err != nil {
		return err
	}
	c.format = *f
	return nil
}

// openCommitter opens a read-write handle on a commit log.
func openCommitter(ctx context.Context, store objstore.Store, opts CatalogOptions, p CommitLogProvider) (*Catalog, error) {
	es := engineStore(store, opts)
	ls := logStoreFor(store, opts)
	committer := p.Committer(ls, opts.Path)
	if committer == nil {
		return nil, errorf(Configuration, "the commit-log provider is reader-only (it has no committer): open the catalog read-only, or use a provider that can commit")
	}
	c := &Catalog{store: es, opts: opts, log: opts.Logger}
	l := &commitLogOpen{c: c, p: p, committer: committer, logStore: ls, path: opts.Path, role: RoleCommitter, stop: make(chan struct{})}
	c.clog = l
	base, ok, err := committer.Base(ctx)
	if err != nil {
		return nil, logErr(err, "reading the commit log's base")
	}
	if !ok {
		if base, err = l.adoptRacing(ctx); err != nil {
			return nil, err
		}
	}
	l.base = base
	poll := opts.CommitLogPollInterval
	// An idle committer makes no request of the log (Lazy); a read
	// refreshes first (Catalog.View), a commit tails until served.
	// Every slot the reader is served is checked (slotcheck.go): a slot
	// breaking the head-stamp rule is Corruption, not endless lost races.
	r, err := slate.OpenReader(ctx, es, opts.Path, slate.ReaderOptions{PollInterval: poll, Lazy: true},
		slate.WithWalReader(checkedWalReader{WalReader: p.Reader(ls, opts.Path), base: base}), slate.WithLogger(opts.Logger))
	if err != nil {
		return nil, storeErr(err, "opening the committer's reader")
	}
	c.reader = r
	if err := c.loadFormat(ctx, r, true); err != nil {
		r.Close(ctx)
		return nil, err
	}
	if c.format.Origin == nil && c.format.Format != FormatLegacyLog {
		r.Close(ctx)
		return nil, errorf(Corruption, "the commit log at %s is adopted but the catalog it serves has no commit-log origin", ls)
	}
	if err := c.noteEmpty(ctx); err != nil {
		r.Close(ctx)
		return nil, err
	}
	// Fold first when the store has folded no slot yet: an adoption was
	// interrupted between its stamp landing as slot 0 and its fold, so the
	// store lacks the stamp and a provider-less binary would still open it
	// and write to it. Fold first, too, when the unfolded tail is long: it
	// costs every cold open one GET per slot. A failure is let go, like
	// any fold.
	folded := r.ReplayAfterWalID()
	needFold := folded < base.WalBase
	if fs := opts.foldSlots(); !needFold && fs > 0 {
		n, err := c.unfoldedAfter(ctx, folded)
		needFold = err == nil && n > fs
	}
	if needFold {
		if _, err := l.fold(ctx); err != nil {
			c.log.Warn("moraine: folding the commit log at open failed; continuing", "err", err)
		} else if err := r.Refresh(ctx); err != nil {
			r.Close(ctx)
			return nil, storeErr(err, "refreshing after the open's fold")
		}
	}
	return c, nil
}

func logErr(err error, format string, args ...any) error {
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	return storeErr(err, format, args...)
}

// adoptRacing adopts the store, or joins the adoption of a peer that
// opened it at the same time: adopting and folding each open the store's
// writer, fencing one another, so a fenced attempt looks at the log again
// (the peer's stamp may hold slot 0 by now) and retries, a few times.
func (l *commitLogOpen) adoptRacing(ctx context.Context) (LogBase, error) {
	for attempt := 1; ; attempt++ {
		base, err := l.adopt(ctx)
		if err == nil || !errors.Is(err, Fenced) || attempt == adoptAttempts {
			return base, err
		}
		select {
		case <-ctx.Done():
			return LogBase{}, ctx.Err()
		case <-time.After(backoff(attempt) + time.Duration(attempt)*10*time.Millisecond):
		}
		if base, ok, berr := l.committer.Base(ctx); berr == nil && ok {
			// The stamp landed (ours or a peer's); a fold still owed is
			// done by the open (openCommitter folds a store lacking it).
			l.base = base
			return base, nil
		}
	}
}

// adoptAttempts bounds adoptRacing.
const adoptAttempts = 8

// adopt makes the store log-resident: it opens the store on its own WAL
// (fencing any single writer), creates the catalog if the store is empty
// (unless LeaveEmpty), writes the adoption stamp into the store marked
// pending (so every open refuses the store without a provider from here
// on), flushes everything into the tree, and races the stamp as slot 0
// with a base just past the store's WAL ids and seqs. Whoever's stamp holds
// slot 0 defines the base; the store is then folded once, which clears the
// pending mark. A crash anywhere in between leaves a store every
// provider-less open refuses and the next committer's open completes.
func (l *commitLogOpen) adopt(ctx context.Context) (LogBase, error) {
	c := l.c
	db, err := slate.Open(ctx, c.store, c.opts.Path, engineOptions(c.opts)...)
	if err != nil {
		return LogBase{}, storeErr(err, "opening the store to adopt its commit log")
	}
	closeDB := func() { db.Close(ctx) }
	f, ok, err := readFormat(ctx, db)
	// LeaveEmpty (the storage extension): an empty store is adopted empty,
	// its first slot after the stamp the commit that creates the lake.
	leaveEmpty := err == nil && !ok && c.opts.LeaveEmpty
	if leaveEmpty {
		cf := currentFormat()
		f = &cf
	} else if err == nil && !ok {
		if err = bootstrap(ctx, db, c.opts); err == nil {
			f, _, err = readFormat(ctx, db)
		}
	}
	if err != nil {
		closeDB()
		return LogBase{}, err
	}
	if err := checkKnownFormat(f); err != nil {
		closeDB()
		return LogBase{}, err
	}
	if mig, ok, err := readMigration(ctx, db); err != nil || ok {
		closeDB()
		if err != nil {
			return LogBase{}, err
		}
		return LogBase{}, errorf(Migration, "the catalog is mid-migration (%s): finish it with `moraine migrate` before adopting a commit log", mig.describe())
	}
	head, hasHead, err := readHead(ctx, db)
	// A log-resident store needs no head here: a pending adoption is
	// completed with its stamp and a finished one joined, and a store a
	// peer adopted empty (LeaveEmpty) has none until its genesis slot.
	if err == nil && !hasHead && !leaveEmpty && !f.logResident() {
		err = errorf(Corruption, "the catalog has no head record")
	}
	if err != nil {
		closeDB()
		return LogBase{}, err
	}
	var nf formatRecord
	switch {
	case f.logResident() && !f.AdoptionPending:
		closeDB()
		// A peer adopted (and folded) between our look at the log and our
		// open: carry on with its base.
		if peer, ok, err := l.committer.Base(ctx); err != nil {
			return LogBase{}, logErr(err, "reading the commit log's base")
		} else if ok {
			l.base = peer
			return peer, nil
		}
		// The store says log-resident, no adoption is pending, and the log
		// has no base: a log that was lost. Refuse rather than start a
		// second one.
		return LogBase{}, errorf(Corruption, "the catalog is stamped log-resident (origin %s) but its commit log at %s has no first slot", f.originText(), l.logStore)
	case f.logResident():
		// An adoption (ours before a crash, or a peer's under way) wrote
		// its stamp into the store and may not have raced slot 0 yet:
		// complete it with that stamp, or join the base that holds slot 0.
		nf = *f
		nf.AdoptionPending = false
	default:
		if nf, err = adoptionStamp(f, head); err != nil {
			closeDB()
			return LogBase{}, err
		}
		// The stamp reaches the store before any slot exists, marked
		// pending: from this write on every open path sees a log-resident
		// catalog (a provider-less one is refused) though nothing has been
		// folded yet; slot 0's own format record, folded, clears the mark.
		pending := nf
		pending.AdoptionPending = true
		wb := slate.NewWriteBatch()
		wb.Put(keys.Format(), encodeFormat(&pending))
		if _, err := db.Write(ctx, wb, slate.WriteOptions{}); err != nil {
			closeDB()
			return LogBase{}, storeErr(err, "writing the pending adoption stamp into the store")
		}
	}
	if err := db.FlushMemtable(ctx); err != nil {
		closeDB()
		return LogBase{}, storeErr(err, "flushing the store before adoption")
	}
	st := db.Stats()
	base := LogBase{WalBase: st.WalLastFlushedID + 1 + walBaseHeadroom, SeqBase: st.LastSeq + 1 + seqBaseHeadroom, OriginBatchSeq: head.BatchSeq}
	stamp := LogBatch{TxnID: uuid.New(), Slot: 0, Head: head,
		Writes: []LogWrite{{Key: keys.Format(), Value: encodeFormat(&nf)}}}
	adopted, _, won, err := l.committer.Adopt(ctx, base, stamp)
	closeDB()
	if err != nil {
		return LogBase{}, logErr(err, "racing the adoption stamp")
	}
	if won {
		c.log.Info("moraine: adopted the commit log", "store", c.store, "path", c.opts.Path, "origin", head.BatchSeq, "wal_base", adopted.WalBase)
	}
	l.base = adopted
	if _, err := l.fold(ctx); err != nil {
		return LogBase{}, err
	}
	return adopted, nil
}

// close stops the log machinery.
func (l *commitLogOpen) close(ctx context.Context) {
	if l.stop != nil {
		select {
		case <-l.stop:
		default:
			close(l.stop)
		}
	}
	l.wg.Wait()
}
