package provider

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// skippingStore hides the objects whose keys end in one of hide from
// listings (not from reads), as a directory walk or an S3 listing that is
// not a snapshot can skip an object created while it runs and still return
// a later one.
type skippingStore struct {
	objstore.Store
	mu   sync.Mutex
	hide []string
}

func (s *skippingStore) setHidden(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hide = keys
}

func (s *skippingStore) ListPage(ctx context.Context, prefix, startAfter string) ([]objstore.ObjectInfo, bool, error) {
	page, more, err := s.Store.ListPage(ctx, prefix, startAfter)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := page[:0:0]
	for _, o := range page {
		hidden := false
		for _, h := range s.hide {
			hidden = hidden || strings.HasSuffix(o.Key, h)
		}
		if !hidden {
			out = append(out, o)
		}
	}
	return out, more, err
}

// A slot a listing skips while it shows a later one is read directly: the
// log has no hole, and nothing reports corruption (the contended-commit
// "slot 582 is missing ... (slot 583 is present): a hole in the log" of
// versitygw's posix backend). Only a slot the direct read cannot find is.
func TestListingThatSkipsASlotIsNotAHole(t *testing.T) {
	forBackends(t, false, func(t *testing.T, inner objstore.Store) {
		st := &skippingStore{Store: inner}
		adopt(t, New(testOpts()), st, "db", testBase, 6)
		st.setHidden("/00000000000000000003", "/00000000000000000006")

		got, err := New(testOpts()).Committer(st, "db").Read(bg, 0, 0)
		if err != nil || len(got) != 6 {
			// Slot 6, the tail, is skipped too: a listing can miss the
			// tail (a later read finds it); what it shows below must be whole.
			t.Fatalf("Read over a listing that skips slot 3: %d slots, %v", len(got), err)
		}
		for i, b := range got {
			if b.Slot != uint64(i) {
				t.Fatalf("slot %d read as %d", i, b.Slot)
			}
		}
		// The engine's iterator, bounded to slot 6 (it must have 6: the
		// direct read finds it) and unbounded.
		r := New(testOpts()).Reader(st, "db")
		for _, rng := range []slate.WalRange{{Start: testBase.WalID(1), End: testBase.WalID(7)}, {Start: testBase.WalID(1)}} {
			it, err := r.Iterator(bg, rng)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				rows, err := it.Next(bg)
				if err != nil {
					t.Fatalf("iterator %v over a listing that skips slot 3: %v", rng, err)
				}
				if rows == nil {
					break
				}
				n++
			}
			if want := 5; rng.End == 0 && n < want || rng.End != 0 && n != 6 {
				t.Fatalf("iterator %v served %d slots", rng, n)
			}
		}
		// A committer that loses slot 2 is handed every slot that landed.
		stale := New(testOpts()).Committer(st, "db")
		res, err := stale.Offer(bg, batchFor(2))
		if err != nil || res.Won || len(res.Landed) < 4 || res.Landed[0].Slot != 2 || res.Landed[1].Slot != 3 {
			t.Fatalf("lost offer over a listing that skips slot 3: %+v %v", res, err)
		}
		// Truncation whose listing skips the replay point's slot (4) reads
		// it directly and truncates below it.
		st.setHidden("/00000000000000000004")
		p := New(testOpts())
		deleted, err := p.GC(st, "db").Collect(bg, []slate.WalRange{{Start: testBase.WalID(5)}}, 0, false)
		if err != nil || len(deleted) != 4 {
			t.Fatalf("truncation over a listing that skips the replay point's slot: deleted %v, %v", deleted, err)
		}
		// A slot truly missing is still a hole.
		st.setHidden()
		if err := inner.Delete(bg, "db/log/00000000000000000005"); err != nil {
			t.Fatal(err)
		}
		if _, err := New(testOpts()).Committer(st, "db").Read(bg, 4, 0); !errors.Is(err, core.Corruption) {
			t.Fatalf("Read over a real hole: %v, want corruption", err)
		}
	})
}
