package core_test

import (
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// SET NOT NULL (AlterColumn with NullsAllowed false) is refused, as
// DuckLake refuses it, when the catalog shows NULLs in the column: a live
// inlined row holding NULL, a data file's statistics counting NULLs, or the
// table's column statistics; the error is Constraint and names the table,
// the column and the evidence. Without any of them it is allowed.
func TestSetNotNullRefusedWhenTheCatalogShowsNulls(t *testing.T) {
	i64 := func(v int64) core.Value { return core.Value{Int: &v} }
	null := core.Value{}
	setup := func(t *testing.T) (*core.Catalog, core.TableID, map[string]core.ColumnID) {
		c := openRW(t, objstore.NewMemory(0))
		var tb core.TableID
		commit(t, c, func(tx *core.Transaction) error {
			var err error
			tb, err = tx.CreateTable(mainSchema(t, tx), "people", cols("a", "b"))
			return err
		})
		ids := map[string]core.ColumnID{}
		for _, col := range snap(t, c).Columns(tb) {
			ids[col.Name] = col.ID
		}
		return c, tb, ids
	}
	setNotNull := func(c *core.Catalog, tb core.TableID, col core.ColumnID) error {
		_, err := c.Commit(bg, func(tx *core.Transaction) error {
			return tx.AlterColumn(tb, col, core.ColumnChange{NullsAllowed: ptr(false)})
		})
		return err
	}
	refused := func(t *testing.T, err error, evidence string) {
		t.Helper()
		if core.KindOf(err) != core.Constraint || !strings.Contains(err.Error(), `column "b" of table "people"`) || !strings.Contains(err.Error(), evidence) {
			t.Fatalf("SET NOT NULL: %v, want a Constraint naming the table, the column and %q", err, evidence)
		}
	}

	t.Run("inlined rows", func(t *testing.T) {
		c, tb, ids := setup(t)
		commit(t, c, func(tx *core.Transaction) error {
			_, err := tx.InlineInsert(tb, [][]core.Value{{i64(1), i64(10)}, {i64(2), null}})
			return err
		})
		refused(t, setNotNull(c, tb, ids["b"]), "inlined row 1 holds NULL")
		if err := setNotNull(c, tb, ids["a"]); err != nil {
			t.Fatalf("SET NOT NULL on a column without NULLs: %v", err)
		}
		// Deleting the NULL row lifts the refusal.
		commit(t, c, func(tx *core.Transaction) error { return tx.InlineDelete(tb, []uint64{1}) })
		// a's SET NOT NULL changed the table's layout since the rows were
		// written: they cannot be read by position any more.
		refused(t, setNotNull(c, tb, ids["b"]), "earlier layout")
	})
	t.Run("inlined rows after a delete", func(t *testing.T) {
		c, tb, ids := setup(t)
		commit(t, c, func(tx *core.Transaction) error {
			_, err := tx.InlineInsert(tb, [][]core.Value{{i64(1), i64(10)}, {i64(2), null}})
			return err
		})
		commit(t, c, func(tx *core.Transaction) error { return tx.InlineDelete(tb, []uint64{1}) })
		if err := setNotNull(c, tb, ids["b"]); err != nil {
			t.Fatalf("SET NOT NULL once the NULL row is deleted: %v", err)
		}
	})
	t.Run("file statistics", func(t *testing.T) {
		c, tb, ids := setup(t)
		commit(t, c, func(tx *core.Transaction) error {
			_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f1.parquet", RecordCount: 3,
				ColumnStats: []core.FileColumnStats{{ColumnID: ids["a"], NullCount: ptr(uint64(0))}, {ColumnID: ids["b"], NullCount: ptr(uint64(2))}}})
			return err
		})
		refused(t, setNotNull(c, tb, ids["b"]), "f1.parquet) holds 2 NULLs")
		if err := setNotNull(c, tb, ids["a"]); err != nil {
			t.Fatalf("SET NOT NULL on a column whose files count no NULLs: %v", err)
		}
	})
	t.Run("table statistics", func(t *testing.T) {
		c, tb, ids := setup(t)
		commit(t, c, func(tx *core.Transaction) error {
			return tx.UpdateColumnStats(core.TableColumnStats{TableID: tb, ColumnID: ids["b"], ContainsNull: ptr(true)})
		})
		refused(t, setNotNull(c, tb, ids["b"]), "contains_null")
	})
}
