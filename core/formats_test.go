package core_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

func cellInt(n int64) core.Value  { return core.Value{Int: &n} }
func cellStr(s string) core.Value { return core.Value{String: &s} }
func originOf(n uint64) *uint64   { return &n }
func testFileDef(t core.TableID, path string, n uint64) core.DataFileDef {
	return core.DataFileDef{TableID: t, Path: path, RecordCount: n, FileSizeBytes: 10 * n}
}

// populateFixture writes realistic content through the ordinary verbs, as an
// older build would have: several schemas, tables with nested columns,
// data and delete files with statistics, renames and drops (so history
// exists), inlined rows inserted, deleted and flushed, views, tags,
// options, partitioning and sorting.
func populateFixture(c *core.Catalog) error {
	var sales, ops core.SchemaID
	var orders, items, logT, log2 core.TableID
	var f1, f2, f3 core.DataFileID
	var d2 core.DeleteFileID
	var bigOrders core.ViewID
	var colB core.ColumnID
	steps := []func(tx *core.Transaction) error{
		func(tx *core.Transaction) (err error) {
			if sales, err = tx.CreateSchema("sales"); err != nil {
				return err
			}
			if ops, err = tx.CreateSchema("ops"); err != nil {
				return err
			}
			orders, err = tx.CreateTable(sales, "orders", []core.ColumnDef{{Name: "a", Type: "int64"}, {Name: "b", Type: "varchar"},
				{Name: "s", Type: "struct", Children: []core.ColumnDef{{Name: "x", Type: "int32"}, {Name: "y", Type: "float64"}}}})
			if err != nil {
				return err
			}
			for _, c := range tx.View().Columns(orders) {
				if c.Name == "b" {
					colB = c.ID
				}
			}
			if items, err = tx.CreateTable(sales, "items", cols("sku", "qty")); err != nil {
				return err
			}
			if logT, err = tx.CreateTable(ops, "log", cols("n")); err != nil {
				return err
			}
			if bigOrders, err = tx.CreateView(sales, "big_orders", "SELECT * FROM orders WHERE a > 10", "", ""); err != nil {
				return err
			}
			_, err = tx.CreateView(ops, "recent", "SELECT * FROM log", "", "")
			tx.SetAuthor("fixture")
			return err
		},
		func(tx *core.Transaction) (err error) {
			d := testFileDef(orders, "orders/f1.parquet", 100)
			d.ColumnStats = []core.FileColumnStats{{ColumnID: colB, NullCount: originOf(3)}}
			if f1, err = tx.RegisterDataFile(d); err != nil {
				return err
			}
			if f2, err = tx.RegisterDataFile(testFileDef(orders, "orders/f2.parquet", 50)); err != nil {
				return err
			}
			if f3, err = tx.RegisterDataFile(testFileDef(items, "items/f3.parquet", 10)); err != nil {
				return err
			}
			if err := tx.SetTag(uint64(orders), "owner", "ops"); err != nil {
				return err
			}
			if err := tx.SetOption(core.ScopeTable, uint64(orders), "target_file_size", "1MB"); err != nil {
				return err
			}
			tx.SetCommitMessage("load")
			return tx.SetOption(core.ScopeSchema, uint64(sales), "owner", "finance")
		},
		func(tx *core.Transaction) (err error) {
			if _, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: orders, DataFileID: f1, Path: "orders/d1.parquet", DeleteCount: 5}); err != nil {
				return err
			}
			if d2, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: orders, DataFileID: f2, Path: "orders/d2.parquet", DeleteCount: 2}); err != nil {
				return err
			}
			_, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: items, DataFileID: f3, Path: "items/d3.parquet", DeleteCount: 1})
			return err
		},
		func(tx *core.Transaction) (err error) {
			if err := tx.RenameTable(items, "line_items"); err != nil {
				return err
			}
			if err := tx.AlterView(bigOrders, "large_orders", ""); err != nil {
				return err
			}
			if err := tx.DropTable(logT); err != nil {
				return err
			}
			log2, err = tx.CreateTable(ops, "log", []core.ColumnDef{{Name: "n", Type: "int64"}, {Name: "msg", Type: "varchar"}})
			return err
		},
		func(tx *core.Transaction) error {
			_, err := tx.InlineInsert(log2, [][]core.Value{{cellInt(1), cellStr("a")}, {cellInt(2), cellStr("b")}, {cellInt(3), {}}})
			return err
		},
		func(tx *core.Transaction) error {
			first := tx.View().InlinedRows(log2)[0].Rows[0].RowID
			if err := tx.InlineDelete(log2, []uint64{first}); err != nil {
				return err
			}
			if err := tx.ExpireDeleteFile(orders, d2); err != nil {
				return err
			}
			_, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: orders, DataFileID: f1, Path: "orders/d4.parquet", DeleteCount: 7})
			return err
		},
		func(tx *core.Transaction) error {
			if _, err := tx.FlushInlined(log2, core.DataFileDef{Path: "log/flushed.parquet", RecordCount: 2}); err != nil {
				return err
			}
			if _, err := tx.InlineInsert(log2, [][]core.Value{{cellInt(4), cellStr("d")}}); err != nil {
				return err
			}
			if err := tx.ExpireDataFile(orders, f2); err != nil {
				return err
			}
			if _, err := tx.SetPartitioning(orders, []core.PartitionColumn{{KeyIndex: 0, ColumnID: colB, Transform: "identity"}}); err != nil {
				return err
			}
			_, err := tx.SetSorting(orders, []core.SortExpression{{Index: 0, Expression: "a", Dialect: "duckdb", Direction: "ASC", NullOrder: "NULLS_LAST"}})
			return err
		},
		func(tx *core.Transaction) error {
			if _, err := tx.AddColumn(orders, core.ColumnDef{Name: "c", Type: "varchar"}); err != nil {
				return err
			}
			if err := tx.RenameColumn(orders, colB, "bee"); err != nil {
				return err
			}
			return tx.SetTag(uint64(orders), "owner", "platform")
		},
		func(tx *core.Transaction) error { return tx.DropSchema(ops, true) },
		func(tx *core.Transaction) error {
			ops2, err := tx.CreateSchema("ops")
			if err != nil {
				return err
			}
			t, err := tx.CreateTable(ops2, "log", cols("n"))
			if err != nil {
				return err
			}
			if _, err := tx.InlineInsert(t, [][]core.Value{{cellInt(10)}, {cellInt(11)}}); err != nil {
				return err
			}
			if err := tx.UnsetOption(core.ScopeSchema, uint64(sales), "owner"); err != nil {
				return err
			}
			return tx.RemoveTag(uint64(orders), "owner")
		},
	}
	for i, fn := range steps {
		if _, err := c.Commit(bg, fn); err != nil {
			return fmt.Errorf("populateFixture step %d: %w", i, err)
		}
	}
	return nil
}

