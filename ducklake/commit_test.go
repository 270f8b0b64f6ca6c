package ducklake

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// lakeStore is an empty store opened as the storage extension opens it.
func lakeStore(t *testing.T) *core.Catalog {
	t.Helper()
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

// pin is a transaction's start: the view at the catalog's head (a new
// lake served as DuckLake 0.3's).
func pin(t *testing.T, c *core.Catalog) *Changes {
	t.Helper()
	return pinAs(t, c, Spec03())
}

// merged is every table a transaction sees, with its rows, normalized for
// comparison (rows sorted by their text).
func tableTexts(t *testing.T, tables []*Table, rows func(*Table) [][]any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tb := range tables {
		var lines []string
		for _, r := range rows(tb) {
			var cells []string
			for _, c := range r {
				switch v := c.(type) {
				case time.Time:
					cells = append(cells, v.UTC().Format(time.RFC3339Nano))
				case Encoded:
					cells = append(cells, fmt.Sprintf("enc%x", []byte(v)))
				default:
					cells = append(cells, fmt.Sprintf("%T:%v", c, c))
				}
			}
			lines = append(lines, strings.Join(cells, "|"))
		}
		sort.Strings(lines)
		out[tb.Name] = lines
	}
	return out
}

func txRows(t *testing.T, c *Changes) func(*Table) [][]any {
	return func(tb *Table) [][]any {
		set, err := c.Rows(tb)
		if err != nil {
			t.Fatal(err)
		}
		return set.Cells()
	}
}

// commitAndCompare commits c and checks that a fresh view of the catalog
// serves exactly what the transaction saw.
func commitAndCompare(t *testing.T, cat *core.Catalog, c *Changes) {
	t.Helper()
	want := tableTexts(t, c.Tables(), txRows(t, c))
	left, err := Commit(bg, cat, c)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	got := pin(t, cat)
	have := tableTexts(t, got.Tables(), txRows(t, got))
	if left == nil && c.Altered() {
		// Tables changed shape: the commit leaves no view (the next
		// read builds one); compare the fresh read only.
		left = got.View()
	}
	// The view the commit leaves is what a fresh read serves, at its head.
	cached := NewChanges(left)
	if h, _ := cat.Head(bg); left.Head() != h {
		t.Fatalf("the committed view is at %+v, the catalog at %+v", left.Head(), h)
	}
	if left.Spec() != got.View().Spec() {
		t.Fatalf("the committed view serves spec %v, a fresh read %v", left.Spec(), got.View().Spec())
	}
	if kept := tableTexts(t, cached.Tables(), txRows(t, cached)); !reflect.DeepEqual(kept, have) {
		t.Fatalf("the committed view differs from a fresh read:\n kept %q\n read %q", kept, have)
	}
	if !reflect.DeepEqual(want, have) {
		for name := range want {
			if !reflect.DeepEqual(want[name], have[name]) {
				t.Errorf("%s:\n the transaction saw %q\n the catalog serves  %q", name, want[name], have[name])
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				t.Errorf("the catalog serves %s, which the transaction did not see", name)
			}
		}
		t.FailNow()
	}
}

var when = time.Date(2026, 12, 3, 12, 0, 0, 500000000, time.UTC)

// duckLakeAttach runs what DuckLake's first ATTACH sends (contract PART 1
// [5]-[31]).
func duckLakeAttach(t *testing.T, c *Changes) {
	t.Helper()
	for _, tb := range MetadataTables() {
		if _, err := c.CreateTable(tb, false); err != nil {
			t.Fatalf("CREATE TABLE %s: %v", tb.Name, err)
		}
	}
	ins := func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_schema_versions", []any{int64(0), int64(0)})
	ins("ducklake_snapshot", []any{int64(0), when, int64(0), int64(1), int64(0)})
	ins("ducklake_snapshot_changes", []any{int64(0), `created_schema:"main"`, nil, nil, nil})
	ins("ducklake_metadata", []any{"version", "0.3", nil, nil}, []any{"created_by", "DuckDB 6ddac802ff", nil, nil},
		[]any{"data_path", "/data/", nil, nil}, []any{"encrypted", "false", nil, nil})
	ins("ducklake_schema", []any{int64(0), "0192b7a8-7c51-7000-8000-0000000000aa", int64(0), nil, "main", "main/", true})
}

func TestCommitGenesisAndDuckLakeWritesRoundTrip(t *testing.T) {
	cat := lakeStore(t)
	c := pin(t, cat)
	duckLakeAttach(t, c)
	commitAndCompare(t, cat, c)
	if !cat.HasLake() {
		t.Fatal("no lake after DuckLake's first ATTACH")
	}

	// CREATE TABLE main.t(i INTEGER, s VARCHAR, l INTEGER[]) and an insert
	// into Parquet (snapshot 1).
	c = pin(t, cat)
	ins := func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(1), when, int64(1), int64(2), int64(1)})
	ins("ducklake_snapshot_changes", []any{int64(1), `created_table:"main"."t",inserted_into_table:1`, "ann", "first", nil})
	ins("ducklake_schema_versions", []any{int64(1), int64(1)})
	ins("ducklake_table", []any{int64(1), "0192b7a8-7c51-7000-8000-0000000000bb", int64(1), nil, int64(0), "t", "t/", true})
	ins("ducklake_column",
		[]any{int64(1), int64(1), nil, int64(1), int64(1), "i", "int32", nil, nil, true, nil},
		[]any{int64(2), int64(1), nil, int64(1), int64(2), "s", "varchar", nil, "'x'", true, nil},
		[]any{int64(3), int64(1), nil, int64(1), int64(3), "l", "list", nil, nil, true, nil},
		[]any{int64(4), int64(1), nil, int64(1), int64(4), "element", "int32", nil, nil, true, int64(3)})
	ins("ducklake_data_file", []any{int64(0), int64(1), int64(1), nil, int64(0), "main/t/ducklake-1.parquet", true, "parquet",
		int64(3), int64(640), int64(210), int64(0), nil, nil, nil, nil})
	ins("ducklake_file_column_stats", []any{int64(0), int64(1), int64(1), int64(40), int64(3), int64(0), "1", "3", nil, nil},
		[]any{int64(0), int64(1), int64(2), int64(50), int64(3), int64(1), "a", "c", nil, nil})
	ins("ducklake_table_stats", []any{int64(1), int64(3), int64(3), int64(640)})
	ins("ducklake_table_column_stats", []any{int64(1), int64(1), false, nil, "1", "3", nil}, []any{int64(1), int64(2), true, nil, "a", "c", nil})
	ins("ducklake_tag", []any{int64(1), int64(1), nil, "comment", "a table"})
	ins("ducklake_column_tag", []any{int64(1), int64(2), int64(1), nil, "comment", "a column"})
	ins("ducklake_metadata", []any{"target_file_size", "10KB", "table", int64(1)})
	commitAndCompare(t, cat, c)

	// Snapshot 2: rename column s (end version, new version), an inlined
	// insert, a delete file, stats updated in place.
	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	update := func(table string, where func([]any) bool, col string, v any) {
		t.Helper()
		tb := c.Lookup(table)
		set, err := c.Rows(tb)
		noErr(t, err)
		var ids []int64
		var rows [][]any
		for i := 0; i < set.Len(); i++ {
			id, cells := set.Row(i)
			if where(cells) {
				ids = append(ids, id)
				rows = append(rows, []any{v})
			}
		}
		if len(ids) == 0 {
			t.Fatalf("UPDATE %s: no row matched", table)
		}
		noErr(t, c.Update(table, ids, []int{tb.ColumnIndex(col)}, rows))
	}
	ins("ducklake_snapshot", []any{int64(2), when.Add(time.Second), int64(2), int64(2), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(2), "altered_table:1,inserted_into_table:1,deleted_from_table:1", nil, nil, nil})
	ins("ducklake_schema_versions", []any{int64(2), int64(2)})
	update("ducklake_column", func(r []any) bool { return r[0] == int64(2) && r[2] == nil }, "end_snapshot", int64(2))
	ins("ducklake_column", []any{int64(2), int64(2), nil, int64(1), int64(2), "name", "varchar", nil, "'x'", true, nil})
	_, err := c.CreateTable(&Table{Name: "ducklake_inlined_data_1_2", PrimaryKey: -1, Columns: append(append([]Column{}, inlinedLeading...),
		Column{Name: "i", Type: "INTEGER"}, Column{Name: "name", Type: "VARCHAR"}, Column{Name: "l", Type: "INTEGER[]"})}, true)
	noErr(t, err)
	ins("ducklake_inlined_data_tables", []any{int64(1), "ducklake_inlined_data_1_2", int64(2)})
	ins("ducklake_inlined_data_1_2", []any{int64(3), int64(2), nil, int64(7), "seven", Encoded{0x01, 0x02, 0x00}},
		[]any{int64(4), int64(2), nil, nil, nil, nil})
	ins("ducklake_delete_file", []any{int64(1), int64(1), int64(2), nil, int64(0), "main/t/ducklake-1-del.parquet", true, "parquet", int64(1), int64(300), int64(90), nil})
	update("ducklake_table_stats", func(r []any) bool { return r[0] == int64(1) }, "record_count", int64(4))
	update("ducklake_table_stats", func(r []any) bool { return r[0] == int64(1) }, "next_row_id", int64(5))
	update("ducklake_table_column_stats", func(r []any) bool { return r[1] == int64(1) }, "max_value", "7")
	commitAndCompare(t, cat, c)

	// Snapshot 3: delete an inlined row (end), flush-like removal of the
	// other, drop the table's tag, a view; then expire snapshot 1 without a
	// new snapshot and clean up a file.
	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(3), when.Add(2 * time.Second), int64(3), int64(3), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(3), `deleted_from_table:1,created_view:"main"."v"`, nil, nil, "{}"})
	update("ducklake_inlined_data_1_2", func(r []any) bool { return r[0] == int64(3) }, "end_snapshot", int64(3))
	// del deletes the rows where holds; some: it must delete at least one.
	del := func(table string, where func([]any) bool, some bool) {
		t.Helper()
		set, err := c.Rows(c.Lookup(table))
		noErr(t, err)
		var ids []int64
		for i := 0; i < set.Len(); i++ {
			id, cells := set.Row(i)
			if where(cells) {
				ids = append(ids, id)
			}
		}
		n, err := c.Delete(table, ids)
		noErr(t, err)
		if some && n == 0 {
			t.Fatalf("DELETE FROM %s: nothing deleted", table)
		}
	}
	del("ducklake_inlined_data_1_2", func(r []any) bool { return r[0] == int64(4) }, true)
	update("ducklake_tag", func(r []any) bool { return r[0] == int64(1) }, "end_snapshot", int64(3))
	ins("ducklake_view", []any{int64(2), "0192b7a8-7c51-7000-8000-0000000000cc", int64(3), nil, int64(0), "v", "duckdb", "SELECT 1", ""})
	ins("ducklake_files_scheduled_for_deletion", []any{int64(9), "main/t/old.parquet", true, when})
	commitAndCompare(t, cat, c)

	c = pin(t, cat)
	del("ducklake_snapshot", func(r []any) bool { return r[0] == int64(1) }, false)
	del("ducklake_snapshot_changes", func(r []any) bool { return r[0] == int64(1) }, false)
	del("ducklake_files_scheduled_for_deletion", func(r []any) bool { return true }, false)
	del("ducklake_column", func(r []any) bool { return r[2] != nil }, false) // ended versions
	before, _ := cat.Head(bg)
	commitAndCompare(t, cat, c)
	after, _ := cat.Head(bg)
	if after.SnapshotID != before.SnapshotID || after.BatchSeq != before.BatchSeq+1 {
		t.Fatalf("an expire minted a snapshot: %+v -> %+v", before, after)
	}
}

