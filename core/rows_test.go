package core_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// rowsCommit runs one rows-mode transaction against the catalog's head.
func rowsCommit(t *testing.T, c *core.Catalog, stage func(tx *core.Transaction) error) (core.SnapshotID, error) {
	t.Helper()
	var head core.Head
	if c.HasLake() {
		h, err := c.Head(bg)
		if err != nil {
			t.Fatal(err)
		}
		head = h
	}
	tx, err := c.BeginRows(bg, head)
	if err != nil {
		return 0, err
	}
	if err := stage(tx); err != nil {
		tx.Rollback()
		return 0, err
	}
	return tx.Commit(bg)
}

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 123456000, time.UTC)

// duckLakeGenesis stages what DuckLake's first ATTACH writes.
func duckLakeGenesis(tx *core.Transaction) error {
	if err := tx.PutSnapshot(core.Snapshot{ID: 0, Time: t0, SchemaVersion: 0, NextCatalogID: 1, NextFileID: 0, ChangesMade: `created_schema:"main"`}); err != nil {
		return err
	}
	if err := tx.PutSchema(core.Schema{ID: 0, UUID: uuid.MustParse("0192b7a8-0000-7000-8000-000000000001"), Name: "main", Path: "main/", PathIsRelative: true}); err != nil {
		return err
	}
	if err := tx.PutOptions(core.Options{Scope: core.ScopeGlobal, Values: map[string]string{"version": "0.3", "created_by": "DuckDB 6ddac802ff", "data_path": "/data/", "encrypted": "false"}}); err != nil {
		return err
	}
	return tx.PutSchemaVersion(core.SchemaVersion{BeginSnapshot: 0, SchemaVersion: 0})
}

func emptyStore(t *testing.T) (*core.Catalog, objstore.Store) {
	t.Helper()
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c, store
}

func TestRowsGenesisCreatesTheLakeAsGiven(t *testing.T) {
	c, store := emptyStore(t)
	id, err := rowsCommit(t, c, duckLakeGenesis)
	if err != nil || id != 0 {
		t.Fatalf("genesis: %d, %v", id, err)
	}
	if !c.HasLake() {
		t.Fatal("no lake after genesis")
	}
	check := func(c *core.Catalog) {
		t.Helper()
		d, err := c.Dump(bg)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Snapshots) != 1 || !d.Snapshots[0].Time.Equal(t0) || d.Snapshots[0].ChangesMade != `created_schema:"main"` || d.Snapshots[0].NextCatalogID != 1 {
			t.Fatalf("snapshots %+v", d.Snapshots)
		}
		if len(d.Schemas) != 1 || d.Schemas[0].UUID.String() != "0192b7a8-0000-7000-8000-000000000001" || d.Schemas[0].Name != "main" {
			t.Fatalf("schemas %+v", d.Schemas)
		}
		if len(d.Options) != 1 || d.Options[0].Values["created_by"] != "DuckDB 6ddac802ff" || len(d.Options[0].Values) != 4 {
			t.Fatalf("options %+v", d.Options)
		}
		if len(d.SchemaVersions) != 1 || d.SchemaVersions[0] != (core.SchemaVersion{}) {
			t.Fatalf("schema versions %+v", d.SchemaVersions)
		}
		if h, err := c.Head(bg); err != nil || h != (core.Head{}) {
			t.Fatalf("head %+v, %v", h, err)
		}
	}
	check(c)
	c.Close(bg)
	// The lake is in the store: a plain open (no genesis of its own) and a
	// read-only open find it.
	again, err := core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check(again)
	if sch, ok, err := again.LookupSchema(bg, "main"); err != nil || !ok || sch.ID != 0 {
		t.Fatalf("name lookup of main: %+v %v %v", sch, ok, err)
	}
	again.Close(bg)
}

func TestRowsGenesisRefusesTheWrongSnapshotAndALakeMadeMeanwhile(t *testing.T) {
	c, _ := emptyStore(t)
	_, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		return tx.PutSnapshot(core.Snapshot{ID: 4, ChangesMade: ""})
	})
	if core.KindOf(err) != core.CommitConflict || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("genesis at snapshot 4: %v", err)
	}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		return tx.PutSchema(core.Schema{ID: 0, Name: "main", Path: "main/"})
	}); core.KindOf(err) != core.InvalidArgument || c.HasLake() {
		t.Fatalf("genesis without snapshot 0: %v (lake: %v)", err, c.HasLake())
	}
	if _, err := c.BeginRows(bg, core.Head{SnapshotID: 3, BatchSeq: 3}); core.KindOf(err) != core.CommitConflict {
		t.Fatalf("a transaction that read a lake, on an empty store: %v", err)
	}
}