func materializeAll(t *testing.T, store objstore.Store) core.Materialized {
	t.Helper()
	m, err := core.MaterializeForTest(bg, store, "")
	if err != nil {
		t.Fatalf("materializing: %v", err)
	}
	return m
}

func formatState(t *testing.T, store objstore.Store) core.FormatState {
	t.Helper()
	st, err := core.FormatStateForTest(bg, store, "")
	if err != nil {
		t.Fatalf("reading the format state: %v", err)
	}
	return st
}

func indexKeys(t *testing.T, store objstore.Store) map[string]string {
	t.Helper()
	k, err := core.IndexKeysForTest(bg, store, "")
	if err != nil {
		t.Fatalf("reading the index: %v", err)
	}
	return k
}

// sameHistory fails unless two materializations hold the same snapshots,
// head and time-travel views.
func sameHistory(t *testing.T, what string, want, got core.Materialized) {
	t.Helper()
	if !reflect.DeepEqual(want.Snapshots, got.Snapshots) {
		t.Fatalf("%s: snapshot records differ", what)
	}
	if !reflect.DeepEqual(want.Head, got.Head) {
		t.Fatalf("%s: the head view differs", what)
	}
	if len(want.At) != len(got.At) {
		t.Fatalf("%s: %d time-travel views, want %d", what, len(got.At), len(want.At))
	}
	for i := range want.At {
		if !reflect.DeepEqual(want.At[i], got.At[i]) {
			t.Fatalf("%s: the view at snapshot %d differs", what, want.At[i].ID())
		}
	}
	if want.Stamp.SnapshotID != got.Stamp.SnapshotID {
		t.Fatalf("%s: head snapshot %d, want %d", what, got.Stamp.SnapshotID, want.Stamp.SnapshotID)
	}
}

