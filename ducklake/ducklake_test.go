package ducklake

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

var bg = context.Background()

// The 22 tables of DuckLake 0.3, as its first ATTACH creates them
// (metadata-sql-contract.txt, PART 1, statements [5]-[26]).
var contract = map[string]string{
	"ducklake_metadata":                     "key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT",
	"ducklake_snapshot":                     "snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT",
	"ducklake_snapshot_changes":             "snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR",
	"ducklake_schema":                       "schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN",
	"ducklake_table":                        "table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN",
	"ducklake_view":                         "view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, sql VARCHAR, column_aliases VARCHAR",
	"ducklake_tag":                          "object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR",
	"ducklake_column_tag":                   "table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR",
	"ducklake_data_file":                    "data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, partial_file_info VARCHAR, mapping_id BIGINT",
	"ducklake_file_column_stats":            "data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR",
	"ducklake_delete_file":                  "delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR",
	"ducklake_column":                       "column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column BIGINT",
	"ducklake_table_stats":                  "table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT",
	"ducklake_table_column_stats":           "table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR",
	"ducklake_partition_info":               "partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT",
	"ducklake_partition_column":             "partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, transform VARCHAR",
	"ducklake_file_partition_value":         "data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR",
	"ducklake_files_scheduled_for_deletion": "data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, schedule_start TIMESTAMPTZ",
	"ducklake_inlined_data_tables":          "table_id BIGINT, table_name VARCHAR, schema_version BIGINT",
	"ducklake_column_mapping":               "mapping_id BIGINT, table_id BIGINT, type VARCHAR",
	"ducklake_name_mapping":                 "mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN",
	"ducklake_schema_versions":              "begin_snapshot BIGINT, schema_version BIGINT",
}

// render writes a table as the contract's CREATE TABLE column list.
func render(t *Table) string {
	var parts []string
	for i, c := range t.Columns {
		typ := c.Type
		if typ == TypeTimestampTZ {
			typ = "TIMESTAMPTZ"
		}
		p := c.Name + " " + typ
		if i == t.PrimaryKey {
			p += " PRIMARY KEY"
		}
		if c.NotNull {
			p += " NOT NULL"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func TestMetadataTablesMatchTheContract(t *testing.T) {
	tables := MetadataTables()
	if len(tables) != 22 || len(contract) != 22 {
		t.Fatalf("%d tables, contract %d; want 22", len(tables), len(contract))
	}
	for _, tb := range tables {
		want, ok := contract[tb.Name]
		if !ok {
			t.Errorf("table %s is not in the contract", tb.Name)
			continue
		}
		if got := render(tb); got != want {
			t.Errorf("%s:\n got  %s\n want %s", tb.Name, got, want)
		}
		if _, ok := metadataRows[tb.Name]; !ok {
			t.Errorf("%s has no rows function", tb.Name)
		}
	}
	if len(metadataRows) != 28 {
		t.Errorf("%d rows functions, want 28 (22 tables of 0.3, 6 more of 1.0)", len(metadataRows))
	}
}

// contract10 reads DuckLake 1.0's metadata tables as its first ATTACH
// creates them, from the captured contract (docs/ducklake-sql): name ->
// column list, in creation order.
func contract10(t *testing.T) (names []string, columns map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../docs/ducklake-sql/contract-1.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(strings.SplitN(string(b), "==== ATTACH (new lake, init metadata)\n", 2)[1], "\n==== ")
	re := regexp.MustCompile(`(?m)^\[\d+\] \(conn \d+\) CREATE TABLE "__ducklake_metadata_lake"\."main"\.(\w+)\((.*)\)$`)
	columns = map[string]string{}
	for _, m := range re.FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
		var cols []string
		for _, c := range strings.Split(m[2], ",") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, strings.Join(strings.Fields(c), " "))
			}
		}
		columns[m[1]] = strings.Join(cols, ", ")
	}
	return names, columns
}

func TestSpec10MatchesTheCapturedContract(t *testing.T) {
	names, columns := contract10(t)
	tables := Spec10().Tables()
	if len(names) != 28 || len(tables) != len(names) {
		t.Fatalf("the capture creates %d tables, Spec10 has %d; want 28", len(names), len(tables))
	}
	for i, tb := range tables {
		if tb.Name != names[i] {
			t.Errorf("table %d is %s; DuckLake 1.0 creates %s there", i, tb.Name, names[i])
		}
		if got := render(tb); got != columns[tb.Name] {
			t.Errorf("%s:\n got  %s\n want %s", tb.Name, got, columns[tb.Name])
		}
		if _, ok := metadataRows[tb.Name]; !ok {
			t.Errorf("%s has no rows function", tb.Name)
		}
	}
	if s, err := SpecOf("1.0"); err != nil || s != Spec10() {
		t.Fatalf("SpecOf(1.0): %v %v", s, err)
	}
	if _, err := SpecOf("0.2"); err == nil || !strings.Contains(err.Error(), `"0.2"`) || !strings.Contains(err.Error(), "0.3 and 1.0") {
		t.Fatalf("SpecOf(0.2): %v", err)
	}
}

