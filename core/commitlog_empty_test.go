package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// A LeaveEmpty committer (the storage extension's commit-log build) adopts
// an empty store empty: slot 0 is the stamp, and the lake is created by
// the first rows commit, slot 1, which exactly one of the racing handles
// wins. The losers see a conflict, then the lake; the store refuses a
// provider-less open from the stamp on; a reader that opened before the
// lake existed sees it once it lands.
func TestCommitLogAdoptedEmptyIsCreatedByOneGenesis(t *testing.T) {
	store := objstore.NewMemory(0)
	leave := func(o *core.CatalogOptions) { o.LeaveEmpty = true }
	// The first opens race the adoption itself (each opens the store's
	// writer, fencing the others): all of them succeed, with one base.
	const n = 4
	handles := make([]*core.Catalog, n)
	var wg sync.WaitGroup
	openErrs := make([]error, n)
	for i := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles[i], openErrs[i] = core.Open(bg, store, logOpts(leave))
		}()
	}
	wg.Wait()
	for i, err := range openErrs {
		if err != nil {
			t.Fatalf("concurrent first open %d: %v", i, err)
		}
		t.Cleanup(func() { handles[i].Close(bg) })
	}
	a := handles[0]
	if a.HasLake() {
		t.Fatal("a store adopted empty reports a lake")
	}
	if got := slots(t, store); len(got) != 1 {
		t.Fatalf("after the adoption the log holds %v, want the stamp only", got)
	}
	// From the stamp on, a provider-less open is refused (no slot may be
	// written around the log), and so is a committer that would need a lake.
	if _, err := core.Open(bg, store, core.CatalogOptions{LeaveEmpty: true}); !core.NeedsCommitLog(err) {
		t.Fatalf("provider-less open of a log adopted empty: %v, want refused as needing the commit log", err)
	}
	if _, err := core.Open(bg, store, logOpts()); core.KindOf(err) != core.NotFound {
		t.Fatalf("committer without LeaveEmpty on a log adopted empty: %v, want NotFound", err)
	}
	ro, err := core.OpenReadOnly(bg, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogTail, o.ReaderPollInterval = true, 10*time.Millisecond }))
	if err != nil {
		t.Fatalf("reader of a log adopted empty: %v", err)
	}
	defer ro.Close(bg)
	if ro.HasLake() {
		t.Fatal("the reader reports a lake before any genesis")
	}

	errs := make([]error, n)
	for i, c := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = rowsCommit(t, c, duckLakeGenesis)
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case core.KindOf(err) != core.CommitConflict:
			t.Errorf("handle %d: genesis failed with %v, want a conflict", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d geneses landed (%v), want exactly 1", won, errs)
	}
	// Every handle now holds the lake and commits after it, in turn.
	for i, c := range handles {
		if err := waitFor(func() bool { return c.HasLake() }); err != nil {
			t.Fatalf("handle %d never saw the lake: %v", i, err)
		}
		// A stale head (the reader polls) is a conflict: re-read and retry,
		// as DuckLake does.
		var err error
		for try := 0; try < 100; try++ {
			_, err = rowsCommit(t, c, func(tx *core.Transaction) error {
				h, err := c.Head(bg)
				if err != nil {
					return err
				}
				return tx.PutSnapshot(core.Snapshot{ID: h.SnapshotID + 1, Time: t0, NextCatalogID: 1, ChangesMade: ""})
			})
			if core.KindOf(err) != core.CommitConflict {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("handle %d: commit after the genesis: %v", i, err)
		}
	}
	if got := slots(t, store); len(got) != 2+n {
		t.Fatalf("the log holds %d slots, want the stamp, the genesis and %d commits", len(got), n)
	}
	if err := waitFor(func() bool {
		h, err := ro.Head(bg)
		return ro.HasLake() && err == nil && h.SnapshotID == n
	}); err != nil {
		t.Fatalf("the reader never saw snapshot %d: %v", n, err)
	}
	d, err := handles[n-1].Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Snapshots) != n+1 || d.Options[0].Values["data_path"] != "/data/" {
		t.Fatalf("dump: %d snapshots, options %v", len(d.Snapshots), d.Options)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(cond func() bool) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return nil
		}
	}
	return errors.New("timed out after 10 s")
}