// A DuckLake-shaped commit: a table with columns, a data file, statistics;
// then the commit that alters it (ends a column version, adds one).
func TestRowsStageDuckLakeCommitsAsGiven(t *testing.T) {
	c, _ := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	tid := core.TableID(1)
	_, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		steps := []error{
			tx.PutSnapshot(core.Snapshot{ID: 1, Time: t0, SchemaVersion: 1, NextCatalogID: 2, NextFileID: 1,
				ChangesMade: `created_table:"main"."t",inserted_into_table:1`, Author: ptr("ann")}),
			tx.PutTable(core.Table{ID: tid, Versioned: core.Versioned{Begin: 1}, UUID: uuid.New(), SchemaID: 0, Name: "t", Path: "t/", PathIsRelative: true}),
			tx.PutColumn(core.Column{TableID: tid, ID: 1, Versioned: core.Versioned{Begin: 1}, Order: 1, Name: "i", Type: "int32", NullsAllowed: true}),
			tx.PutColumn(core.Column{TableID: tid, ID: 2, Versioned: core.Versioned{Begin: 1}, Order: 2, Name: "s", Type: "varchar", NullsAllowed: true}),
			tx.PutDataFile(core.DataFile{TableID: tid, ID: 0, Versioned: core.Versioned{Begin: 1}, Path: "ducklake-x.parquet", PathIsRelative: true,
				Format: "parquet", RecordCount: 3, FileSizeBytes: 500, FooterSize: ptr(uint64(90))}),
			tx.PutFileColumnStats(core.FileColumnStats{TableID: tid, DataFileID: 0, ColumnID: 1, ValueCount: ptr(uint64(3)), NullCount: ptr(uint64(0)), MinValue: ptr("1"), MaxValue: ptr("3")}),
			tx.PutTableStats(core.TableStats{TableID: tid, RecordCount: 3, NextRowID: 3, FileSizeBytes: 500}),
			tx.PutTableColumnStats(core.TableColumnStats{TableID: tid, ColumnID: 1, ContainsNull: ptr(false), MinValue: ptr("1"), MaxValue: ptr("3")}),
			tx.PutSchemaVersion(core.SchemaVersion{BeginSnapshot: 1, SchemaVersion: 1}),
		}
		for _, err := range steps {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// ALTER TABLE t RENAME COLUMN s TO name: DuckLake ends version 1 and
	// inserts version 2 of column 2.
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 2, Time: t0, SchemaVersion: 2, NextCatalogID: 2, NextFileID: 1, ChangesMade: "altered_table:1"}); err != nil {
			return err
		}
		if err := tx.PutColumn(core.Column{TableID: tid, ID: 2, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Order: 2, Name: "s", Type: "varchar", NullsAllowed: true}); err != nil {
			return err
		}
		return tx.PutColumn(core.Column{TableID: tid, ID: 2, Versioned: core.Versioned{Begin: 2}, Order: 2, Name: "name", Type: "varchar", NullsAllowed: true})
	}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Snapshots) != 3 || *d.Snapshots[1].Author != "ann" || d.Snapshots[1].ChangesMade != `created_table:"main"."t",inserted_into_table:1` {
		t.Fatalf("snapshots %+v", d.Snapshots)
	}
	var names []string
	for _, col := range d.Columns {
		e := "live"
		if col.End != nil {
			e = "ended"
		}
		names = append(names, col.Name+":"+e)
	}
	if strings.Join(names, " ") != "i:live s:ended name:live" {
		t.Fatalf("column versions: %v", names)
	}
	if len(d.DataFiles) != 1 || d.DataFiles[0].RowIDStart != nil || d.DataFiles[0].FileOrder != nil || d.DataFiles[0].RecordCount != 3 || d.DataFiles[0].Path != "ducklake-x.parquet" {
		t.Fatalf("data files %+v", d.DataFiles)
	}
	if len(d.TableStats) != 1 || d.TableStats[0] != (core.TableStats{TableID: tid, RecordCount: 3, NextRowID: 3, FileSizeBytes: 500}) {
		t.Fatalf("table stats %+v (stored as given, not added to)", d.TableStats)
	}
	if len(d.FileColumnStats) != 1 || *d.FileColumnStats[0].MaxValue != "3" || len(d.TableColumnStats) != 1 {
		t.Fatalf("column stats %+v %+v", d.FileColumnStats, d.TableColumnStats)
	}
	if tb, ok, err := c.LookupTable(bg, "main", "t"); err != nil || !ok || tb.ID != tid {
		t.Fatalf("name lookup of main.t: %+v %v %v", tb, ok, err)
	}
	if h, _ := c.Head(bg); h.SnapshotID != 2 || h.BatchSeq != 2 {
		t.Fatalf("head %+v", h)
	}
}

