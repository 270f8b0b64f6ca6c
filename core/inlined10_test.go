package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// DuckLake 1.0 updates an inlined row by ending it and inserting its new
// version under the same row id (begin_snapshot != the update's). Both
// versions keep their own lifetimes: in the dump, in the cached head, in
// a fresh open, at every snapshot; removing the old version (a flush)
// leaves the new one as it was.
func TestRowsInlinedRowVersionsShareARowID(t *testing.T) {
	c, store := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	val := func(s string) []core.Value { return []core.Value{{String: &s}} }
	snap := func(id core.SnapshotID) core.Snapshot {
		return core.Snapshot{ID: id, NextCatalogID: 2, SchemaVersion: 1, ChangesMade: "inlined_insert:1"}
	}
	stages := []func(tx *core.Transaction) error{
		func(tx *core.Transaction) error { // snapshot 1: rows 0 and 3
			return errs(tx.PutSnapshot(snap(1)),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 0, Versioned: core.Versioned{Begin: 1}, Values: val("a")}),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 3, Versioned: core.Versioned{Begin: 1}, Values: val("b")}))
		},
		func(tx *core.Transaction) error { // snapshot 2: UPDATE row 3 to "B"
			return errs(tx.PutSnapshot(snap(2)),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 3, Versioned: core.Versioned{Begin: 2}, Values: val("B")}),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 3, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Values: val("b")}))
		},
		func(tx *core.Transaction) error { // snapshot 3: UPDATE it again, to "C"
			return errs(tx.PutSnapshot(snap(3)),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 3, Versioned: core.Versioned{Begin: 3}, Values: val("C")}),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 3, Versioned: core.Versioned{Begin: 2, End: ptr(core.SnapshotID(3))}, Values: val("B")}))
		},
		func(tx *core.Transaction) error { // snapshot 4: the ended versions removed
			return errs(tx.PutSnapshot(snap(4)), tx.DeleteInlinedRow(1, 1, 3, 1), tx.DeleteInlinedRow(1, 1, 3, 2))
		},
	}
	want := []string{
		"0@1-:a 3@1-:b",
		"0@1-:a 3@1-2:b 3@2-:B",
		"0@1-:a 3@1-2:b 3@2-3:B 3@3-:C",
		"0@1-:a 3@3-:C",
	}
	for i, stage := range stages {
		commitKeepsTheCachedHeadTrue(t, c, store, fmt.Sprintf("commit %d", i+1), stage)
		d, err := c.Dump(bg)
		if err != nil {
			t.Fatal(err)
		}
		if got := inlinedRowsText(d); got != want[i] {
			t.Fatalf("after commit %d the inlined rows are %q, want %q", i+1, got, want[i])
		}
		if i == 2 {
			checkVersionsAtEachSnapshot(t, c)
		}
	}
}

// checkVersionsAtEachSnapshot: each snapshot reads the version of row 3
// live then.
func checkVersionsAtEachSnapshot(t *testing.T, c *core.Catalog) {
	t.Helper()
	for at, want := range map[core.SnapshotID]string{1: "0:a 3:b", 2: "0:a 3:B", 3: "0:a 3:C"} {
		v, err := c.ViewAt(bg, at)
		if err != nil {
			t.Fatal(err)
		}
		var live []string
		for _, g := range v.InlinedRows(1) {
			for _, r := range g.Rows {
				live = append(live, fmt.Sprintf("%d:%s", r.RowID, *r.Values[0].String))
			}
		}
		if got := strings.Join(live, " "); got != want {
			t.Errorf("at snapshot %d: %q, want %q", at, got, want)
		}
	}
}

// inlinedRowsText renders every inlined row of a dump as
// rowid@begin-end:value.
func inlinedRowsText(d *core.Dump) string {
	var out []string
	for _, g := range d.Inlined {
		for _, r := range g.Rows {
			end := ""
			if r.End != nil {
				end = fmt.Sprint(*r.End)
			}
			out = append(out, fmt.Sprintf("%d@%d-%s:%s", r.RowID, r.Begin, end, *r.Values[0].String))
		}
	}
	return strings.Join(out, " ")
}

