package core

// contention.go: a commit-log committer's contention policy.
//
// Every committer races the same next slot and the bucket picks one
// winner. Left alone, the winner of slot k is first to race k+1 (its view
// is current, while a loser must read the winners' slots, re-materialize
// and re-run its closure), so a committer writing in a tight loop wins
// slot after slot and its peers starve; and when several race one slot at
// once, every losing conditional PUT costs the store as much as the
// winning one. The policy takes turns instead, without talking to anyone:
//
//   - every slot records the committer (catalog open) that offered it, and
//     a committer remembers the peers whose slots it read lately (one of
//     the last turnSlots slots, read within turnMemory);
//   - the committers it knows, ordered by id, form a ring every process
//     computes alike, and the slots are dealt to it in runs of runSlots:
//     slot k is ring[k/runSlots mod n]'s, whose owner offers it at once;
//   - a committer whose next slot is `ahead` slots away sleeps through most
//     of them (the earlier turns' to take; a gap is how long a slot takes:
//     preparing a batch plus a conditional PUT, both measured here), then
//     looks at the slot it would race (one GET) every quarter gap, and
//     offers it once ahead gaps and a quarter have passed with the slot
//     still free (a peer whose turn it was has no commit). A look that
//     finds the slot taken is a lost race without a PUT: it hands over the
//     winners' batches, and the retry is prepared on the view advanced
//     over them (advance.go);
//   - a loser races again at once: the loss handed it every slot that
//     landed, so its retry is prepared against the tail (runBatch does not
//     back off after a lost slot);
//   - a committer that knows no peer offers at once: the uncontended
//     commit costs one conditional PUT, no GET, no LIST;
//   - a committer offering at once (alone, or at its own turn) leaves the
//     slot free for yieldGaps slot times now and then: after yieldFirst
//     such offers, then after twice as many each time, up to yieldMax,
//     counted again from yieldFirst whenever it sees a committer it did
//     not know (a sleep, no request). A committer nobody knows (a newcomer) gets no turn, and
//     racing at once it arrives a read too late for every slot a committer
//     in a tight loop offers: it must read each slot the loop lands before
//     it can offer the next, and the bucket decides in arrival order. In
//     the free slot times it lands one; the loop's next offer loses to it
//     and reads it, and they take turns from then on.
//
// A peer's claim at the tip of the view a batch was prepared against
// comes before all of this (claim.go): it refuses an explicit batch and
// holds any other offer until the claimant's slot lands.
//
// With every committer busy each gets a run per round, so a commit waits
// about one round at most; runs of two keep a committer's second commit
// free of a hand-over without stretching the round much. Different views
// of who is active cost only a collision, never correctness: the
// conditional PUT still picks exactly one winner. A committer is known to
// its peers only once they read a slot of its; one that has landed none
// lately (a newcomer, or one a tight-loop peer keeps beating) gets in at a
// hand-over between committers that take turns (it reads the slot before
// the turn as soon as the turn's owner does, and the collision is even),
// or in the slot time a committer alone leaves free; after impatience lost
// races per committer it knows it stops waiting for turns.

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

const (
	// turnSlots and turnMemory: a peer takes turns while one of its slots
	// is among the last turnSlots and was read within turnMemory.
	turnSlots  = 256
	turnMemory = time.Second
	// minTurnGap and maxTurnWait bound the gap between places and the
	// whole wait (the places waited).
	minTurnGap  = 200 * time.Microsecond
	maxTurnWait = 20 * time.Millisecond
	// runSlots: the ring deals slots in runs this long.
	runSlots = 2
	// impatience: a committer that lost more than impatience races per
	// committer it knows since its last win offers at once. Its peers may
	// not know it (it has landed nothing lately), so it cannot count on
	// their turns; racing at once it wins about every other collision.
	impatience = 3
	// yieldFirst, yieldMax and yieldGaps: a committer leaves its slot
	// free for yieldGaps slot times (a newcomer needs a read, its catch-up
	// and a PUT to take it) after yieldFirst offers made at once, then
	// after twice as many each time, up to every yieldMax (a committer long
	// alone pays about yieldGaps slot times in yieldMax). A committer seen
	// for the first time starts the count over.
	yieldFirst = 8
	yieldMax   = 256
	yieldGaps  = 4
)