func TestRowsRefuseWhatTheCatalogCannotHold(t *testing.T) {
	c, _ := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	for name, stage := range map[string]func(tx *core.Transaction) error{
		"two live versions": func(tx *core.Transaction) error {
			return tx.PutSchema(core.Schema{ID: 0, Versioned: core.Versioned{Begin: 1}, Name: "main2", Path: "x/"})
		},
		"a name taken": func(tx *core.Transaction) error {
			return tx.PutSchema(core.Schema{ID: 5, Versioned: core.Versioned{Begin: 1}, Name: "main", Path: "x/"})
		},
		"a snapshot that does not follow": func(tx *core.Transaction) error {
			return tx.PutSnapshot(core.Snapshot{ID: 7, NextCatalogID: 1})
		},
		"counters that fall": func(tx *core.Transaction) error {
			return tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 0})
		},
		"changes_made that does not parse": func(tx *core.Transaction) error {
			return tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 1, ChangesMade: "nonsense"})
		},
		"a begin after this commit": func(tx *core.Transaction) error {
			return tx.PutTable(core.Table{ID: 3, Versioned: core.Versioned{Begin: 9}, Name: "x"})
		},
		"an end before the begin": func(tx *core.Transaction) error {
			return tx.PutTable(core.Table{ID: 3, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(1))}, Name: "x"})
		},
		"an empty name": func(tx *core.Transaction) error {
			return tx.PutTable(core.Table{ID: 3, Versioned: core.Versioned{Begin: 1}})
		},
		"deleting the head's snapshot": func(tx *core.Transaction) error { return tx.DeleteSnapshot(0) },
		"deleting a live version that is not there": func(tx *core.Transaction) error {
			return tx.DeleteTable(44, 0, nil)
		},
	} {
		if _, err := rowsCommit(t, c, stage); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A verb-path transaction cannot stage rows.
	tx, err := c.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.PutSchema(core.Schema{ID: 9, Name: "x"}); core.KindOf(err) != core.InvalidArgument {
		t.Fatalf("PutSchema on a Begin transaction: %v", err)
	}
}

// A transaction prepared against a head that moved is refused with a
// message DuckLake retries on.
func TestRowsOnAMovedHeadAreAConflict(t *testing.T) {
	c, _ := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	read, err := c.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		return tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 1, ChangesMade: ""})
	}); err != nil {
		t.Fatal(err)
	}
	_, err = c.BeginRows(bg, read)
	if core.KindOf(err) != core.CommitConflict || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("BeginRows at a stale head: %v", err)
	}
}

// expire_snapshots and cleanup: history versions, snapshots and files
// scheduled for deletion removed, without minting a snapshot.
func TestRowsRemoveHistoryWithoutASnapshot(t *testing.T) {
	c, _ := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	// Snapshot 1 creates schema s, 2 drops it and schedules a file.
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, SchemaVersion: 1, ChangesMade: `created_schema:"s"`}); err != nil {
			return err
		}
		return tx.PutSchema(core.Schema{ID: 1, Versioned: core.Versioned{Begin: 1}, Name: "s", Path: "s/"})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 2, SchemaVersion: 2, ChangesMade: "dropped_schema:1"}); err != nil {
			return err
		}
		if err := tx.PutGcFile(core.GcFile{DataFileID: 7, Path: "old.parquet", ScheduleStart: t0}); err != nil {
			return err
		}
		return tx.PutSchema(core.Schema{ID: 1, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Name: "s", Path: "s/"})
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.LookupSchema(bg, "s"); ok {
		t.Fatal("the dropped schema is still found by name")
	}
	before, _ := c.Head(bg)
	id, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.DeleteSnapshot(1); err != nil {
			return err
		}
		if err := tx.DeleteGcFile(7); err != nil {
			return err
		}
		return tx.DeleteSchema(1, 1, ptr(core.SnapshotID(2)))
	})
	if err != nil || id != 2 {
		t.Fatalf("expire: %d, %v", id, err)
	}
	after, _ := c.Head(bg)
	if after.SnapshotID != before.SnapshotID || after.BatchSeq != before.BatchSeq+1 {
		t.Fatalf("head %+v -> %+v: want the same snapshot, one more batch", before, after)
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Snapshots) != 2 || d.Snapshots[1].ID != 2 || len(d.Schemas) != 1 || len(d.GcFiles) != 0 {
		t.Fatalf("after expire: %d snapshots, %d schemas, %d gc files", len(d.Snapshots), len(d.Schemas), len(d.GcFiles))
	}
	if _, err := c.ViewAt(bg, 1); core.KindOf(err) != core.SnapshotExpired {
		t.Fatalf("time travel to the expired snapshot: %v", err)
	}
}

