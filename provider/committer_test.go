package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// TestOfferRace: 32 goroutines, each its own committer (its own process, in
// effect), race the same slot, round after round: exactly one wins, and
// every loser's Landed starts at the raced slot and holds the winner.
func TestOfferRace(t *testing.T) {
	forBackends(t, true, func(t *testing.T, st objstore.Store) {
		adopt(t, New(testOpts()), st, "lake", testBase, 0)
		const n = 32
		committers := make([]*Committer, n)
		for i := range committers {
			opts := testOpts()
			if i%2 == 0 {
				opts.Retention = time.Hour // the fast path: trust a recent tail
			}
			committers[i] = New(opts).Committer(st, "lake").(*Committer)
		}
		for slot := uint64(1); slot <= 3; slot++ {
			type result struct {
				txn uuid.UUID
				res core.OfferResult
				err error
			}
			results := make([]result, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, c := range committers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					b := batchFor(slot)
					<-start
					res, err := c.Offer(bg, b)
					results[i] = result{b.TxnID, res, err}
				}()
			}
			close(start)
			wg.Wait()
			var winner uuid.UUID
			wins := 0
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("slot %d, committer %d: %v", slot, i, r.err)
				}
				if r.res.Won {
					wins++
					winner = r.txn
				}
			}
			if wins != 1 {
				t.Fatalf("slot %d: %d winners, want exactly 1", slot, wins)
			}
			for i, r := range results {
				if r.res.Won {
					continue
				}
				if len(r.res.Landed) == 0 || r.res.Landed[0].Slot != slot {
					t.Fatalf("slot %d, loser %d: landed %+v does not start at the raced slot", slot, i, r.res.Landed)
				}
				if r.res.Landed[0].TxnID != winner {
					t.Fatalf("slot %d, loser %d: landed slot holds %s, the winner was %s", slot, i, r.res.Landed[0].TxnID, winner)
				}
				for j, lb := range r.res.Landed {
					if lb.Slot != slot+uint64(j) {
						t.Fatalf("slot %d, loser %d: landed slots not contiguous: %d at %d", slot, i, lb.Slot, j)
					}
				}
			}
		}
		if got := slotsIn(t, st, "lake"); fmt.Sprint(got) != fmt.Sprint(span(0, 3)) {
			t.Fatalf("slots %v", got)
		}
	})
}

// TestAdoptRace: many adopters with different bases race slot 0: one
// stamp holds it, and every adopter comes back with its base and stamp;
// the base copy agrees.
func TestAdoptRace(t *testing.T) {
	forBackends(t, true, func(t *testing.T, st objstore.Store) {
		const n = 16
		type result struct {
			txn   uuid.UUID
			held  core.LogBase
			stamp core.LogBatch
			won   bool
			err   error
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := New(testOpts()).Committer(st, "")
				b := core.LogBase{WalBase: 10 + uint64(i), SeqBase: 100 + uint64(i), OriginBatchSeq: uint64(i)}
				s := stamp()
				<-start
				held, hs, won, err := c.Adopt(bg, b, s)
				results[i] = result{s.TxnID, held, hs, won, err}
			}()
		}
		close(start)
		wg.Wait()
		var winner result
		wins := 0
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("adopter %d: %v", i, r.err)
			}
			if r.won {
				wins++
				winner = r
			}
		}
		if wins != 1 {
			t.Fatalf("%d adopters won slot 0", wins)
		}
		for i, r := range results {
			if r.held != winner.held || r.stamp.TxnID != winner.txn {
				t.Fatalf("adopter %d holds base %+v stamp %s; the winner's are %+v %s", i, r.held, r.stamp.TxnID, winner.held, winner.txn)
			}
		}
		// The base copy and a fresh committer agree.
		data, _, err := st.Get(bg, "log/base")
		if err != nil {
			t.Fatal(err)
		}
		b, txn, err := decodeBaseCopy(data)
		if err != nil || b != winner.held || txn != winner.txn {
			t.Fatalf("base copy %+v %s %v", b, txn, err)
		}
		got, ok, err := New(testOpts()).Committer(st, "").Base(bg)
		if err != nil || !ok || got != winner.held {
			t.Fatalf("Base: %+v %v %v", got, ok, err)
		}
		// A late adopter loses and learns the same.
		held, _, won, err := New(testOpts()).Committer(st, "").Adopt(bg, core.LogBase{WalBase: 1, SeqBase: 1}, stamp())
		if err != nil || won || held != winner.held {
			t.Fatalf("late adopt: %+v %v %v", held, won, err)
		}
	})
}

