package core

// commitlog_fold.go: folding the commit log into the store (a cadence of
// the committer that lands every CommitLogFoldSlots-th slot, FoldSprint,
// and the unfolded-slot count).

import (
	"context"
	"errors"
	"time"

	"github.com/moraine-go/moraine/core/slate"
)

// FoldReport says what a fold did.
type FoldReport struct {
	FromSlot    uint64 // the first slot this fold applied (when Applied > 0)
	ThroughSlot uint64 // the last slot the store holds after the fold
	Applied     uint64 // slots applied by this fold
	Compacted   int    // tables merged by the compaction the fold ran (0: none due)
	Truncated   int    // log objects deleted below the replay point
}

// fold opens the store over the plug (fencing any other folder), which
// replays every slot the store lacks, writes the memtable out as an L0
// table, compacts when the size-tiered policy has a compaction due (every
// fold adds a table, and nothing else compacts a store written through
// the log), truncates the log, and closes.
func (l *commitLogOpen) fold(ctx context.Context) (FoldReport, error) {
	return l.foldOnce(ctx, false)
}

// cadenceFold is the fold a committer runs every CommitLogFoldSlots
// slots. It truncates the log only when that is due (truncationDue).
func (l *commitLogOpen) cadenceFold(ctx context.Context) (FoldReport, error) {
	return l.foldOnce(ctx, true)
}

// truncationDue reports whether a cadence fold should truncate the log:
// when no fold of this open has for an eighth of the retention (always
// with none). A slot is deleted only once it is older than the retention,
// so truncating at every fold (every 64 slots) finds nothing new most of
// the time, and its listings of the log, the manifests and the tables are
// most of a fold's requests. With truncation at most every eighth of the
// retention, the log holds at most 9/8 of a retention's slots. foldMu is
// held.
func (l *commitLogOpen) truncationDue() bool {
	every := l.c.opts.CommitLogRetention / 8
	return every <= 0 || l.truncatedAt.IsZero() || time.Since(l.truncatedAt) >= every
}

// foldOnce folds, then truncates the log (a cadence fold only when
// truncationDue).
func (l *commitLogOpen) foldOnce(ctx context.Context, cadence bool) (FoldReport, error) {
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
	switch cr, err := db.Compact(ctx); {
	case errors.Is(err, slate.ErrFenced):
		// A newer folder (another open) took the store meanwhile: it
		// compacts from here on.
		c.log.Debug("moraine: a newer folder took the store before this fold's compaction", "err", err)
	case err != nil:
		c.log.Warn("moraine: compacting the store after a fold failed; the next fold retries", "err", err)
	default:
		rep.Compacted = cr.SourceL0 + cr.SourceRuns
	}
	if cadence && !l.truncationDue() {
		return rep, nil
	}
	gcr, err := db.RunGC(ctx, slate.GCOptions{MinAge: c.opts.CommitLogRetention})
	if err != nil {
		c.log.Warn("moraine: truncating the commit log after a fold failed; the next fold retries", "err", err)
	} else {
		rep.Truncated = len(gcr.WalFiles)
		l.truncatedAt = time.Now()
		l.truncations++
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
