package ducklake

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
)

// lake03 is a DuckLake 0.3 lake with a table whose column was renamed (two
// versions), a Parquet file, a delete file and inlined rows, over two
// snapshots.
func lake03(t *testing.T, cat *core.Catalog) {
	t.Helper()
	c := pin(t, cat)
	duckLakeAttach(t, c)
	commitAndCompare(t, cat, c)
	c = pin(t, cat)
	ins := func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(1), when, int64(1), int64(2), int64(1)})
	ins("ducklake_snapshot_changes", []any{int64(1), `created_table:"main"."t",inserted_into_table:1`, nil, nil, nil})
	ins("ducklake_schema_versions", []any{int64(1), int64(1)})
	ins("ducklake_table", []any{int64(1), "0192b7a8-7c51-7000-8000-0000000000bb", int64(1), nil, int64(0), "t", "t/", true})
	ins("ducklake_column",
		[]any{int64(1), int64(1), nil, int64(1), int64(1), "i", "int32", nil, nil, true, nil},
		[]any{int64(2), int64(1), nil, int64(1), int64(2), "s", "varchar", nil, "'x'", true, nil})
	ins("ducklake_data_file", []any{int64(0), int64(1), int64(1), nil, int64(0), "main/t/a.parquet", true, "parquet",
		int64(3), int64(640), int64(210), int64(0), nil, nil, nil, nil})
	ins("ducklake_table_stats", []any{int64(1), int64(3), int64(3), int64(640)})
	commitAndCompare(t, cat, c)

	c = pin(t, cat)
	ins = func(table string, rows ...[]any) { t.Helper(); noErr(t, c.Insert(table, rows)) }
	ins("ducklake_snapshot", []any{int64(2), when, int64(2), int64(2), int64(2)})
	ins("ducklake_snapshot_changes", []any{int64(2), "altered_table:1,inserted_into_table:1,deleted_from_table:1", nil, nil, nil})
	ins("ducklake_schema_versions", []any{int64(2), int64(2)})
	tb := c.Lookup("ducklake_column")
	set, err := c.Rows(tb)
	noErr(t, err)
	for i := 0; i < set.Len(); i++ {
		if id, r := set.Row(i); r[0] == int64(2) {
			noErr(t, c.Update("ducklake_column", []int64{id}, []int{tb.ColumnIndex("end_snapshot")}, [][]any{{int64(2)}}))
		}
	}
	ins("ducklake_column", []any{int64(2), int64(2), nil, int64(1), int64(2), "name", "varchar", nil, "'x'", true, nil})
	_, err = c.CreateTable(&Table{Name: "ducklake_inlined_data_1_2", PrimaryKey: -1, Columns: append(append([]Column{}, inlinedLeading...),
		Column{Name: "i", Type: "INTEGER"}, Column{Name: "name", Type: "VARCHAR"})}, true)
	noErr(t, err)
	ins("ducklake_inlined_data_tables", []any{int64(1), "ducklake_inlined_data_1_2", int64(2)})
	ins("ducklake_inlined_data_1_2", []any{int64(3), int64(2), nil, int64(7), "seven"})
	ins("ducklake_delete_file", []any{int64(1), int64(1), int64(2), nil, int64(0), "main/t/a-del.parquet", true, "parquet", int64(1), int64(300), int64(90), nil})
	commitAndCompare(t, cat, c)
}

// migrate10 runs, in c, the statements DuckLake 1.0 sends to migrate a
// 0.3 catalog (docs/ducklake-sql/contract-1.0.txt, "ATTACH a DuckLake 0.3
// lake", [6]-[25]).
func migrate10(t *testing.T, c *Changes) {
	t.Helper()
	for _, name := range []string{"ducklake_macro", "ducklake_macro_impl", "ducklake_macro_parameters"} {
		_, err := c.CreateTable(ovDDL(Spec10().Table(name)), false)
		noErr(t, err)
	}
	literal := "literal"
	_, err := c.AddColumn("ducklake_column", Column{Name: "default_value_type", Type: "VARCHAR"}, &literal, false)
	noErr(t, err)
	_, err = c.AddColumn("ducklake_column", Column{Name: "default_value_dialect", Type: "VARCHAR"}, nil, false)
	noErr(t, err)
	for _, name := range []string{"ducklake_sort_info", "ducklake_sort_expression", "ducklake_file_variant_stats"} {
		_, err := c.CreateTable(ovDDL(Spec10().Table(name)), false)
		noErr(t, err)
	}
	_, err = c.AddColumn("ducklake_schema_versions", Column{Name: "table_id", Type: "BIGINT"}, nil, false)
	noErr(t, err)
	_, err = c.AddColumn("ducklake_data_file", Column{Name: "partial_max", Type: "BIGINT"}, nil, false)
	noErr(t, err)
	_, err = c.AddColumn("ducklake_delete_file", Column{Name: "partial_max", Type: "BIGINT"}, nil, false)
	noErr(t, err)
	_, err = c.DropColumn("ducklake_data_file", "partial_file_info", false)
	noErr(t, err)
	setVersion := func(v string) {
		t.Helper()
		tb := c.Lookup("ducklake_metadata")
		set, err := c.Rows(tb)
		noErr(t, err)
		for i := 0; i < set.Len(); i++ {
			if id, r := set.Row(i); r[0] == "version" {
				noErr(t, c.Update("ducklake_metadata", []int64{id}, []int{1}, [][]any{{v}}))
			}
		}
	}
	setVersion("0.4")
	// Each schema version gets the tables it applies to (table 1 lives
	// from snapshot 1 on), then the rows without a table go.
	sv := c.Lookup("ducklake_schema_versions")
	set, err := c.Rows(sv)
	noErr(t, err)
	var add [][]any
	var old []int64
	for i := 0; i < set.Len(); i++ {
		id, r := set.Row(i)
		if r[2] == nil {
			old = append(old, id)
			if r[0].(int64) >= 1 {
				add = append(add, []any{r[0], r[1], int64(1)})
			}
		}
	}
	noErr(t, c.Insert("ducklake_schema_versions", add))
	_, err = c.Delete("ducklake_schema_versions", old)
	noErr(t, err)
	setVersion("1.0")
}