// TestBaseRepairsCopy: a crash between slot 0 and the base copy leaves
// the copy missing; Base derives it from slot 0 and writes it.
func TestBaseRepairsCopy(t *testing.T) {
	st := objstore.NewMemory(0)
	c := New(testOpts()).Committer(st, "p").(*Committer)
	if _, ok, err := c.Base(bg); err != nil || ok {
		t.Fatalf("unadopted Base: %v %v", ok, err)
	}
	s := stamp()
	if _, err := st.PutIfAbsent(bg, "p/log/00000000000000000000", encodeSlot(s, &testBase)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := New(testOpts()).Committer(st, "p").Base(bg)
	if err != nil || !ok || got != testBase {
		t.Fatalf("Base: %+v %v %v", got, ok, err)
	}
	data, _, err := st.Get(bg, "p/log/base")
	if err != nil {
		t.Fatal(err)
	}
	if b, txn, err := decodeBaseCopy(data); err != nil || b != testBase || txn != s.TxnID {
		t.Fatalf("repaired copy %+v %s %v", b, txn, err)
	}
}

// TestAmbiguousWrites: a lost ack resolves to won (by the retrying
// transport's read-back, or by the committer's own when the transport
// gives up); a failed write that a peer's landed before resolves to lost;
// a store that stays unreachable is OutcomeUnknown.
func TestAmbiguousWrites(t *testing.T) {
	fast := objstore.RetryOptions{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	t.Run("lost ack under the retrying transport", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		faulty := objstore.NewFaulty(mem)
		st := objstore.WithRetry(faulty, fast)
		c := adopt(t, New(testOpts()), st, "", testBase, 2)
		faulty.LoseAckNth(objstore.OpPutIfAbsent, 1)
		b := batchFor(3)
		res, err := c.Offer(bg, b)
		if err != nil || !res.Won {
			t.Fatalf("won %v err %v", res.Won, err)
		}
		if faulty.Injected() == 0 {
			t.Fatal("no fault was injected")
		}
		got, err := c.Read(bg, 3, 3)
		if err != nil || len(got) != 1 || got[0].TxnID != b.TxnID {
			t.Fatalf("read back %+v %v", got, err)
		}
	})
	t.Run("lost ack, transport gives up", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		faulty := objstore.NewFaulty(mem)
		one := fast
		one.MaxAttempts = 1
		st := objstore.WithRetry(faulty, one)
		c := adopt(t, New(testOpts()), st, "", testBase, 1)
		faulty.LoseAckNth(objstore.OpPutIfAbsent, 1)
		res, err := c.Offer(bg, batchFor(2))
		if err != nil || !res.Won {
			t.Fatalf("won %v err %v", res.Won, err)
		}
		// Adoption resolves the same way.
		mem2 := objstore.NewMemory(0)
		f2 := objstore.NewFaulty(mem2)
		f2.LoseAckNth(objstore.OpPutIfAbsent, 1)
		_, _, won, err := New(testOpts()).Committer(objstore.WithRetry(f2, one), "").Adopt(bg, testBase, stamp())
		if err != nil || !won {
			t.Fatalf("adopt after a lost ack: won %v err %v", won, err)
		}
	})
	t.Run("failed write, a peer won", func(t *testing.T) {
		for _, attempts := range []int{1, 4} {
			mem := objstore.NewMemory(0)
			peer := adopt(t, New(testOpts()), mem, "", testBase, 1)
			theirs := batchFor(2)
			faulty := objstore.NewFaulty(mem)
			hooked := &hookStore{Store: faulty, match: "/00000000000000000002", hook: func() {
				// The peer's write lands first; ours then fails without
				// landing, ambiguously.
				mustWin(t, peer, theirs)
				faulty.FailNth(objstore.OpPutIfAbsent, 1)
			}}
			o := fast
			o.MaxAttempts = attempts
			c := New(testOpts()).Committer(objstore.WithRetry(hooked, o), "").(*Committer)
			res, err := c.Offer(bg, batchFor(2))
			if err != nil || res.Won {
				t.Fatalf("attempts %d: won %v err %v", attempts, res.Won, err)
			}
			if len(res.Landed) != 1 || res.Landed[0].TxnID != theirs.TxnID || res.Landed[0].Slot != 2 {
				t.Fatalf("attempts %d: landed %+v", attempts, res.Landed)
			}
		}
	})
	t.Run("absent on read-back: outcome unknown, written once", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		adopt(t, New(testOpts()), mem, "", testBase, 2)
		faulty := objstore.NewFaulty(mem)
		puts := &putLog{Store: faulty}
		c := New(testOpts()).Committer(puts, "").(*Committer)
		// The write of slot 3 fails transiently without landing, on a store
		// without the retrying transport: the committer reads slot 3 back,
		// finds it absent, and says it cannot know; it does not write again
		// (retrying is the transport's).
		faulty.FailNth(objstore.OpPutIfAbsent, 1)
		_, err := c.Offer(bg, batchFor(3))
		if !errors.Is(err, core.OutcomeUnknown) || !strings.Contains(err.Error(), "absent") {
			t.Fatalf("err %v, want OutcomeUnknown for an absent slot", err)
		}
		slot3 := "00000000000000000003"
		if got := puts.puts(); fmt.Sprint(got) != fmt.Sprint([]string{slot3}) {
			t.Fatalf("put-if-absent calls %v, want slot 3 once", got)
		}
		if got := puts.gets(); !slices.ContainsFunc(got, func(k string) bool { return strings.HasSuffix(k, slot3) }) {
			t.Fatalf("gets %v: slot 3 was never read back", got)
		}
		if s := slotsIn(t, mem, ""); fmt.Sprint(s) != fmt.Sprint(span(0, 2)) {
			t.Fatalf("slots %v", s)
		}
		// Nothing is wrong with the committer afterwards: the next offer of
		// the same slot wins.
		mustWin(t, c, batchFor(3))
	})
	t.Run("one retry policy: the transport's tries, no more", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		adopt(t, New(testOpts()), mem, "", testBase, 1)
		puts := &putLog{Store: mem, fail: true}
		o := fast
		o.MaxAttempts = 8
		c := New(testOpts()).Committer(objstore.WithRetry(puts, o), "").(*Committer)
		_, err := c.Offer(bg, batchFor(2))
		if !errors.Is(err, core.OutcomeUnknown) {
			t.Fatalf("err %v, want OutcomeUnknown after the transport's tries", err)
		}
		// 8 tries of the transport, not 8 for each of several races.
		if n := len(puts.puts()); n != o.MaxAttempts {
			t.Fatalf("%d writes of slot 2, want the transport's %d", n, o.MaxAttempts)
		}
		if s := slotsIn(t, mem, ""); fmt.Sprint(s) != fmt.Sprint(span(0, 1)) {
			t.Fatalf("slots %v", s)
		}
	})
	t.Run("a definite failure is no ambiguity", func(t *testing.T) {
		for _, kind := range []error{objstore.ErrAccessDenied, objstore.ErrInvalid} {
			mem := objstore.NewMemory(0)
			adopt(t, New(testOpts()), mem, "", testBase, 1)
			puts := &putLog{Store: mem, failWith: kind}
			c := New(testOpts()).Committer(objstore.WithRetry(puts, fast), "").(*Committer)
			_, err := c.Offer(bg, batchFor(2))
			if core.KindOf(err) != core.Store || errors.Is(err, core.OutcomeUnknown) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("%v: err %v (kind %v), want a definite Store failure", kind, err, core.KindOf(err))
			}
			if n := len(puts.puts()); n != 1 {
				t.Fatalf("%v: %d writes of slot 2, want 1 (a definite failure is not retried)", kind, n)
			}
			if got := puts.gets(); slices.ContainsFunc(got, func(k string) bool { return strings.HasSuffix(k, "00000000000000000002") }) {
				t.Fatalf("%v: slot 2 was read back after a definite failure: %v", kind, got)
			}
			_, _, won, err := New(testOpts()).Committer(&putLog{Store: objstore.NewMemory(0), failWith: kind}, "").Adopt(bg, testBase, stamp())
			if won || core.KindOf(err) != core.Store {
				t.Fatalf("%v: adopt: won %v err %v, want a definite Store failure", kind, won, err)
			}
		}
	})
	t.Run("adoption: absent on read-back, outcome unknown", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		faulty := objstore.NewFaulty(mem)
		puts := &putLog{Store: faulty}
		faulty.FailNth(objstore.OpPutIfAbsent, 1)
		_, _, won, err := New(testOpts()).Committer(puts, "").Adopt(bg, testBase, stamp())
		if won || !errors.Is(err, core.OutcomeUnknown) {
			t.Fatalf("adopt: won %v err %v, want OutcomeUnknown", won, err)
		}
		if n := len(puts.puts()); n != 1 {
			t.Fatalf("put-if-absent calls %v, want slot 0 once", puts.puts())
		}
		if _, ok, err := New(testOpts()).Committer(mem, "").Base(bg); err != nil || ok {
			t.Fatalf("a base after a failed adoption: %v %v", ok, err)
		}
	})
	t.Run("unresolvable", func(t *testing.T) {
		mem := objstore.NewMemory(0)
		adopt(t, New(testOpts()), mem, "", testBase, 1)
		c := New(Options{}).Committer(failingStore{mem}, "").(*Committer)
		c.l.observeTail(1, time.Now()) // skip the tail lookup: go straight to the write
		_, err := c.Offer(bg, batchFor(2))
		if !errors.Is(err, core.OutcomeUnknown) || core.KindOf(err) != core.OutcomeUnknown {
			t.Fatalf("err %v, want OutcomeUnknown", err)
		}
		var ce *core.Error
		if !errors.As(err, &ce) {
			t.Fatalf("not a *core.Error: %T", err)
		}
	})
}