// wantIndexes fails unless the store's index subspace is exactly what the
// head implies at format.
func wantIndexes(t *testing.T, what string, store objstore.Store, format uint64) {
	t.Helper()
	got := indexKeys(t, store)
	want := core.ExpectedIndexForTest(materializeAll(t, store).Head, format)
	if !maps.Equal(got, want) {
		var extra, missing []string
		for k := range got {
			if want[k] != got[k] {
				extra = append(extra, k)
			}
		}
		for k := range want {
			if got[k] != want[k] {
				missing = append(missing, k)
			}
		}
		t.Fatalf("%s: index differs from the head at format %d: unexpected/different %v, missing/different %v", what, format, extra, missing)
	}
}

func wantRefused(t *testing.T, store objstore.Store, kind core.Kind, substrings ...string) {
	t.Helper()
	_, err := core.Open(bg, store, core.CatalogOptions{})
	wantKind(t, err, kind)
	_, rerr := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1})
	wantKind(t, rerr, kind)
	for _, s := range substrings {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("read-write refusal %q does not mention %q", err, s)
		}
		if !strings.Contains(rerr.Error(), s) {
			t.Fatalf("read-only refusal %q does not mention %q", rerr, s)
		}
	}
}

func wantOpens(t *testing.T, store objstore.Store, format uint64) {
	t.Helper()
	c, err := core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatalf("read-write open: %v", err)
	}
	if f, o := c.Format(); f != format || o != nil {
		t.Fatalf("read-write open at format %d origin %v, want %d and none", f, o, format)
	}
	c.Close(bg)
	r, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if f, _ := r.Format(); f != format {
		t.Fatalf("read-only open at format %d, want %d", f, format)
	}
	r.Close(bg)
}

// TestValidateFormatOrder: every refusal on both open paths, in the order
// validate_format checks them: a future format, then a migration marker,
// then a log-resident catalog without a provider.
func TestValidateFormatOrder(t *testing.T) {
	origin := originOf(4)
	cases := []struct {
		name     string
		format   uint64
		origin   *uint64
		marker   bool
		kind     core.Kind
		messages []string
	}{
		{"future format before marker and origin", core.FormatCurrent + 1, origin, true, core.Migration, []string{"upgrade moraine", "format 14"}},
		{"marker before origin", core.FormatCurrent, origin, true, core.Migration, []string{"moraine migrate <uri>", "middle of a format migration"}},
		{"legacy log-resident 10", core.FormatLegacyLog, nil, false, core.Migration, []string{"commit-log library", "format 10"}},
		{"adopted legacy 10", core.FormatLegacyLog, origin, false, core.Migration, []string{"commit-log library", "commit_log_batch_origin 4"}},
		{"log-resident 11", core.FormatNameDirectory, origin, false, core.Migration, []string{"commit-log library", "format 11 with commit_log_batch_origin 4"}},
		{"log-resident 12", core.FormatDeleteTargets, origin, false, core.Migration, []string{"commit-log library", "format 12"}},
		{"format older than the ladder", core.MinFormat - 1, nil, false, core.Migration, []string{"older than this build opens"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := objstore.NewMemory(0)
			c := openRW(t, store)
			c.Close(bg)
			if err := core.SetFormatForTest(bg, store, "", tc.format, tc.origin); err != nil {
				t.Fatal(err)
			}
			if tc.marker {
				if err := core.SetMigrationMarkerForTest(bg, store, ""); err != nil {
					t.Fatal(err)
				}
			}
			wantRefused(t, store, tc.kind, tc.messages...)
		})
	}
	// Native catalogs at 9, 11 and 12 open.
	for _, f := range []uint64{core.FormatLegacy, core.FormatNameDirectory, core.FormatDeleteTargets} {
		store := objstore.NewMemory(0)
		c := openRW(t, store)
		c.Close(bg)
		if err := core.SetFormatForTest(bg, store, "", f, nil); err != nil {
			t.Fatal(err)
		}
		wantOpens(t, store, f)
	}
}