// Inlined rows as DuckLake writes them: an inlined-data table with DuckDB
// types, rows with DuckDB-encoded values, an end, a removal.
func TestRowsInlinedRowsAsGiven(t *testing.T) {
	c, _ := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	encoded := []byte{0x01, 0x00, 0xff, 0x7f}
	it := core.InlinedTable{TableID: 1, SchemaVersion: 1, Name: "ducklake_inlined_data_1_1", Listed: true,
		Columns: []core.InlinedColumn{{Name: "d", Type: "DECIMAL(18,3)"}, {Name: "s", Type: "STRUCT(a INTEGER)"}}}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, NextFileID: 0, SchemaVersion: 1, ChangesMade: "inserted_into_table:1"}); err != nil {
			return err
		}
		if err := tx.PutInlinedTable(it); err != nil {
			return err
		}
		for i := uint64(0); i < 3; i++ {
			if err := tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: i, Versioned: core.Versioned{Begin: 1}, Values: []core.Value{{DuckDB: encoded}, {}}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Row 1 deleted (end set), row 2 removed (a flush empties the table).
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 2, SchemaVersion: 1, ChangesMade: "deleted_from_table:1"}); err != nil {
			return err
		}
		if err := tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 1, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Values: []core.Value{{DuckDB: encoded}, {}}}); err != nil {
			return err
		}
		return tx.DeleteInlinedRow(1, 1, 2, 1)
	}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.InlinedTables) != 1 || d.InlinedTables[0].Name != it.Name || d.InlinedTables[0].Columns[1].Type != "STRUCT(a INTEGER)" || !d.InlinedTables[0].Listed {
		t.Fatalf("inlined tables %+v", d.InlinedTables)
	}
	if len(d.Inlined) != 1 || len(d.Inlined[0].Rows) != 2 {
		t.Fatalf("inlined rows %+v", d.Inlined)
	}
	r0, r1 := d.Inlined[0].Rows[0], d.Inlined[0].Rows[1]
	if r0.RowID != 0 || r0.End != nil || string(r0.Values[0].DuckDB) != string(encoded) || !r0.Values[1].IsNull() {
		t.Fatalf("row 0 %+v", r0)
	}
	if r1.RowID != 1 || r1.End == nil || *r1.End != 2 {
		t.Fatalf("row 1 %+v", r1)
	}
}

// view is everything a CatalogView serves, for comparing two.
type view struct {
	Snap                      core.Snapshot
	Head                      core.Head
	Schemas                   []core.Schema
	Tables                    []core.Table
	Views                     []core.View
	Columns                   [][]core.Column
	DataFiles, DeleteFilesLen []int
	Files                     [][]core.DataFile
	Deletes                   [][]core.DeleteFile
	Stats                     []core.TableStats
	ColStats                  [][]core.TableColumnStats
	FileStats                 [][]core.FileColumnStats
	Partitions                []core.Partition
	Inlined                   [][]core.InlinedRows
	Mappings                  []core.Mapping
	Tags                      [][]core.TagEntry
	Options                   []core.Options
	Gc                        []core.GcFile
	SchemaVersions            []core.SchemaVersion
	AnyStats                  []anyStats
}

// anyStats is the statistics a snapshot serves for one table id.
type anyStats struct {
	Table    core.TableID
	Stats    core.TableStats
	HasStats bool
	ColStats []core.TableColumnStats
}