// A transaction whose head moved is refused with "conflict", and writes
// nothing.
func TestCommitOnAMovedHeadIsAConflict(t *testing.T) {
	cat := lakeStore(t)
	c := pin(t, cat)
	duckLakeAttach(t, c)
	_, err := Commit(bg, cat, c)
	noErr(t, err)

	first, second := pin(t, cat), pin(t, cat)
	for _, c := range []*Changes{first, second} {
		noErr(t, c.Insert("ducklake_snapshot", [][]any{{int64(1), when, int64(0), int64(1), int64(0)}}))
		noErr(t, c.Insert("ducklake_snapshot_changes", [][]any{{int64(1), "", nil, nil, nil}}))
	}
	_, err = Commit(bg, cat, first)
	noErr(t, err)
	_, err = Commit(bg, cat, second)
	if core.KindOf(err) != core.CommitConflict || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("the second commit on snapshot 0: %v", err)
	}
	d, err := cat.Dump(bg)
	noErr(t, err)
	if len(d.Snapshots) != 2 {
		t.Fatalf("%d snapshots after a refused commit", len(d.Snapshots))
	}
	// A read-only transaction commits nothing and is no conflict.
	if _, err := Commit(bg, cat, NewChanges(second.View())); err != nil {
		t.Fatalf("an empty change set: %v", err)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A child row (a partition value, a tag, a name mapping, snapshot changes)
// whose key has no parent row is refused, naming both tables, and nothing
// is committed.
func TestCommitRefusesRowsWithoutTheirParent(t *testing.T) {
	cat := lakeStore(t)
	c := pin(t, cat)
	duckLakeAttach(t, c)
	_, err := Commit(bg, cat, c)
	noErr(t, err)
	for _, tc := range []struct {
		table string
		row   []any
		want  string
	}{
		{"ducklake_file_partition_value", []any{int64(7), int64(1), int64(0), "x"}, "ducklake_file_partition_value holds rows of data file 7, which has no ducklake_data_file row"},
		{"ducklake_column_tag", []any{int64(1), int64(3), int64(1), nil, "k", "v"}, "ducklake_column_tag holds rows of column 1/3, which has no ducklake_column row"},
		{"ducklake_name_mapping", []any{int64(9), int64(1), "a", int64(1), nil, false}, "ducklake_name_mapping holds rows of mapping 9, which has no ducklake_column_mapping row"},
		{"ducklake_snapshot_changes", []any{int64(1), "", nil, nil, nil}, "ducklake_snapshot_changes holds rows of snapshot 1, which has no ducklake_snapshot row"},
	} {
		c := pin(t, cat)
		noErr(t, c.Insert("ducklake_snapshot", [][]any{{int64(1), when, int64(0), int64(1), int64(0)}}))
		if tc.table != "ducklake_snapshot_changes" {
			noErr(t, c.Insert("ducklake_snapshot_changes", [][]any{{int64(1), "", nil, nil, nil}}))
		} else {
			c = pin(t, cat) // the changes alone
		}
		noErr(t, c.Insert(tc.table, [][]any{tc.row}))
		_, err := Commit(bg, cat, c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s without its parent: %v, want an error containing %q", tc.table, err, tc.want)
		}
		if d, err := cat.Dump(bg); err != nil || len(d.Snapshots) != 1 {
			t.Fatalf("after a refused commit: %v, %d snapshots", err, len(d.Snapshots))
		}
	}
}

// pinAs is pin with the spec a new lake is served as.
func pinAs(t *testing.T, c *core.Catalog, spec *Spec) *Changes {
	t.Helper()
	var d *core.Dump
	if c.HasLake() {
		var err error
		if d, err = c.Dump(bg); err != nil {
			t.Fatal(err)
		}
	}
	v, err := NewViewAs(d, spec)
	if err != nil {
		t.Fatal(err)
	}
	return NewChanges(v)
}

// DuckLake 1.0's writes (docs/ducklake-sql/contract-1.0.txt) round-trip:
// its 28 tables at the first ATTACH, columns with default types, schema
// versions per table, files with partial_max, macros with implementations
// and parameters, sort keys, and their end-dating; a write of VARIANT
// statistics is refused (the catalog holds none yet), and a CREATE TABLE
// of 0.3's shape is refused on a store served as 1.0.
// lake10 is a store holding a lake as DuckLake 1.0's first ATTACH
// creates it: its 28 metadata tables and seed rows (snapshot 0).
func lake10(t *testing.T) *core.Catalog {
	t.Helper()
	cat := lakeStore(t)
	c := pinAs(t, cat, Spec10())
	_, err := c.CreateTable(ovDDL(MetadataTables()[8]), false) // 0.3's ducklake_data_file
	if core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "DuckLake 1.0's") {
		t.Fatalf("0.3's ducklake_data_file on a 1.0 store: %v", err)
	}
	for _, tb := range Spec10().Tables() {
		if _, err := c.CreateTable(ovDDL(tb), false); err != nil {
			t.Fatalf("CREATE TABLE %s: %v", tb.Name, err)
		}
	}
	ins := func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(0), when, int64(0), int64(1), int64(0)})
	ins("ducklake_snapshot_changes", []any{int64(0), `created_schema:"main"`, nil, nil, nil})
	ins("ducklake_metadata", []any{"version", "1.0", nil, nil}, []any{"created_by", "DuckDB d8cdaa33fd", nil, nil},
		[]any{"data_path", "/data/", nil, nil}, []any{"encrypted", "false", nil, nil})
	ins("ducklake_schema", []any{int64(0), "0192b7a8-7c51-7000-8000-0000000000aa", int64(0), nil, "main", "main/", true})
	commitAndCompare(t, cat, c)
	if v := pin(t, cat).View(); v.Spec() != Spec10() || len(v.Tables()) != 28 {
		t.Fatalf("the lake DuckLake 1.0 created is served as %s with %d tables", v.Spec().Version, len(v.Tables()))
	}
	return cat
}