// TestMigrateRefusals: Migrate refuses log-resident catalogs (it opens
// stores without a provider), future formats and lowering, and an empty
// store, without writing anything.
func TestMigrateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format uint64
		origin *uint64
		want   string
	}{
		{"legacy 10", core.FormatLegacyLog, nil, "commit-log library"},
		{"adopted 10", core.FormatLegacyLog, originOf(3), "commit-log library"},
		{"log-resident 11", core.FormatNameDirectory, originOf(3), "commit-log library"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := legacyLake(t, tc.format, tc.origin)
			before := formatState(t, store)
			for _, dry := range []bool{true, false} {
				_, err := core.Migrate(bg, store, core.MigrateOptions{DryRun: dry})
				wantKind(t, err, core.Migration)
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "migrat") {
					t.Fatalf("refusal %q does not say migration needs %q", err, tc.want)
				}
			}
			if after := formatState(t, store); !reflect.DeepEqual(before, after) {
				t.Fatalf("a refused migration changed the store: %+v -> %+v", before, after)
			}
		})
	}
	var store objstore.Store = objstore.NewMemory(0)
	c := openRW(t, store)
	c.Close(bg)
	core.SetFormatForTest(bg, store, "", core.FormatCurrent+1, nil)
	_, err := core.Migrate(bg, store, core.MigrateOptions{})
	wantKind(t, err, core.Migration)
	if !strings.Contains(err.Error(), "upgrade moraine") {
		t.Fatalf("future format: %v", err)
	}

	store = legacyLake(t, core.FormatNameDirectory, nil)
	_, err = core.Migrate(bg, store, core.MigrateOptions{Target: core.FormatLegacy})
	wantKind(t, err, core.InvalidArgument)
	store = legacyLake(t, core.FormatLegacy, nil)
	_, err = core.Migrate(bg, store, core.MigrateOptions{Target: core.FormatLegacyLog})
	wantKind(t, err, core.InvalidArgument)
	if !strings.Contains(err.Error(), "adoption") {
		t.Fatalf("target 10: %v", err)
	}

	empty := objstore.NewMemory(0)
	_, err = core.Migrate(bg, empty, core.MigrateOptions{})
	wantKind(t, err, core.NotFound)
	if objs, _ := objstore.ListAll(bg, empty, "", ""); len(objs) != 0 {
		t.Fatalf("migrating an empty store wrote %d objects", len(objs))
	}
}

