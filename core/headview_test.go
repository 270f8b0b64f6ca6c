package core

import (
	"context"
	"testing"

	"github.com/moraine-go/moraine/core/objstore"
)

// The cached head view never moves backwards. A grouped commit's leader
// that landed snapshot 1 and caches its view late, after an explicit
// commit of the same handle landed snapshot 2 on top of it, must not put
// snapshot 1 back: Head and View (which a writer serves from the cache)
// would then hide the handle's own last commit, and the next transaction
// built on them would conflict. Before setHeadView was the cache's only
// writer, the explicit commit dropped the cache (it did not hold its base)
// and the leader then stored snapshot 1's view over it.
func TestHeadViewNeverMovesBackwards(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, objstore.NewMemory(0), CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var explicit SnapshotID
	c.afterLandForTest = func() {
		c.afterLandForTest = nil // once: the hook runs on the leader's goroutine
		txn, err := c.Begin(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := txn.CreateSchema("explicit"); err != nil {
			t.Error(err)
			return
		}
		if explicit, err = txn.Commit(ctx); err != nil {
			t.Errorf("the explicit commit on top of the grouped one: %v", err)
		}
	}
	grouped, err := c.Commit(ctx, func(txn *Transaction) error {
		_, err := txn.CreateSchema("grouped")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if explicit != grouped+1 {
		t.Fatalf("grouped commit %d, explicit %d: want the explicit one right after", grouped, explicit)
	}
	h, err := c.Head(ctx)
	if err != nil || h.SnapshotID != explicit {
		t.Fatalf("Head = %+v, %v; want the explicit commit's snapshot %d", h, err, explicit)
	}
	v, err := c.View(ctx)
	if err != nil || v.Head().SnapshotID != explicit {
		t.Fatalf("View at %+v, %v; want snapshot %d", v.Head(), err, explicit)
	}
	// And the next transaction, built on the cache, lands without a conflict.
	txn, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.CreateSchema("next"); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}

// A commit whose outcome is unknown raises the floor: no view older than
// the head it would have made is cached until one at or past it is.
func TestHeadViewFloor(t *testing.T) {
	c := &Catalog{}
	at := func(seq uint64) *CatalogView {
		v := newCatalogView()
		v.head = Head{SnapshotID: SnapshotID(seq), BatchSeq: seq}
		return v
	}
	c.setHeadView(at(3), Head{})
	c.setHeadView(at(2), Head{})
	if c.headView.head.BatchSeq != 3 {
		t.Fatalf("an older view replaced the cached one: %+v", c.headView.head)
	}
	c.setHeadView(nil, Head{BatchSeq: 5}) // a commit to 5 may have landed
	c.setHeadView(at(4), Head{})
	if c.headView != nil {
		t.Fatalf("a view below the floor was cached: %+v", c.headView.head)
	}
	c.setHeadView(at(5), Head{})
	if c.headView == nil || c.headView.head.BatchSeq != 5 {
		t.Fatalf("the view at the floor was not cached: %+v", c.headView)
	}
}
