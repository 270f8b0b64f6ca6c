package ducklake

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// ovLake is a lake with schemas main, a and b (three ducklake_schema
// rows, schema ids 0..2 in some order), viewed at its head.
func ovLake(t *testing.T) *View {
	t.Helper()
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		for _, n := range []string{"a", "b"} {
			if _, err := tx.CreateSchema(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return view(t, c)
}

// ovNoLake is the view of a store that holds no lake.
func ovNoLake(t *testing.T) *View {
	t.Helper()
	v, err := NewView(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type ovRow struct {
	id    int64
	cells []any
}

func ovRead(t *testing.T, c *Changes, name string) []ovRow {
	t.Helper()
	tb := c.Lookup(name)
	if tb == nil {
		t.Fatalf("no table %s in the transaction", name)
	}
	rs, err := c.Rows(tb)
	if err != nil {
		t.Fatal(err)
	}
	var out []ovRow
	for i := 0; i < rs.Len(); i++ {
		id, cells := rs.Row(i)
		out = append(out, ovRow{id, cells})
	}
	return out
}

func ovIDs(rows []ovRow) []int64 {
	var out []int64
	for _, r := range rows {
		out = append(out, r.id)
	}
	return out
}

func ovSchemaRow(id int64, name string) []any {
	return []any{id, "01a23b9a-07a0-739d-a97d-85a0107df1ac", int64(5), nil, name, name + "/", true}
}

func ovWant(t *testing.T, err error, kind core.Kind, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %v is not %v", err, kind)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q lacks %q", err, p)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A transaction's scans read the base rows with its deletes and updates
// applied, in rowid order, then its live inserted rows; rowids never move,
// and an inserted row can be updated and deleted again.
func TestChangesMergeWithStableRowids(t *testing.T) {
	v := ovLake(t)
	c := NewChanges(v)
	base := ovRead(t, c, "ducklake_schema")
	if len(base) != 3 || !slices.Equal(ovIDs(base), []int64{0, 1, 2}) {
		t.Fatalf("base rows %v, want rowids 0 1 2", ovIDs(base))
	}
	if !c.Empty() {
		t.Fatal("a fresh change set is not empty")
	}
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(10, "x"), ovSchemaRow(11, "y")}))
	must(t, c.Insert("DuckLake_Schema", [][]any{ovSchemaRow(12, "z")})) // names are case-insensitive
	if got := ovIDs(ovRead(t, c, "ducklake_schema")); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("after inserts: rowids %v", got)
	}
	n, err := c.Delete("ducklake_schema", []int64{1, 1, 4})
	must(t, err)
	if n != 2 {
		t.Fatalf("deleted %d rows, want 2 (rowid 1 listed twice)", n)
	}
	if n, _ := c.Delete("ducklake_schema", []int64{1}); n != 0 {
		t.Fatalf("deleting a deleted row counted %d", n)
	}
	must(t, c.Update("ducklake_schema", []int64{0, 5}, []int{4}, [][]any{{"renamed"}, {"z2"}}))
	must(t, c.Update("ducklake_schema", []int64{2}, []int{4, 6}, [][]any{{"b2", false}}))
	must(t, c.Update("ducklake_schema", []int64{2}, []int{4}, [][]any{{"b3"}})) // on top of the first update
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(13, "w")}))
	rows := ovRead(t, c, "ducklake_schema")
	if got := ovIDs(rows); !slices.Equal(got, []int64{0, 2, 3, 5, 6}) {
		t.Fatalf("rowids %v, want 0 2 3 5 6 (1 and 4 deleted, 6 the next insert)", got)
	}
	names := []any{}
	for _, r := range rows {
		names = append(names, r.cells[4])
	}
	if !slices.Equal(names, []any{"renamed", "b3", "x", "z2", "w"}) {
		t.Fatalf("names %v", names)
	}
	if rows[1].cells[6] != false {
		t.Fatalf("row 2's path_is_relative %v: the second update lost the first", rows[1].cells[6])
	}
	// Deleting an updated base row leaves only the delete.
	must(t, c.Update("ducklake_schema", []int64{2}, []int{4}, [][]any{{"gone"}}))
	if _, err := c.Delete("ducklake_schema", []int64{2}); err != nil {
		t.Fatal(err)
	}
	// The base rows themselves never change.
	if b := ovRead(t, NewChanges(v), "ducklake_schema"); b[0].cells[4] == "renamed" {
		t.Fatal("an update reached the view's rows")
	}

	changed := c.Changed()
	if len(changed) != 1 || changed[0].Table() != v.Lookup("ducklake_schema") || changed[0].Created() {
		t.Fatalf("changed tables: %v", changed)
	}
	tc := changed[0]
	if !slices.Equal(tc.Deleted(), []int64{1, 2}) {
		t.Fatalf("Deleted %v, want [1 2]", tc.Deleted())
	}
	up := tc.Updated()
	if len(up) != 1 || up[0].RowID != 0 || up[0].Row[4] != "renamed" || len(up[0].Row) != 7 {
		t.Fatalf("Updated %v, want rowid 0 renamed", up)
	}
	ins := tc.Inserted()
	if len(ins) != 3 || ins[0][4] != "x" || ins[1][4] != "z2" || ins[2][4] != "w" {
		t.Fatalf("Inserted %v", ins)
	}
	if len(tc.Base()) != 3 {
		t.Fatalf("Base has %d rows", len(tc.Base()))
	}
	if c.Empty() {
		t.Fatal("a change set with writes is empty")
	}
	if len(c.Created()) != 0 {
		t.Fatalf("Created %v", c.Created())
	}
}

