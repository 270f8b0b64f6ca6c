package core

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/moraine-go/moraine/core/keys"
)

// commitReq is one Commit caller waiting on the group committer.
type commitReq struct {
	fn   func(*Transaction) error
	done chan commitResult
	// attempts counts lost-race re-runs so far; since is when the commit
	// was asked for.
	attempts int
	since    time.Time
}

type commitResult struct {
	id  SnapshotID
	err error
}

// Commit runs fn against the catalog's head and commits what it staged as
// one new snapshot, returning its id (or the head's id if fn staged
// nothing). fn may run more than once: after a lost race that does not
// truly conflict it re-runs against the new head, so it must derive
// everything from the Transaction it is given.
//
// Concurrent callers share one engine write (group commit): each still
// mints its own snapshot, in arrival order, and the write is all-or-none.
// An error from fn fails only that caller.
//
// Errors: CommitConflict when a concurrent commit truly conflicts (the only
// error whose text contains "conflict"); RetryExhausted after too many
// benign lost races; OutcomeUnknown when the write may or may not have
// landed (re-read the head before trying again); Fenced when another
// read-write open took the catalog.
func (c *Catalog) Commit(ctx context.Context, fn func(*Transaction) error) (SnapshotID, error) {
	if c.readOnly {
		return 0, errorf(InvalidArgument, "the catalog was opened read-only; open it read-write to commit")
	}
	req := &commitReq{fn: fn, done: make(chan commitResult, 1), since: time.Now()}
	c.mu.Lock()
	if err := c.openErr(); err != nil {
		c.mu.Unlock()
		return 0, err
	}
	c.queue = append(c.queue, req)
	if !c.leading {
		c.leading = true
		c.leaderW.Add(1)
		go c.lead()
	}
	c.mu.Unlock()
	select {
	case r := <-req.done:
		return r.id, r.err
	case <-ctx.Done():
		// The batch runs on; the caller only stops waiting.
		return 0, wrapf(OutcomeUnknown, ctx.Err(), "stopped waiting for the commit; it may or may not land: re-read the head before retrying")
	}
}

// lead drains the queue in batches of up to maxGroupMembers. It runs on its
// own goroutine so a caller's cancellation never drops a durable write.
func (c *Catalog) lead() {
	defer c.leaderW.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.leading = false
			c.mu.Unlock()
			return
		}
		n := min(len(c.queue), maxGroupMembers)
		batch := slices.Clone(c.queue[:n])
		c.queue = c.queue[n:]
		c.mu.Unlock()
		c.runBatch(context.Background(), batch)
	}
}

// member is one batch member's outcome while the batch is assembled.
type member struct {
	req *commitReq
	txn *Transaction
	err error
}

// runBatch commits members as one engine write, retrying benign lost races.
func (c *Catalog) runBatch(ctx context.Context, reqs []*commitReq) {
	for len(reqs) > 0 {
		retry, err := c.tryBatch(ctx, reqs)
		if err == nil && len(retry) == 0 {
			return
		}
		if err != nil {
			for _, r := range reqs {
				r.done <- commitResult{err: err}
			}
			return
		}
		// Benign lost race: back off, then re-run these members.
		var next []*commitReq
		for _, r := range retry {
			r.attempts++
			if err := c.retryBudgetSpent(r); err != nil {
				r.done <- commitResult{err: err}
				continue
			}
			next = append(next, r)
		}
		// A commit-log loss handed the committer every slot that landed:
		// it races again at once (contention.go); other lost races back off.
		if len(next) > 0 && c.clog == nil {
			time.Sleep(backoff(next[0].attempts))
		}
		reqs = next
	}
}

// retryBudgetSpent is the RetryExhausted error for a commit that may not
// be re-run again, or nil. A single writer counts attempts
// (MaxCommitAttempts); a commit-log committer, whose lost races are other
// processes' commits, counts time (CommitLogRetryBudget), and attempts too
// when MaxCommitAttempts was set.
func (c *Catalog) retryBudgetSpent(r *commitReq) error {
	if n, ok := c.opts.attemptBound(c.clog != nil); ok && r.attempts >= n {
		return errorf(RetryExhausted, "the commit lost %d races to concurrent commits in %v (MaxCommitAttempts %d); try again later",
			r.attempts, time.Since(r.since).Round(time.Millisecond), n)
	}
	if c.clog != nil && c.opts.CommitLogRetryBudget > 0 {
		if spent := time.Since(r.since); spent >= c.opts.CommitLogRetryBudget {
			return errorf(RetryExhausted, "the commit lost its slot to other committers %d times in a row over %v (CommitLogRetryBudget %v): the commit log is that contended; try again later",
				r.attempts, spent.Round(time.Millisecond), c.opts.CommitLogRetryBudget)
		}
	}
	return nil
}

