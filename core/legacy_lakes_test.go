package core_test

import (
	"fmt"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/lakes"
)

// legacyLakesDir is where the legacy lakes live (package lakes embeds them).
const legacyLakesDir = "../internal/testutil/lakes/testdata/legacy"

// The legacy lakes: a local store's directory each, at an older format, as
// an older build left it. "full" holds populateFixture's content, "small"
// populateSmall's (what cmd/moraine's tests count).
var legacyLakes = []struct {
	content  string
	populate func(*core.Catalog) error
	format   uint64
	origin   *uint64
}{
	{"full", populateFixture, core.FormatLegacy, nil},
	{"full", populateFixture, core.FormatLegacyLog, nil},
	{"full", populateFixture, core.FormatLegacyLog, originOf(2)},
	{"full", populateFixture, core.FormatLegacyLog, originOf(3)},
	{"full", populateFixture, core.FormatNameDirectory, nil},
	{"full", populateFixture, core.FormatNameDirectory, originOf(3)},
	{"small", populateSmall, core.FormatLegacy, nil},
	{"small", populateSmall, core.FormatLegacyLog, nil},
}

// legacyLakeName names a legacy lake: content-format[-originN].
func legacyLakeName(content string, format uint64, origin *uint64) string {
	if origin != nil {
		return fmt.Sprintf("%s-%d-origin%d", content, format, *origin)
	}
	return fmt.Sprintf("%s-%d", content, format)
}

// legacyLake is a memory store holding a copy of the legacy lake with
// populateFixture's content at format (and origin).
func legacyLake(t *testing.T, format uint64, origin *uint64) objstore.Store {
	t.Helper()
	return legacyLakeOf(t, "full", format, origin)
}

// legacyLakeOf is a memory store holding a copy of a legacy lake.
func legacyLakeOf(t *testing.T, content string, format uint64, origin *uint64) objstore.Store {
	t.Helper()
	local, err := objstore.NewLocal(lakes.Legacy(t, legacyLakeName(content, format, origin)), 0)
	if err != nil {
		t.Fatal(err)
	}
	return copyMemoryStore(t, local)
}

// populateSmall writes a little content: a schema, a table with a data
// file and a delete file, a view.
func populateSmall(c *core.Catalog) error {
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		s, err := tx.CreateSchema("sales")
		if err != nil {
			return err
		}
		tb, err := tx.CreateTable(s, "orders", []core.ColumnDef{{Name: "a", Type: "int64"}})
		if err != nil {
			return err
		}
		f, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f.parquet", RecordCount: 3})
		if err != nil {
			return err
		}
		if _, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tb, DataFileID: f, Path: "d.parquet", DeleteCount: 1}); err != nil {
			return err
		}
		_, err = tx.CreateView(s, "v", "SELECT 1", "", "")
		return err
	})
	return err
}