// TestMigrate9To12PreservesEverything: a legacy catalog migrated to 12
// keeps every snapshot, entity and time-travel view, gains exactly the
// indexes its head implies, and keeps them through later commits.
func TestMigrate9To12PreservesEverything(t *testing.T) {
	store := legacyLake(t, core.FormatLegacy, nil)
	if k := indexKeys(t, store); len(k) != 0 {
		t.Fatalf("a format-9 catalog holds %d index keys", len(k))
	}
	wantOpens(t, store, core.FormatLegacy)
	before := materializeAll(t, store)
	beforeState := formatState(t, store)

	dry, err := core.Migrate(bg, store, core.MigrateOptions{DryRun: true})
	if err != nil || !dry.DryRun || dry.From != 9 || dry.To != 13 || len(dry.Units) != 3 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if st := formatState(t, store); !reflect.DeepEqual(st, beforeState) {
		t.Fatalf("a dry run changed the store")
	}

	rep, err := core.Migrate(bg, store, core.MigrateOptions{StepEntries: 2})
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if rep.From != 9 || rep.To != 13 || rep.Resumed || rep.Origin != nil || len(rep.Units) != 3 ||
		rep.Units[0].Unit != "9->11" || rep.Units[1].Unit != "11->12" || rep.Units[2].Unit != "12->13" {
		t.Fatalf("report %+v", rep)
	}
	if rep.Units[0].Entries == 0 || rep.Units[0].Batches < 2 || rep.Units[1].Entries == 0 {
		t.Fatalf("units did no work: %+v", rep.Units)
	}
	after := materializeAll(t, store)
	sameHistory(t, "after migration", before, after)
	st := formatState(t, store)
	if st.Format != 13 || st.Origin != nil || st.Marker {
		t.Fatalf("after migration: %+v", st)
	}
	// Every batch stamps the head without moving it: start, steps, finish
	// (an additive unit is one batch, its stamp).
	wantBatches := uint64(0)
	for _, u := range rep.Units {
		if u.Builds == "format stamp" {
			wantBatches++
			continue
		}
		wantBatches += uint64(u.Batches) + 2
	}
	if st.Head.SnapshotID != beforeState.Head.SnapshotID || st.Head.BatchSeq != beforeState.Head.BatchSeq+wantBatches {
		t.Fatalf("head %+v after %d migration batches from %+v", st.Head, wantBatches, beforeState.Head)
	}
	wantIndexes(t, "after migration", store, 13)
	wantOpens(t, store, 13)

	// Commits on the migrated catalog keep the indexes.
	c := openRW(t, store)
	commit(t, c, func(tx *core.Transaction) error {
		orders, _ := tx.View().TableByName("sales", "orders")
		f := tx.View().DataFiles(orders.ID)[0]
		if _, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: orders.ID, DataFileID: f.ID, Path: "late.parquet"}); err != nil {
			return err
		}
		li, _ := tx.View().TableByName("sales", "line_items")
		return tx.RenameTable(li.ID, "items")
	})
	c.Close(bg)
	wantIndexes(t, "after a commit", store, 13)

	again, err := core.Migrate(bg, store, core.MigrateOptions{})
	if err != nil || len(again.Units) != 0 || again.From != 13 || again.To != 13 {
		t.Fatalf("second migration: %+v, %v", again, err)
	}
}

// TestMigrateOneUnitAtATime: a target of 11 runs only 9->11; the next
// migration runs 11->12.
func TestMigrateOneUnitAtATime(t *testing.T) {
	store := legacyLake(t, core.FormatLegacy, nil)
	before := materializeAll(t, store)
	rep, err := core.Migrate(bg, store, core.MigrateOptions{Target: core.FormatNameDirectory})
	if err != nil || rep.To != 11 || len(rep.Units) != 1 {
		t.Fatalf("to 11: %+v, %v", rep, err)
	}
	wantIndexes(t, "at 11", store, 11)
	wantOpens(t, store, 11)
	rep, err = core.Migrate(bg, store, core.MigrateOptions{})
	if err != nil || rep.From != 11 || rep.To != 13 || len(rep.Units) != 2 || rep.Units[0].Unit != "11->12" || rep.Units[1].Unit != "12->13" {
		t.Fatalf("to 13: %+v, %v", rep, err)
	}
	wantIndexes(t, "at 13", store, 13)
	sameHistory(t, "after two migrations", before, materializeAll(t, store))

	// A catalog created at 11 (its commits kept the name directory) needs
	// only the delete-file lookup.
	store = legacyLake(t, core.FormatNameDirectory, nil)
	wantIndexes(t, "legacy 11", store, 11)
	rep, err = core.Migrate(bg, store, core.MigrateOptions{})
	if err != nil || rep.From != 11 || len(rep.Units) != 2 {
		t.Fatalf("11 to 13: %+v, %v", rep, err)
	}
	wantIndexes(t, "legacy 11 migrated", store, 13)
}

