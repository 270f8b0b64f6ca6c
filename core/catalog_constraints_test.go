package core_test

import (
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// An inline insert puts NULL in no NOT NULL column: the whole insert is
// refused as Constraint naming the column, and nothing of it lands.
func TestInlineInsertRefusesNullInANotNullColumn(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	no := false
	var table core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		table, err = tx.CreateTable(mainSchema(t, tx), "t", []core.ColumnDef{
			{Name: "a", Type: "int64"},
			{Name: "b", Type: "int64", NullsAllowed: &no},
		})
		return err
	})
	one := int64(1)
	head := snap(t, c).ID()
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.InlineInsert(table, [][]core.Value{{{Int: &one}, {Int: &one}}, {{Int: &one}, {}}})
		return err
	})
	wantKind(t, err, core.Constraint)
	if !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), "NOT NULL") || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("refusal %q does not name row 1, column b and NOT NULL", err)
	}
	s := snap(t, c)
	if s.ID() != head || s.InlinedRowCount(table) != 0 {
		t.Fatalf("a refused insert changed the catalog: snapshot %d (was %d), %d inlined rows", s.ID(), head, s.InlinedRowCount(table))
	}
	// NULL in the nullable column is fine.
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.InlineInsert(table, [][]core.Value{{{}, {Int: &one}}})
		return err
	})
	if n := snap(t, c).InlinedRowCount(table); n != 1 {
		t.Fatalf("%d inlined rows, want 1", n)
	}
}

// File column statistics name a column of the file's table.
func TestSetFileColumnStatsRefusesAnUnknownColumn(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	var table core.TableID
	var file core.DataFileID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		if table, err = tx.CreateTable(mainSchema(t, tx), "t", cols("a")); err != nil {
			return err
		}
		file, err = tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: "f.parquet", RecordCount: 1})
		return err
	})
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		return tx.SetFileColumnStats(core.FileColumnStats{TableID: table, DataFileID: file, ColumnID: 999})
	})
	wantKind(t, err, core.NotFound)
	if !strings.Contains(err.Error(), "column 999") {
		t.Fatalf("refusal %q does not name the column", err)
	}
}
