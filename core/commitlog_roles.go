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

// logState is a catalog open's commit-log machinery.
type logState struct {
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
	stop   chan struct{}
	wg     sync.WaitGroup
}

// logStoreFor is the store the log lives in, wrapped like the catalog's.
func logStoreFor(store objstore.Store, opts CatalogOptions) objstore.Store {
	if opts.WalStore != nil {
		return engineStore(opts.WalStore, opts)
	}
	return engineStore(store, opts)
}

// plugOptions are the engine options of a store opened over the log.
func (l *logState) plugOptions(init slate.WriterInit) []slate.Option {
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
	c.clog = &logState{c: c, p: p, logStore: ls, path: opts.Path, role: RoleReader}
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
	l := &logState{c: c, p: p, committer: committer, logStore: ls, path: opts.Path, role: RoleCommitter, stop: make(chan struct{})}
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
	// refreshes first (Catalog.Snapshot), a commit tails until served.
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
func (l *logState) adoptRacing(ctx context.Context) (LogBase, error) {
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
func (l *logState) adopt(ctx context.Context) (LogBase, error) {
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

// FoldReport says what a fold did.
type FoldReport struct {
	FromSlot    uint64 // the first slot this fold applied (when Applied > 0)
	ThroughSlot uint64 // the last slot the store holds after the fold
	Applied     uint64 // slots applied by this fold
	Truncated   int    // log objects deleted below the replay point
}

// fold opens the store over the plug (fencing any other folder), which
// replays every slot the store lacks, writes the memtable out, truncates
// the log, and closes.
func (l *logState) fold(ctx context.Context) (FoldReport, error) {
	l.foldMu.Lock()
	defer l.foldMu.Unlock()
	c := l.c
	init := l.p.WriterInit(l.logStore, l.path)
	db, err := slate.Open(ctx, c.store, c.opts.Path, l.plugOptions(init)...)
	if err != nil {
		return FoldReport{}, storeErr(err, "opening the store to fold the commit log")
	}
	defer db.Close(ctx)
	before := db.Stats()
	if err := db.FlushMemtable(ctx); err != nil {
		return FoldReport{}, storeErr(err, "writing the folded slots out")
	}
	rep := FoldReport{}
	if l.base.SeqBase > 0 && db.LastCommittedSeq() >= l.base.SeqBase {
		rep.ThroughSlot = db.LastCommittedSeq() - l.base.SeqBase
	}
	if before.LastL0Seq >= l.base.SeqBase {
		rep.FromSlot = before.LastL0Seq - l.base.SeqBase + 1
	}
	if rep.ThroughSlot+1 > rep.FromSlot {
		rep.Applied = rep.ThroughSlot + 1 - rep.FromSlot
	}
	gcr, err := db.RunGC(ctx, slate.GCOptions{MinAge: c.opts.CommitLogRetention})
	if err != nil {
		c.log.Warn("moraine: truncating the commit log after a fold failed; the next fold retries", "err", err)
	} else {
		rep.Truncated = len(gcr.WalFiles)
	}
	return rep, nil
}

// FoldSprint folds the commit log into the store once (for a scheduled
// drain). It is not on the commit path.
func (c *Catalog) FoldSprint(ctx context.Context) (FoldReport, error) {
	if !c.Role().commitsThroughLog() {
		return FoldReport{}, errorf(InvalidArgument, "FoldSprint needs a read-write open over a commit log (this handle is a %s)", c.Role())
	}
	return c.clog.fold(ctx)
}

// UnfoldedSlots reports how many landed slots the store has not folded yet
// (one listing of the log; folds nothing).
func (c *Catalog) UnfoldedSlots(ctx context.Context) (uint64, error) {
	if !c.Role().commitsThroughLog() {
		return 0, errorf(InvalidArgument, "UnfoldedSlots needs a read-write open over a commit log (this handle is a %s)", c.Role())
	}
	return c.unfolded(ctx)
}

func (c *Catalog) unfolded(ctx context.Context) (uint64, error) {
	mi, err := slate.DescribeManifest(ctx, c.store, c.opts.Path)
	if err != nil {
		return 0, storeErr(err, "reading the store's replay point")
	}
	return c.unfoldedAfter(ctx, mi.ReplayAfterWalID)
}

// unfoldedAfter counts the slots past a store whose replay point is folded.
func (c *Catalog) unfoldedAfter(ctx context.Context, folded uint64) (uint64, error) {
	l := c.clog
	tail, ok, err := l.committer.Tail(ctx)
	if err != nil || !ok {
		return 0, logErr(err, "listing the commit log")
	}
	if folded < l.base.WalBase {
		return tail + 1, nil
	}
	done := folded - l.base.WalBase // the last folded slot
	if tail <= done {
		return 0, nil
	}
	return tail - done, nil
}

// logSession is a committer's (or holder's) commit session: reads at a
// pinned view, lands as one slot.
type logSession struct {
	l    *logState
	view kvReader
	// holder only: the store the slot is applied to once won.
	db *slate.DB
}

func (l *logState) newSession(ctx context.Context) (session, error) {
	l.mu.Lock()
	role := l.role
	l.mu.Unlock()
	c := l.c
	if role == RoleHolder {
		db := c.writerDB()
		if reason := db.CloseReason(); reason != nil {
			// Another process took the store: give it up and commit
			// through the log like any committer.
			l.giveUp(reason)
		} else {
			snap := db.Snapshot()
			return &logSession{l: l, view: &releasingSnapshot{snap}, db: db}, nil
		}
	}
	snap, err := c.reader.Snapshot(ctx)
	if err != nil {
		return nil, storeErr(err, "pinning the committer's view")
	}
	return &logSession{l: l, view: snap}, nil
}

type releasingSnapshot struct{ *slate.Snapshot }

func (s *logSession) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return s.view.Get(ctx, key)
}

func (s *logSession) Scan(ctx context.Context, start, end []byte) *slate.Iterator {
	return s.view.Scan(ctx, start, end)
}

func (s *logSession) release() {
	if r, ok := s.view.(*releasingSnapshot); ok {
		r.Release()
	}
}

// logWrites converts a batch's writes (and its head stamp) for the slot.
func logWrites(b *preparedBatch) []LogWrite {
	out := make([]LogWrite, 0, len(b.writes)+1)
	for _, w := range b.writes {
		out = append(out, LogWrite{Key: w.key, Value: w.value, Delete: w.value == nil})
	}
	k, v := headStamp(b.newHead)
	out = append(out, LogWrite{Key: k, Value: v})
	return out
}

func (s *logSession) land(ctx context.Context, b *preparedBatch) (*lostRace, error) {
	l := s.l
	slot := l.base.SlotFor(b.prepared)
	batch := LogBatch{TxnID: uuid.New(), Slot: slot, Head: b.prepared, ChangesMade: formatChanges(b.changes.Changes),
		DeletedDataFiles: b.changes.DeletedFiles, Writes: logWrites(b), Committer: l.race.ident()}
	if err := checkLogBatch(l.base, batch); err != nil {
		return nil, wrapf(Internal, err, "refusing to offer a malformed slot")
	}
	// Take turns with the peers this committer knows (contention.go).
	if landed, err := l.awaitTurn(ctx, slot); err != nil || len(landed) > 0 {
		if err != nil {
			return nil, err
		}
		return s.lostTo(ctx, b, landed)
	}
	if s.db != nil {
		l.foldMu.Lock() // a holder's idle poll must not fold the slot it is landing
		defer l.foldMu.Unlock()
	}
	offered := time.Now()
	res, err := l.committer.Offer(ctx, batch)
	if err != nil {
		return nil, logErr(err, "offering slot %d", slot)
	}
	if !res.Won {
		l.race.saw(res.Landed, time.Now())
		return s.lostTo(ctx, b, res.Landed)
	}
	l.race.won(time.Since(offered))
	seq := l.base.Seq(slot)
	applied := false
	if s.db != nil {
		err := applySlot(ctx, s.db, l.base, batch)
		switch {
		case err == nil:
			applied = true
		case errors.Is(err, slate.ErrFenced) || errors.Is(err, slate.ErrClosed):
			// Fenced while landing: the slot is committed; serve it through
			// the reader from now on.
			l.giveUp(err)
		default:
			return nil, wrapf(OutcomeUnknown, err, "slot %d is committed in the log but applying it to the held store failed; a reopen folds it", slot)
		}
	}
	if applied {
		// The held store serves it.
	} else if err := l.waitServed(ctx, seq); err != nil {
		l.c.log.Warn("moraine: the commit landed but the reader has not served it yet", "slot", slot, "err", err)
	}
	if fs := l.c.opts.foldSlots(); s.db == nil && fs > 0 && slot%fs == 0 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			if _, err := l.fold(context.Background()); err != nil {
				l.c.log.Warn("moraine: cadence fold failed; the next one retries", "slot", slot, "err", err)
			}
		}()
	}
	return nil, nil
}

