package core

// claim.go: a commit-log committer's claim of the next slot.
//
// A DuckLake transaction's conflict window is the whole transaction: from
// the head it reads to its slot's conditional PUT, tens of milliseconds of
// DuckDB planning and running DuckLake's metadata SQL. A peer landing
// commits more often than that window is long leaves the slower committer
// no gap: each of its retries loses, and DuckLake gives up after its last
// one (measured: a peer committing every ~50 ms against a 30-65 ms window
// on a loaded machine lost ten retries in a row). Taking turns at the log
// (contention.go) does not help, since the window opens long before the
// commit reaches the log.
//
// So a committer that keeps losing (the storage extension: after three
// refusals in a row) claims the slot after the tip before it reads the
// lake again: Catalog.Claim lands a head-preserving slot (the claim
// slot) whose head stamp carries the claimant's committer id and a hold,
// and returns the head after it, which the claimant's retry prepares
// against. Before offering a slot, every committer reads the head stamp
// of the view its batch was prepared against; when that is a peer's claim
// first seen less than its hold ago:
//   - an explicit transaction's batch (every DuckLake commit) fails at once
//     with CommitConflict, writing nothing: the claimant's commit takes
//     the slot it would race, so it would lose anyway;
//   - any other batch (a claim, a closure batch of Catalog.Commit) holds
//     its offer, looking at the slot (one GET) every few milliseconds,
//     until the slot lands (a lost race: the claimant's commit) or the
//     hold has passed.
//
// The slot after the claim stamps a head without a claim, so a claim binds
// only while it is the tip: nothing is released, and a claimant that dies
// or commits nothing holds its peers for the hold at most, measured by each
// peer's own clock from its first offer prepared on the claim (no clocks
// are compared). Claims queue: a loser that finds a peer's claim at the tip
// holds its own claim until the peer's commit lands.
//
// The refusals a claim causes while it is the only slot landed since the
// refused batch's head (an explicit batch prepared on it, one whose slot
// the claim slot alone took, a rows transaction whose head moved by the
// claim slot alone) are marked; a batch that finds the claimant's commit
// landed too lost to that commit, as it would have without the claim: ClaimRefused tells them from races lost,
// so that a peer does not count them towards a claim of its own (a queue
// of claims, each refusing every peer in flight, halved the throughput of
// 8 busy DuckDB processes).
//
// A claim costs one more conditional PUT, paid only after a lost race; the
// uncontended commit is unchanged (one PUT, no GET, no LIST), and peers
// learn of a claim from the head they read anyway.

import (
	"bytes"
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core/keys"
)

const (
	// minClaimHold and maxClaimHold bound a claim's hold (Claim's argument
	// and what a peer honours, whatever a stamp says).
	minClaimHold = 10 * time.Millisecond
	maxClaimHold = 5 * time.Second
	// claimAttempts: a claim lost to peers this many times is given up
	// (the commit goes ahead unfavoured).
	claimAttempts = 4
	// firstClaimLook and maxClaimLook: an offer waiting on a claim first looks at its
	// slot after firstClaimLook, then twice as long each time, up to
	// maxClaimLook.
	firstClaimLook = 2 * time.Millisecond
	maxClaimLook   = 25 * time.Millisecond
)

// slotClaim is a claim of the slot after the one whose head stamp carries
// it.
type slotClaim struct {
	Committer uuid.UUID
	Hold      time.Duration
}

// headStampClaim is headStamp with a claim (nil: none).
func headStampClaim(h Head, claim *slotClaim) (key, value []byte) {
	return keys.Head(), encodeHead(&headRecord{SnapshotID: h.SnapshotID, BatchSeq: h.BatchSeq, Claim: claim})
}

// readHeadClaim returns the claim the head stamp carries, if any.
func readHeadClaim(ctx context.Context, kv kvReader) (*slotClaim, error) {
	v, ok, err := kv.Get(ctx, keys.Head())
	if err != nil || !ok {
		return nil, storeErr(err, "reading the catalog head")
	}
	h, err := decodeHead(v)
	if err != nil {
		return nil, err
	}
	return h.Claim, nil
}