// viewOf reads everything s serves; ever lists every table id the lake
// has held (live or not), whose statistics it reads too.
func viewOf(s *core.CatalogView, ever []core.TableID) view {
	v := view{Snap: s.Snapshot(), Head: s.Head(), Schemas: s.Schemas(), Tables: s.AllTables(), Views: s.AllViews(),
		Mappings: s.Mappings(), Options: s.AllOptions(), Gc: s.GcFiles(), SchemaVersions: s.SchemaVersions()}
	for _, id := range ever {
		st, ok := s.TableStats(id)
		v.AnyStats = append(v.AnyStats, anyStats{id, st, ok, s.TableColumnStats(id)})
	}
	for _, sc := range v.Schemas {
		v.Tags = append(v.Tags, s.Tags(uint64(sc.ID)))
	}
	for _, tb := range v.Tables {
		v.Columns = append(v.Columns, s.Columns(tb.ID))
		files := s.DataFiles(tb.ID)
		v.Files = append(v.Files, files)
		for _, f := range files {
			v.FileStats = append(v.FileStats, s.FileColumnStats(f.ID))
		}
		v.Deletes = append(v.Deletes, s.DeleteFiles(tb.ID))
		if st, ok := s.TableStats(tb.ID); ok {
			v.Stats = append(v.Stats, st)
		}
		v.ColStats = append(v.ColStats, s.TableColumnStats(tb.ID))
		if p, ok := s.Partition(tb.ID); ok {
			v.Partitions = append(v.Partitions, p)
		}
		v.Inlined = append(v.Inlined, s.InlinedRows(tb.ID))
		v.Tags = append(v.Tags, s.Tags(uint64(tb.ID)))
	}
	return v
}

// The state a rows commit leaves cached is what the store holds: the next
// commit can start from it without reading the store.
func TestRowsKeepTheCachedHeadTrue(t *testing.T) {
	c, store := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	stages := []func(tx *core.Transaction) error{
		func(tx *core.Transaction) error {
			return errs(tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 3, NextFileID: 1, SchemaVersion: 1, ChangesMade: `created_table:"main"."t"`}),
				tx.PutTable(core.Table{ID: 1, Versioned: core.Versioned{Begin: 1}, Name: "t", Path: "t/"}),
				tx.PutColumn(core.Column{TableID: 1, ID: 1, Versioned: core.Versioned{Begin: 1}, Name: "a", Type: "int64", NullsAllowed: true,
					Tags: []core.TagEntry{{Versioned: core.Versioned{Begin: 1}, Key: "k", Value: "v"}}}),
				tx.PutDataFile(core.DataFile{TableID: 1, ID: 0, Versioned: core.Versioned{Begin: 1}, Path: "f.parquet", Format: "parquet", RecordCount: 2}),
				tx.PutFileColumnStats(core.FileColumnStats{TableID: 1, DataFileID: 0, ColumnID: 1, MinValue: ptr("1")}),
				tx.PutTableStats(core.TableStats{TableID: 1, RecordCount: 2, NextRowID: 2}),
				tx.PutTableColumnStats(core.TableColumnStats{TableID: 1, ColumnID: 1, MaxValue: ptr("2")}),
				tx.PutPartition(core.Partition{TableID: 1, ID: 2, Versioned: core.Versioned{Begin: 1}, Columns: []core.PartitionColumn{{ColumnID: 1, Transform: "identity"}}}),
				tx.PutTags(core.Tags{ObjectID: 1, Entries: []core.TagEntry{{Versioned: core.Versioned{Begin: 1}, Key: "owner", Value: "ann"}}}),
				tx.PutMapping(core.Mapping{TableID: 1, ID: 3, Type: "map_by_name", Names: []core.NameMapping{{ColumnID: 1, SourceName: "a"}}}),
				tx.PutSchemaVersion(core.SchemaVersion{BeginSnapshot: 1, SchemaVersion: 1}),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 2, Versioned: core.Versioned{Begin: 1}, Values: []core.Value{{Int: ptr(int64(5))}}}))
		},
		func(tx *core.Transaction) error {
			return errs(tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 3, NextFileID: 2, SchemaVersion: 1, ChangesMade: "deleted_from_table:1"}),
				tx.PutDeleteFile(core.DeleteFile{TableID: 1, ID: 1, Versioned: core.Versioned{Begin: 2}, DataFileID: 0, Path: "d.parquet", Format: "parquet", DeleteCount: 1}),
				tx.PutInlinedRow(1, 1, core.InlinedRow{RowID: 2, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Values: []core.Value{{Int: ptr(int64(5))}}}),
				tx.PutGcFile(core.GcFile{DataFileID: 9, Path: "old.parquet", ScheduleStart: t0}),
				tx.PutOptions(core.Options{Scope: core.ScopeTable, ScopeID: 1, Values: map[string]string{"x": "y"}}))
		},
		func(tx *core.Transaction) error {
			return errs(tx.DeleteInlinedRow(1, 1, 2, 1), tx.DeleteGcFile(9), tx.DeleteSchemaVersion(0, 1),
				tx.PutDataFile(core.DataFile{TableID: 1, ID: 0, Versioned: core.Versioned{Begin: 1, End: ptr(core.SnapshotID(2))}, Path: "f.parquet", Format: "parquet", RecordCount: 2}))
		},
	}
	for i, stage := range stages {
		commitKeepsTheCachedHeadTrue(t, c, store, fmt.Sprintf("commit %d", i), stage)
	}
}

