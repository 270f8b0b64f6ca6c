package core

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// ringOf returns n committers that have each read a slot of every other.
func ringOf(n int, at uint64, now time.Time) []*contention {
	ks := make([]*contention, n)
	for i := range ks {
		ks[i] = &contention{}
		ks[i].ident()
		ks[i].won(time.Millisecond)
		ks[i].prepared(time.Millisecond)
	}
	for _, k := range ks {
		for j, p := range ks {
			if k != p {
				k.saw([]LogBatch{{Slot: at + uint64(j), Committer: p.id}}, now)
			}
		}
	}
	return ks
}

// With every committer knowing the same peers, exactly one of them may
// offer each slot at once, the slots are dealt in runs of runSlots, every
// committer gets the same share, and nobody waits more than a round.
func TestContentionTurnsAreDealtInRuns(t *testing.T) {
	now := time.Now()
	ks := ringOf(5, 100, now)
	got := map[uuid.UUID]int{}
	var prev uuid.UUID
	run := 0
	for slot := uint64(120); slot < 120+5*runSlots*4; slot++ {
		var first []uuid.UUID
		for _, k := range ks {
			ahead, gap, _ := k.turn(slot, now)
			switch {
			case ahead == 0:
				first = append(first, k.id)
			case gap <= 0 || ahead > (len(ks)-1)*runSlots:
				t.Fatalf("slot %d: ahead %d, gap %v", slot, ahead, gap)
			}
		}
		if len(first) != 1 {
			t.Fatalf("slot %d: %d committers may offer at once, want 1", slot, len(first))
		}
		got[first[0]]++
		if first[0] == prev {
			run++
		} else {
			if prev != uuid.Nil && run != runSlots {
				t.Fatalf("slot %d: a run of %d, want %d", slot, run, runSlots)
			}
			prev, run = first[0], 1
		}
	}
	for _, k := range ks {
		if got[k.id] != 4*runSlots {
			t.Fatalf("shares %v, want %d each", got, 4*runSlots)
		}
	}
}

// A committer alone, one whose peers were last seen long ago, and one
// that lost many races in a row all offer at once.
func TestContentionOffersAtOnce(t *testing.T) {
	now := time.Now()
	alone := &contention{}
	alone.ident()
	if ahead, _, _ := alone.turn(7, now); ahead != 0 {
		t.Fatalf("a committer with no peers waits %d slots", ahead)
	}
	ks := ringOf(3, 10, now)
	waiting := func(k *contention, at time.Time) bool {
		for slot := uint64(20); slot < 20+3*runSlots; slot++ {
			if ahead, _, _ := k.turn(slot, at); ahead > 0 {
				return true
			}
		}
		return false
	}
	if !waiting(ks[0], now) {
		t.Fatal("a committer with two peers never waits its turn")
	}
	if waiting(ks[0], now.Add(2*turnMemory)) {
		t.Fatal("peers not seen for longer than turnMemory still take turns")
	}
	ks = ringOf(3, 10, now)
	for range impatience*3 + 1 {
		ks[1].lost()
	}
	if waiting(ks[1], now) {
		t.Fatal("a committer that lost more than impatience races per committer still waits")
	}
	ks[1].won(time.Millisecond)
	if !waiting(ks[1], now) {
		t.Fatal("a win does not reset the losses")
	}
}

// A committer offering at once leaves a slot time free after yieldFirst
// such offers, then after twice as many each time up to yieldMax; a
// committer it sees for the first time starts the count over, and before
// its first win (no measure of a slot's time) it never pauses.
func TestContentionLeavesASlotFreeNowAndThen(t *testing.T) {
	now := time.Now()
	k := &contention{}
	k.ident()
	for slot := uint64(1); slot < 100; slot++ {
		if _, _, pause := k.turn(slot, now); pause != 0 {
			t.Fatalf("slot %d: a committer that never won pauses %v", slot, pause)
		}
	}
	k = &contention{}
	k.ident()
	k.won(2 * time.Millisecond)
	k.prepared(time.Millisecond)
	want := min(yieldGaps*3*time.Millisecond, maxTurnWait)
	pausesAt := func(k *contention, from uint64, offers int) []int {
		var at []int
		for i := 1; i <= offers; i++ {
			ahead, _, pause := k.turn(from+uint64(i), now)
			switch {
			case ahead != 0:
				t.Fatalf("offer %d: alone, yet %d slots ahead", i, ahead)
			case pause != 0 && pause != want:
				t.Fatalf("offer %d: pause %v, want %v", i, pause, want)
			case pause != 0:
				at = append(at, i)
			}
		}
		return at
	}
	// Pauses at offers 9, 26 (16 more), 59 (32), 124, 253, 510, then
	// every 257th.
	got := pausesAt(k, 0, 1100)
	wantAt := []int{9, 26, 59, 124, 253, 510, 767, 1024}
	if !slices.Equal(got, wantAt) {
		t.Fatalf("paused at offers %v, want %v", got, wantAt)
	}
	// A committer seen for the first time starts the count over.
	peer := &contention{}
	peer.ident()
	k = &contention{}
	k.ident()
	k.won(2 * time.Millisecond)
	k.prepared(time.Millisecond)
	pausesAt(k, 0, 20) // paused at 9; the next is due at 26
	k.saw([]LogBatch{{Slot: 100, Committer: peer.id}}, now)
	k.peers = map[uuid.UUID]peerSeen{} // alone again, the count restarted
	if got := pausesAt(k, 200, 10); !slices.Equal(got, []int{9}) {
		t.Fatalf("after a new peer, paused at offers %v, want [9]", got)
	}
	// In a ring, its offers at its own turns count the same way: 20 own
	// offers, one pause (at the 9th; the next is due at the 26th).
	ks := ringOf(2, 10, now)
	paused := 0
	for slot := uint64(20); slot < 60; slot++ {
		if ahead, _, pause := ks[0].turn(slot, now); ahead == 0 && pause > 0 {
			paused++
		}
	}
	if paused != 1 {
		t.Fatalf("in a ring of two, %d pauses in 20 own offers, want 1", paused)
	}
}