// A RowSet is what a scan saw when it started: later writes of the same
// transaction do not reach it (INSERT INTO t SELECT ... FROM t reads t
// once).
func TestRowSetIsASnapshot(t *testing.T) {
	c := NewChanges(ovLake(t))
	tb := c.Lookup("ducklake_schema")
	before, err := c.Rows(tb)
	must(t, err)
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(10, "x")}))
	mid, err := c.Rows(tb)
	must(t, err)
	must(t, c.Update("ducklake_schema", []int64{3}, []int{4}, [][]any{{"y"}}))
	_, err = c.Delete("ducklake_schema", []int64{0})
	must(t, err)
	if before.Len() != 3 || mid.Len() != 4 {
		t.Fatalf("snapshots have %d and %d rows, want 3 and 4", before.Len(), mid.Len())
	}
	if id, cells := mid.Row(3); id != 3 || cells[4] != "x" {
		t.Fatalf("the snapshot's inserted row changed: %d %v", id, cells)
	}
	if id, _ := mid.Row(0); id != 0 {
		t.Fatalf("the snapshot lost the deleted row: rowid %d", id)
	}
}

// The primary key is enforced against the pinned head and the
// transaction's own live rows, including the rows of one batch, in
// DuckDB's wording; a refused batch changes nothing.
func TestChangesEnforceThePrimaryKey(t *testing.T) {
	c := NewChanges(ovLake(t))
	taken := ovRead(t, c, "ducklake_schema")[0].cells[0].(int64)
	err := c.Insert("ducklake_schema", [][]any{ovSchemaRow(20, "ok"), ovSchemaRow(taken, "dup")})
	ovWant(t, err, core.Constraint, "Duplicate key", "primary key", `"schema_id: `)
	if got := len(ovRead(t, c, "ducklake_schema")); got != 3 {
		t.Fatalf("a refused batch left %d rows, want 3", got)
	}
	err = c.Insert("ducklake_schema", [][]any{ovSchemaRow(21, "a"), ovSchemaRow(21, "b")})
	ovWant(t, err, core.Constraint, "Duplicate key \"schema_id: 21\" violates primary key constraint.")
	// A key is taken by a live row only: after deleting the row holding
	// it, the key may be inserted again.
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(30, "x")}))
	ovWant(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(30, "again")}), core.Constraint, "primary key")
	// uint64 and int64 keys compare by value.
	row := ovSchemaRow(0, "u")
	row[0] = uint64(30)
	ovWant(t, c.Insert("ducklake_schema", [][]any{row}), core.Constraint, "primary key")
	_, err = c.Delete("ducklake_schema", []int64{3})
	must(t, err)
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(30, "back")}))
	_, err = c.Delete("ducklake_schema", []int64{0})
	must(t, err)
	first := ovRead(t, NewChanges(c.View()), "ducklake_schema")[0].cells[0].(int64)
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(first, "reused")}))

	// Updates of the key column are checked the same way, after the whole
	// batch: two rows may swap keys, but not take a key a third keeps.
	rows := ovRead(t, c, "ducklake_schema")
	a, b := rows[0], rows[1]
	ka, kb := a.cells[0].(int64), b.cells[0].(int64)
	must(t, c.Update("ducklake_schema", []int64{a.id, b.id}, []int{0}, [][]any{{kb}, {ka}}))
	ovWant(t, c.Update("ducklake_schema", []int64{a.id}, []int{0}, [][]any{{int64(30)}}), core.Constraint, "Duplicate key \"schema_id: 30\"")
	ovWant(t, c.Update("ducklake_schema", []int64{a.id, b.id}, []int{0}, [][]any{{int64(99)}, {int64(99)}}), core.Constraint, "primary key")
	must(t, c.Update("ducklake_schema", []int64{a.id}, []int{0}, [][]any{{kb}})) // its own key again
	// The refused updates changed nothing.
	after := ovRead(t, c, "ducklake_schema")
	if after[0].cells[0] != kb || after[1].cells[0] != ka {
		t.Fatalf("keys after the refused updates: %v %v, want %d %d", after[0].cells[0], after[1].cells[0], kb, ka)
	}
	// A key an update gave up can be inserted; the new one cannot.
	must(t, c.Update("ducklake_schema", []int64{a.id}, []int{0}, [][]any{{int64(500)}}))
	must(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(kb, "freed")}))
	ovWant(t, c.Insert("ducklake_schema", [][]any{ovSchemaRow(500, "taken")}), core.Constraint, "schema_id: 500")
}