// TestOfferRefusals: slot 0 goes through Adopt, a slot past the tail would
// leave a hole, an unadopted log takes no offer.
func TestOfferRefusals(t *testing.T) {
	st := objstore.NewMemory(0)
	c := New(testOpts()).Committer(st, "").(*Committer)
	if _, err := c.Offer(bg, batchFor(1)); core.KindOf(err) != core.NotFound || !errors.Is(err, ErrNotAdopted) {
		t.Fatalf("offer on an unadopted log: %v", err)
	}
	adopt(t, New(testOpts()), st, "", testBase, 2)
	if _, err := c.Offer(bg, batchFor(4)); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("offer past the tail: %v", err)
	}
	if _, err := c.Offer(bg, core.LogBatch{TxnID: uuid.New()}); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("offer of slot 0: %v", err)
	}
	b := batchFor(3)
	b.TxnID = uuid.Nil
	if _, err := c.Offer(bg, b); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("offer without a txn id: %v", err)
	}
	if got := slotsIn(t, st, ""); fmt.Sprint(got) != fmt.Sprint(span(0, 2)) {
		t.Fatalf("refused offers wrote something: %v", got)
	}
}

// TestRequestCosts: the cursor makes an idle committer free, a tail lookup
// one LIST, and an uncontended commit after our own exactly one PUT.
func TestRequestCosts(t *testing.T) {
	mem := objstore.NewMemory(0)
	adopt(t, New(testOpts()), mem, "", testBase, 3)
	cs := objstore.WithCounting(mem)
	var prev objstore.Counts
	reset := func() { prev = cs.Snapshot() }
	counts := func() objstore.Counts { return cs.Snapshot().Sub(prev) }
	c := New(Options{}).Committer(cs, "").(*Committer)
	if tail, ok, err := c.Tail(bg); err != nil || !ok || tail != 3 {
		t.Fatalf("tail %d %v %v", tail, ok, err)
	}
	if got := counts(); got.Of(objstore.OpList) != 1 || got.Reads() != 0 || got.Writes() != 0 {
		t.Fatalf("cold tail lookup: %+v", got.Requests)
	}
	time.Sleep(5 * time.Millisecond) // idle: nothing happens
	if got := counts(); got.Of(objstore.OpList) != 1 {
		t.Fatalf("idle committer made requests: %+v", got.Requests)
	}
	reset()
	if _, _, err := c.Base(bg); err != nil { // cache the base
		t.Fatal(err)
	}
	mustWin(t, c, batchFor(4))
	reset()
	mustWin(t, c, batchFor(5))
	if got := counts(); got.Of(objstore.OpPutIfAbsent) != 1 || got.Reads() != 0 || got.Of(objstore.OpList) != 0 || got.Writes() != 1 {
		t.Fatalf("uncontended commit: %+v, want one PUT", got.Requests)
	}
	// A tail lookup after our own win: one LIST page from the cursor.
	reset()
	if tail, _, _ := c.Tail(bg); tail != 5 {
		t.Fatalf("tail %d", tail)
	}
	if got := counts(); got.Of(objstore.OpList) != 1 || got.Reads() != 0 {
		t.Fatalf("tail lookup: %+v", got.Requests)
	}
	// The session's reader informs its committer: a peer's slot served by
	// the reader needs no lookup before the next race.
	peer := New(testOpts()).Committer(mem, "").(*Committer)
	mustWin(t, peer, batchFor(6))
	p := New(Options{})
	rc := p.Committer(cs, "").(*Committer)
	it, err := p.Reader(cs, "").Iterator(bg, slate.WalRange{Start: testBase.WalID(6)})
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := it.Next(bg); err != nil || rows == nil || rows.LastConsumedWalID != testBase.WalID(6) {
		t.Fatalf("reader: %+v %v", rows, err)
	}
	if rows, err := it.Next(bg); err != nil || rows != nil {
		t.Fatalf("reader past the tail: %+v %v", rows, err)
	}
	reset()
	mustWin(t, rc, batchFor(7))
	if got := counts(); got.Of(objstore.OpPutIfAbsent) != 1 || got.Reads() != 0 || got.Of(objstore.OpList) != 0 {
		t.Fatalf("commit after the session's reader served the tail: %+v, want one PUT", got.Requests)
	}
	// ... and the reader is handed the won slot: serving it, and finding
	// the tail after it, cost nothing.
	reset()
	if rows, err := it.Next(bg); err != nil || rows == nil || rows.LastConsumedWalID != testBase.WalID(7) || len(rows.Rows) != 2 {
		t.Fatalf("reader after our win: %+v %v", rows, err)
	}
	if rows, err := it.Next(bg); err != nil || rows != nil {
		t.Fatalf("reader past our win: %+v %v", rows, err)
	}
	if got := counts(); got.Total() != 0 {
		t.Fatalf("serving our own win: %+v, want no request", got.Requests)
	}
	// The next look for more is one LIST.
	if rows, err := it.Next(bg); err != nil || rows != nil {
		t.Fatalf("reader at the tail: %+v %v", rows, err)
	}
	if got := counts(); got.Total() != 1 || got.Of(objstore.OpList) != 1 {
		t.Fatalf("tail poll: %+v, want one LIST", got.Requests)
	}
}