// TestMigrate10To12ThroughTheHook: a legacy log-resident catalog becomes
// 13 (through 12) with its origin (set by the 10->11 unit when it has none, kept when it
// has one); Migrate itself refuses it (no provider here).
func TestMigrate10To12ThroughTheHook(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin *uint64
	}{{"without an origin", nil}, {"with an origin", originOf(2)}} {
		t.Run(tc.name, func(t *testing.T) {
			store := legacyLake(t, core.FormatLegacyLog, tc.origin)
			wantRefused(t, store, core.Migration, "commit-log library")
			before := materializeAll(t, store)
			beforeState := formatState(t, store)
			rep, err := core.MigrateLogResidentForTest(bg, store, core.MigrateOptions{StepEntries: 3})
			if err != nil {
				t.Fatalf("migrating: %v", err)
			}
			wantOrigin := beforeState.Head.BatchSeq // the counter the start batch stands on
			if tc.origin != nil {
				wantOrigin = *tc.origin
			}
			if rep.From != 10 || rep.To != 13 || len(rep.Units) != 3 || rep.Units[0].Unit != "10->11" || rep.Origin == nil || *rep.Origin != wantOrigin {
				t.Fatalf("report %+v (origin %v, want %d)", rep, rep.Origin, wantOrigin)
			}
			st := formatState(t, store)
			if st.Format != 13 || st.Origin == nil || *st.Origin != wantOrigin || st.Marker {
				t.Fatalf("after migration: %+v", st)
			}
			sameHistory(t, "after migration", before, materializeAll(t, store))
			wantIndexes(t, "after migration", store, 13)
			wantRefused(t, store, core.Migration, "commit-log library", "format 13")

			// Demotion clears the origin and keeps the directories.
			f, o, err := core.DemoteForTest(bg, store, "")
			if err != nil || f != 13 || o != nil {
				t.Fatalf("demote: %d %v %v", f, o, err)
			}
			wantIndexes(t, "after demotion", store, 13)
			wantOpens(t, store, 13)
		})
	}
}

// TestAdoptionAndDemotion: adoption sets the origin to the head batch
// counter (9 becomes 10, 11 and 12 keep their number) and stamps no head;
// demotion clears it and keeps the directories.
func TestAdoptionAndDemotion(t *testing.T) {
	for _, tc := range []struct {
		name        string
		store       func(t *testing.T) objstore.Store
		from, adopt uint64
		demote      uint64
	}{
		{"legacy 9", func(t *testing.T) objstore.Store { return legacyLake(t, 9, nil) }, 9, 10, 9},
		{"11", func(t *testing.T) objstore.Store { return legacyLake(t, 11, nil) }, 11, 11, 11},
		{"13 (current)", func(t *testing.T) objstore.Store {
			s := objstore.NewMemory(0)
			c := openRW(t, s)
			if err := populateFixture(c); err != nil {
				t.Fatal(err)
			}
			c.Close(bg)
			return s
		}, 13, 13, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.store(t)
			before := formatState(t, store)
			idx := indexKeys(t, store)
			f, o, err := core.AdoptForTest(bg, store, "")
			if err != nil || f != tc.adopt || o == nil || *o != before.Head.BatchSeq {
				t.Fatalf("adopt: format %d origin %v (%v), want %d with origin %d", f, o, err, tc.adopt, before.Head.BatchSeq)
			}
			if st := formatState(t, store); st.Head != before.Head {
				t.Fatalf("adoption moved the head: %+v -> %+v", before.Head, st.Head)
			}
			wantRefused(t, store, core.Migration, "commit-log library")
			if _, _, err := core.AdoptForTest(bg, store, ""); !errors.Is(err, core.InvalidArgument) {
				t.Fatalf("adopting twice: %v", err)
			}
			f, o, err = core.DemoteForTest(bg, store, "")
			if err != nil || f != tc.demote || o != nil {
				t.Fatalf("demote: %d %v %v", f, o, err)
			}
			if !maps.Equal(idx, indexKeys(t, store)) {
				t.Fatal("adoption and demotion changed the directories")
			}
			wantOpens(t, store, tc.demote)
			if _, _, err := core.DemoteForTest(bg, store, ""); !errors.Is(err, core.InvalidArgument) {
				t.Fatalf("demoting a native catalog: %v", err)
			}
		})
	}
	// An adopted 9 (format 10 with an origin) migrates to 12 keeping it.
	store := legacyLake(t, 9, nil)
	_, o, err := core.AdoptForTest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := core.MigrateLogResidentForTest(bg, store, core.MigrateOptions{})
	if err != nil || rep.To != 13 || rep.Origin == nil || *rep.Origin != *o {
		t.Fatalf("migrating an adopted 9: %+v %v (origin want %d)", rep, err, *o)
	}
	// A legacy 10 without an origin demotes to 9.
	store = legacyLake(t, 10, nil)
	if f, o, err := core.DemoteForTest(bg, store, ""); err != nil || f != 9 || o != nil {
		t.Fatalf("demoting a legacy 10: %d %v %v", f, o, err)
	}
	wantOpens(t, store, 9)
}