// backoff before attempt k (k >= 1): min(2ms * 2^(k-1), 50ms) + jitter < 2ms.
func backoff(k int) time.Duration {
	d := 2 * time.Millisecond << (k - 1)
	if d > 50*time.Millisecond || d <= 0 {
		d = 50 * time.Millisecond
	}
	return d + time.Duration(rand.Int64N(int64(2*time.Millisecond)))
}

// tryBatch runs every member's closure against the fold of the members
// before it, lands one batch and delivers results. It returns members to
// re-run after a benign lost race, or an error for all of them.
func (c *Catalog) tryBatch(ctx context.Context, reqs []*commitReq) ([]*commitReq, error) {
	c.fmtMu.RLock() // one format from prepare to landing (see RaiseFormat)
	defer c.fmtMu.RUnlock()
	began := time.Now()
	sess, err := c.newSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.release()
	head, ok, err := readHead(ctx, sess)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(Corruption, "the catalog has no head record")
	}
	base, err := c.baseFor(ctx, sess, head)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	fold := base
	members := make([]member, len(reqs))
	var landed []*Transaction
	for i, r := range reqs {
		t := newTransaction(fold, now, c.format.Format)
		members[i] = member{req: r, txn: t}
		if err := runClosure(r.fn, t); err != nil {
			members[i].err = err
			continue
		}
		if !t.changed() {
			continue
		}
		t.finish()
		fold = t.next
		landed = append(landed, t)
	}
	deliver := func() {
		for i := range members {
			m := &members[i]
			switch {
			case m.err != nil:
				m.req.done <- commitResult{err: m.err}
			case m.txn.changed():
				m.req.done <- commitResult{id: m.txn.id}
			default:
				// Nothing staged: the head as this member saw it.
				m.req.done <- commitResult{id: m.txn.base.snap.ID}
			}
		}
	}
	if len(landed) == 0 {
		deliver()
		return nil, nil
	}
	b := &preparedBatch{prepared: head, newHead: Head{SnapshotID: fold.snap.ID, BatchSeq: head.BatchSeq + 1},
		writes: batchWrites(landed), changes: unionChanges(landed)}
	if c.clog != nil {
		c.clog.race.prepared(time.Since(began))
	}
	lost, err := sess.land(ctx, b)
	if err != nil {
		c.setHeadView(nil, b.newHead) // it may have landed
		return nil, err
	}
	if lost != nil {
		c.setHeadView(lost.view, Head{}) // nil: the retry loads
		return c.classifyMembers(members, lost), nil
	}
	fold.head = b.newHead
	if c.afterLandForTest != nil {
		c.afterLandForTest()
	}
	c.setHeadView(fold, Head{})
	deliver()
	return nil, nil
}

// runClosure runs a commit closure, turning a panic into an Internal error.
func runClosure(fn func(*Transaction) error, t *Transaction) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf(Internal, "commit closure panicked: %v", r)
		}
	}()
	return fn(t)
}

// baseFor returns the materialized head, reusing the cached head view when its
// stamp matches.
func (c *Catalog) baseFor(ctx context.Context, kv kvReader, head Head) (*CatalogView, error) {
	c.mu.Lock()
	hv := c.headView
	c.mu.Unlock()
	if hv != nil && hv.head == head {
		return hv, nil
	}
	s, err := load(ctx, kv, nil)
	if err != nil {
		return nil, err
	}
	s.head = head
	return s, nil
}

// setHeadView is the only writer of the cached head view (Catalog.headView)
// and never moves it backwards. v is cached when its head is at or past
// the floor and not older than the cached view's (heads are ordered by
// BatchSeq: every landed batch increments it); nil drops the cache. A
// non-zero floor raises the floor to floor's BatchSeq: a commit that may
// or may not have landed drops the cache with the head it would have made,
// so that no older view (a concurrent commit's that landed before it,
// caching late; a load read before it) is cached until one at or past
// that head is.
//
// Views arrive from every path that learns the head: the open, a load by
// View or by a reader's poll, a grouped or explicit commit that landed, a
// claim, the advance over the slots a lost race read. Two of them can
// finish in either order (a grouped commit's leader and an explicit
// commit of the same handle); the order of their heads, not of their
// arrivals, decides.
func (c *Catalog) setHeadView(v *CatalogView, floor Head) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setHeadViewLocked(v, floor)
}

