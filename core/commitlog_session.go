package core

// commitlog_session.go: a committer's (or holder's) commit session: it
// reads at a pinned view, takes its turn (contention.go), lands the batch
// as one slot, and on a loss catches up with the slots that won.

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/slate"
)

// logSession is a committer's (or holder's) commit session: reads at a
// pinned view, lands as one slot.
type logSession struct {
	l    *commitLogOpen
	view kvReader
	// holder only: the store the slot is applied to once won.
	db *slate.DB
}

func (l *commitLogOpen) newSession(ctx context.Context) (session, error) {
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
	k, v := headStampClaim(b.newHead, b.claim)
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
	// A peer's claim at the tip comes first (claim.go).
	if landed, err := l.awaitClaim(ctx, s.view, slot, b.explicit); err != nil || len(landed) > 0 {
		if err != nil {
			return nil, err
		}
		return s.lostTo(ctx, b, landed)
	}
	// Take turns with the peers this committer knows (contention.go); an
	// explicit transaction or a claim offers at once (see
	// preparedBatch.explicit).
	if !b.explicit && b.claim == nil {
		landed, err := l.awaitTurn(ctx, slot)
		if err != nil {
			return nil, err
		}
		if len(landed) > 0 {
			return s.lostTo(ctx, b, landed)
		}
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
			if _, err := l.cadenceFold(context.Background()); err != nil {
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
	var view *CatalogView
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
	return &lostRace{theirs: theirs, resolve: func(id SchemaID) (string, bool) { n, ok := names[id]; return n, ok }, view: view,
		toClaim: l.lostToClaimAlone(landed)}, nil
}

// checkAdvanced compares an advanced view with a full load at its head
// (checkAdvance, in tests).
func (s *logSession) checkAdvanced(ctx context.Context, view *CatalogView) error {
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
	if full.head == view.head && !reflect.DeepEqual(full, view) {
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
func (l *commitLogOpen) awaitTurn(ctx context.Context, slot uint64) ([]LogBatch, error) {
	ahead, gap, pause := l.race.turn(slot, time.Now())
	if ahead == 0 {
		// Our slot; now and then left free a while first (contention.go,
		// yieldFirst): a committer that takes it meanwhile makes the
		// offer a lost race.
		if err := sleepCtx(ctx, pause); err != nil {
			return nil, wrapf(Interrupted, err, "leaving slot %d free a while", slot)
		}
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
// (or the committer cannot probe), else the slots that landed from it on.
func (l *commitLogOpen) probeLanded(ctx context.Context, slot uint64) ([]LogBatch, error) {
	prober, ok := l.committer.(SlotProber)
	if !ok {
		return nil, nil
	}
	landed, err := prober.Probe(ctx, slot)
	if err != nil {
		return nil, logErr(err, "probing slot %d", slot)
	}
	l.race.saw(landed, time.Now())
	return landed, nil
}

// tailIfBehind tails the committer's reader when a commit of this
// committer lost its slot since the last read (see commitLogOpen.behind).
func (l *commitLogOpen) tailIfBehind(ctx context.Context) error {
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
func (l *commitLogOpen) waitServed(ctx context.Context, seq uint64) error {
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