// TestHoleVersusTruncation: a slot deleted by hand above the floor is a
// hole (corruption, never an end of log); slots the collector truncated
// below the floor are ErrWalTruncated.
func TestHoleVersusTruncation(t *testing.T) {
	forBackends(t, true, func(t *testing.T, st objstore.Store) {
		p := New(testOpts())
		c := adopt(t, p, st, "db", testBase, 6)
		r := New(testOpts()).Reader(st, "db")
		drain := func(start, end uint64) error {
			it, err := r.Iterator(bg, slate.WalRange{Start: start, End: end})
			if err != nil {
				return err
			}
			for {
				rows, err := it.Next(bg)
				if err != nil || rows == nil {
					return err
				}
			}
		}
		if err := st.Delete(bg, "db/log/00000000000000000003"); err != nil {
			t.Fatal(err)
		}
		for _, from := range []uint64{0, 1, 3} {
			if _, err := New(testOpts()).Committer(st, "db").Read(bg, from, 0); !errors.Is(err, core.Corruption) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read from %d over a hole: %v", from, err)
			}
		}
		for _, rng := range [][2]uint64{{1, 0}, {testBase.WalID(2), 0}, {testBase.WalID(1), testBase.WalID(5)}} {
			if err := drain(rng[0], rng[1]); !errors.Is(err, slate.ErrCorrupt) || errors.Is(err, slate.ErrWalTruncated) {
				t.Fatalf("iterator %v over a hole: %v", rng, err)
			}
		}
		// Put it back; now truncate through the collector: the floor moves
		// to the replay point (slot 4 here) before 0..3 go.
		if _, err := st.Put(bg, "db/log/00000000000000000003", encodeSlot(batchFor(3), nil)); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Read(bg, 0, 0); err != nil || len(got) != 7 {
			t.Fatalf("read after the repair: %d slots %v", len(got), err)
		}
		deleted, err := p.GC(st, "db").Collect(bg, []slate.WalRange{{Start: testBase.WalID(5)}}, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(deleted) != fmt.Sprint([]uint64{100, 101, 102, 103}) {
			t.Fatalf("deleted %v", deleted)
		}
		if got := slotsIn(t, st, "db"); fmt.Sprint(got) != fmt.Sprint(span(4, 6)) {
			t.Fatalf("slots after truncation %v", got)
		}
		fresh := New(testOpts()).Committer(st, "db")
		if _, err := fresh.Read(bg, 1, 0); !errors.Is(err, slate.ErrWalTruncated) || core.KindOf(err) != core.SnapshotExpired {
			t.Fatalf("Read below the floor: %v", err)
		}
		if got, err := fresh.Read(bg, 4, 0); err != nil || len(got) != 3 || got[0].Slot != 4 {
			t.Fatalf("Read from the floor: %d slots %v", len(got), err)
		}
		for _, rng := range [][2]uint64{{testBase.WalID(1), 0}, {testBase.WalID(2), testBase.WalID(6)}} {
			if err := drain(rng[0], rng[1]); !errors.Is(err, slate.ErrWalTruncated) {
				t.Fatalf("iterator %v below the floor: %v", rng, err)
			}
		}
		if err := drain(testBase.WalID(4), 0); err != nil {
			t.Fatalf("iterator from the floor: %v", err)
		}
		// A committer still at slot 2 loses slot 3 (truncated): its Landed
		// starts at the floor.
		stale := New(testOpts()).Committer(st, "db").(*Committer)
		stale.l.observeTail(2, time.Now().Add(-time.Hour))
		res, err := stale.Offer(bg, batchFor(3))
		if err != nil || res.Won || len(res.Landed) != 3 || res.Landed[0].Slot != 4 {
			t.Fatalf("stale offer: %+v %v", res, err)
		}
		// The base outlives slot 0.
		if b, ok, err := New(testOpts()).Committer(st, "db").Base(bg); err != nil || !ok || b != testBase {
			t.Fatalf("base after truncating slot 0: %+v %v %v", b, ok, err)
		}
	})
}