// lostTo completes a lost race to the slots that landed from the raced
// one on: they are served to the session first (catchUp refuses a winner
// breaking the head-stamp rule), then described for classification.
func (s *logSession) lostTo(ctx context.Context, b *preparedBatch, landed []LogBatch) (*lostRace, error) {
	l := s.l
	l.race.lost()
	if err := s.catchUp(ctx, landed); err != nil {
		return nil, err
	}
	if s.db == nil {
		l.behind.Store(true) // a holder's catchUp applied them to its store
	}
	theirs := make([]changeSet, 0, len(landed))
	for _, lb := range landed {
		theirs = append(theirs, changeSetOf(lb.Head.SnapshotID+1, lb.ChangesMade, lb.DeletedDataFiles))
	}
	names := map[SchemaID]string{}
	var view *CatalogSnapshot
	if base, err := l.c.baseFor(ctx, s, b.prepared); err == nil {
		for _, sc := range base.schemas {
			names[sc.ID] = sc.Name
		}
		// The retry's base, without re-reading the store (advance.go).
		adv, ok, err := advanceView(base, landed)
		if err != nil {
			return nil, err
		}
		if ok {
			view = adv
		}
	}
	if view != nil && checkAdvance {
		if err := s.checkAdvanced(ctx, view); err != nil {
			return nil, err
		}
	}
	return &lostRace{theirs: theirs, resolve: func(id SchemaID) (string, bool) { n, ok := names[id]; return n, ok }, view: view}, nil
}

