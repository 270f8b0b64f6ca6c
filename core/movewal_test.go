package core_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/provider"
)

// moveWalStores returns a catalog store and a separate WAL store, both in
// memory (the WAL store named, so every handle on it sees the same
// objects).
func moveWalStores(t *testing.T) (main, wal objstore.Store) {
	t.Helper()
	return objstore.NewMemory(0), objstore.OpenMemory("movewal-"+uuid.NewString(), 0)
}

// moveWalObjects counts the native WAL objects of the catalog in s.
func moveWalObjects(t *testing.T, s objstore.Store) int {
	t.Helper()
	infos, err := objstore.ListAll(bg, s, "wal/", "")
	if err != nil {
		t.Fatal(err)
	}
	return len(infos)
}

// moveWalContent commits a schema, a table with a data file, a delete file
// and inlined rows, and returns the table.
func moveWalContent(t *testing.T, c *core.Catalog, schema string) core.TableID {
	t.Helper()
	var tb core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		s, err := tx.CreateSchema(schema)
		if err != nil {
			return err
		}
		tb, err = tx.CreateTable(s, "t", cols("a", "b"))
		if err != nil {
			return err
		}
		f, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: schema + ".parquet", RecordCount: 10})
		if err != nil {
			return err
		}
		_, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tb, DataFileID: f, Path: schema + "-d.parquet", DeleteCount: 1})
		return err
	})
	commit(t, c, func(tx *core.Transaction) error {
		one, two := int64(1), int64(2)
		_, err := tx.InlineInsert(tb, [][]core.Value{{{Int: &one}, {Int: &two}}, {{Int: &two}, {}}})
		return err
	})
	return tb
}

func moveDump(t *testing.T, c *core.Catalog) *core.Dump {
	t.Helper()
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	return d
}

// TestMoveWalStoreMovesTheCatalogsWAL moves a live catalog's WAL to another
// store and back: the catalog is unchanged (its full dump, head included),
// the writer left running is fenced, opens without the new WAL store are
// refused naming it, commits continue on the new store and survive a
// reopen, and the move back restores opens without a WAL store.
func TestMoveWalStoreMovesTheCatalogsWAL(t *testing.T) {
	main, wal := moveWalStores(t)
	c, err := core.Open(bg, main, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	moveWalContent(t, c, "s1")
	before := moveDump(t, c)
	// c stays open: the move must fence it.

	rep, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{})
	if err != nil {
		t.Fatalf("MoveWalStore: %v", err)
	}
	if rep.From != "" || rep.To != wal.String() || rep.FirstNewWalID <= rep.LastOldWalID ||
		rep.Format != core.FormatCurrent || rep.Head != before.Head {
		t.Fatalf("report %+v (head before %+v)", rep, before.Head)
	}
	if n := moveWalObjects(t, wal); n == 0 {
		t.Fatal("the new WAL store holds no WAL object")
	}

	// The writer that was running is fenced: its commit fails (reported as
	// fenced, or as an unknown outcome caused by the fence) and never lands.
	_, err = c.Commit(bg, func(tx *core.Transaction) error { _, err := tx.CreateSchema("stale"); return err })
	if !errors.Is(err, slate.ErrFenced) || (!errors.Is(err, core.Fenced) && !errors.Is(err, core.OutcomeUnknown)) {
		t.Fatalf("commit of the writer left running: %v, want it fenced", err)
	}
	c.Close(bg)

	// Without the new WAL store: refused, both open paths, naming it.
	_, err = core.Open(bg, main, core.CatalogOptions{})
	wantKind(t, err, core.Configuration)
	for _, want := range []string{"WAL store mismatch", wal.String(), "MoveWalStore"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("read-write open without the WAL store: %q lacks %q", err, want)
		}
	}
	_, err = core.OpenReadOnly(bg, main, core.CatalogOptions{ReaderPollInterval: -1})
	wantKind(t, err, core.Configuration)
	if !strings.Contains(err.Error(), wal.String()) {
		t.Fatalf("read-only open without the WAL store: %q does not name it", err)
	}

	// With it: the same catalog, and commits continue.
	withWal := core.CatalogOptions{WalStore: wal}
	c2, err := core.Open(bg, main, withWal)
	if err != nil {
		t.Fatalf("open with the new WAL store: %v", err)
	}
	if got := moveDump(t, c2); !reflect.DeepEqual(got, before) {
		t.Fatalf("the catalog changed across the move:\nbefore %+v\nafter  %+v", before, got)
	}
	walBefore := moveWalObjects(t, wal)
	moveWalContent(t, c2, "s2")
	if moveWalObjects(t, wal) <= walBefore {
		t.Fatal("commits after the move wrote no WAL object to the new store")
	}
	mainWal := moveWalObjects(t, main)
	moveWalContent(t, c2, "s3")
	if moveWalObjects(t, main) != mainWal {
		t.Fatal("commits after the move wrote WAL objects to the old store")
	}
	after := moveDump(t, c2)
	if err := c2.Close(bg); err != nil {
		t.Fatal(err)
	}

	// Reopened, read-write and read-only: everything is there.
	c3, err := core.Open(bg, main, withWal)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if got := moveDump(t, c3); !reflect.DeepEqual(got, after) {
		t.Fatal("the reopened catalog differs from the one closed")
	}
	ro := openRO(t, main, withWal)
	if got := moveDump(t, ro); !reflect.DeepEqual(got.Schemas, after.Schemas) || got.Head != after.Head {
		t.Fatalf("read-only open: head %+v, want %+v", got.Head, after.Head)
	}
	c3.Close(bg)

	// And back into the catalog store (nil destination).
	rep, err = core.MoveWalStore(bg, main, nil, core.MoveWalOptions{Catalog: withWal})
	if err != nil {
		t.Fatalf("moving back: %v", err)
	}
	if rep.From != wal.String() || rep.To != "" || rep.Head != after.Head {
		t.Fatalf("report of the move back: %+v", rep)
	}
	_, err = core.Open(bg, main, withWal)
	wantKind(t, err, core.Configuration)
	c4 := openRW(t, main)
	if got := moveDump(t, c4); !reflect.DeepEqual(got, after) {
		t.Fatal("the catalog changed across the move back")
	}
	moveWalContent(t, c4, "s4")
}