// TestRaiseFormat: with the real ladder the steps from 9 rewrite, so at 9
// RaiseFormat has nothing to stamp; with an additive step it writes only
// sys/format, stamps no head, and commits maintain the new shapes at once.
func TestRaiseFormat(t *testing.T) {
	store := legacyLake(t, 9, nil)
	c := openRW(t, store)
	r, err := c.RaiseFormat(bg, false)
	if err != nil || r.Written || r.From != 9 || r.To != 9 || !slices.Equal(r.Pending, []string{"9->11", "11->12"}) {
		t.Fatalf("raise at 9: %+v %v", r, err)
	}
	c.Close(bg)
	ro := openRO(t, store, core.CatalogOptions{})
	if _, err := ro.RaiseFormat(bg, true); !errors.Is(err, core.InvalidArgument) {
		t.Fatalf("raise on a read-only handle: %v", err)
	}

	defer core.MakeStepAdditiveForTest()()
	store = legacyLake(t, 11, nil)
	before, beforeState, beforeIdx := materializeAll(t, store), formatState(t, store), indexKeys(t, store)
	c = openRW(t, store)
	stale, err := c.Begin(bg) // prepared at 11: must not land at 12
	if err != nil {
		t.Fatal(err)
	}
	r, err = c.RaiseFormat(bg, true)
	if err != nil || r.Written || r.To != 12 {
		t.Fatalf("dry run: %+v %v", r, err)
	}
	if st := formatState(t, store); st.Format != 11 {
		t.Fatalf("a dry run wrote format %d", st.Format)
	}
	r, err = c.RaiseFormat(bg, false)
	if err != nil || !r.Written || r.From != 11 || r.To != 12 || len(r.Pending) != 0 {
		t.Fatalf("raise: %+v %v", r, err)
	}
	if f, _ := c.Format(); f != 12 {
		t.Fatalf("the handle still reports format %d", f)
	}
	st := formatState(t, store)
	if st.Format != 12 || st.Head != beforeState.Head || st.Origin != nil {
		t.Fatalf("after the raise: %+v (head before %+v)", st, beforeState.Head)
	}
	sameHistory(t, "after the raise", before, materializeAll(t, store))
	if !maps.Equal(beforeIdx, indexKeys(t, store)) {
		t.Fatal("the raise wrote index keys")
	}
	orders, _ := snap(t, c).TableByName("sales", "orders")
	if _, err := stale.RegisterDeleteFile(core.DeleteFileDef{TableID: orders.ID, DataFileID: snap(t, c).DataFiles(orders.ID)[0].ID, Path: "stale.parquet"}); err != nil {
		t.Fatal(err)
	}
	_, err = stale.Commit(bg)
	wantKind(t, err, core.CommitConflict)
	var del core.DeleteFileID
	commit(t, c, func(tx *core.Transaction) (err error) {
		del, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: orders.ID, DataFileID: tx.View().DataFiles(orders.ID)[0].ID, Path: "fresh.parquet"})
		return err
	})
	got, err := c.DeleteFilesOf(bg, orders.ID, snap(t, c).DataFiles(orders.ID)[0].ID)
	if err != nil || !slices.ContainsFunc(got, func(d core.DeleteFile) bool { return d.ID == del }) {
		t.Fatalf("a commit after the raise did not maintain the delete-file lookup: %+v %v", got, err)
	}
}