// checkAdvanced compares an advanced view with a full load at its head
// (checkAdvance, in tests).
func (s *logSession) checkAdvanced(ctx context.Context, view *CatalogSnapshot) error {
	var kv kvReader
	if s.db != nil {
		snap := s.db.Snapshot()
		defer snap.Release()
		kv = snap
	} else {
		snap, err := s.l.c.reader.Snapshot(ctx)
		if err != nil {
			return storeErr(err, "pinning a view to check the advanced one")
		}
		kv = snap
	}
	full, err := load(ctx, kv, nil)
	if err != nil {
		return err
	}
	if full.head == view.head && !sameView(full, view) {
		return errorf(Internal, "the view advanced over the winners' slots differs from the store's at head %+v", view.head)
	}
	return nil
}

// awaitTurn waits for this committer's turn at slot (contention.go): the
// slots ahead of its turn are earlier turns' to take, so it sleeps
// through most of them, then looks at slot every quarter gap until it may
// offer it (when nobody took it in the time the turns ahead had). It
// returns the slots that landed meanwhile from slot on (a lost race), or
// none: offer now.
func (l *logState) awaitTurn(ctx context.Context, slot uint64) ([]LogBatch, error) {
	ahead, gap := l.race.turn(slot, time.Now())
	if ahead == 0 {
		return nil, nil
	}
	deadline := time.Now().Add(time.Duration(ahead)*gap + gap/4)
	sleep := time.Duration(ahead-1) * gap * 3 / 4
	for {
		if err := sleepCtx(ctx, sleep); err != nil {
			return nil, wrapf(Interrupted, err, "waiting for our turn at slot %d", slot)
		}
		landed, err := l.probeLanded(ctx, slot)
		if err != nil || len(landed) > 0 || !time.Now().Before(deadline) {
			return landed, err
		}
		sleep = min(gap/4, time.Until(deadline))
	}
}

// probeLanded looks at slot before offering it: nothing when it is free
// (or the committer cannot probe), else the slots that landed from it on
// (one by one up to maxProbes, the rest in one read).
func (l *logState) probeLanded(ctx context.Context, slot uint64) ([]LogBatch, error) {
	prober, ok := l.committer.(SlotProber)
	if !ok {
		return nil, nil
	}
	var landed []LogBatch
	for s := slot; ; s++ {
		if len(landed) == maxProbes {
			rest, err := l.committer.Read(ctx, s, 0)
			if err != nil {
				return nil, logErr(err, "reading the slots after %d", s-1)
			}
			landed = append(landed, rest...)
			break
		}
		lb, found, err := prober.Probe(ctx, s)
		if err != nil {
			return nil, logErr(err, "probing slot %d", s)
		}
		if !found {
			break
		}
		landed = append(landed, lb)
	}
	l.race.saw(landed, time.Now())
	return landed, nil
}

// tailIfBehind tails the committer's reader when a commit of this
// committer lost its slot since the last read (see logState.behind).
func (l *logState) tailIfBehind(ctx context.Context) error {
	if l == nil || !l.behind.Swap(false) {
		return nil
	}
	if err := l.c.reader.Tail(ctx); err != nil {
		return storeErr(err, "tailing the commit log after a lost race")
	}
	return nil
}

// catchUp makes the session's store (holder) or reader (committer) hold
// the slots that beat this batch, before the lost-race outcome returns.
func (s *logSession) catchUp(ctx context.Context, landed []LogBatch) error {
	if len(landed) == 0 {
		return nil
	}
	if s.db != nil {
		for _, lb := range landed {
			if s.db.LastCommittedSeq() >= s.l.base.Seq(lb.Slot) {
				continue
			}
			if err := applySlot(ctx, s.db, s.l.base, lb); err != nil {
				return storeErr(err, "folding slot %d into the held store", lb.Slot)
			}
		}
		return nil
	}
	return s.l.waitServed(ctx, s.l.base.Seq(landed[len(landed)-1].Slot))
}