// TestMoveWalStoreRefusals: every refusal with its kind and message, and
// none of them moves anything.
func TestMoveWalStoreRefusals(t *testing.T) {
	t.Run("no catalog", func(t *testing.T) {
		main, wal := moveWalStores(t)
		_, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{})
		wantKind(t, err, core.NotFound)
		moveWantText(t, err, "no moraine catalog", "nothing to move")
	})

	// The format refusals give exactly the message an open gives.
	sameAsOpen := func(t *testing.T, main, wal objstore.Store, kind core.Kind, want ...string) {
		t.Helper()
		_, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{})
		wantKind(t, err, kind)
		moveWantText(t, err, want...)
		_, openErr := core.OpenReadOnly(bg, main, core.CatalogOptions{ReaderPollInterval: -1})
		if openErr == nil || openErr.Error() != err.Error() {
			t.Fatalf("move refused with\n  %v\nan open with\n  %v", err, openErr)
		}
		if n := moveWalObjects(t, wal); n != 0 {
			t.Fatalf("a refused move wrote %d WAL objects to the new store", n)
		}
	}
	t.Run("future format", func(t *testing.T) {
		main, wal := moveWalStores(t)
		openRW(t, main).Close(bg)
		if err := core.SetFormatForTest(bg, main, "", core.FormatCurrent+1, nil); err != nil {
			t.Fatal(err)
		}
		sameAsOpen(t, main, wal, core.Migration, "newer than this build understands", "upgrade moraine")
	})
	t.Run("migration marker", func(t *testing.T) {
		main, wal := moveWalStores(t)
		openRW(t, main).Close(bg)
		if err := core.SetMigrationMarkerForTest(bg, main, ""); err != nil {
			t.Fatal(err)
		}
		sameAsOpen(t, main, wal, core.Migration, "in the middle of a format migration", "moraine migrate")
	})

	// A log-resident catalog: named as an open names it, refused whatever
	// provider the process has.
	logResident := func(t *testing.T, main, wal objstore.Store, kind string) {
		t.Helper()
		_, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{})
		wantKind(t, err, core.Migration)
		moveWantText(t, err, "the catalog is log-resident ("+kind+")", "moving the WAL store opens the store without a commit-log provider")
		_, openErr := core.OpenReadOnly(bg, main, core.CatalogOptions{ReaderPollInterval: -1})
		moveWantText(t, openErr, "the catalog is log-resident ("+kind+")")
		if n := moveWalObjects(t, wal); n != 0 {
			t.Fatalf("a refused move wrote %d WAL objects to the new store", n)
		}
	}
	t.Run("legacy log-resident format 10", func(t *testing.T) {
		_, wal := moveWalStores(t)
		main := legacyLakeOf(t, "small", core.FormatLegacyLog, nil)
		logResident(t, main, wal, "format 10, a legacy log-resident catalog")
	})
	t.Run("the current format with an origin", func(t *testing.T) {
		main, wal := moveWalStores(t)
		openRW(t, main).Close(bg)
		origin := uint64(3)
		if err := core.SetFormatForTest(bg, main, "", core.FormatCurrent, &origin); err != nil {
			t.Fatal(err)
		}
		logResident(t, main, wal, "format 13 with commit_log_batch_origin 3")
	})
	t.Run("adopted by the in-tree commit log", func(t *testing.T) {
		main, wal := moveWalStores(t)
		c, err := core.Open(bg, main, core.CatalogOptions{CommitLog: provider.New(provider.Options{}), ReaderPollInterval: -1, CommitLogFoldSlots: -1})
		if err != nil {
			t.Fatalf("open over the commit log: %v", err)
		}
		if err := c.Close(bg); err != nil {
			t.Fatal(err)
		}
		logResident(t, main, wal, "format 13 with commit_log_batch_origin 0")
	})

	t.Run("committer", func(t *testing.T) {
		main, wal := moveWalStores(t)
		openRW(t, main).Close(bg)
		_, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{Catalog: core.CatalogOptions{CommitLog: provider.New(provider.Options{})}})
		wantKind(t, err, core.Configuration)
		moveWantText(t, err, "moving the WAL store refuses a committer", "CatalogOptions.CommitLog")
		if n := moveWalObjects(t, wal); n != 0 {
			t.Fatalf("a refused move wrote %d WAL objects", n)
		}
		openRW(t, main) // nothing moved: the catalog store still holds the WAL
	})
	t.Run("already there", func(t *testing.T) {
		main, wal := moveWalStores(t)
		openRW(t, main).Close(bg)
		_, err := core.MoveWalStore(bg, main, nil, core.MoveWalOptions{})
		wantKind(t, err, core.InvalidArgument)
		moveWantText(t, err, "is already in the catalog's own store")
		if _, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = core.MoveWalStore(bg, main, wal, core.MoveWalOptions{Catalog: core.CatalogOptions{WalStore: wal}})
		wantKind(t, err, core.InvalidArgument)
		moveWantText(t, err, "is already in "+wal.String())
	})
	t.Run("wrong current WAL store", func(t *testing.T) {
		main, wal := moveWalStores(t)
		other := objstore.OpenMemory("movewal-other-"+uuid.NewString(), 0)
		openRW(t, main).Close(bg)
		_, err := core.MoveWalStore(bg, main, wal, core.MoveWalOptions{Catalog: core.CatalogOptions{WalStore: other}})
		wantKind(t, err, core.Configuration)
		moveWantText(t, err, "is not where CatalogOptions.WalStore says", other.String())
		if moveWalObjects(t, wal) != 0 || moveWalObjects(t, other) != 0 {
			t.Fatal("a refused move wrote WAL objects")
		}
	})
	t.Run("new store already holds a later WAL", func(t *testing.T) {
		main, wal := moveWalStores(t)
		// A catalog whose WAL went to wal at creation has WAL ids there.
		c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{WalStore: wal})
		if err != nil {
			t.Fatal(err)
		}
		moveWalContent(t, c, "elsewhere")
		moveWalContent(t, c, "elsewhere2")
		c.Close(bg)
		openRW(t, main).Close(bg)
		_, err = core.MoveWalStore(bg, main, wal, core.MoveWalOptions{})
		wantKind(t, err, core.InvalidArgument)
		moveWantText(t, err, "already holds WAL files")
		openRW(t, main) // the catalog store is still in charge
	})
}

func moveWantText(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q lacks %q", err, s)
		}
	}
}