func TestCommitDuckLake10WritesRoundTrip(t *testing.T) {
	cat := lake10(t)
	c := pin(t, cat)
	ins := func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(1), when, int64(1), int64(3), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(1), `created_table:"main"."t",inserted_into_table:2`, nil, nil, nil})
	ins("ducklake_table", []any{int64(2), "0192b7a8-7c51-7000-8000-0000000000bb", int64(1), nil, int64(0), "t", "t/", true})
	ins("ducklake_column",
		[]any{int64(1), int64(1), nil, int64(2), int64(1), "id", "int32", nil, "NULL", true, nil, "literal", "duckdb"},
		[]any{int64(2), int64(1), nil, int64(2), int64(2), "score", "float64", "1.5", "1.5", true, nil, "literal", "duckdb"})
	ins("ducklake_schema_versions", []any{int64(1), int64(1), int64(2)})
	ins("ducklake_data_file", []any{int64(0), int64(2), int64(1), nil, nil, "main/t/a.parquet", true, "parquet",
		int64(3), int64(640), int64(210), int64(0), nil, nil, nil, int64(1)})
	ins("ducklake_delete_file", []any{int64(1), int64(2), int64(1), nil, int64(0), "main/t/a-del.parquet", true, "parquet", int64(1), int64(300), int64(90), nil, int64(1)})
	commitAndCompare(t, cat, c)
	d, err := cat.Dump(bg)
	noErr(t, err)
	if len(d.DataFiles) != 1 || d.DataFiles[0].PartialMax == nil || *d.DataFiles[0].PartialMax != 1 || d.DeleteFiles[0].PartialMax == nil {
		t.Fatalf("partial_max was not kept: %+v %+v", d.DataFiles, d.DeleteFiles)
	}
	if len(d.SchemaVersions) != 1 || d.SchemaVersions[0].TableID != 2 {
		t.Fatalf("schema versions %+v, want one of table 2", d.SchemaVersions)
	}

	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(2), when, int64(2), int64(5), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(2), `created_scalar_macro:"main"."add_one",altered_table:2`, nil, nil, nil})
	ins("ducklake_macro", []any{int64(0), int64(3), "add_one", int64(2), nil})
	ins("ducklake_macro_impl", []any{int64(3), int64(0), "duckdb", "(a + b)", "scalar"})
	ins("ducklake_macro_parameters", []any{int64(3), int64(0), int64(1), "b", "unknown", "1", "int32"},
		[]any{int64(3), int64(0), int64(0), "a", "unknown", "NULL", "unknown"})
	ins("ducklake_sort_info", []any{int64(4), int64(2), int64(2), nil})
	ins("ducklake_sort_expression", []any{int64(4), int64(2), int64(1), `"score"`, "duckdb", "DESC", "NULLS_FIRST"},
		[]any{int64(4), int64(2), int64(0), "id", "duckdb", "ASC", "NULLS_LAST"})
	commitAndCompare(t, cat, c)
	view, err := cat.View(bg)
	noErr(t, err)
	m, ok := view.MacroByName("main", "scalar", "add_one")
	if !ok || len(m.Impls) != 1 || len(m.Impls[0].Parameters) != 2 || m.Impls[0].Parameters[0].Name != "a" || *m.Impls[0].Parameters[1].DefaultValue != "1" {
		t.Fatalf("the macro DuckLake wrote: %+v", m)
	}
	if st, ok := view.Sort(2); !ok || len(st.Expressions) != 2 || st.Expressions[0].Expression != "id" || st.Expressions[1].NullOrder != "NULLS_FIRST" {
		t.Fatalf("the sort DuckLake wrote: %+v", st)
	}

	// DROP MACRO and RESET SORTED BY end-date their rows.
	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(3), when, int64(3), int64(5), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(3), "dropped_scalar_macro:3,altered_table:2", nil, nil, nil})
	for _, tb := range []string{"ducklake_macro", "ducklake_sort_info"} {
		set, err := c.Rows(c.Lookup(tb))
		noErr(t, err)
		id, _ := set.Row(0)
		noErr(t, c.Update(tb, []int64{id}, []int{c.Lookup(tb).ColumnIndex("end_snapshot")}, [][]any{{int64(3)}}))
	}
	commitAndCompare(t, cat, c)
	view, err = cat.View(bg)
	noErr(t, err)
	if _, ok := view.MacroByName("main", "scalar", "add_one"); ok {
		t.Fatal("the dropped macro is live")
	}
	if _, ok := view.Sort(2); ok {
		t.Fatal("the reset sort is live")
	}

	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(4), when, int64(3), int64(5), int64(3)})
	ins("ducklake_snapshot_changes", []any{int64(4), "inserted_into_table:2", nil, nil, nil})
	ins("ducklake_file_variant_stats", []any{int64(2), int64(2), int64(1), "b", "VARCHAR", int64(12), int64(3), int64(1), "x", "z", nil, nil},
		[]any{int64(2), int64(2), int64(1), "a", "int32", int64(10), int64(3), int64(0), "1", "3", nil, nil})
	commitAndCompare(t, cat, c)
	d, err = cat.Dump(bg)
	noErr(t, err)
	if len(d.FileVariantStats) != 1 || len(d.FileVariantStats[0].Paths) != 2 || d.FileVariantStats[0].Paths[0].VariantPath != "a" ||
		*d.FileVariantStats[0].Paths[1].ShreddedType != "VARCHAR" || *d.FileVariantStats[0].Paths[1].NullCount != 1 {
		t.Fatalf("the variant statistics DuckLake wrote: %+v", d.FileVariantStats)
	}

	// Compaction deletes them with the file's other statistics.
	c = pin(t, cat)
	set, err := c.Rows(c.Lookup("ducklake_file_variant_stats"))
	noErr(t, err)
	var ids []int64
	for i := 0; i < set.Len(); i++ {
		id, _ := set.Row(i)
		ids = append(ids, id)
	}
	if n, err := c.Delete("ducklake_file_variant_stats", ids); err != nil || n != 2 {
		t.Fatalf("DELETE FROM ducklake_file_variant_stats: %d, %v", n, err)
	}
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(5), when, int64(3), int64(5), int64(3)})
	ins("ducklake_snapshot_changes", []any{int64(5), "merge_adjacent:2", nil, nil, nil})
	commitAndCompare(t, cat, c)
	if d, err = cat.Dump(bg); err != nil || len(d.FileVariantStats) != 0 {
		t.Fatalf("after the delete: %+v, %v", d.FileVariantStats, err)
	}
}