// NOT NULL columns (and the primary key column) refuse NULL on insert and
// update; rows of the wrong width and cells of a foreign Go type are
// refused as invalid.
func TestChangesCheckNotNullAndShape(t *testing.T) {
	c := NewChanges(ovLake(t))
	ovWant(t, c.Insert("ducklake_metadata", [][]any{{nil, "v", nil, nil}}), core.Constraint, "NOT NULL constraint failed: ducklake_metadata.key")
	ovWant(t, c.Insert("ducklake_metadata", [][]any{{"k", nil, nil, nil}}), core.Constraint, "NOT NULL constraint failed: ducklake_metadata.value")
	ovWant(t, c.Insert("ducklake_snapshot", [][]any{{nil, time.Now(), int64(0), int64(1), int64(0)}}), core.Constraint, "NOT NULL constraint failed: ducklake_snapshot.snapshot_id")
	ovWant(t, c.Insert("ducklake_metadata", [][]any{{"k", "v"}}), core.InvalidArgument, "2 values", "4 columns")
	ovWant(t, c.Insert("ducklake_metadata", [][]any{{"k", "v", nil, 3}}), core.InvalidArgument, "Go type int")
	ovWant(t, c.Insert("ducklake_nothing", [][]any{{1}}), core.NotFound, "ducklake_nothing")
	must(t, c.Insert("ducklake_metadata", [][]any{{"k", "v", "table", int64(3)}}))
	rows := ovRead(t, c, "ducklake_metadata")
	last := rows[len(rows)-1].id
	ovWant(t, c.Update("ducklake_metadata", []int64{last}, []int{1}, [][]any{{nil}}), core.Constraint, "NOT NULL constraint failed: ducklake_metadata.value")
	ovWant(t, c.Update("ducklake_metadata", []int64{last}, []int{9}, [][]any{{nil}}), core.InvalidArgument, "column number 9")
	ovWant(t, c.Update("ducklake_metadata", []int64{last}, []int{1, 1}, [][]any{{"a", "b"}}), core.InvalidArgument, "given twice")
	ovWant(t, c.Update("ducklake_metadata", []int64{last + 7}, []int{1}, [][]any{{"a"}}), core.InvalidArgument, "no live row")
	_, err := c.Delete("ducklake_metadata", []int64{last + 7})
	ovWant(t, err, core.InvalidArgument, "no row with rowid")
	must(t, c.Update("ducklake_metadata", []int64{last}, []int{3}, [][]any{{nil}}))
	if got := ovRead(t, c, "ducklake_metadata"); got[len(got)-1].cells[3] != nil || got[len(got)-1].cells[1] != "v" {
		t.Fatalf("after the updates: %v", got[len(got)-1].cells)
	}
}

