package ducklake

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
)

// snapshotRows inserts the ducklake_snapshot and ducklake_snapshot_changes
// rows of snapshot id.
func snapshotRows(t *testing.T, c *Changes, id int64, changes string) {
	t.Helper()
	noErr(t, c.Insert("ducklake_snapshot", [][]any{{id, when, int64(1), int64(3), int64(3)}}))
	noErr(t, c.Insert("ducklake_snapshot_changes", [][]any{{id, changes, nil, nil, nil}}))
}

// rowsText renders a table's rows as the transaction reads them.
func rowsText(t *testing.T, c *Changes, name string) string {
	t.Helper()
	tb := c.Lookup(name)
	if tb == nil {
		return "<none>"
	}
	set, err := c.Rows(tb)
	noErr(t, err)
	var out []string
	for _, r := range set.Cells() {
		out = append(out, rowText(r))
	}
	return strings.Join(out, " ")
}

func rowText(cells []any) string {
	var parts []string
	for _, c := range cells {
		if c == nil {
			parts = append(parts, "NULL")
		} else {
			parts = append(parts, fmt.Sprint(c))
		}
	}
	return "(" + strings.Join(parts, ",") + ")"
}

var inlinedDeleteDDL = &Table{Name: "ducklake_inlined_delete_2", PrimaryKey: -1, Columns: []Column{
	{Name: "file_id", Type: "BIGINT"}, {Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}}}

// DuckLake 1.0's deletion inlining, as it sends it: CREATE TABLE IF NOT
// EXISTS ducklake_inlined_delete_<table> and INSERTs in the commit that
// deletes; SELECTs; a flush's DELETE of every row; the cleanup's DROP
// TABLE IF EXISTS. Each commit's view is what a fresh read serves.
func TestCommitDuckLake10InlinedDeletes(t *testing.T) {
	cat := lake10(t)
	c := pin(t, cat)
	snapshotRows(t, c, 1, "inlined_delete:2")
	created, err := c.CreateTable(inlinedDeleteDDL, true)
	if err != nil || !created {
		t.Fatalf("CREATE TABLE IF NOT EXISTS ducklake_inlined_delete_2: %v, %v", created, err)
	}
	if created, err := c.CreateTable(inlinedDeleteDDL, true); err != nil || created {
		t.Fatalf("the second CREATE TABLE IF NOT EXISTS: %v, %v", created, err)
	}
	noErr(t, c.Insert("ducklake_inlined_delete_2", [][]any{{int64(2), int64(50), int64(1)}, {int64(2), int64(7), int64(1)}}))
	commitAndCompare(t, cat, c)

	c = pin(t, cat)
	if got, want := rowsText(t, c, "DuckLake_Inlined_Delete_2"), "(2,7,1) (2,50,1)"; got != want {
		t.Fatalf("ducklake_inlined_delete_2 serves %s, want %s", got, want)
	}
	snapshotRows(t, c, 2, "inlined_delete:2")
	noErr(t, c.Insert("ducklake_inlined_delete_2", [][]any{{int64(1), int64(9), int64(2)}}))
	commitAndCompare(t, cat, c)

	// The flush: every row deleted, the table kept.
	c = pin(t, cat)
	set, err := c.Rows(c.Lookup("ducklake_inlined_delete_2"))
	noErr(t, err)
	var all []int64
	for i := 0; i < set.Len(); i++ {
		id, _ := set.Row(i)
		all = append(all, id)
	}
	snapshotRows(t, c, 3, "flushed_inlined:2")
	if n, err := c.Delete("ducklake_inlined_delete_2", all); err != nil || n != 3 {
		t.Fatalf("DELETE FROM ducklake_inlined_delete_2: %d, %v", n, err)
	}
	commitAndCompare(t, cat, c)
	d, err := cat.Dump(bg)
	noErr(t, err)
	if len(d.InlinedFileDeletes) != 0 || len(d.InlinedDeleteTables) != 1 {
		t.Fatalf("after the flush: %+v, %+v", d.InlinedFileDeletes, d.InlinedDeleteTables)
	}

	// The cleanup drops it (in a transaction of its own, without a
	// snapshot, as DuckLake does).
	c = pin(t, cat)
	noErr(t, c.Insert("ducklake_inlined_delete_2", [][]any{{int64(4), int64(1), int64(3)}}))
	if dropped, err := c.DropTable("ducklake_inlined_delete_2", true); err != nil || !dropped {
		t.Fatalf("DROP TABLE IF EXISTS: %v, %v", dropped, err)
	}
	if c.Lookup("ducklake_inlined_delete_2") != nil {
		t.Fatal("the dropped table is still found")
	}
	if dropped, err := c.DropTable("ducklake_inlined_delete_2", true); err != nil || dropped {
		t.Fatalf("DROP TABLE IF EXISTS of a dropped table: %v, %v", dropped, err)
	}
	if _, err := c.DropTable("ducklake_inlined_delete_2", false); core.KindOf(err) != core.NotFound || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("DROP TABLE of a dropped table: %v", err)
	}
	commitAndCompare(t, cat, c)
	if d, err = cat.Dump(bg); err != nil || len(d.InlinedDeleteTables) != 0 || len(d.InlinedFileDeletes) != 0 {
		t.Fatalf("after the drop: %+v, %+v, %v", d.InlinedDeleteTables, d.InlinedFileDeletes, err)
	}
	if pin(t, cat).Lookup("ducklake_inlined_delete_2") != nil {
		t.Fatal("a fresh read serves the dropped table")
	}
}