// contention is what a committer knows about its peers.
type contention struct {
	mu    sync.Mutex
	id    uuid.UUID // this open's committer id
	peers map[uuid.UUID]peerSeen
	// losses counts this committer's lost races since its last win.
	losses int
	// atOnce counts the offers made at once since the last slot time left
	// free; yieldEvery is how many make the next one (0: yieldFirst).
	atOnce, yieldEvery int
	// Moving averages of a won offer (one conditional PUT) and of
	// preparing a batch (materializing the base, running the closures):
	// what a peer at an earlier place needs to land its slot.
	rtt, prep time.Duration
	// claimSlot and claimAt: the offered slot a peer's claim (claim.go)
	// last held, and when this open first saw that claim.
	claimSlot uint64
	claimAt   time.Time
}

type peerSeen struct {
	slot uint64
	at   time.Time
}

// ewma folds sample into the average avg (the first sample sets it).
func ewma(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return avg + (sample-avg)/8
}

// ident returns this committer's id, minted on first use.
func (k *contention) ident() uuid.UUID {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.id == uuid.Nil {
		k.id = uuid.New()
	}
	return k.id
}

// turn returns how many slots come before this committer's next turn
// (0: slot is its own) among the committers it knows at now, and the gap:
// how long a slot takes. The committers, ordered by id, form a ring every
// process computes alike; slots are dealt to it in runs of runSlots (slot
// k is ring[k/runSlots mod n]'s), so a committer lands a run back to back
// and hands over once per run. pause is how long a committer offering at
// once first leaves the slot free (see yieldFirst), usually 0.
func (k *contention) turn(slot uint64, now time.Time) (ahead int, gap, pause time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ring := []uuid.UUID{k.id}
	for id, p := range k.peers {
		if slot > p.slot+turnSlots || now.Sub(p.at) > turnMemory {
			delete(k.peers, id)
			continue
		}
		ring = append(ring, id)
	}
	if len(ring) == 1 {
		return 0, 0, k.pauseLocked()
	}
	if k.losses > impatience*len(ring) {
		return 0, 0, 0
	}
	slices.SortFunc(ring, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	n := uint64(len(ring))
	mine := uint64(slices.Index(ring, k.id))
	run := slot / runSlots
	owner := run % n
	if owner == mine {
		return 0, 0, k.pauseLocked()
	}
	// Our next run starts ((mine - owner) mod n) runs after this one's.
	next := (run + (mine+n-owner)%n) * runSlots
	gap = k.gapLocked()
	return int(min(next-slot, uint64(maxTurnWait/gap))), gap, 0
}

// gapLocked is how long a slot takes (a won offer and a preparation),
// bounded.
func (k *contention) gapLocked() time.Duration {
	return min(max(k.rtt+k.prep, minTurnGap), maxTurnWait)
}

// pauseLocked counts an offer made at once and returns how long to leave
// the slot free first: yieldGaps gaps (at most maxTurnWait) once the
// offers since the last pause pass yieldEvery (which then doubles, up to
// yieldMax), else 0. Before its first win a committer has no measure of a
// gap and does not pause.
func (k *contention) pauseLocked() time.Duration {
	if k.yieldEvery == 0 {
		k.yieldEvery = yieldFirst
	}
	k.atOnce++
	if k.atOnce <= k.yieldEvery || k.rtt == 0 {
		return 0
	}
	k.atOnce = 0
	k.yieldEvery = min(2*k.yieldEvery, yieldMax)
	return min(yieldGaps*k.gapLocked(), maxTurnWait)
}

// saw records the committers of batches read at at.
func (k *contention) saw(batches []LogBatch, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, b := range batches {
		if b.Committer == uuid.Nil || b.Committer == k.id {
			continue
		}
		if k.peers == nil {
			k.peers = map[uuid.UUID]peerSeen{}
		}

		p, ok := k.peers[b.Committer]
		if !ok {
			k.atOnce, k.yieldEvery = 0, yieldFirst // a committer not known before: count again
		}
		if !ok || b.Slot >= p.slot {
			k.peers[b.Committer] = peerSeen{slot: b.Slot, at: at}
		}
	}
}

// won records a won offer that took d.
func (k *contention) won(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()

	k.rtt = ewma(k.rtt, d)
	k.losses = 0
}

// lost records a lost race.
func (k *contention) lost() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.losses++
}

// prepared records how long preparing a batch took.
func (k *contention) prepared(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.prep = ewma(k.prep, d)
}

// claimSeen returns when this committer first saw the peer's claim on
// slot (the claim stands in the slot before it), now if not before.
func (k *contention) claimSeen(slot uint64, now time.Time) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.claimSlot != slot || k.claimAt.IsZero() {
		k.claimSlot, k.claimAt = slot, now
	}
	return k.claimAt
}