// applySlot writes one slot into a store held over the plug, at the slot's
// seq (the plug acknowledges it at once: the slot is the durable record).
func applySlot(ctx context.Context, db *slate.DB, base LogBase, lb LogBatch) error {
	if err := checkLogBatch(base, lb); err != nil {
		return err
	}
	wb := slate.NewWriteBatch()
	for _, w := range lb.Writes {
		if w.Delete {
			wb.Delete(w.Key)
		} else {
			wb.Put(w.Key, w.Value)
		}
	}
	_, err := db.Write(ctx, wb, slate.WriteOptions{Seq: base.Seq(lb.Slot)})
	return err
}

// waitServed refreshes the reader until it serves seq (round trips, not
// ticks), bounded.
func (l *logState) waitServed(ctx context.Context, seq uint64) error {
	r := l.c.reader
	ctx, cancel := context.WithTimeout(ctx, servedWait)
	defer cancel()
	for tries := 0; r.Seq() < seq; tries++ {
		// Tailing the log is enough to be served a slot; every few tries
		// also re-read the manifest (a fold may have moved the replay
		// point past what the reader holds).
		refresh := r.Tail
		if tries%4 == 3 {
			refresh = r.Refresh
		}
		if err := refresh(ctx); err != nil {
			return err
		}
		if r.Seq() >= seq {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// TakeStore makes this committer hold the store until Close: won slots are
// applied to it directly and peers' slots are folded every
// CommitLogFoldPoll. For jobs that write a lot through one process; not
// needed for ordinary commits.
func (c *Catalog) TakeStore(ctx context.Context) error {
	l := c.clog
	if l == nil || l.committer == nil {
		return errorf(InvalidArgument, "TakeStore needs a read-write open over a commit log")
	}
	l.foldMu.Lock()
	init := l.p.WriterInit(l.logStore, l.path)
	db, err := slate.Open(ctx, c.store, c.opts.Path, l.plugOptions(init)...)
	l.foldMu.Unlock()
	if err != nil {
		return storeErr(err, "taking the store")
	}
	c.mu.Lock()
	c.db = db
	c.headView = nil
	c.mu.Unlock()
	l.mu.Lock()
	l.role = RoleHolder
	l.mu.Unlock()
	l.wg.Add(1)
	go l.idlePoll(c.opts.CommitLogFoldPoll)
	return nil
}

// idlePoll folds peers' slots into a held store, and gives the store up if
// another process fenced it.
func (l *logState) idlePoll(every time.Duration) {
	defer l.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !l.foldPeers(context.Background()) {
			return
		}
	}
}

// foldPeers applies slots past the held store's cursor. It returns false
// once the store was given up.
func (l *logState) foldPeers(ctx context.Context) bool {
	l.foldMu.Lock()
	defer l.foldMu.Unlock()
	c := l.c
	c.mu.Lock()
	db := c.db
	c.mu.Unlock()
	if db == nil {
		return false
	}
	if reason := db.CloseReason(); reason != nil {
		l.giveUp(reason)
		return false
	}
	next := uint64(0)
	if s := db.LastCommittedSeq(); s >= l.base.SeqBase {
		next = s - l.base.SeqBase + 1
	}
	slots, err := l.committer.Read(ctx, next, 0)
	if err != nil {
		c.log.Warn("moraine: the holder's idle fold could not read the log", "err", err)
		return true
	}
	for _, lb := range slots {
		if err := applySlot(ctx, db, l.base, lb); err != nil {
			if errors.Is(err, slate.ErrFenced) {
				l.giveUp(err)
				return false
			}
			c.log.Warn("moraine: the holder's idle fold failed", "slot", lb.Slot, "err", err)
			return true
		}
	}
	return true
}

// giveUp drops a held store another process fenced: commits continue
// through the log as a plain committer.
func (l *logState) giveUp(reason error) {
	c := l.c
	c.mu.Lock()
	db := c.db
	c.db = nil
	c.headView = nil
	c.mu.Unlock()
	l.mu.Lock()
	l.role = RoleCommitter
	l.mu.Unlock()
	if db != nil {
		db.Close(context.Background())
	}
	c.log.Info("moraine: gave up the held store; committing through the log", "reason", reason)
}

// close stops the log machinery.
func (l *logState) close(ctx context.Context) {
	if l.stop != nil {
		select {
		case <-l.stop:
		default:
			close(l.stop)
		}
	}
	l.wg.Wait()
}

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