// commitKeepsTheCachedHeadTrue lands one rows commit on c, whose head is
// cached, and checks that the head it leaves cached is what a fresh open
// of the store reads.
func commitKeepsTheCachedHeadTrue(t *testing.T, c *core.Catalog, store objstore.Store, what string, stage func(tx *core.Transaction) error) {
	t.Helper()
	if _, err := c.View(bg); err != nil { // the head is cached
		t.Fatal(err)
	}
	if _, err := rowsCommit(t, c, stage); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	held, err := c.View(bg)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := core.OpenReadOnly(bg, store, core.CatalogOptions{FollowLatest: true, ReaderPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := ro.View(bg)
	ro.Close(bg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Dump(bg) // every table version the store holds
	if err != nil {
		t.Fatal(err)
	}
	var ever []core.TableID
	for _, tb := range d.Tables {
		ever = append(ever, tb.ID)
	}
	if a, b := viewOf(held, ever), viewOf(fresh, ever); !reflect.DeepEqual(a, b) {
		t.Fatalf("after %s the cached head differs from the store:\n cached %+v\n store  %+v", what, a, b)
	}
}

// DuckLake's DROP TABLE ends the table's versions but leaves its
// ducklake_table_stats and ducklake_table_column_stats rows: the cached
// head, like a fresh open, serves no statistics for a table that is gone.
func TestRowsDroppedTableKeepsNoStatsInTheCachedHead(t *testing.T) {
	c, store := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	table := core.Table{ID: 1, Versioned: core.Versioned{Begin: 1}, Name: "t", Path: "t/"}
	col := core.Column{TableID: 1, ID: 1, Versioned: core.Versioned{Begin: 1}, Name: "a", Type: "int64", NullsAllowed: true}
	commitKeepsTheCachedHeadTrue(t, c, store, "CREATE TABLE and INSERT", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 1, NextCatalogID: 2, NextFileID: 0, SchemaVersion: 1, ChangesMade: `created_table:"main"."t",inserted_into_table:1`}),
			tx.PutTable(table), tx.PutColumn(col),
			tx.PutTableStats(core.TableStats{TableID: 1, RecordCount: 2, NextRowID: 2}),
			tx.PutTableColumnStats(core.TableColumnStats{TableID: 1, ColumnID: 1, MaxValue: ptr("2")}),
			tx.PutSchemaVersion(core.SchemaVersion{BeginSnapshot: 1, SchemaVersion: 1}))
	})
	table.End, col.End = ptr(core.SnapshotID(2)), ptr(core.SnapshotID(2))
	commitKeepsTheCachedHeadTrue(t, c, store, "DROP TABLE", func(tx *core.Transaction) error {
		return errs(tx.PutSnapshot(core.Snapshot{ID: 2, NextCatalogID: 2, NextFileID: 0, SchemaVersion: 2, ChangesMade: "dropped_table:1"}),
			tx.PutTable(table), tx.PutColumn(col),
			tx.PutSchemaVersion(core.SchemaVersion{BeginSnapshot: 2, SchemaVersion: 2}))
	})
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.TableStats) != 1 || len(d.TableColumnStats) != 1 {
		t.Fatalf("the store keeps the dropped table's stats rows as DuckLake left them: %+v %+v", d.TableStats, d.TableColumnStats)
	}
}

func errs(es ...error) error {
	for _, e := range es {
		if e != nil {
			return e
		}
	}
	return nil
}