// ddl is a CREATE TABLE as the storage extension hands it over: a PRIMARY
// KEY column is NOT NULL, as DuckDB's binder makes it.
func ovDDL(m *Table) *Table {
	d := &Table{Name: m.Name, PrimaryKey: m.PrimaryKey}
	for i, col := range m.Columns {
		col.NotNull = col.NotNull || i == m.PrimaryKey
		d.Columns = append(d.Columns, col)
	}
	return d
}

// DuckLake's first ATTACH: the 22 metadata tables and the seed rows, in
// one transaction on a store with no lake, read back within it.
func TestChangesCreateTheMetadataTablesOnAnEmptyStore(t *testing.T) {
	c := NewChanges(ovNoLake(t))
	if len(c.Tables()) != 0 {
		t.Fatal("an empty store lists tables")
	}
	for _, m := range MetadataTables() {
		created, err := c.CreateTable(ovDDL(m), false)
		if err != nil || !created {
			t.Fatalf("CREATE TABLE %s: %v %v", m.Name, created, err)
		}
	}
	if got := c.Tables(); len(got) != 22 || got[0] != MetadataTables()[0] || c.Lookup("DUCKLAKE_SNAPSHOT") != MetadataTables()[1] {
		t.Fatalf("%d tables after the creates; want MetadataTables' own 22", len(got))
	}
	now := time.Date(2026, 1, 14, 10, 0, 0, 123456000, time.UTC)
	must(t, c.Insert("ducklake_schema_versions", [][]any{{int64(0), int64(0)}}))
	must(t, c.Insert("ducklake_snapshot", [][]any{{int64(0), now, int64(0), int64(1), int64(0)}}))
	must(t, c.Insert("ducklake_snapshot_changes", [][]any{{int64(0), `created_schema:"main"`, nil, nil, nil}}))
	must(t, c.Insert("ducklake_metadata", [][]any{{"version", "0.3", nil, nil}, {"created_by", "DuckDB 6ddac802ff", nil, nil}, {"data_path", "/data/", nil, nil}, {"encrypted", "false", nil, nil}}))
	must(t, c.Insert("ducklake_schema", [][]any{{int64(0), "5b6b5ba4-4b1b-4b71-9a0e-111111111111", int64(0), nil, "main", "main/", true}}))
	ovWant(t, c.Insert("ducklake_snapshot", [][]any{{int64(0), now, int64(0), int64(1), int64(0)}}), core.Constraint, "Duplicate key \"snapshot_id: 0\" violates primary key constraint.")
	snap := ovRead(t, c, "ducklake_snapshot")
	if len(snap) != 1 || snap[0].id != 0 || !snap[0].cells[1].(time.Time).Equal(now) {
		t.Fatalf("ducklake_snapshot %v", snap)
	}
	if md := ovRead(t, c, "ducklake_metadata"); len(md) != 4 || md[3].cells[0] != "encrypted" {
		t.Fatalf("ducklake_metadata %v", md)
	}
	if got := c.Created(); len(got) != 22 {
		t.Fatalf("Created lists %d tables", len(got))
	}
	if ch := c.Changed(); len(ch) != 22 || !ch[0].Created() || ch[0].Base() != nil || len(ch[1].Inserted()) != 1 {
		t.Fatalf("Changed: %d tables", len(ch))
	}
	// IF NOT EXISTS is a no-op now; without it, the name is taken.
	if created, err := c.CreateTable(ovDDL(MetadataTables()[1]), true); err != nil || created {
		t.Fatalf("IF NOT EXISTS of a created table: %v %v", created, err)
	}
	_, err := c.CreateTable(ovDDL(MetadataTables()[1]), false)
	ovWant(t, err, core.AlreadyExists, "ducklake_snapshot", "already exists")
	// An inlined-data table may follow in the same transaction.
	if _, err := c.CreateTable(&Table{Name: "ducklake_inlined_data_1_1", PrimaryKey: -1, Columns: []Column{
		{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "x", Type: "INTEGER"},
	}}, true); err != nil {
		t.Fatal(err)
	}
	if c.Empty() {
		t.Fatal("a genesis is empty")
	}
}

