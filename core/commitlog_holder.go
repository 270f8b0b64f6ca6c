package core

// commitlog_holder.go: TakeStore and the holder: a committer that keeps
// the store open over the plug, applies its won slots to it, folds peers'
// slots on an idle poll, and gives the store up once fenced.

import (
	"context"
	"errors"
	"time"

	"github.com/moraine-go/moraine/core/slate"
)

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
	// A held store is written for as long as the open lives, an L0 table
	// every FlushSlots slots: it compacts in the background like a single
	// writer's (L0 backpressure waits for it).
	opts := append(l.plugOptions(init), slate.WithCompactor(slate.CompactorOptions{}))
	db, err := slate.Open(ctx, c.store, c.opts.Path, opts...)
	l.foldMu.Unlock()
	if err != nil {
		return storeErr(err, "taking the store")
	}
	l.setHeld(db, RoleHolder)
	l.wg.Add(1)
	go l.idlePoll(c.opts.CommitLogFoldPoll)
	return nil
}

// idlePoll folds peers' slots into a held store, and gives the store up if
// another process fenced it.
func (l *commitLogOpen) idlePoll(every time.Duration) {
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
func (l *commitLogOpen) foldPeers(ctx context.Context) bool {
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
func (l *commitLogOpen) giveUp(reason error) {
	c := l.c
	db := l.setHeld(nil, RoleCommitter)
	if db != nil {
		db.Close(context.Background())
	}
	c.log.Info("moraine: gave up the held store; committing through the log", "reason", reason)
}

// setHeld makes db the catalog's held store (nil: none) and role this
// open's role, dropping the cached head view (it was read from the other
// side); it returns the store held before.
func (l *commitLogOpen) setHeld(db *slate.DB, role Role) *slate.DB {
	c := l.c
	c.mu.Lock()
	prev := c.db
	c.db = db
	c.setHeadViewLocked(nil, Head{})
	c.mu.Unlock()
	l.mu.Lock()
	l.role = role
	l.mu.Unlock()
	return prev
}
