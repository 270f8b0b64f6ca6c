package storage

import (
	"path/filepath"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// writableLake is a lake the Go API wrote for test/sql/storage/writes.test
// to attach read-write and write to (in transactions it rolls back): schema
// s, table t (id int64, name varchar) with two inlined rows. It returns the
// store and the name of t's inlined-data table.
func writableLake(t *testing.T) (lake, inlined string) {
	t.Helper()
	lake = filepath.Join(t.TempDir(), "writable")
	store, err := objstore.NewLocal(lake, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.Open(bg, store, core.CatalogOptions{DataPath: "/data/"})
	if err != nil {
		t.Fatal(err)
	}
	var table core.TableID
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		s, err := tx.CreateSchema("s")
		if err != nil {
			return err
		}
		table, err = tx.CreateTable(s, "t", []core.ColumnDef{{Name: "id", Type: "int64"}, {Name: "name", Type: "varchar"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		one, two, a, b := int64(1), int64(2), "a", "b"
		_, err := tx.InlineInsert(table, [][]core.Value{{{Int: &one}, {String: &a}}, {{Int: &two}, {String: &b}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(bg); err != nil {
		t.Fatal(err)
	}
	return lake, inlinedTableOf(t, lake, "t")
}
