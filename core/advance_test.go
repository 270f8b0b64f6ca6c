package core_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// A committer that loses its slot to data-only commits into another table
// (files registered and expired, a delete file, table, column and file
// statistics, inlined rows inserted and deleted) retries
// on its view advanced over the winners' slots, not on a reload; every
// advanced view is compared with a full load of the store at its head
// (checkAdvance, on in every test: a difference fails the commit). A loss
// to a commit that changes the schema declines, and the retry loads.
func TestLostRaceAdvancesTheViewOverDataOnlySlots(t *testing.T) {
	store := objstore.NewMemory(0)
	slow := func(o *core.CatalogOptions) { o.CommitLogPollInterval = time.Minute }
	a := openCommitter(t, store, logOpts(slow))
	tb := createTable(t, a, "t")
	mine := createTable(t, a, "b's")
	b := openCommitter(t, store, logOpts(slow))
	if _, err := b.Commit(bg, insertInto(mine, "b0.parquet")); err != nil {
		t.Fatal(err)
	}
	files := make([]core.DataFileID, 3) // a closure may re-run: it sets, never appends
	for i := 0; i < 3; i++ {
		if _, err := a.Commit(bg, func(tx *core.Transaction) error {
			id, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: fmt.Sprintf("a%d.parquet", i), RecordCount: 10, FileSizeBytes: 100})
			if err != nil {
				return err
			}
			files[i] = id
			v := uint64(10)
			col := snapOf(t, tx).Columns(tb)[0].ID
			if err := tx.SetFileColumnStats(core.FileColumnStats{TableID: tb, DataFileID: id, ColumnID: col, ValueCount: &v}); err != nil {
				return err
			}
			return tx.UpdateTableStats(core.TableStats{TableID: tb, RecordCount: uint64(10 * (i + 1)), NextRowID: uint64(10 * (i + 1)), FileSizeBytes: 100})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Commit(bg, func(tx *core.Transaction) error {
		if _, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tb, DataFileID: files[1], Path: "d.parquet", DeleteCount: 1}); err != nil {
			return err
		}
		return tx.ExpireDataFile(tb, files[0])
	}); err != nil {
		t.Fatal(err)
	}
	// Inlined rows: two inserted, then one of them deleted and one more
	// inserted in one commit.
	one := int64(1)
	var first uint64
	if _, err := a.Commit(bg, func(tx *core.Transaction) (err error) {
		first, err = tx.InlineInsert(tb, [][]core.Value{{{Int: &one}}, {{Int: &one}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(bg, func(tx *core.Transaction) error {
		if err := tx.InlineDelete(tb, []uint64{first}); err != nil {
			return err
		}
		_, err := tx.InlineInsert(tb, [][]core.Value{{{Int: &one}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := core.AdvancedViewsForTest()
	if _, err := b.Commit(bg, insertInto(mine, "b1.parquet")); err != nil {
		t.Fatalf("commit after losing to data-only slots: %v", err)
	}
	if core.AdvancedViewsForTest() == before {
		t.Fatal("the lost race reloaded the catalog instead of advancing the view")
	}
	// A schema change declines: the retry loads (and still lands).
	if _, err := a.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.AddColumn(tb, core.ColumnDef{Name: "c", Type: "int64"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before = core.AdvancedViewsForTest()
	if _, err := b.Commit(bg, insertInto(mine, "b2.parquet")); err != nil {
		t.Fatalf("commit after losing to a schema change: %v", err)
	}
	if core.AdvancedViewsForTest() != before {
		t.Fatal("a view was advanced over a slot that changed the schema")
	}
	// Both handles, and a fresh open, hold the same catalog.
	if err := a.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	da, db := dumpOf(t, a), dumpOf(t, b)
	fresh := openCommitter(t, store, logOpts())
	if df := dumpOf(t, fresh); !reflect.DeepEqual(df, da) || !reflect.DeepEqual(df, db) {
		t.Fatalf("the handles disagree:\n a: %+v\n b: %+v\n fresh: %+v", da, db, df)
	}
}

func snapOf(t *testing.T, tx *core.Transaction) *core.CatalogView {
	t.Helper()
	return tx.View()
}

func dumpOf(t *testing.T, c *core.Catalog) any {
	t.Helper()
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A slot that removes a table's only data file and registers another (a
// compaction of one file) advances a peer's view: the table's file map,
// emptied by the first write, takes the second (it once panicked on a nil
// map here, seen as DuckLake's rewrite_data_files racing on a commit log).
func TestLostRaceAdvancesOverAFileReplacedInOneSlot(t *testing.T) {
	store := objstore.NewMemory(0)
	slow := func(o *core.CatalogOptions) { o.CommitLogPollInterval = time.Minute }
	a := openCommitter(t, store, logOpts(slow))
	tb := createTable(t, a, "t")
	mine := createTable(t, a, "b's")
	var old core.DataFileID
	if _, err := a.Commit(bg, func(tx *core.Transaction) (err error) {
		old, err = tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "a0.parquet", RecordCount: 10, FileSizeBytes: 100})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b := openCommitter(t, store, logOpts(slow))
	if _, err := b.Commit(bg, insertInto(mine, "b0.parquet")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(bg, func(tx *core.Transaction) error {
		if err := tx.ExpireDataFile(tb, old); err != nil {
			return err
		}
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "a1.parquet", RecordCount: 10, FileSizeBytes: 100})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := core.AdvancedViewsForTest()
	if _, err := b.Commit(bg, insertInto(mine, "b1.parquet")); err != nil {
		t.Fatalf("commit after losing to the replacement: %v", err)
	}
	if core.AdvancedViewsForTest() == before {
		t.Fatal("the lost race reloaded the catalog instead of advancing the view")
	}
	v, err := b.View(bg)
	if err != nil {
		t.Fatal(err)
	}
	if files := v.DataFiles(tb); len(files) != 1 || files[0].Path != "a1.parquet" {
		t.Fatalf("the advanced view holds %+v", files)
	}
}