// Claim favours this committer's next commit over its peers' (see the
// comment at the top of claim.go): it lands a claim slot at the tip of the
// log, holding peers' offers for up to hold (bounded to 10 ms..5 s) while
// this open prepares a commit against the head after it, and returns that
// head with claimed true: the head's batch counter one past the head the
// claim was prepared against, whose snapshot it keeps. A claim lost to
// peers claimAttempts times is given up, and Claim returns the head it last
// read, claimed false, no error: the commit is only not favoured. Only a
// commit-log committer holding a lake claims: on any other handle Claim
// writes nothing (and returns the zero head while there is no lake).
func (c *Catalog) Claim(ctx context.Context, hold time.Duration) (head Head, claimed bool, err error) {
	l := c.clog
	if l == nil || c.readOnly {
		head, err = c.Head(ctx)
		return head, false, err
	}
	if !c.HasLake() {
		// The first commit creates the lake: there is no head to claim on.
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return Head{}, false, errorf(InvalidArgument, "the catalog handle is closed")
		}
		return Head{}, false, nil
	}
	if err := c.checkOpen(); err != nil {
		return Head{}, false, err
	}
	claim := &slotClaim{Committer: l.race.ident(), Hold: min(max(hold, minClaimHold), maxClaimHold)}
	for attempt := 1; ; attempt++ {
		if err := l.tailIfBehind(ctx); err != nil {
			return Head{}, false, err
		}
		head, won, err := c.offerClaim(ctx, claim)
		if err != nil || won || attempt == claimAttempts {
			return head, won, err
		}
	}
}

// offerClaim races one claim slot on the head this open reads now; it
// returns the head after it when won, else the head it read.
func (c *Catalog) offerClaim(ctx context.Context, claim *slotClaim) (Head, bool, error) {
	sess, err := c.newSession(ctx)
	if err != nil {
		return Head{}, false, err
	}
	defer sess.release()
	head, ok, err := readHead(ctx, sess)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	if err != nil {
		return Head{}, false, err
	}
	b := &preparedBatch{prepared: head, newHead: Head{SnapshotID: head.SnapshotID, BatchSeq: head.BatchSeq + 1}, claim: claim}
	lost, err := sess.land(ctx, b)
	if err != nil {
		c.setHeadView(nil, b.newHead) // it may have landed
		return Head{}, false, err
	}
	if lost != nil {
		c.setHeadView(lost.view, Head{})
		return head, false, nil
	}
	// The claim changed nothing but the head: the view cached at the head
	// it was prepared against serves the new one.
	c.mu.Lock()
	if hv := c.headView; hv != nil && hv.head == head {
		c.setHeadViewLocked(hv.restamped(b.newHead), Head{})
	} else {
		c.setHeadViewLocked(nil, b.newHead)
	}
	c.mu.Unlock()
	return b.newHead, true, nil
}

// lostToClaimAlone reports whether the slots a batch lost to are a peer's
// claim slot and nothing after it.
func (l *commitLogOpen) lostToClaimAlone(landed []LogBatch) bool {
	return len(landed) == 1 && l.peersClaim(landed[0])
}

// peersClaim reports whether lb is a peer's claim slot.
func (l *commitLogOpen) peersClaim(lb LogBatch) bool {
	for _, w := range lb.Writes {
		if w.Delete || !bytes.Equal(w.Key, keys.Head()) {
			continue
		}
		h, err := decodeHead(w.Value)
		return err == nil && h.Claim != nil && h.Claim.Committer != l.race.ident()
	}
	return false
}

// claimedBy reports whether the head stamp kv holds is a peer's claim.
func (l *commitLogOpen) claimedBy(ctx context.Context, kv kvReader) bool {
	claim, err := readHeadClaim(ctx, kv)
	return err == nil && claim != nil && claim.Committer != l.race.ident()
}

// awaitClaim applies a peer's claim to an offer of slot (see the comment
// at the top of claim.go), given the view the batch was prepared against.
// It returns the slots that landed from slot on while the offer waited
// (a lost race), or none: offer now. An explicit batch facing a live claim
// fails with CommitConflict instead.
func (l *commitLogOpen) awaitClaim(ctx context.Context, view kvReader, slot uint64, explicit bool) ([]LogBatch, error) {
	claim, err := readHeadClaim(ctx, view)
	if err != nil || claim == nil || claim.Committer == l.race.ident() {
		return nil, err
	}
	deadline := l.race.claimSeen(slot, time.Now()).Add(claim.Hold)
	if explicit && time.Now().Before(deadline) {
		// The retry's read of the head tails the log first: the
		// claimant's commit may have landed since this view was pinned.
		l.behind.Store(true)
		e := errorf(CommitConflict, "conflict: another committer claimed slot %d (it lost a race and commits first); read the lake again and retry", slot)
		e.claimed = true
		return nil, e
	}
	look := firstClaimLook
	for {
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, nil
		}
		if err := sleepCtx(ctx, min(wait, look)); err != nil {
			return nil, wrapf(Interrupted, err, "holding slot %d for a peer's claim", slot)
		}
		landed, err := l.probeLanded(ctx, slot)
		if err != nil || len(landed) > 0 {
			return landed, err
		}
		look = min(2*look, maxClaimLook)
	}
}