// setHeadViewLocked is setHeadView for a caller holding c.mu.
func (c *Catalog) setHeadViewLocked(v *CatalogView, floor Head) {
	c.headFloor = max(c.headFloor, floor.BatchSeq)
	switch {
	case v == nil:
		c.headView = nil
	case v.head.BatchSeq < c.headFloor:
	case c.headView != nil && v.head.BatchSeq < c.headView.head.BatchSeq:
	default:
		c.headView = v
	}
}

// classifyMembers decides, for every member of a batch that lost the head
// race, whether it truly conflicts with what landed (CommitConflict) or
// can re-run on top of it. It delivers failures and returns the re-runs.
func (c *Catalog) classifyMembers(members []member, lost *lostRace) []*commitReq {
	var retry []*commitReq
	for i := range members {
		m := &members[i]
		if m.err != nil {
			m.req.done <- commitResult{err: m.err}
			continue
		}
		if !m.txn.changed() {
			retry = append(retry, m.req) // re-read the new head
			continue
		}
		if reason := m.txn.conflictsWith(lost.theirs, lost.resolve); reason != "" {
			m.req.done <- commitResult{err: errorf(CommitConflict, "lost to a concurrent commit: %s", reason)}
			continue
		}
		retry = append(retry, m.req)
	}
	return retry
}

// intervening returns the change sets of snapshots after `after` and a
// resolver of schema names at the new head.
func (c *Catalog) intervening(ctx context.Context, after SnapshotID) ([]changeSet, schemaNameOf, error) {
	snaps, err := c.Snapshots(ctx, after+1)
	if err != nil {
		return nil, nil, err
	}
	var out []changeSet
	for _, s := range snaps {
		out = append(out, changeSetOf(s.ID, s.ChangesMade, s.DeletedDataFiles))
	}
	// Schema names of dropped schemas come from the time before the drop.
	names := map[SchemaID]string{}
	if old, err := c.ViewAt(ctx, after); err == nil {
		for _, s := range old.schemas {
			names[s.ID] = s.Name
		}
	}
	return out, func(id SchemaID) (string, bool) { n, ok := names[id]; return n, ok }, nil
}

// conflictsWith returns why t truly conflicts with one of theirs, or "".
func (t *Transaction) conflictsWith(theirs []changeSet, resolve schemaNameOf) string {
	mine := changeSet{Snapshot: t.id, Changes: t.changes, DeletedFiles: t.deletedFiles}
	for _, th := range theirs {
		if r := classify(mine, th, resolve); r != "" {
			return r
		}
	}
	return ""
}

// finish stages the snapshot record, schema versions and name-directory
// slots, and sets t.next's snapshot.
func (t *Transaction) finish() {
	t.noteStatsOnlyChanges()
	snap := Snapshot{ID: t.id, Time: t.now, SchemaVersion: t.schemaVersion, NextCatalogID: t.nextCatalogID,
		NextFileID: t.nextFileID, ChangesMade: formatChanges(t.changes), Author: t.author, CommitMessage: t.message,
		CommitExtraInfo: t.extra, DeletedDataFiles: slices.Clone(t.deletedFiles)}
	for id := range t.shapeTables {
		snap.SchemaChangedTables = append(snap.SchemaChangedTables, id)
	}
	slices.Sort(snap.SchemaChangedTables)
	t.put(keys.Snapshot(uint64(t.id)), encodeSnapshot(&snap))
	for _, id := range snap.SchemaChangedTables {
		if _, live := t.next.tables[id]; !live {
			continue
		}
		t.put(keys.SchemaVersion(uint64(id), uint64(t.id)), encodeSchemaVersion(t.schemaVersion))
		t.next.schemaVersions = append(t.next.schemaVersions, SchemaVersion{TableID: id, BeginSnapshot: t.id, SchemaVersion: t.schemaVersion})
	}
	t.finishNames()
	t.next.snap = snap
}

