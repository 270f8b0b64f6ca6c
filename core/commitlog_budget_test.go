package core_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// On a commit log a commit's retries are bounded in time, not in count:
// sixteen committers committing at once all land every commit (with the
// old bound of 64 attempts a late starter could give up), and a commit that
// exceeds CommitLogRetryBudget fails with RetryExhausted naming the races it
// lost and the budget.
func TestCommitLogRetriesAreBoundedInTime(t *testing.T) {
	store := objstore.NewMemory(0)
	const writers, commits = 16, 12
	handles := make([]*core.Catalog, writers)
	for i := range handles {
		handles[i] = openCommitter(t, store, logOpts())
	}
	tables := make([]core.TableID, writers)
	for i := range tables {
		tables[i] = createTable(t, handles[0], fmt.Sprintf("t%d", i))
	}
	for _, h := range handles {
		snap(t, h) // a committer's read tails the log: every handle sees the tables
	}
	commitAtOnce(t, handles, commits, func(w, k int, tx *core.Transaction) error {
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tables[w], Path: fmt.Sprintf("w%d/%d.parquet", w, k), RecordCount: 1})
		return err
	})
	s := snap(t, openCommitter(t, store, logOpts()))
	for w, tb := range tables {
		if n := len(s.DataFiles(tb)); n != commits {
			t.Errorf("table of writer %d holds %d files, want %d", w, n, commits)
		}
	}

	// A budget spent: b's reader is a poll old, so its commit loses a slot
	// to a; with a budget of a nanosecond it may not retry.
	slow := func(o *core.CatalogOptions) {
		o.CommitLogPollInterval = 4 * time.Minute
		o.CommitLogRetryBudget = time.Nanosecond
	}
	a := openCommitter(t, store, logOpts())
	b := openCommitter(t, store, logOpts(slow))
	if _, err := b.Head(bg); err != nil {
		t.Fatal(err)
	}
	commit(t, a, func(tx *core.Transaction) error { _, err := tx.CreateSchema("by_a"); return err })
	_, err := b.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tables[0], Path: "b.parquet", RecordCount: 1})
		return err
	})
	if core.KindOf(err) != core.RetryExhausted || !strings.Contains(err.Error(), "1 times in a row") || !strings.Contains(err.Error(), "CommitLogRetryBudget 1ns") {
		t.Fatalf("a commit past its retry budget: %v, want RetryExhausted naming the lost races and the budget", err)
	}
	if strings.Contains(err.Error(), "conflict") {
		t.Fatalf("RetryExhausted must not say conflict (DuckLake would retry it as one): %v", err)
	}
}