// copyMemoryStore copies every object of a store into a new memory store.
func copyMemoryStore(t *testing.T, src objstore.Store) objstore.Store {
	t.Helper()
	dst := objstore.NewMemory(0)
	objs, err := objstore.ListAll(bg, src, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		b, _, err := src.Get(bg, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Put(bg, o.Key, b); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestMigrationCrashSweep freezes the store after k writes for every k
// during a 9->12 migration, then reopens: the state is never "new format
// with a marker", opens refuse exactly while a marker remains, and running
// Migrate again ends in the same state as an uninterrupted migration.
func TestMigrationCrashSweep(t *testing.T) {
	base := legacyLake(t, core.FormatLegacy, nil)
	opts := core.MigrateOptions{StepEntries: 3}
	ref := copyMemoryStore(t, base)
	if _, err := core.Migrate(bg, ref, opts); err != nil {
		t.Fatal(err)
	}
	refState, refIdx, refMat := formatState(t, ref), indexKeys(t, ref), materializeAll(t, ref)
	resumed := 0
	for k := 0; ; k++ {
		inner := copyMemoryStore(t, base)
		faulty := objstore.NewFaulty(inner)
		faulty.FreezeAfter(k)
		fo := opts
		fo.Catalog.DisableRetry = true
		_, merr := core.Migrate(bg, faulty, fo)
		completed := !faulty.Frozen()
		if merr != nil && completed {
			t.Fatalf("k=%d: migration failed without a fault: %v", k, merr)
		}

		st := formatState(t, inner)
		if st.Marker {
			if st.Format != st.MarkerFrom {
				t.Fatalf("k=%d: format %d with a marker for %s from %d: a flipped format with its marker", k, st.Format, st.MarkerUnit, st.MarkerFrom)
			}
			wantRefused(t, inner, core.Migration, "moraine migrate")
		} else {
			if st.Format != 9 && st.Format != 11 && st.Format != 12 && st.Format != 13 {
				t.Fatalf("k=%d: format %d without a marker", k, st.Format)
			}
			wantOpens(t, inner, st.Format)
		}

		rep, err := core.Migrate(bg, inner, opts)
		if err != nil {
			t.Fatalf("k=%d: migrating again: %v", k, err)
		}
		if rep.Resumed != st.Marker {
			t.Fatalf("k=%d: report says resumed=%v with marker=%v", k, rep.Resumed, st.Marker)
		}
		if rep.Resumed {
			resumed++
		}
		got := formatState(t, inner)
		if got.Format != refState.Format || got.Origin != nil || got.Marker || got.Head != refState.Head {
			t.Fatalf("k=%d: after the re-run %+v, uninterrupted %+v", k, got, refState)
		}
		if !maps.Equal(indexKeys(t, inner), refIdx) {
			t.Fatalf("k=%d: the index differs from an uninterrupted migration", k)
		}
		sameHistory(t, fmt.Sprintf("k=%d", k), refMat, materializeAll(t, inner))
		if completed {
			if k < 5 || resumed == 0 {
				t.Fatalf("the sweep covered %d writes and resumed %d times", k, resumed)
			}
			t.Logf("swept %d crash points, %d resumed", k, resumed)
			return
		}
		if k > 1000 {
			t.Fatal("the migration never completed")
		}
	}
}
