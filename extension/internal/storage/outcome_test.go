package storage

import (
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/provider"
)

// A commit the store cannot confirm (the slot's write failed and the
// read-back finds it absent: it may still land late) is reported as what
// it is: OUTCOME_UNKNOWN, a message saying the commit may have landed and
// how to check, and nothing DuckLake would retry (its retry looks for
// "conflict", "concurrent", "primary key" or "unique") or a user would
// re-run as an interrupt. The lake goes on: the next commit lands.
func TestAnUnconfirmedCommitSaysItMayHaveLanded(t *testing.T) {
	faulty := objstore.NewFaulty(objstore.NewMemory(0))
	c, err := core.Open(bg, faulty, core.CatalogOptions{CommitLog: provider.New(provider.Options{}),
		ReaderPollInterval: -1, CommitLogFoldSlots: -1, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	l := NewLake(c)
	tx := tagTxn(t, l, "unconfirmed")
	faulty.FailNth(objstore.OpPutIfAbsent, 1)
	err = tx.Commit(bg)
	if codes.Of(err) != codes.OutcomeUnknown {
		t.Fatalf("commit = %v (code %v), want OUTCOME_UNKNOWN", err, codes.Of(err))
	}
	msg := err.Error()
	for _, want := range []string{"may or may not have landed", "snapshots()", "moraine_info"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not say %q", msg, want)
		}
	}
	for _, retried := range []string{"conflict", "concurrent", "primary key", "unique"} {
		if strings.Contains(strings.ToLower(msg), retried) {
			t.Errorf("the error %q contains %q: DuckLake would retry a commit that may have landed", msg, retried)
		}
	}
	if err := tagTxn(t, l, "next").Commit(bg); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}