// TestZombieSlot: a committer stalled long enough for its slot to be taken,
// folded and truncated re-creates it below the floor with its
// create-if-absent; the floor check after the write catches it, deletes it
// and reports the race lost.
func TestZombieSlot(t *testing.T) {
	mem := objstore.NewMemory(0)
	p := New(testOpts())
	peer := adopt(t, p, mem, "", testBase, 2)
	hooked := &hookStore{Store: mem, match: "/00000000000000000003", hook: func() {
		// While our PUT of slot 3 is "in flight": a peer lands 3..5, the
		// store folds through 4 and truncates below it.
		for k := uint64(3); k <= 5; k++ {
			mustWin(t, peer, batchFor(k))
		}
		if _, err := p.GC(mem, "").Collect(bg, []slate.WalRange{{Start: testBase.WalID(5)}}, 0, false); err != nil {
			t.Error(err)
		}
	}}
	c := New(testOpts()).Committer(hooked, "").(*Committer)
	res, err := c.Offer(bg, batchFor(3))
	if err != nil || res.Won {
		t.Fatalf("won %v err %v", res.Won, err)
	}
	if len(res.Landed) != 2 || res.Landed[0].Slot != 4 {
		t.Fatalf("landed %+v", res.Landed)
	}
	if got := slotsIn(t, mem, ""); fmt.Sprint(got) != "[4 5]" {
		t.Fatalf("slots %v: the zombie was not removed", got)
	}
}