// Begin starts an explicit transaction at the current head: verbs apply to
// it as they are called, and Commit lands them as one snapshot. Unlike
// Commit's closures it is never re-run: if anything committed since Begin,
// Commit fails with CommitConflict (naming what it lost to when the
// changes truly overlap) and the caller decides whether to start over —
// DuckLake's own commit loop does exactly that.
func (c *Catalog) Begin(ctx context.Context) (*Transaction, error) {
	if c.readOnly {
		return nil, errorf(InvalidArgument, "the catalog was opened read-only; open it read-write to commit")
	}
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	sess, err := c.newSession(ctx)
	if err != nil {
		return nil, err
	}
	head, ok, err := readHead(ctx, sess)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	if err != nil {
		sess.release()
		return nil, err
	}
	base, err := c.baseFor(ctx, sess, head)
	if err != nil {
		sess.release()
		return nil, err
	}
	format, _ := c.Format()
	t := newTransaction(base, time.Now().UTC().Truncate(time.Microsecond), format)
	t.cat, t.sess, t.head = c, sess, head
	return t, nil
}

// Commit lands an explicit transaction (see Catalog.Begin) and returns the
// snapshot it minted, or the head it started from if it staged nothing.
func (t *Transaction) Commit(ctx context.Context) (SnapshotID, error) {
	if t.sess == nil {
		return 0, errorf(InvalidArgument, "Commit is for transactions from Catalog.Begin; Catalog.Commit commits closures itself")
	}
	defer t.Rollback()
	if !t.changed() {
		return t.base.snap.ID, nil
	}
	c := t.cat
	genesis := t.rows != nil && t.rows.genesis
	if genesis {
		c.fmtMu.Lock() // the commit sets the format of a lake it creates
		defer c.fmtMu.Unlock()
	} else {
		c.fmtMu.RLock() // the format the transaction staged for must hold until it lands
		defer c.fmtMu.RUnlock()
	}
	if c.format.Format != t.format && !genesis {
		return 0, errorf(CommitConflict, "the catalog's format was raised from %d to %d since this transaction began, so it staged the wrong index entries; begin again", t.format, c.format.Format)
	}
	var newHead Head
	if t.rows != nil {
		h, err := t.finishRows()
		if err != nil {
			return 0, err
		}
		newHead = h
	} else {
		t.finish()
		newHead = Head{SnapshotID: t.id, BatchSeq: t.head.BatchSeq + 1}
	}
	b := &preparedBatch{prepared: t.head, newHead: newHead,
		writes: batchWrites([]*Transaction{t}), changes: unionChanges([]*Transaction{t}), explicit: true}
	lost, err := t.sess.land(ctx, b)
	if err != nil {
		if !ClaimRefused(err) { // a peer's claim (claim.go) left the head as it was
			c.setHeadView(nil, b.newHead) // it may have landed
		}
		return 0, err
	}
	if lost != nil {
		c.setHeadView(lost.view, Head{}) // the next transaction's base, when advanced (nil: it loads)
		if genesis {
			return 0, errorf(CommitConflict, "conflict: another open created a lake in this store first; read it again and retry")
		}
		var e *Error
		if reason := t.conflictsWith(lost.theirs, lost.resolve); reason != "" {
			e = errorf(CommitConflict, "lost to a concurrent commit: %s", reason)
		} else {
			e = errorf(CommitConflict, "a concurrent commit changed state this one read or wrote (attempted snapshot %d); explicit transactions are never retried internally", t.id)
		}
		if lost.toClaim {
			e.Msg += " (a peer claimed the slot first: it lost a race and commits first)"
			e.claimed = true
		}
		return 0, e
	}
	if genesis {
		t.next.head = newHead
		c.mu.Lock()
		c.empty = false
		if c.clog == nil {
			c.format = currentFormat()
		}
		c.setHeadViewLocked(nil, newHead)
		c.mu.Unlock()
		return newHead.SnapshotID, nil
	}
	// The batch landed on t.head, so t.next, t's base with t's changes, is
	// the catalog at the new head whatever the cache held.
	t.next.head = b.newHead
	c.setHeadView(t.next, Head{})
	return b.newHead.SnapshotID, nil
}

// Rollback abandons an explicit transaction (safe after Commit).
func (t *Transaction) Rollback() {
	if t.sess != nil {
		t.sess.release()
		t.sess = nil
	}
}
