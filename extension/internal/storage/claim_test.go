package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/provider"
)

// claiming records a catalog's claims.
type claiming struct {
	*core.Catalog
	claims []time.Duration
}

func (c *claiming) Claim(ctx context.Context, hold time.Duration) (core.Head, bool, error) {
	c.claims = append(c.claims, hold)
	return c.Catalog.Claim(ctx, hold)
}

// tagTxn begins a transaction that inserts one tag row.
func tagTxn(t *testing.T, l *Lake, key string) *Txn {
	t.Helper()
	tx, err := l.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Insert("ducklake_tag", [][]any{{int64(1), int64(1), nil, key, "v"}}); err != nil {
		t.Fatal(err)
	}
	return tx
}

// The transaction that begins after claimAfter commits of the lake in a
// row were refused as conflicts (DuckLake's retry) claims the next slot
// first, once, and pins the head after the claim; fewer refusals, a landed
// commit in between, or refusals caused by a peer's claim claim nothing.
func TestARetryAfterRefusalsInARowClaimsTheNextSlot(t *testing.T) {
	store := objstore.NewMemory(0)
	open := func() *core.Catalog {
		c, err := core.Open(bg, store, core.CatalogOptions{CommitLog: provider.New(provider.Options{}),
			ReaderPollInterval: -1, CommitLogFoldSlots: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(bg) })
		return c
	}
	c := open()
	rec := &claiming{Catalog: c}
	l, peer := NewLake(rec), NewLake(c)
	// refuse begins a transaction, lands a peer's commit under it and
	// has its commit refused.
	refuse := func(key string) {
		t.Helper()
		tx := tagTxn(t, l, key)
		if err := tagTxn(t, peer, key+" winner").Commit(bg); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(bg); core.KindOf(err) != core.CommitConflict || core.ClaimRefused(err) {
			t.Fatalf("a commit on a moved head = %v, want a conflict (a race lost, not a claim)", err)
		}
	}
	for i := range claimAfter {
		refuse(fmt.Sprintf("refused %d", i))
		if i < claimAfter-1 && len(rec.claims) != 0 {
			t.Fatalf("claims after %d refusals: %v", i+1, rec.claims)
		}
	}
	if len(rec.claims) != 0 {
		t.Fatalf("claims before the retry began: %v", rec.claims)
	}
	committed, err := c.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	retry := tagTxn(t, l, "retry")
	if len(rec.claims) != 1 || rec.claims[0] < 20*time.Millisecond {
		t.Fatalf("the retry's Begin claimed %v, want one claim holding at least 20 ms", rec.claims)
	}
	if want := (core.Head{SnapshotID: committed.SnapshotID, BatchSeq: committed.BatchSeq + 1}); retry.View().Head() != want {
		t.Fatalf("the retry pinned %+v, want the claim's head %+v", retry.View().Head(), want)
	}
	if err := retry.Commit(bg); err != nil {
		t.Fatalf("the retry's commit on its claim: %v", err)
	}
	// The landed commit starts the count again.
	for i := range claimAfter - 1 {
		refuse(fmt.Sprintf("again %d", i))
	}
	if err := tagTxn(t, l, "next").Commit(bg); err != nil {
		t.Fatal(err)
	}
	if len(rec.claims) != 1 {
		t.Fatalf("transactions after a landed commit claimed: %v", rec.claims)
	}
	// A refusal for a peer's claim does not count: after claimAfter-1
	// refusals and one for a peer's claim, the retry claims nothing.
	for i := range claimAfter - 1 {
		refuse(fmt.Sprintf("then %d", i))
	}
	before := tagTxn(t, l, "before the claim")
	if _, claimed, err := open().Claim(bg, time.Minute); err != nil || !claimed {
		t.Fatalf("the peer's claim: %v %v", claimed, err)
	}
	if err := c.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if err := before.Commit(bg); !core.ClaimRefused(err) {
		t.Fatalf("a commit whose head moved by a peer's claim alone = %v, want a refusal for the claim", err)
	}
	if err := tagTxn(t, l, "on the claim").Commit(bg); !core.ClaimRefused(err) {
		t.Fatalf("a commit on a peer's claim = %v, want a refusal for the claim", err)
	}
	tagTxn(t, l, "after")
	if len(rec.claims) != 1 {
		t.Fatalf("a refusal for a claim counted towards one: %v", rec.claims)
	}
}