// DuckLake 1.0's deletion inlining: ducklake_inlined_delete_<table> and its
// rows are kept as given and served by the dump (at a snapshot, the rows
// that began by then); removing them (a flush, a DROP) removes them.
func TestRowsInlinedFileDeletes(t *testing.T) {
	c, store := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	commitKeepsTheCachedHeadTrue(t, c, store, "deletes at 1", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, NextFileID: 3, ChangesMade: "inlined_delete:1"}),
			tx.PutInlinedDeleteTable(core.InlinedDeleteTable{TableID: 1, Name: "ducklake_inlined_delete_1"}),
			tx.PutInlinedFileDelete(core.InlinedFileDelete{TableID: 1, DataFileID: 2, RowID: 50, Begin: 1}),
			tx.PutInlinedFileDelete(core.InlinedFileDelete{TableID: 1, DataFileID: 2, RowID: 7, Begin: 1}))
	})
	commitKeepsTheCachedHeadTrue(t, c, store, "a delete at 2", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 2, NextFileID: 3, ChangesMade: "inlined_delete:1"}),
			tx.PutInlinedFileDelete(core.InlinedFileDelete{TableID: 1, DataFileID: 1, RowID: 9, Begin: 2}))
	})
	text := func(d *core.Dump) string {
		var out []string
		for _, t := range d.InlinedDeleteTables {
			out = append(out, fmt.Sprintf("%s(%d)", t.Name, t.TableID))
		}
		for _, x := range d.InlinedFileDeletes {
			out = append(out, fmt.Sprintf("%d/%d/%d@%d", x.TableID, x.DataFileID, x.RowID, x.Begin))
		}
		return strings.Join(out, " ")
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := text(d), "ducklake_inlined_delete_1(1) 1/1/9@2 1/2/7@1 1/2/50@1"; got != want {
		t.Fatalf("dump: %q, want %q", got, want)
	}
	if d, err = c.DumpAt(bg, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := text(d), "ducklake_inlined_delete_1(1) 1/2/7@1 1/2/50@1"; got != want {
		t.Fatalf("dump at 1: %q, want %q", got, want)
	}
	commitKeepsTheCachedHeadTrue(t, c, store, "the table dropped", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 3, NextCatalogID: 2, NextFileID: 3, ChangesMade: "flushed_inlined:1"}),
			tx.DeleteInlinedFileDelete(1, 1, 9), tx.DeleteInlinedFileDelete(1, 2, 7), tx.DeleteInlinedFileDelete(1, 2, 50),
			tx.DeleteInlinedDeleteTable(1))
	})
	if d, err = c.Dump(bg); err != nil {
		t.Fatal(err)
	}
	if got := text(d); got != "" {
		t.Fatalf("after the drop: %q", got)
	}
}

// A catalog at format 12 takes no inlined deletion nor VARIANT statistics
// (a format-12 build would not see them) and says how to raise it; its inlined rows keep their
// ends in inline-delete records, as format-12 builds read them.
func TestRowsInlinedFileDeletesNeedFormat13(t *testing.T) {
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	c.Close(bg)
	if err := core.SetFormatForTest(bg, store, "", core.FormatDeleteTargets, nil); err != nil {
		t.Fatal(err)
	}
	c, err = core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	for what, stage := range map[string]func(tx *core.Transaction) error{
		"table": func(tx *core.Transaction) error {
			return tx.PutInlinedDeleteTable(core.InlinedDeleteTable{TableID: 1, Name: "ducklake_inlined_delete_1"})
		},
		"row": func(tx *core.Transaction) error {
			return tx.PutInlinedFileDelete(core.InlinedFileDelete{TableID: 1, DataFileID: 2, RowID: 3, Begin: 1})
		},
		"VARIANT statistics": func(tx *core.Transaction) error {
			return tx.PutFileVariantStats(core.FileVariantStats{TableID: 1, DataFileID: 2, ColumnID: 3, Paths: []core.VariantPathStats{{VariantPath: "a"}}})
		},
	} {
		_, err := rowsCommit(t, c, func(tx *core.Transaction) error {
			return errs(tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, ChangesMade: "inlined_delete:1"}), stage(tx))
		})
		if core.KindOf(err) != core.Migration || !strings.Contains(err.Error(), "moraine migrate") || !strings.Contains(err.Error(), "format 12") {
			t.Fatalf("%s at format 12: %v", what, err)
		}
	}
	commitKeepsTheCachedHeadTrue(t, c, store, "a row at 12", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, ChangesMade: "inlined_insert:1"}),
			tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 4, Versioned: core.Versioned{Begin: 1}, Values: []core.Value{{}}}))
	})
	commitKeepsTheCachedHeadTrue(t, c, store, "its end at 12", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 2, ChangesMade: "inlined_delete:1"}),
			tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 4, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Values: []core.Value{{}}}))
	})
	n := 0
	if err := core.ScanForTest(bg, store, func(key string) { n += strings.Count(key, "inline/live/delete") }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d inline-delete records at format 12, want 1 (format-12 builds read ends there)", n)
	}
}