// What DuckLake never asks is refused, naming what moraine serves.
func TestChangesRefuseInlinedDeleteTablesOutOfSpec(t *testing.T) {
	cat := lake10(t)
	c := pin(t, cat)
	bad := *inlinedDeleteDDL
	bad.Columns = append([]Column{}, inlinedDeleteDDL.Columns[:2]...)
	if _, err := c.CreateTable(&bad, false); core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "file_id BIGINT, row_id BIGINT, begin_snapshot BIGINT") {
		t.Fatalf("a two-column inlined-deletion table: %v", err)
	}
	if _, err := c.DropTable("ducklake_snapshot", false); core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "never dropped") {
		t.Fatalf("DROP TABLE ducklake_snapshot: %v", err)
	}
	// DuckLake 0.3 has no deletion inlining.
	c03 := lakeStore(t)
	c = pin(t, c03)
	duckLakeAttach(t, c)
	commitAndCompare(t, c03, c)
	if _, err := pin(t, c03).CreateTable(inlinedDeleteDDL, true); core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "DuckLake 0.3") {
		t.Fatalf("ducklake_inlined_delete_2 on a 0.3 lake: %v", err)
	}
}

// DuckLake 1.0 updates an inlined row by inserting its new version under
// the same row id and ending the old one (begin_snapshot != the update's);
// a flush deletes the rows and drops the inlined-data tables it emptied.
func TestCommitDuckLake10UpdatesAnInlinedRowUnderItsRowID(t *testing.T) {
	cat := lake10(t)
	ddl := &Table{Name: "ducklake_inlined_data_2_1", PrimaryKey: -1, Columns: append(append([]Column{}, inlinedLeading...), Column{Name: "name", Type: "VARCHAR"})}
	c := pin(t, cat)
	snapshotRows(t, c, 1, "inlined_insert:2")
	_, err := c.CreateTable(ddl, true)
	noErr(t, err)
	noErr(t, c.Insert(ddl.Name, [][]any{{int64(0), int64(1), nil, "a"}, {int64(3), int64(1), nil, "b"}}))
	commitAndCompare(t, cat, c)

	update := func(snap int64, value string) {
		t.Helper()
		c := pin(t, cat)
		snapshotRows(t, c, snap, "inlined_insert:2,inlined_delete:2")
		tb := c.Lookup(ddl.Name)
		noErr(t, c.Insert(ddl.Name, [][]any{{int64(3), snap, nil, value}}))
		set, err := c.Rows(tb)
		noErr(t, err)
		var live int64 = -1
		for i := 0; i < set.Len(); i++ {
			id, r := set.Row(i)
			if r[0] == int64(3) && r[2] == nil && r[1] != snap {
				live = id
			}
		}
		if live < 0 {
			t.Fatalf("no live version of row 3 before snapshot %d", snap)
		}
		noErr(t, c.Update(ddl.Name, []int64{live}, []int{2}, [][]any{{snap}}))
		commitAndCompare(t, cat, c)
	}
	update(2, "B")
	update(3, "C")
	if got, want := rowsText(t, pin(t, cat), ddl.Name), "(0,1,NULL,a) (3,1,2,b) (3,2,3,B) (3,3,NULL,C)"; got != want {
		t.Fatalf("%s serves %s, want %s", ddl.Name, got, want)
	}
	// Time travel reads each version at its snapshot (the rows DuckLake
	// scans with begin_snapshot <= S < end_snapshot).
	for at, want := range map[core.SnapshotID]string{1: "b", 2: "B", 3: "C"} {
		v, err := cat.ViewAt(bg, at)
		noErr(t, err)
		var got string
		for _, g := range v.InlinedRows(2) {
			for _, r := range g.Rows {
				if r.RowID == 3 {
					got += *r.Values[0].String
				}
			}
		}
		if got != want {
			t.Errorf("row 3 at snapshot %d reads %q, want %q", at, got, want)
		}
	}

	// The flush's cleanup: the rows deleted, then the table dropped.
	c = pin(t, cat)
	snapshotRows(t, c, 4, "flushed_inlined:2")
	if _, err := c.DropTable(ddl.Name, true); err != nil {
		t.Fatal(err)
	}
	commitAndCompare(t, cat, c)
	d, err := cat.Dump(bg)
	noErr(t, err)
	if len(d.Inlined) != 0 || len(d.InlinedTables) != 0 {
		t.Fatalf("after the drop: rows %+v, tables %+v", d.Inlined, d.InlinedTables)
	}
}