// Only DuckLake 0.3's definitions of its metadata tables, only on a store
// without a lake; inlined-data tables of any column types, only in a lake;
// nothing else.
func TestChangesCreateTableRules(t *testing.T) {
	empty := NewChanges(ovNoLake(t))
	snapshot := ovDDL(MetadataTables()[1])
	bad := *snapshot
	bad.Columns = slices.Clone(snapshot.Columns)
	bad.Columns[1].Type = "TIMESTAMP"
	_, err := empty.CreateTable(&bad, false)
	ovWant(t, err, core.Unsupported, "ducklake_snapshot", "column 2 is snapshot_time TIMESTAMP", "DuckLake 0.3's definition")
	noKey := ovDDL(MetadataTables()[1])
	noKey.PrimaryKey = -1
	_, err = empty.CreateTable(noKey, false)
	ovWant(t, err, core.Unsupported, "primary key is none")
	short := ovDDL(MetadataTables()[0])
	short.Columns = short.Columns[:3]
	_, err = empty.CreateTable(short, false)
	ovWant(t, err, core.Unsupported, "3 columns", "has 4")
	nullable := ovDDL(MetadataTables()[0])
	nullable.Columns[0].NotNull = false
	_, err = empty.CreateTable(nullable, false)
	ovWant(t, err, core.Unsupported, "column key is nullable")
	// Names and types in another case are the same definition.
	upper := ovDDL(MetadataTables()[2])
	upper.Name = strings.ToUpper(upper.Name)
	upper.Columns[0].Name = "SNAPSHOT_ID"
	upper.Columns[1].Type = "varchar"
	if _, err := empty.CreateTable(upper, false); err != nil {
		t.Fatal(err)
	}
	if empty.Lookup("ducklake_snapshot_changes").Name != "ducklake_snapshot_changes" {
		t.Fatal("the created table is not DuckLake's own")
	}
	inlined := func(name string, cols ...Column) *Table {
		return &Table{Name: name, PrimaryKey: -1, Columns: append([]Column{
			{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"},
		}, cols...)}
	}
	_, err = empty.CreateTable(inlined("ducklake_inlined_data_1_1", Column{Name: "x", Type: "INTEGER"}), false)
	ovWant(t, err, core.Unsupported, "no lake yet")
	_, err = empty.CreateTable(&Table{Name: "users", PrimaryKey: -1, Columns: []Column{{Name: "id", Type: "BIGINT"}}}, false)
	ovWant(t, err, core.Unsupported, "users", "moraine serves DuckLake's metadata tables only")
	_, err = empty.CreateTable(&Table{Name: "users", PrimaryKey: -1, Columns: []Column{{Name: "id", Type: "BIGINT"}}}, true)
	ovWant(t, err, core.Unsupported, "users")

	lake := NewChanges(ovLake(t))
	// A lake's metadata tables exist: IF NOT EXISTS is a no-op.
	if created, err := lake.CreateTable(ovDDL(MetadataTables()[1]), true); err != nil || created {
		t.Fatalf("IF NOT EXISTS ducklake_snapshot on a lake: %v %v", created, err)
	}
	_, err = lake.CreateTable(ovDDL(MetadataTables()[1]), false)
	ovWant(t, err, core.AlreadyExists, "already exists")
	types := []Column{
		{Name: "s", Type: `STRUCT(a INTEGER, "b c" VARCHAR[])`}, {Name: "l", Type: "INTEGER[]"},
		{Name: "m", Type: "MAP(VARCHAR, STRUCT(x DOUBLE))"}, {Name: "h", Type: "HUGEINT"},
		{Name: "d", Type: "DECIMAL(18,3)"}, {Name: "b", Type: "BLOB"}, {Name: "ts", Type: "TIMESTAMP WITH TIME ZONE"},
		{Name: "i", Type: "INTERVAL"}, {Name: "u", Type: "UUID"},
	}
	created, err := lake.CreateTable(inlined("ducklake_inlined_data_7_3", types...), false)
	if err != nil || !created {
		t.Fatalf("CREATE TABLE ducklake_inlined_data_7_3: %v %v", created, err)
	}
	tb := lake.Lookup("ducklake_inlined_data_7_3")
	if tb == nil || tb.Inlined == nil || tb.Inlined.TableID != 7 || tb.Inlined.SchemaVersion != 3 || len(tb.Columns) != 12 {
		t.Fatalf("the created inlined-data table: %+v", tb)
	}
	for i, c := range types {
		if tb.Columns[3+i] != c {
			t.Fatalf("column %d is %v, want %v (types kept as given)", 3+i, tb.Columns[3+i], c)
		}
	}
	if ts := lake.Tables(); ts[len(ts)-1] != tb {
		t.Fatal("the created table is not in the table list")
	}
	if created, err := lake.CreateTable(inlined("ducklake_inlined_data_7_3", Column{Name: "other", Type: "VARCHAR"}), true); err != nil || created {
		t.Fatalf("IF NOT EXISTS of a created inlined-data table: %v %v", created, err)
	}
	for _, c := range []struct {
		def  *Table
		want string
	}{
		{inlined("ducklake_inlined_data_7_4"), "3 columns given"},
		{&Table{Name: "ducklake_inlined_data_7_5", PrimaryKey: -1, Columns: []Column{{Name: "id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "x", Type: "INTEGER"}}}, "column 1 is id BIGINT"},
		{&Table{Name: "ducklake_inlined_data_7_6", PrimaryKey: -1, Columns: []Column{{Name: "row_id", Type: "INTEGER"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "x", Type: "INTEGER"}}}, "column 1 is row_id INTEGER"},
		{inlined("ducklake_inlined_data_7_7", Column{Name: "x", Type: "INTEGER", NotNull: true}), "NOT NULL"},
		{inlined("ducklake_inlined_data_07_8", Column{Name: "x", Type: "INTEGER"}), "metadata tables only"},
		{inlined("ducklake_inlined_data_7", Column{Name: "x", Type: "INTEGER"}), "metadata tables only"},
		{inlined("ducklake_inlined_data_7_9", Column{Name: "X", Type: "INTEGER"}, Column{Name: "x", Type: "VARCHAR"}), "given twice"},
	} {
		_, err := lake.CreateTable(c.def, false)
		ovWant(t, err, core.Unsupported, c.want)
	}
	withKey := inlined("ducklake_inlined_data_7_10", Column{Name: "x", Type: "INTEGER"})
	withKey.PrimaryKey = 0
	_, err = lake.CreateTable(withKey, false)
	ovWant(t, err, core.Unsupported, "PRIMARY KEY")
	if got := len(lake.Created()); got != 1 {
		t.Fatalf("%d tables created; the refused ones left something", got)
	}
}

// Cells of any DuckDB type travel as Encoded and come back exactly as
// given, through the merge and through the change set.
func TestChangesPassEncodedCellsThrough(t *testing.T) {
	c := NewChanges(ovLake(t))
	_, err := c.CreateTable(&Table{Name: "ducklake_inlined_data_3_1", PrimaryKey: -1, Columns: []Column{
		{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"},
		{Name: "h", Type: "HUGEINT"}, {Name: "b", Type: "BLOB"}, {Name: "ts", Type: "TIMESTAMP WITH TIME ZONE"},
	}}, false)
	must(t, err)
	enc := Encoded{0x64, 0x00, 0xff, 0x01, 0x00}
	ts := time.UnixMicro(1768384800123456).UTC()
	must(t, c.Insert("ducklake_inlined_data_3_1", [][]any{
		{int64(0), int64(4), nil, enc, []byte{0, 1, 2}, ts},
		{int64(1), int64(4), nil, nil, []byte{}, nil},
	}))
	rows := ovRead(t, c, "ducklake_inlined_data_3_1")
	if len(rows) != 2 || rows[0].id != 0 || rows[1].id != 1 {
		t.Fatalf("rows %v", rows)
	}
	got, ok := rows[0].cells[3].(Encoded)
	if !ok || !slices.Equal(got, enc) {
		t.Fatalf("the encoded cell came back as %T %v", rows[0].cells[3], rows[0].cells[3])
	}
	if b := rows[0].cells[4].([]byte); !slices.Equal(b, []byte{0, 1, 2}) || !rows[0].cells[5].(time.Time).Equal(ts) {
		t.Fatalf("blob %v, timestamp %v", rows[0].cells[4], rows[0].cells[5])
	}
	// DuckLake end-dates inlined rows with UPDATE and empties the table
	// with DELETE FROM.
	must(t, c.Update("ducklake_inlined_data_3_1", []int64{0}, []int{2}, [][]any{{int64(6)}}))
	ch := c.Changed()
	if len(ch) != 1 || !ch[0].Created() || len(ch[0].Inserted()) != 2 || ch[0].Inserted()[0][2] != int64(6) {
		t.Fatalf("Changed %v", ch)
	}
	if e := ch[0].Inserted()[0][3].(Encoded); !slices.Equal(e, enc) {
		t.Fatal("the update lost the encoded cell")
	}
	n, err := c.Delete("ducklake_inlined_data_3_1", []int64{0, 1})
	must(t, err)
	if n != 2 || len(ovRead(t, c, "ducklake_inlined_data_3_1")) != 0 {
		t.Fatalf("DELETE FROM: %d deleted", n)
	}
}

// Rows inserted and deleted again leave the change set empty; a created
// table does not.
func TestChangesEmpty(t *testing.T) {
	c := NewChanges(ovLake(t))
	must(t, c.Insert("ducklake_tag", [][]any{{int64(1), int64(1), nil, "k", "v"}}))
	if c.Empty() {
		t.Fatal("an insert is empty")
	}
	if _, err := c.Delete("ducklake_tag", []int64{int64(len(ovRead(t, NewChanges(c.View()), "ducklake_tag")))}); err != nil {
		t.Fatal(err)
	}
	if !c.Empty() {
		t.Fatal("an insert deleted again is not empty")
	}
	if len(c.Changed()) != 1 {
		t.Fatal("the table written to is not listed")
	}
	// Refused writes and empty batches record nothing.
	d := NewChanges(c.View())
	_ = d.Insert("ducklake_metadata", [][]any{{nil, nil, nil, nil}})
	must(t, d.Insert("ducklake_metadata", nil))
	must(t, d.Update("ducklake_metadata", nil, []int{1}, nil))
	if n, err := d.Delete("ducklake_metadata", nil); err != nil || n != 0 {
		t.Fatal(n, err)
	}
	if !d.Empty() || len(d.Changed()) != 0 {
		t.Fatalf("refused and empty writes left %d changed tables", len(d.Changed()))
	}
	var none *Changes
	if !none.Empty() {
		t.Fatal("a nil change set is not empty")
	}
}

// Rows of a table the transaction does not see are refused, also one of
// the same name created by another transaction.
func TestChangesRowsOfAForeignTable(t *testing.T) {
	c := NewChanges(ovLake(t))
	other := NewChanges(ovLake(t))
	def := &Table{Name: "ducklake_inlined_data_1_1", PrimaryKey: -1, Columns: []Column{
		{Name: "row_id", Type: "BIGINT"}, {Name: "begin_snapshot", Type: "BIGINT"}, {Name: "end_snapshot", Type: "BIGINT"}, {Name: "x", Type: "INTEGER"},
	}}
	_, err := other.CreateTable(def, false)
	must(t, err)
	_, err = c.Rows(other.Lookup(def.Name))
	ovWant(t, err, core.NotFound, "ducklake_inlined_data_1_1")
	_, err = c.Rows(&Table{Name: "ducklake_nothing"})
	ovWant(t, err, core.NotFound)
}
