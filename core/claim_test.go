package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// claimPair opens two committers over one fresh log with a table.
func claimPair(t *testing.T) (a, b *core.Catalog) {
	t.Helper()
	store := objstore.NewMemory(0)
	a = openCommitter(t, store, logOpts())
	createTable(t, a, "t")
	b = openCommitter(t, store, logOpts())
	return a, b
}

// explicitCreate begins an explicit transaction on c that creates table
// name; the caller commits it.
func explicitCreate(t *testing.T, c *core.Catalog, name string) *core.Transaction {
	t.Helper()
	tx, err := c.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Rollback)
	if _, err := tx.CreateTable(mainSchema(t, tx), name, cols("a")); err != nil {
		t.Fatal(err)
	}
	return tx
}

func headOf(t *testing.T, c *core.Catalog) core.Head {
	t.Helper()
	if err := c.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	h, err := c.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A claim is one head-preserving slot whose stamp names the claimant; an
// explicit transaction of a peer prepared on it is refused as a conflict
// without a write, the claimant's commit lands in the slot after it, and
// the stamp of that slot ends the claim.
func TestClaimHoldsAPeersExplicitCommitForTheClaimants(t *testing.T) {
	a, b := claimPair(t)
	before := headOf(t, a)
	early := explicitCreate(t, b, "early") // prepared before the claim
	head, claimed, err := a.Claim(bg, 5*time.Second)
	if err != nil || !claimed {
		t.Fatalf("Claim = %v, %v, %v; want a landed claim", head, claimed, err)
	}
	if want := (core.Head{SnapshotID: before.SnapshotID, BatchSeq: before.BatchSeq + 1}); head != want {
		t.Fatalf("the claim's head is %+v, want %+v (the snapshot kept, one batch on)", head, want)
	}
	if got := headOf(t, b); got != head {
		t.Fatalf("the peer reads head %+v, want the claim's %+v", got, head)
	}
	who, hold, ok, err := b.HeadClaimForTest(bg)
	if err != nil || !ok || who != a.CommitterIDForTest() || hold != 5*time.Second {
		t.Fatalf("the peer's head stamp carries claim %v %v %v (%v), want %v for 5s", who, hold, ok, err, a.CommitterIDForTest())
	}

	// A commit prepared before the claim loses its slot to it: a refusal
	// for the claim too.
	if _, err := early.Commit(bg); !errors.Is(err, core.CommitConflict) || !core.ClaimRefused(err) {
		t.Fatalf("a commit prepared before the claim = %v (ClaimRefused %v), want a CommitConflict for the claim", err, core.ClaimRefused(err))
	}
	_, err = explicitCreate(t, b, "peer").Commit(bg)
	if !errors.Is(err, core.CommitConflict) || !strings.Contains(err.Error(), "claimed") || !core.ClaimRefused(err) {
		t.Fatalf("the peer's explicit commit on the claim = %v (ClaimRefused %v), want a CommitConflict naming the claim", err, core.ClaimRefused(err))
	}
	if got := headOf(t, b); got != head {
		t.Fatalf("after the refused commit the head is %+v, want the claim's %+v: the peer wrote nothing", got, head)
	}
	landed, err := explicitCreate(t, a, "claimant").Commit(bg)
	if err != nil || landed != before.SnapshotID+1 {
		t.Fatalf("the claimant's commit = %d, %v; want snapshot %d", landed, err, before.SnapshotID+1)
	}
	headOf(t, b)
	if _, _, ok, err := b.HeadClaimForTest(bg); err != nil || ok {
		t.Fatalf("after the claimant's commit the head stamp still carries a claim (%v)", err)
	}
	late := explicitCreate(t, a, "late") // prepared on the claimant's commit
	if got, err := explicitCreate(t, b, "peer").Commit(bg); err != nil || got != before.SnapshotID+2 {
		t.Fatalf("the peer's commit after the claimant's = %d, %v; want snapshot %d", got, err, before.SnapshotID+2)
	}
	if _, err := late.Commit(bg); !errors.Is(err, core.CommitConflict) || core.ClaimRefused(err) {
		t.Fatalf("a commit that lost to a plain commit = %v (ClaimRefused %v), want a CommitConflict not for a claim", err, core.ClaimRefused(err))
	}
}

// A closure commit (Catalog.Commit) of a peer that finds the claim at its
// tip holds its offer until the claimant's commit lands, and lands after
// it: the claimant's explicit commit, made while the peer is held, wins.
func TestClaimHoldsAPeersClosureCommitUntilTheClaimantLands(t *testing.T) {
	a, b := claimPair(t)
	before := headOf(t, a)
	if _, claimed, err := a.Claim(bg, 5*time.Second); err != nil || !claimed {
		t.Fatalf("Claim: %v %v", claimed, err)
	}
	headOf(t, b) // the peer's reader serves the claim
	type result struct {
		id  core.SnapshotID
		err error
	}
	held := make(chan result, 1)
	go func() {
		id, err := b.Commit(bg, func(tx *core.Transaction) error {
			_, err := tx.CreateTable(mainSchema(t, tx), "peer", cols("a"))
			return err
		})
		held <- result{id, err}
	}()
	select {
	case r := <-held:
		t.Fatalf("the peer's commit returned %d, %v while the claim held", r.id, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	landed, err := explicitCreate(t, a, "claimant").Commit(bg)
	if err != nil || landed != before.SnapshotID+1 {
		t.Fatalf("the claimant's commit = %d, %v; want snapshot %d (the held peer took its slot)", landed, err, before.SnapshotID+1)
	}
	select {
	case r := <-held:
		if r.err != nil || r.id != before.SnapshotID+2 {
			t.Fatalf("the held peer's commit = %d, %v; want snapshot %d, after the claimant's", r.id, r.err, before.SnapshotID+2)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held peer's commit did not land after the claimant's")
	}
}

// A claim whose claimant commits nothing holds its peers for its hold
// only, measured from when each first saw it.
func TestClaimLapsesAfterItsHold(t *testing.T) {
	a, b := claimPair(t)
	const hold = 60 * time.Millisecond
	claimHead, claimed, err := a.Claim(bg, hold)
	if err != nil || !claimed {
		t.Fatalf("Claim: %v %v", claimed, err)
	}
	headOf(t, b)
	if _, err := explicitCreate(t, b, "peer").Commit(bg); !errors.Is(err, core.CommitConflict) || !core.ClaimRefused(err) {
		t.Fatalf("a commit on the fresh claim = %v, want a CommitConflict for the claim", err)
	}
	time.Sleep(hold + 10*time.Millisecond)
	got, err := explicitCreate(t, b, "peer").Commit(bg)
	if err != nil || got != claimHead.SnapshotID+1 {
		t.Fatalf("a commit after the hold = %d, %v; want snapshot %d", got, err, claimHead.SnapshotID+1)
	}
	// The claimant's own claim never holds it.
	if _, claimed, err := a.Claim(bg, time.Minute); err != nil || !claimed {
		t.Fatalf("Claim: %v %v", claimed, err)
	}
	if _, err := explicitCreate(t, a, "again").Commit(bg); err != nil {
		t.Fatalf("the claimant's commit on its own claim: %v", err)
	}
}

// A peer refused for a claim reads the log's tail on its next read of the
// head, however long its poll: the claimant's commit may have landed, and
// a retry prepared on the claim again would only be refused again.
func TestClaimRefusalTailsTheLogOnTheNextRead(t *testing.T) {
	store := objstore.NewMemory(0)
	a := openCommitter(t, store, logOpts())
	createTable(t, a, "t")
	b := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogPollInterval = 4 * time.Minute }))
	if _, claimed, err := a.Claim(bg, 5*time.Second); err != nil || !claimed {
		t.Fatalf("Claim: %v %v", claimed, err)
	}
	if err := b.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := explicitCreate(t, b, "peer").Commit(bg); !core.ClaimRefused(err) {
		t.Fatalf("a commit on the claim = %v, want a refusal for it", err)
	}
	landed, err := explicitCreate(t, a, "claimant").Commit(bg)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := b.Head(bg); err != nil || h.SnapshotID != landed {
		t.Fatalf("the refused peer's next head = %+v, %v; want the claimant's snapshot %d", h, err, landed)
	}
}

// Claims queue: a claim prepared on a peer's claim is held until the
// peer's commit lands, and lands after it.
func TestClaimsQueue(t *testing.T) {
	a, b := claimPair(t)
	before := headOf(t, a)
	if _, claimed, err := a.Claim(bg, 5*time.Second); err != nil || !claimed {
		t.Fatalf("Claim: %v %v", claimed, err)
	}
	headOf(t, b)
	type result struct {
		head    core.Head
		claimed bool
		err     error
	}
	second := make(chan result, 1)
	go func() {
		h, ok, err := b.Claim(bg, 5*time.Second)
		second <- result{h, ok, err}
	}()
	select {
	case r := <-second:
		t.Fatalf("the second claim returned %+v while the first held", r)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := explicitCreate(t, a, "first").Commit(bg); err != nil {
		t.Fatalf("the first claimant's commit: %v", err)
	}
	r := <-second
	if r.err != nil || !r.claimed || r.head.SnapshotID != before.SnapshotID+1 {
		t.Fatalf("the second claim = %+v; want one landed on the first claimant's snapshot %d", r, before.SnapshotID+1)
	}
	if _, err := explicitCreate(t, a, "late").Commit(bg); !errors.Is(err, core.CommitConflict) || !core.ClaimRefused(err) {
		t.Fatalf("the first claimant's next commit on the second claim = %v, want a CommitConflict for the claim", err)
	}
	if got, err := explicitCreate(t, b, "second").Commit(bg); err != nil || got != before.SnapshotID+2 {
		t.Fatalf("the second claimant's commit = %d, %v; want snapshot %d", got, err, before.SnapshotID+2)
	}
}

// Claim writes nothing on a single writer and on a read-only handle.
func TestClaimWithoutACommitLogWritesNothing(t *testing.T) {
	store := objstore.NewMemory(0)
	w := openRW(t, store)
	createTable(t, w, "t")
	before, _ := w.Head(bg)
	for name, c := range map[string]*core.Catalog{"single writer": w, "read-only": openRO(t, store, core.CatalogOptions{})} {
		h, claimed, err := c.Claim(bg, time.Second)
		if err != nil || claimed || h != before {
			t.Errorf("%s: Claim = %+v, %v, %v; want the head %+v, nothing claimed", name, h, claimed, err, before)
		}
	}
	if after, _ := w.Head(bg); after != before {
		t.Fatalf("the head moved from %+v to %+v", before, after)
	}
	// A committer whose store holds no lake yet has no head to claim on.
	empty := objstore.NewMemory(0)
	c := openCommitter(t, empty, logOpts(func(o *core.CatalogOptions) { o.LeaveEmpty = true }))
	before2 := slots(t, empty)
	if h, claimed, err := c.Claim(bg, time.Second); err != nil || claimed || h != (core.Head{}) {
		t.Fatalf("Claim with no lake = %+v, %v, %v; want the zero head, nothing claimed", h, claimed, err)
	}
	if after := slots(t, empty); len(after) != len(before2) {
		t.Fatalf("Claim with no lake wrote slots: %v, then %v", before2, after)
	}
	c.Close(bg)
	if _, _, err := c.Claim(bg, time.Second); !errors.Is(err, core.InvalidArgument) {
		t.Fatalf("Claim on a closed handle = %v, want InvalidArgument", err)
	}
}