// DuckLake 1.0's migration of a lake DuckLake 0.3 wrote lands as one
// commit: afterwards the lake is served as DuckLake 1.0's (28 tables, the
// migrated rows), every snapshot reads what it read before, and a fresh
// read serves what the migrating transaction saw.
func TestCommitMigratesADuckLake03Lake(t *testing.T) {
	cat := lakeStore(t)
	lake03(t, cat)
	beforeAt := map[core.SnapshotID]string{}
	for at := core.SnapshotID(0); at <= 2; at++ {
		beforeAt[at] = entitiesAt(t, cat, at)
	}
	head, _ := cat.Head(bg)

	c := pin(t, cat)
	migrate10(t, c)
	commitAndCompare(t, cat, c)
	if h, _ := cat.Head(bg); h.SnapshotID != head.SnapshotID || h.BatchSeq != head.BatchSeq+1 {
		t.Fatalf("the migration landed as %+v after %+v: want one commit and no snapshot", h, head)
	}
	v := pin(t, cat).View()
	if v.Spec() != Spec10() || len(v.Tables()) != 28+1 {
		t.Fatalf("after the migration the lake is served as %s with %d tables", v.Spec().Version, len(v.Tables()))
	}
	for at := core.SnapshotID(0); at <= 2; at++ {
		if got := entitiesAt(t, cat, at); got != beforeAt[at] {
			t.Errorf("snapshot %d reads differently after the migration:\n before %s\n after  %s", at, beforeAt[at], got)
		}
	}
	rows, err := v.Rows(v.Lookup("ducklake_schema_versions"))
	noErr(t, err)
	if got := tableTexts(t, []*Table{v.Lookup("ducklake_schema_versions")}, func(*Table) [][]any { return rows }); strings.Join(got["ducklake_schema_versions"], " ") != "int64:1|int64:1|int64:1 int64:2|int64:2|int64:1" {
		t.Fatalf("schema versions after the migration: %q", got)
	}
	cols, err := v.Rows(v.Lookup("ducklake_column"))
	noErr(t, err)
	for _, r := range cols {
		if r[11] != "literal" {
			t.Fatalf("a column's default_value_type after the migration: %v", r)
		}
	}
}

// entitiesAt is what a snapshot reads of the lake's objects: tables,
// columns, files and inlined rows live then.
func entitiesAt(t *testing.T, cat *core.Catalog, at core.SnapshotID) string {
	t.Helper()
	v, err := cat.ViewAt(bg, at)
	noErr(t, err)
	var b strings.Builder
	for _, tb := range v.AllTables() {
		b.WriteString(tb.Name + "(")
		for _, c := range v.Columns(tb.ID) {
			b.WriteString(c.Name + " " + c.Type + ",")
		}
		b.WriteString(")")
		for _, f := range v.DataFiles(tb.ID) {
			b.WriteString(" " + f.Path)
		}
		for _, d := range v.DeleteFiles(tb.ID) {
			b.WriteString(" " + d.Path)
		}
		for _, g := range v.InlinedRows(tb.ID) {
			for _, r := range g.Rows {
				b.WriteString(fmt.Sprintf(" r%d", r.RowID))
			}
		}
	}
	return b.String()
}

// A migration that leaves a metadata table out of shape is refused,
// naming the table and the shape DuckLake 1.0 gives it. (A catalog whose
// format predates 1.0's entities refuses it too, naming `moraine migrate`:
// stage calls core's NeedsDuckLake10, tested in core.)
func TestCommitRefusesAnIncompleteMigration(t *testing.T) {
	cat := lakeStore(t)
	lake03(t, cat)
	c := pin(t, cat)
	migrate10(t, c)
	_, err := c.DropColumn("ducklake_column", "default_value_dialect", false)
	noErr(t, err)
	if _, err := Commit(bg, cat, c); core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), "ducklake_column") || !strings.Contains(err.Error(), "DuckLake 1.0's is") {
		t.Fatalf("a migration leaving ducklake_column short: %v", err)
	}

}
