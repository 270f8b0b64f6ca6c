package core_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// dumpFixture builds a small history:
//
//	1 create schema s, table s.t (a int64, b varchar)
//	2 insert rows 0,1,2
//	3 rename t -> u, add column c
//	4 delete row 1, register a data file
//	5 drop u
func dumpFixture(t *testing.T) (*core.Catalog, objstore.Store) {
	t.Helper()
	ctx := context.Background()
	store := objstore.OpenMemory(fmt.Sprintf("dump-%s-%d", t.Name(), time.Now().UnixNano()), 0)
	c, err := core.Open(ctx, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	var table core.TableID
	must := func(id core.SnapshotID, err error) core.SnapshotID {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	must(c.Commit(ctx, func(tx *core.Transaction) error {
		s, err := tx.CreateSchema("s")
		if err != nil {
			return err
		}
		table, err = tx.CreateTable(s, "t", []core.ColumnDef{{Name: "a", Type: "int64"}, {Name: "b", Type: "varchar"}})
		return err
	}))
	i := func(v int64) core.Value { return core.Value{Int: &v} }
	str := func(v string) core.Value { return core.Value{String: &v} }
	must(c.Commit(ctx, func(tx *core.Transaction) error {
		_, err := tx.InlineInsert(table, [][]core.Value{{i(1), str("x")}, {i(2), {}}, {i(3), str("z")}})
		return err
	}))
	must(c.Commit(ctx, func(tx *core.Transaction) error {
		if err := tx.RenameTable(table, "u"); err != nil {
			return err
		}
		_, err := tx.AddColumn(table, core.ColumnDef{Name: "c", Type: "boolean"})
		return err
	}))
	must(c.Commit(ctx, func(tx *core.Transaction) error {
		if err := tx.InlineDelete(table, []uint64{1}); err != nil {
			return err
		}
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: "u/f.parquet", RecordCount: 7, FileSizeBytes: 100})
		return err
	}))
	must(c.Commit(ctx, func(tx *core.Transaction) error { return tx.DropTable(table) }))
	return c, store
}

func endOf(v core.Versioned) string {
	if v.End == nil {
		return "NULL"
	}
	return fmt.Sprint(*v.End)
}

func TestDumpListsEveryVersion(t *testing.T) {
	c, _ := dumpFixture(t)
	d, err := c.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.At != nil || d.Head.SnapshotID != 5 {
		t.Fatalf("At %v, head %+v", d.At, d.Head)
	}
	if len(d.Snapshots) != 6 {
		t.Fatalf("%d snapshots, want 6", len(d.Snapshots))
	}
	var got []string
	for _, tb := range d.Tables {
		got = append(got, fmt.Sprintf("%s %d-%s", tb.Name, tb.Begin, endOf(tb.Versioned)))
	}
	if fmt.Sprint(got) != "[t 1-3 u 3-5]" {
		t.Fatalf("table versions %v", got)
	}
	got = nil
	for _, col := range d.Columns {
		got = append(got, fmt.Sprintf("%s %d-%s", col.Name, col.Begin, endOf(col.Versioned)))
	}
	if fmt.Sprint(got) != "[a 1-5 b 1-5 c 3-5]" {
		t.Fatalf("column versions %v", got)
	}
	if len(d.DataFiles) != 1 || d.DataFiles[0].Begin != 4 || endOf(d.DataFiles[0].Versioned) != "5" {
		t.Fatalf("data files %+v", d.DataFiles)
	}
	if len(d.Inlined) != 1 {
		t.Fatalf("inlined groups %+v", d.Inlined)
	}
	got = nil
	for _, r := range d.Inlined[0].Rows {
		got = append(got, fmt.Sprintf("%d %d-%s", r.RowID, r.Begin, endOf(r.Versioned)))
	}
	if fmt.Sprint(got) != "[0 2-5 1 2-4 2 2-5]" {
		t.Fatalf("inlined rows %v", got)
	}
	// Dropped table: no stats left (unversioned rows are current values).
	if len(d.TableStats) != 0 {
		t.Fatalf("table stats %+v", d.TableStats)
	}
	if len(d.SchemaVersions) == 0 {
		t.Fatal("no schema versions")
	}
}

func TestDumpAtShowsTheRowsAsTheyStood(t *testing.T) {
	c, _ := dumpFixture(t)
	ctx := context.Background()
	d, err := c.DumpAt(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if d.At == nil || *d.At != 4 || len(d.Snapshots) != 5 {
		t.Fatalf("At %v, %d snapshots", d.At, len(d.Snapshots))
	}
	if len(d.Tables) != 1 || d.Tables[0].Name != "u" || d.Tables[0].End != nil {
		t.Fatalf("tables at 4: %+v", d.Tables)
	}
	if len(d.Columns) != 3 {
		t.Fatalf("columns at 4: %+v", d.Columns)
	}
	for _, col := range d.Columns {
		if col.End != nil {
			t.Fatalf("column %s shows end %d at 4", col.Name, *col.End)
		}
	}
	var rows []string
	for _, r := range d.Inlined[0].Rows {
		rows = append(rows, fmt.Sprintf("%d %d-%s", r.RowID, r.Begin, endOf(r.Versioned)))
	}
	if fmt.Sprint(rows) != "[0 2-NULL 2 2-NULL]" {
		t.Fatalf("inlined rows at 4: %v", rows)
	}
	if len(d.DataFiles) != 1 || d.DataFiles[0].End != nil {
		t.Fatalf("data files at 4: %+v", d.DataFiles)
	}
	// The rows inserted at 2 follow the columns visible at 2.
	cols := d.ColumnsAt(d.Inlined[0].TableID, 2)
	if len(cols) != 2 || cols[0].Name != "a" || cols[1].Name != "b" {
		t.Fatalf("columns at 2: %+v", cols)
	}

	d, err = c.DumpAt(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tables) != 1 || d.Tables[0].Name != "t" || len(d.Inlined) != 0 {
		t.Fatalf("at 1: tables %+v inlined %+v", d.Tables, d.Inlined)
	}
	if len(d.TableStats) != 0 {
		// Stats are unversioned and the table is gone at the head.
		t.Fatalf("at 1: stats %+v", d.TableStats)
	}

	if _, err := c.DumpAt(ctx, 99); !errors.Is(err, core.NotFound) {
		t.Fatalf("DumpAt(99) = %v, want NotFound", err)
	}
}

func TestDumpOnAReadOnlyHandle(t *testing.T) {
	c, store := dumpFixture(t)
	ctx := context.Background()
	want, err := c.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := core.OpenReadOnly(ctx, store, core.CatalogOptions{ReaderPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	got, err := r.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Head != want.Head || len(got.Tables) != len(want.Tables) || len(got.Columns) != len(want.Columns) || len(got.Inlined) != len(want.Inlined) {
		t.Fatalf("read-only dump differs: %+v vs %+v", got, want)
	}
	r.Close(ctx)
	if _, err := r.Dump(ctx); err == nil {
		t.Fatal("Dump on a closed handle succeeded")
	}
}
