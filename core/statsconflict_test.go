package core_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// A commit that only overwrites statistics records altered_table in
// changes_made; statistics written with the data file they describe are
// part of the insert. Two committers overwriting one table's statistics
// at once do not both succeed: the one that loses the slot is the conflict
// DuckLake would see (altered against altered), not a silent re-run over
// the winner's numbers.
func TestStatsOverwritesSayWhatChangedAndConflict(t *testing.T) {
	store := objstore.NewMemory(0)
	slow := func(o *core.CatalogOptions) { o.CommitLogPollInterval = 4 * time.Minute }
	a := openCommitter(t, store, logOpts(slow))
	tb := createTable(t, a, "t")
	col := snap(t, a).Columns(tb)[0].ID
	commit(t, a, func(tx *core.Transaction) error {
		f, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f.parquet", RecordCount: 1})
		if err != nil {
			return err
		}
		return tx.SetFileColumnStats(core.FileColumnStats{TableID: tb, DataFileID: f, ColumnID: col, NullCount: ptr(uint64(0))})
	})
	if got := snap(t, a).Snapshot().ChangesMade; got != fmt.Sprintf("inserted_into_table:%d", tb) {
		t.Fatalf("an insert with its file's statistics recorded %q", got)
	}
	// An insert that also rewrites the table's statistics (as a SQL write
	// path does) is an insert: two of them must not conflict over that.
	commit(t, a, func(tx *core.Transaction) error {
		if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "g.parquet", RecordCount: 1}); err != nil {
			return err
		}
		return tx.UpdateColumnStats(core.TableColumnStats{TableID: tb, ColumnID: col, ContainsNull: ptr(false)})
	})
	if got := snap(t, a).Snapshot().ChangesMade; got != fmt.Sprintf("inserted_into_table:%d", tb) {
		t.Fatalf("an insert that also rewrote the table's statistics recorded %q", got)
	}
	b := openCommitter(t, store, logOpts(slow))
	if _, err := b.Head(bg); err != nil { // b's reader now holds the head; it polls every 4 minutes
		t.Fatal(err)
	}
	overwrite := func(c *core.Catalog, n int64) error {
		_, err := c.Commit(bg, func(tx *core.Transaction) error {
			return tx.UpdateColumnStats(core.TableColumnStats{TableID: tb, ColumnID: col, MinValue: ptr(fmt.Sprint(n))})
		})
		return err
	}
	if err := overwrite(a, 1); err != nil {
		t.Fatal(err)
	}
	if got := snap(t, a).Snapshot().ChangesMade; got != fmt.Sprintf("altered_table:%d", tb) {
		t.Fatalf("a stats-only commit recorded %q, want altered_table:%d", got, tb)
	}
	err := overwrite(b, 2)
	if core.KindOf(err) != core.CommitConflict || !strings.Contains(err.Error(), "altered") {
		t.Fatalf("the second of two concurrent stats overwrites: %v, want a conflict (altered against altered)", err)
	}
	for _, cs := range snap(t, a).TableColumnStats(tb) {
		if cs.ColumnID == col && (cs.MinValue == nil || *cs.MinValue != "1") {
			t.Fatalf("the winner's statistics were replaced: min %v", cs.MinValue)
		}
	}
}