// lake builds a catalog through the Go API with one of everything the
// metadata tables show.
func lake(t *testing.T) *core.Catalog {
	t.Helper()
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{DataPath: "/data/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(bg) })
	no := false
	def := "7"
	var table core.TableID
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		s, err := tx.CreateSchema("s")
		if err != nil {
			return err
		}
		table, err = tx.CreateTable(s, "events", []core.ColumnDef{
			{Name: "id", Type: "int64", NullsAllowed: &no},
			{Name: "amount", Type: "decimal(10,2)", Default: &def},
			{Name: "tags", Type: "list", Children: []core.ColumnDef{{Name: "element", Type: "varchar"}}},
			{Name: "point", Type: "struct", Children: []core.ColumnDef{{Name: "x", Type: "float64"}, {Name: "y Y", Type: "float64"}}},
			{Name: "attrs", Type: "map", Children: []core.ColumnDef{{Name: "key", Type: "varchar"}, {Name: "value", Type: "int32"}}},
		})
		if err != nil {
			return err
		}
		if _, err := tx.CreateView(s, "v", "SELECT 1", "duckdb", ""); err != nil {
			return err
		}
		tx.SetAuthor("ann")
		return tx.SetTag(uint64(table), "owner", "ann")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		one, two := int64(1), int64(2)
		if _, err := tx.InlineInsert(table, [][]core.Value{{{Int: &one}, {}, {}, {}, {}}, {{Int: &two}, {}, {}, {}, {}}}); err != nil {
			return err
		}
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: "s/events/f.parquet", PathIsRelative: true, RecordCount: 10, FileSizeBytes: 100, FooterSize: 10})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