// TestCrashSweep: a store that freezes after k writes (a process dying
// mid-protocol), k swept over adoption and three commits. Afterwards a fresh
// committer on the store finds a consistent log: the base (repaired if its
// copy never landed), no hole, every acknowledged win present with its txn
// id, and nothing reported won that is not there.
func TestCrashSweep(t *testing.T) {
	one := objstore.RetryOptions{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	for k := 0; k < 10; k++ {
		mem := objstore.NewMemory(0)
		faulty := objstore.NewFaulty(mem)
		faulty.FreezeAfter(k)
		c := New(testOpts()).Committer(objstore.WithRetry(faulty, one), "x")
		won := map[uint64]uuid.UUID{}
		s := stamp()
		if _, _, w, err := c.Adopt(bg, testBase, s); err == nil && w {
			won[0] = s.TxnID
			for slot := uint64(1); slot <= 3; slot++ {
				b := batchFor(slot)
				res, err := c.Offer(bg, b)
				if err != nil {
					break
				}
				if res.Won {
					won[slot] = b.TxnID
				}
			}
		}
		rc := New(testOpts()).Committer(mem, "x")
		base, ok, err := rc.Base(bg)
		if err != nil {
			t.Fatalf("k=%d: base: %v", k, err)
		}
		if !ok {
			if len(won) > 0 {
				t.Fatalf("k=%d: won %v but the log is not adopted", k, won)
			}
			continue
		}
		if base != testBase {
			t.Fatalf("k=%d: base %+v", k, base)
		}
		got, err := rc.Read(bg, 0, 0)
		if err != nil {
			t.Fatalf("k=%d: read: %v", k, err)
		}
		for i, b := range got {
			if b.Slot != uint64(i) {
				t.Fatalf("k=%d: slot %d at %d", k, b.Slot, i)
			}
		}
		for slot, txn := range won {
			if slot >= uint64(len(got)) || got[slot].TxnID != txn {
				t.Fatalf("k=%d: acknowledged slot %d is not in the log", k, slot)
			}
		}
	}
}

// TestSessions: Session hands out a fresh provider with the same options;
// what one session learns is not another's.
func TestSessions(t *testing.T) {
	p := New(Options{FlushSlots: 7, Retention: time.Minute})
	s1, s2 := p.Session().(*Provider), p.Session().(*Provider)
	if s1 == p || s1 == s2 || s1.Options().FlushSlots != 7 || s1.Options().Retention != time.Minute {
		t.Fatalf("sessions %p %p of %p, options %+v", s1, s2, p, s1.Options())
	}
	st := objstore.NewMemory(0)
	if s1.state(st, "a") != s1.state(st, "a/") || s1.state(st, "a") == s1.state(st, "b") || s1.state(st, "a") == s2.state(st, "a") {
		t.Fatal("state sharing is wrong")
	}
	if s1.state(st, "a") == s1.state(objstore.NewMemory(0), "a") {
		t.Fatal("two store handles share state")
	}
}

// TestBoundedReadIsNoTailObservation: reading a range that ends below the
// tail teaches nothing about the tail; the next race looks before it
// writes.
func TestBoundedReadIsNoTailObservation(t *testing.T) {
	mem := objstore.NewMemory(0) // one page holds the whole log
	adopt(t, New(testOpts()), mem, "", testBase, 5)
	cs := objstore.WithCounting(mem)
	c := New(Options{Retention: time.Hour}).Committer(cs, "").(*Committer)
	got, err := c.Read(bg, 0, 2)
	if err != nil || len(got) != 3 {
		t.Fatalf("read: %d %v", len(got), err)
	}
	before := cs.Snapshot()
	res, err := c.Offer(bg, batchFor(3))
	if err != nil || res.Won || len(res.Landed) != 3 {
		t.Fatalf("offer: %+v %v", res, err)
	}
	if n := cs.Snapshot().Sub(before).Of(objstore.OpPutIfAbsent); n != 0 {
		t.Fatalf("raced a slot known taken (%d PUTs)", n)
	}
}

// TestZombieAdoption: an adopter arriving after slot 0 was truncated
// re-creates it; the base copy and the floor expose the zombie, which is
// deleted, and the adopter gets the log's real base.
func TestZombieAdoption(t *testing.T) {
	mem := objstore.NewMemory(0)
	p := New(testOpts())
	adopt(t, p, mem, "", testBase, 3)
	if _, err := p.GC(mem, "").Collect(bg, []slate.WalRange{{Start: testBase.WalID(3)}}, 0, false); err != nil {
		t.Fatal(err)
	}
	if got := slotsIn(t, mem, ""); fmt.Sprint(got) != "[2 3]" {
		t.Fatalf("slots %v", got)
	}
	held, _, won, err := New(testOpts()).Committer(mem, "").Adopt(bg, core.LogBase{WalBase: 7, SeqBase: 7}, stamp())
	if err != nil || won || held != testBase {
		t.Fatalf("late adopter: %+v won %v %v", held, won, err)
	}
	if got := slotsIn(t, mem, ""); fmt.Sprint(got) != "[2 3]" {
		t.Fatalf("the zombie slot 0 stayed: %v", got)
	}
}

// putLog records the keys of put-if-absent calls and gets through it; with
// fail, every put-if-absent fails transiently without landing.
type putLog struct {
	objstore.Store
	fail     bool  // every put-if-absent fails transiently
	failWith error // every put-if-absent fails with this kind (when set)
	mu       sync.Mutex
	put      []string
	get      []string
}

func (p *putLog) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	p.mu.Lock()
	p.put = append(p.put, key)
	p.mu.Unlock()
	if p.fail {
		return "", &objstore.Error{Op: "put-if-absent", Key: key, Kind: objstore.ErrTransient, Msg: "test: write not landed"}
	}
	if p.failWith != nil {
		return "", &objstore.Error{Op: "put-if-absent", Key: key, Kind: p.failWith, Msg: "test: refused"}
	}
	return p.Store.PutIfAbsent(ctx, key, data)
}