// A committer whose commit lost its slot reads the log's tail at its next
// read of the head, not a poll later: DuckLake's retry re-reads the head
// after sleeping, and a head as old as the loss would lose again.
func TestCommitLogCommitterAfterALossReadsTheTail(t *testing.T) {
	store := objstore.NewMemory(0)
	slow := func(o *core.CatalogOptions) { o.CommitLogPollInterval = 4 * time.Minute }
	a := openCommitter(t, store, logOpts(slow))
	b := openCommitter(t, store, logOpts(slow))
	next := func(c *core.Catalog, at core.Head) error {
		tx, err := c.BeginRows(bg, at)
		if err != nil {
			return err
		}
		if err := tx.PutSnapshot(core.Snapshot{ID: at.SnapshotID + 1, Time: t0, NextCatalogID: 1}); err != nil {
			return err
		}
		_, err = tx.Commit(bg)
		return err
	}
	stale, err := b.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := a.Head(bg)
	if err := next(a, h); err != nil {
		t.Fatal(err)
	}
	if err := next(b, stale); core.KindOf(err) != core.CommitConflict {
		t.Fatalf("b's commit at a stale head: %v, want a conflict", err)
	}
	// a lands another commit after b's loss; b's next read must see it.
	h, _ = a.Head(bg)
	if err := next(a, h); err != nil {
		t.Fatal(err)
	}
	got, err := b.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := a.Head(bg); got != want {
		t.Fatalf("after its loss b reads head %+v, want the tail %+v", got, want)
	}
	if err := next(b, got); err != nil {
		t.Fatalf("b's retry at the tail: %v", err)
	}
}

// staleFirstBase is a commit log whose committer's first Base answers
// "not adopted": the open looked at the log just before a peer's adoption
// landed.
type staleFirstBase struct{ core.CommitLogProvider }

func (p staleFirstBase) Session() core.CommitLogProvider {
	s := p.CommitLogProvider.Session()
	if s == nil {
		s = p.CommitLogProvider
	}
	return staleFirstBase{s}
}

func (p staleFirstBase) Committer(ls objstore.Store, path string) core.Committer {
	return &staleBaseCommitter{Committer: p.CommitLogProvider.Committer(ls, path)}
}

type staleBaseCommitter struct {
	core.Committer
	asked bool
}

func (c *staleBaseCommitter) Base(ctx context.Context) (core.LogBase, bool, error) {
	if !c.asked {
		c.asked = true
		return core.LogBase{}, false, nil
	}
	return c.Committer.Base(ctx)
}

// A LeaveEmpty open that found the log unadopted, while a peer adopted the
// store empty and folded the stamp before this open's adoption read the
// store, joins the peer's base: the store has a finished stamp and no head
// (none until the genesis), which is no corruption. (Found under load in
// TestCommitLogAdoptedEmptyIsCreatedByOneGenesis: "corruption: the catalog
// has no head record".)
func TestCommitLogLateAdoptionJoinsAStoreAdoptedEmpty(t *testing.T) {
	store := objstore.NewMemory(0)
	leave := func(o *core.CatalogOptions) { o.LeaveEmpty = true }
	a := openCommitter(t, store, logOpts(leave))
	if a.HasLake() {
		t.Fatal("a store adopted empty reports a lake")
	}
	b, err := core.Open(bg, store, logOpts(leave, func(o *core.CatalogOptions) { o.CommitLog = staleFirstBase{o.CommitLog} }))
	if err != nil {
		t.Fatalf("an open that looked at the log before the peer's adoption landed: %v", err)
	}
	defer b.Close(bg)
	if got := slots(t, store); len(got) != 1 {
		t.Fatalf("the log holds %v, want the peer's stamp only", got)
	}
	if _, err := rowsCommit(t, b, duckLakeGenesis); err != nil {
		t.Fatalf("genesis through the late opener: %v", err)
	}
	if err := waitFor(func() bool { return a.HasLake() }); err != nil {
		t.Fatalf("the peer never saw the lake the late opener created: %v", err)
	}
}