func view(t *testing.T, c *core.Catalog) *View {
	t.Helper()
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewView(d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func rows(t *testing.T, v *View, name string) [][]any {
	t.Helper()
	tb := v.Lookup(name)
	if tb == nil {
		t.Fatalf("no table %s", name)
	}
	r, err := v.Rows(tb)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range r {
		if len(row) != len(tb.Columns) {
			t.Fatalf("%s row %d has %d cells, %d columns", name, i, len(row), len(tb.Columns))
		}
		for j, cell := range row {
			if !cellFits(cell, tb.Columns[j].Type, tb.Inlined != nil && j >= 3) {
				t.Fatalf("%s row %d column %s (%s): cell %T %v", name, i, tb.Columns[j].Name, tb.Columns[j].Type, cell, cell)
			}
		}
	}
	return r
}

func cellFits(cell any, typ string, stored bool) bool {
	if cell == nil || stored {
		return true
	}
	switch typ {
	case TypeBigint:
		_, ok := cell.(int64)
		return ok
	case TypeVarchar, TypeUUID:
		_, ok := cell.(string)
		return ok
	case TypeBoolean:
		_, ok := cell.(bool)
		return ok
	case TypeTimestampTZ:
		_, ok := cell.(time.Time)
		return ok
	}
	return false
}

func TestViewServesTheGoAPILake(t *testing.T) {
	c := lake(t)
	v := view(t, c)
	if !v.HasLake() || len(v.Tables()) != 23 {
		t.Fatalf("%d tables, want the 22 and one inlined-data table", len(v.Tables()))
	}
	// Every metadata table's cells have its columns' types.
	for _, tb := range MetadataTables() {
		rows(t, v, tb.Name)
	}
	meta := rows(t, v, "ducklake_metadata")
	got := map[string]any{}
	for _, r := range meta {
		if r[2] == nil {
			got[r[0].(string)] = r[1]
		}
	}
	if got["version"] != Spec03().Version || got["data_path"] != "/data/" || got["encrypted"] != "false" {
		t.Fatalf("global metadata %v: want version 0.3, data_path /data/, encrypted false", got)
	}
	snaps := rows(t, v, "ducklake_snapshot")
	if len(snaps) != 3 || snaps[2][0] != int64(2) {
		t.Fatalf("snapshots %v", snaps)
	}
	changes := rows(t, v, "ducklake_snapshot_changes")
	if changes[1][2] != "ann" || !strings.Contains(changes[1][1].(string), "created_table") {
		t.Fatalf("snapshot 1 changes %v", changes[1])
	}
	if sv := rows(t, v, "ducklake_schema_versions"); len(sv) < 2 || sv[0][0] != int64(0) || sv[0][1] != int64(0) {
		t.Fatalf("schema versions %v: want genesis (0, 0) first", sv)
	}
	if tags := rows(t, v, "ducklake_tag"); len(tags) != 1 || tags[0][3] != "owner" || tags[0][4] != "ann" {
		t.Fatalf("tags %v", tags)
	}
	files := rows(t, v, "ducklake_data_file")
	if len(files) != 1 || files[0][5] != "s/events/f.parquet" || files[0][8] != int64(10) || files[0][12] != nil {
		t.Fatalf("data files %v", files)
	}

	// The inlined-data table: named as DuckLake names it, listed in
	// ducklake_inlined_data_tables, columns as DuckDB types.
	var inl *Table
	for _, tb := range v.Tables() {
		if tb.Inlined != nil {
			inl = tb
		}
	}
	listed := rows(t, v, "ducklake_inlined_data_tables")
	if inl == nil || len(listed) != 1 || listed[0][1] != inl.Name || !strings.HasPrefix(inl.Name, InlinedTablePrefix) {
		t.Fatalf("inlined table %+v listed as %v", inl, listed)
	}
	want := `row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id BIGINT, amount DECIMAL(10,2), tags VARCHAR[], point STRUCT("x" DOUBLE, "y Y" DOUBLE), attrs MAP(VARCHAR, INTEGER)`
	if got := render(inl); got != want {
		t.Fatalf("inlined table columns\n got  %s\n want %s", got, want)
	}
	ir := rows(t, v, inl.Name)
	if len(ir) != 2 || ir[0][3] != int64(1) || ir[1][3] != int64(2) || ir[0][1] != int64(2) || ir[0][2] != nil || ir[0][4] != nil {
		t.Fatalf("inlined rows %v", ir)
	}
	// Rows are built once: the same slice every time (rowids stay put).
	again, _ := v.Rows(inl)
	if &again[0] != &ir[0] {
		t.Fatal("a second Rows call built the rows again")
	}
	if v.Lookup(strings.ToUpper("ducklake_snapshot")) == nil {
		t.Fatal("Lookup is case-sensitive")
	}
}

// The same lake served as DuckLake 1.0 (a lake the Go API wrote records
// no version: the fallback decides): 1.0's 28 tables, its columns where 0.3
// has others, macros and sort keys; a lake recording 0.3 stays 0.3 whatever
// the fallback, and one recording a version moraine does not serve is
// refused.
func TestViewServesALakeAsDuckLake10(t *testing.T) {
	c := lake(t)
	var macro core.MacroID
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		s, _ := tx.View().SchemaByName("s")
		events, _ := tx.View().TableByName("s", "events")
		var err error
		macro, err = tx.CreateMacro(s.ID, "twice", []core.MacroImpl{{SQL: "x * 2", Type: "scalar", Parameters: []core.MacroParameter{{Name: "x", Type: "unknown"}}}})
		if err != nil {
			return err
		}
		_, err = tx.SetSorting(events.ID, []core.SortExpression{{Index: 0, Expression: "id", Dialect: "duckdb", Direction: "ASC", NullOrder: "NULLS_LAST"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewViewAs(d, Spec10())
	if err != nil {
		t.Fatal(err)
	}
	if v.Spec() != Spec10() || len(v.Tables()) != 29 {
		t.Fatalf("spec %s, %d tables; want 1.0's 28 and one inlined-data table", v.Spec().Version, len(v.Tables()))
	}
	for _, tb := range Spec10().Tables() {
		rows(t, v, tb.Name)
	}
	meta := map[string]any{}
	for _, r := range rows(t, v, "ducklake_metadata") {
		meta[r[0].(string)] = r[1]
	}
	if meta["version"] != "1.0" {
		t.Fatalf("version row %v, want 1.0", meta["version"])
	}
	files := rows(t, v, "ducklake_data_file")
	if tb := v.Lookup("ducklake_data_file"); len(files) != 1 || tb.ColumnIndex("partial_file_info") != -1 || tb.Columns[14].Name != "mapping_id" ||
		files[0][5] != "s/events/f.parquet" || files[0][15] != nil {
		t.Fatalf("1.0's data files %v", files)
	}
	col := v.Lookup("ducklake_column")
	for _, r := range rows(t, v, "ducklake_column") {
		if r[5] == "amount" && (r[col.ColumnIndex("default_value")] != "7" || len(r) != 13) {
			t.Fatalf("a column row %v", r)
		}
	}
	if m := rows(t, v, "ducklake_macro"); len(m) != 1 || m[0][1] != int64(macro) || m[0][2] != "twice" || m[0][4] != nil {
		t.Fatalf("macros %v", m)
	}
	if im := rows(t, v, "ducklake_macro_impl"); len(im) != 1 || im[0][3] != "x * 2" || im[0][4] != "scalar" {
		t.Fatalf("macro implementations %v", im)
	}
	if p := rows(t, v, "ducklake_macro_parameters"); len(p) != 1 || p[0][3] != "x" || p[0][4] != "unknown" || p[0][5] != nil {
		t.Fatalf("macro parameters %v", p)
	}
	if si, se := rows(t, v, "ducklake_sort_info"), rows(t, v, "ducklake_sort_expression"); len(si) != 1 || len(se) != 1 || se[0][3] != "id" || se[0][5] != "ASC" {
		t.Fatalf("sorts %v %v", si, se)
	}
	for _, r := range rows(t, v, "ducklake_schema_versions") {
		if len(r) != 3 {
			t.Fatalf("a 1.0 schema-versions row %v", r)
		}
	}
	// The 0.3 view of the same dump has none of it.
	old, err := NewViewAs(d, Spec03())
	if err != nil || len(old.Tables()) != 23 || old.Lookup("ducklake_macro") != nil || old.Lookup("ducklake_data_file").ColumnIndex("partial_file_info") != 14 {
		t.Fatalf("the 0.3 view: %d tables, %v", len(old.Tables()), err)
	}

	// A lake that records its version is served as it.
	if _, err := c.Commit(bg, func(tx *core.Transaction) error { return tx.SetOption(core.ScopeGlobal, 0, "version", "0.3") }); err != nil {
		t.Fatal(err)
	}
	d, _ = c.Dump(bg)
	if v, err := NewViewAs(d, Spec10()); err != nil || v.Spec() != Spec03() {
		t.Fatalf("a lake recording 0.3 served as %v (%v)", v.Spec().Version, err)
	}
	if _, err := c.Commit(bg, func(tx *core.Transaction) error { return tx.SetOption(core.ScopeGlobal, 0, "version", "0.4") }); err != nil {
		t.Fatal(err)
	}
	d, _ = c.Dump(bg)
	if _, err := NewViewAs(d, Spec10()); core.KindOf(err) != core.Unsupported || !strings.Contains(err.Error(), `"0.4"`) {
		t.Fatalf("a lake recording 0.4: %v", err)
	}
}

func TestNoLakeListsNoTables(t *testing.T) {
	v, err := NewView(nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.HasLake() || len(v.Tables()) != 0 || v.Lookup("ducklake_snapshot") != nil {
		t.Fatalf("an empty store lists %d tables", len(v.Tables()))
	}
}

func TestRowsOfAForeignTableIsRefused(t *testing.T) {
	v := view(t, lake(t))
	if _, err := v.Rows(&Table{Name: "ducklake_snapshot"}); core.KindOf(err) != core.NotFound {
		t.Fatalf("Rows of a table not from the view: %v", err)
	}
}

func TestColumnTypes(t *testing.T) {
	leaf := func(name, typ string) core.Column { return core.Column{Name: name, Type: typ} }
	none := func(core.ColumnID) []core.Column { return nil }
	for typ, want := range map[string]string{
		"int8": "TINYINT", "INT64": "BIGINT", "uint128": "UHUGEINT", "float32": "FLOAT", "timestamptz": "TIMESTAMP WITH TIME ZONE",
		"timestamp_s": "TIMESTAMP_S", "decimal(38,10)": "DECIMAL(38,10)", "json": "JSON", "uuid": "UUID", "interval": "INTERVAL",
	} {
		got, err := columnType(leaf("c", typ), none)
		if err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %s", typ, got, err, want)
		}
	}
	for _, bad := range []string{"point", "decimal(x,y)", "list", "struct", "map"} {
		if _, err := columnType(leaf("c", bad), none); err == nil || !strings.Contains(err.Error(), `"c"`) {
			t.Errorf("type %q: %v, want an error naming the column", bad, err)
		}
	}
}