func (p *putLog) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	p.mu.Lock()
	p.get = append(p.get, key)
	p.mu.Unlock()
	return p.Store.Get(ctx, key)
}

func (p *putLog) puts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, k := range p.put {
		out = append(out, k[strings.LastIndex(k, "/")+1:])
	}
	return out
}

func (p *putLog) gets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.get...)
}

// TestProbeAndLossReadWithoutListing: a probe reads the landed slots
// from the probed one on with one GET each plus one that misses, and no
// LIST; a miss just past a slot known present is a tail observation (the
// next offer is one PUT); a lost race reads the winners the same way.
func TestProbeAndLossReadWithoutListing(t *testing.T) {
	mem := objstore.NewMemory(0)
	peer := adopt(t, New(testOpts()), mem, "", testBase, 3)
	cs := objstore.WithCounting(mem)
	var prev objstore.Counts
	reset := func() { prev = cs.Snapshot() }
	counts := func() objstore.Counts { return cs.Snapshot().Sub(prev) }
	c := New(Options{}).Committer(cs, "").(*Committer)
	if _, _, err := c.Base(bg); err != nil {
		t.Fatal(err)
	}
	reset()
	landed, err := c.Probe(bg, 2)
	if err != nil || len(landed) != 2 || landed[0].Slot != 2 || landed[0].ChangesMade != "slot:2" || landed[1].Slot != 3 {
		t.Fatalf("probe of slot 2 (slots 2 and 3 landed): %+v %v", landed, err)
	}
	if got := counts(); got.Reads() != 3 || got.Of(objstore.OpList) != 0 {
		t.Fatalf("probe: %+v, want three GETs (two landed, one miss), no LIST", got.Requests)
	}
	// The miss was a tail observation: offering the free slot is one PUT.
	reset()
	if landed, err := c.Probe(bg, 4); err != nil || len(landed) != 0 {
		t.Fatalf("probe of a free slot: %+v, %v", landed, err)
	}
	mustWin(t, c, batchFor(4))
	if got := counts(); got.Reads() != 1 || got.Of(objstore.OpList) != 0 || got.Of(objstore.OpPutIfAbsent) != 1 {
		t.Fatalf("probe miss, then the offer: %+v, want one GET and one PUT", got.Requests)
	}
	// Peers take 5, 6 and 7; our offer of 5 loses and reads them forward.
	for k := uint64(5); k <= 7; k++ {
		mustWin(t, peer, batchFor(k))
	}
	reset()
	res, err := c.Offer(bg, batchFor(5))
	if err != nil || res.Won || len(res.Landed) != 3 || res.Landed[0].Slot != 5 || res.Landed[2].Slot != 7 {
		t.Fatalf("lost offer: %+v %v", res, err)
	}
	if got := counts(); got.Of(objstore.OpList) != 0 || got.Reads() != 4 || got.Of(objstore.OpPutIfAbsent) != 1 {
		t.Fatalf("lost race: %+v, want one PUT, four GETs (three winners, one miss), no LIST", got.Requests)
	}
	// The miss was a tail observation: the next offer is one PUT.
	reset()
	mustWin(t, c, batchFor(8))
	if got := counts(); got.Reads() != 0 || got.Of(objstore.OpList) != 0 || got.Of(objstore.OpPutIfAbsent) != 1 {
		t.Fatalf("offer after the loss: %+v, want one PUT", got.Requests)
	}
}
