package ducklake

// The property behind "stored as given and served back identically":
// random DuckLake-shaped change sets, committed through the catalog and
// read back from a fresh view, equal the same changes applied to plain
// tables in an in-memory DuckDB database.

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/moraine-go/moraine/core"
)

// op is one statement, applied to both sides: INSERT rows, or UPDATE/DELETE
// the rows whose columns equal where (a nil value: IS NULL).
type op struct {
	table  string
	insert [][]any
	where  map[string]any
	set    map[string]any
	del    bool
}

func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case time.Time:
		return "make_timestamptz(" + strconv.FormatInt(x.UnixMicro(), 10) + ")"
	}
	panic(fmt.Sprintf("no literal for %T", v))
}

func (o op) sql() string {
	cond := func() string {
		var parts []string
		for c, v := range o.where {
			if v == nil {
				parts = append(parts, c+" IS NULL")
			} else {
				parts = append(parts, c+" = "+sqlLiteral(v))
			}
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			return "true"
		}
		return strings.Join(parts, " AND ")
	}
	switch {
	case o.insert != nil:
		var rows []string
		for _, r := range o.insert {
			var cells []string
			for _, c := range r {
				cells = append(cells, sqlLiteral(c))
			}
			rows = append(rows, "("+strings.Join(cells, ", ")+")")
		}
		return "INSERT INTO " + o.table + " VALUES " + strings.Join(rows, ", ")
	case o.del:
		return "DELETE FROM " + o.table + " WHERE " + cond()
	default:
		var sets []string
		for c, v := range o.set {
			sets = append(sets, c+" = "+sqlLiteral(v))
		}
		sort.Strings(sets)
		return "UPDATE " + o.table + " SET " + strings.Join(sets, ", ") + " WHERE " + cond()
	}
}

// apply runs the op on the change set.
func (o op) apply(t *testing.T, c *Changes) {
	t.Helper()
	if o.insert != nil {
		if err := c.Insert(o.table, o.insert); err != nil {
			t.Fatalf("%s: %v", o.sql(), err)
		}
		return
	}
	tb := c.Lookup(o.table)
	set, err := c.Rows(tb)
	noErr(t, err)
	var ids []int64
	for i := 0; i < set.Len(); i++ {
		id, cells := set.Row(i)
		match := true
		for col, v := range o.where {
			if cells[tb.ColumnIndex(col)] != v {
				match = false
			}
		}
		if match {
			ids = append(ids, id)
		}
	}
	if o.del {
		_, err = c.Delete(o.table, ids)
	} else if len(ids) > 0 {
		var cols []int
		var row []any
		names := make([]string, 0, len(o.set))
		for col := range o.set {
			names = append(names, col)
		}
		sort.Strings(names)
		for _, col := range names {
			cols = append(cols, tb.ColumnIndex(col))
			row = append(row, o.set[col])
		}
		rows := make([][]any, len(ids))
		for i := range rows {
			rows[i] = row
		}
		err = c.Update(o.table, ids, cols, rows)
	}
	if err != nil {
		t.Fatalf("%s: %v", o.sql(), err)
	}
}

// gen makes DuckLake-shaped transactions over a model of the lake's live
// state.
type gen struct {
	r                     *rand.Rand
	snap                  int64 // the head
	nextCatalog, nextFile int64
	schemaVersion         int64
	schemas               map[int64]string // live, by id
	tables                map[int64]*genTable
	files                 map[int64]int64 // live data file -> table
	fileBegin             map[int64]int64 // data file -> the snapshot that added it
	tags                  map[int64][]string
	options               map[string]bool // global keys set
	gc                    []int64
	snapshots             []int64 // not expired
}

type genTable struct {
	schema  int64
	name    string
	cols    map[int64]string // live columns
	nextCol int64
	inlined string // the inlined-data table, once created
	nextRow int64
	rows    []int64 // live inlined rows
	stats   bool
}

func (g *gen) name(prefix string) string { return fmt.Sprintf("%s%d", prefix, g.r.IntN(1000000)) }

// txn returns one transaction's statements (and the inlined-data tables it
// creates, which the DuckDB side must create too).
func (g *gen) txn() (ops []op, created []*Table) {
	s := g.snap + 1
	var changes []string
	shape := false
	for n := 1 + g.r.IntN(4); n > 0; n-- {
		switch k := g.r.IntN(12); {
		case k == 0 || len(g.schemas) == 0: // create schema
			id := g.nextCatalog
			g.nextCatalog++
			name := g.name("s")
			g.schemas[id] = name
			ops = append(ops, op{table: "ducklake_schema", insert: [][]any{{id, fmt.Sprintf("0192b7a8-7c51-7000-8000-%012d", id), s, nil, name, name + "/", true}}})
			changes = append(changes, fmt.Sprintf("created_schema:%q", name))
			shape = true
		case k == 1 || len(g.tables) == 0: // create table with columns
			var schema int64 = -1
			for id := range g.schemas {
				if schema < 0 || id < schema {
					schema = id
				}
			}
			id := g.nextCatalog
			g.nextCatalog++
			tb := &genTable{schema: schema, name: g.name("t"), cols: map[int64]string{}, nextCol: 1}
			g.tables[id] = tb
			ops = append(ops, op{table: "ducklake_table", insert: [][]any{{id, fmt.Sprintf("0192b7a8-7c51-7000-9000-%012d", id), s, nil, schema, tb.name, tb.name + "/", true}}})
			for i := 1 + g.r.IntN(3); i > 0; i-- {
				c := tb.nextCol
				tb.nextCol++
				tb.cols[c] = g.name("c")
				ops = append(ops, op{table: "ducklake_column", insert: [][]any{{c, s, nil, id, c, tb.cols[c], "int64", nil, nil, true, nil}}})
			}
			changes = append(changes, fmt.Sprintf("created_table:%q.%q", g.schemas[schema], tb.name))
			shape = true
		case k == 2: // rename a table: end its version, add one
			id, tb := g.anyTable()
			ops = append(ops, op{table: "ducklake_table", where: map[string]any{"table_id": id, "end_snapshot": nil}, set: map[string]any{"end_snapshot": s}})
			tb.name = g.name("r")
			ops = append(ops, op{table: "ducklake_table", insert: [][]any{{id, fmt.Sprintf("0192b7a8-7c51-7000-9000-%012d", id), s, nil, tb.schema, tb.name, tb.name + "/", true}}})
			changes = append(changes, fmt.Sprintf("altered_table:%d", id))
			shape = true
		case k == 3: // add or rename a column, with a tag
			id, tb := g.anyTable()
			c := tb.nextCol
			tb.nextCol++
			tb.cols[c] = g.name("c")
			ops = append(ops, op{table: "ducklake_column", insert: [][]any{{c, s, nil, id, c, tb.cols[c], "varchar", "'d'", "'d'", false, nil}}},
				op{table: "ducklake_column_tag", insert: [][]any{{id, c, s, nil, "comment", g.name("x")}}})
			changes = append(changes, fmt.Sprintf("altered_table:%d", id))
			shape = true
		case k == 4: // a data file with column statistics
			id, tb := g.anyTable()
			f := g.nextFile
			g.nextFile++
			g.files[f] = id
			g.fileBegin[f] = s
			// As DuckLake writes them: file_order NULL, footer_size and
			// row_id_start sometimes NULL.
			var footer, rowStart any = int64(100), int64(g.r.IntN(100))
			if g.r.IntN(3) == 0 {
				footer, rowStart = nil, nil
			}
			ops = append(ops, op{table: "ducklake_data_file", insert: [][]any{{f, id, s, nil, nil, fmt.Sprintf("f%d.parquet", f), true, "parquet", int64(10), int64(1000), footer, rowStart, nil, nil, nil, nil}}})
			for c := range tb.cols {
				ops = append(ops, op{table: "ducklake_file_column_stats", insert: [][]any{{f, id, c, int64(40), int64(10), int64(0), "1", "9", nil, nil}}})
			}
			if !tb.stats {
				tb.stats = true
				ops = append(ops, op{table: "ducklake_table_stats", insert: [][]any{{id, int64(10), int64(10), int64(1000)}}})
			} else {
				ops = append(ops, op{table: "ducklake_table_stats", where: map[string]any{"table_id": id}, set: map[string]any{"record_count": int64(g.r.IntN(100))}})
			}
			changes = append(changes, fmt.Sprintf("inserted_into_table:%d", id))
		case k == 5 && len(g.files) > 0: // a delete file, or end a data file
			for f, tid := range g.files {
				if g.fileBegin[f] == s {
					continue // created by this transaction
				}
				if g.r.IntN(2) == 0 {
					d := g.nextFile
					g.nextFile++
					ops = append(ops, op{table: "ducklake_delete_file", insert: [][]any{{d, tid, s, nil, f, fmt.Sprintf("d%d.parquet", d), true, "parquet", int64(1), int64(90), int64(30), nil}}})
					changes = append(changes, fmt.Sprintf("deleted_from_table:%d", tid))
				} else {
					delete(g.files, f)
					ops = append(ops, op{table: "ducklake_data_file", where: map[string]any{"data_file_id": f}, set: map[string]any{"end_snapshot": s}},
						op{table: "ducklake_files_scheduled_for_deletion", insert: [][]any{{f, fmt.Sprintf("f%d.parquet", f), true, time.UnixMicro(1764763200000000 + f)}}})
					g.gc = append(g.gc, f)
					changes = append(changes, fmt.Sprintf("compacted_table:%d", tid))
				}
				break
			}
		case k == 6: // tags on a table: add one or end one
			id, _ := g.anyTable()
			if keys := g.tags[id]; len(keys) > 0 && g.r.IntN(2) == 0 {
				key := keys[0]
				g.tags[id] = keys[1:]
				ops = append(ops, op{table: "ducklake_tag", where: map[string]any{"object_id": id, "key": key, "end_snapshot": nil}, set: map[string]any{"end_snapshot": s}})
			} else {
				key := g.name("k")
				g.tags[id] = append(g.tags[id], key)
				ops = append(ops, op{table: "ducklake_tag", insert: [][]any{{id, s, nil, key, g.name("v")}}})
			}
		case k == 7: // options: set a new key, change one, drop one, one per table
			key := g.name("o")
			switch {
			case len(g.options) > 0 && g.r.IntN(3) == 0:
				for old := range g.options {
					delete(g.options, old)
					ops = append(ops, op{table: "ducklake_metadata", where: map[string]any{"key": old, "scope": nil}, del: true})
					break
				}
			case len(g.options) > 0 && g.r.IntN(2) == 0:
				for old := range g.options {
					ops = append(ops, op{table: "ducklake_metadata", where: map[string]any{"key": old, "scope": nil}, set: map[string]any{"value": g.name("w")}})
					break
				}
			default:
				g.options[key] = true
				id, _ := g.anyTable()
				ops = append(ops, op{table: "ducklake_metadata", insert: [][]any{{key, g.name("v"), nil, nil}, {key, "t", "table", id}}})
			}
		case k == 8: // a view, a partition, a mapping
			id, tb := g.anyTable()
			v, p, m := g.nextCatalog, g.nextCatalog+1, g.nextCatalog+2
			g.nextCatalog += 3
			var col int64
			for c := range tb.cols {
				col = c
			}
			ops = append(ops, op{table: "ducklake_view", insert: [][]any{{v, fmt.Sprintf("0192b7a8-7c51-7000-a000-%012d", v), s, nil, tb.schema, g.name("v"), "duckdb", "SELECT 1", ""}}},
				op{table: "ducklake_partition_info", insert: [][]any{{p, id, s, nil}}},
				op{table: "ducklake_partition_column", insert: [][]any{{p, id, int64(0), col, "identity"}}},
				op{table: "ducklake_column_mapping", insert: [][]any{{m, id, "map_by_name"}}},
				op{table: "ducklake_name_mapping", insert: [][]any{{m, col, g.name("src"), col, nil, false}}})
			changes = append(changes, fmt.Sprintf("created_view:%q.%q", g.schemas[tb.schema], "v"))
			shape = true
		case k == 9: // inlined rows: create the table, insert, end, remove
			id, tb := g.anyTable()
			if tb.inlined == "" {
				tb.inlined = InlinedTableName(uint64(id), uint64(g.schemaVersion))
				def := &Table{Name: tb.inlined, PrimaryKey: -1, Columns: append(append([]Column{}, inlinedLeading...),
					Column{Name: "a", Type: TypeBigint}, Column{Name: "b", Type: TypeVarchar})}
				created = append(created, def)
				ops = append(ops, op{table: "ducklake_inlined_data_tables", insert: [][]any{{id, tb.inlined, g.schemaVersion}}})
			}
			switch {
			case len(tb.rows) > 0 && g.r.IntN(3) == 0:
				ops = append(ops, op{table: tb.inlined, where: map[string]any{"row_id": tb.rows[0]}, set: map[string]any{"end_snapshot": s}})
				tb.rows = tb.rows[1:]
			case len(tb.rows) > 0 && g.r.IntN(3) == 0:
				ops = append(ops, op{table: tb.inlined, where: map[string]any{"row_id": tb.rows[0]}, del: true})
				tb.rows = tb.rows[1:]
			default:
				for i := g.r.IntN(3); i >= 0; i-- {
					ops = append(ops, op{table: tb.inlined, insert: [][]any{{tb.nextRow, s, nil, int64(g.r.IntN(50)), g.name("b")}}})
					tb.rows = append(tb.rows, tb.nextRow)
					tb.nextRow++
				}
			}
			changes = append(changes, fmt.Sprintf("inserted_into_table:%d", id))
		case k == 10 && len(g.gc) > 0: // cleanup of a scheduled file
			f := g.gc[0]
			g.gc = g.gc[1:]
			ops = append(ops, op{table: "ducklake_files_scheduled_for_deletion", where: map[string]any{"data_file_id": f}, del: true})
		case k == 11 && len(g.snapshots) > 2: // expire the oldest snapshot
			old := g.snapshots[1]
			g.snapshots = append(g.snapshots[:1], g.snapshots[2:]...)
			ops = append(ops, op{table: "ducklake_snapshot", where: map[string]any{"snapshot_id": old}, del: true},
				op{table: "ducklake_snapshot_changes", where: map[string]any{"snapshot_id": old}, del: true})
		}
	}
	if shape {
		g.schemaVersion++
		ops = append(ops, op{table: "ducklake_schema_versions", insert: [][]any{{s, g.schemaVersion}}})
	}
	ops = append([]op{
		{table: "ducklake_snapshot", insert: [][]any{{s, time.UnixMicro(1764763200000000 + s*1000), g.schemaVersion, g.nextCatalog, g.nextFile}}},
		{table: "ducklake_snapshot_changes", insert: [][]any{{s, strings.Join(changes, ","), nil, nil, nil}}},
	}, ops...)
	g.snap = s
	g.snapshots = append(g.snapshots, s)
	return ops, created
}

func (g *gen) anyTable() (int64, *genTable) {
	ids := make([]int64, 0, len(g.tables))
	for id := range g.tables {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	id := ids[g.r.IntN(len(ids))]
	return id, g.tables[id]
}

// ddl is a table's CREATE TABLE for the reference database.
func ddl(t *Table) string {
	var cols []string
	for _, c := range t.Columns {
		cols = append(cols, `"`+c.Name+`" `+c.Type)
	}
	return "CREATE TABLE " + t.Name + " (" + strings.Join(cols, ", ") + ")"
}

// referenceRows reads a reference table as text, rows sorted.
func referenceRows(t *testing.T, db *sql.DB, tb *Table) []string {
	t.Helper()
	var exprs []string
	for _, c := range tb.Columns {
		if c.Type == TypeTimestampTZ {
			exprs = append(exprs, `CAST(epoch_us("`+c.Name+`") AS VARCHAR)`)
		} else {
			exprs = append(exprs, `CAST("`+c.Name+`" AS VARCHAR)`)
		}
	}
	rows, err := db.Query("SELECT " + strings.Join(exprs, ", ") + " FROM " + tb.Name)
	noErr(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		cells := make([]sql.NullString, len(tb.Columns))
		ptrs := make([]any, len(cells))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		noErr(t, rows.Scan(ptrs...))
		var parts []string
		for _, c := range cells {
			if c.Valid {
				parts = append(parts, c.String)
			} else {
				parts = append(parts, "NULL")
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	noErr(t, rows.Err())
	sort.Strings(out)
	return out
}

// servedRows reads a table of a fresh view as the same text.
func servedRows(t *testing.T, v *View, tb *Table) []string {
	t.Helper()
	rows, err := v.Rows(tb)
	noErr(t, err)
	var out []string
	for _, r := range rows {
		var parts []string
		for _, c := range r {
			switch x := c.(type) {
			case nil:
				parts = append(parts, "NULL")
			case time.Time:
				parts = append(parts, strconv.FormatInt(x.UnixMicro(), 10))
			default:
				parts = append(parts, fmt.Sprint(x))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return out
}

func TestPropertyCommittedChangesEqualDuckDB(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { propertyRun(t, seed) })
	}
}

func propertyRun(t *testing.T, seed uint64) {
	db, err := sql.Open("duckdb", "")
	noErr(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	cat := lakeStore(t)
	c := pin(t, cat)
	duckLakeAttach(t, c)
	_, err = Commit(bg, cat, c)
	noErr(t, err)
	for _, tb := range MetadataTables() {
		_, err := db.Exec(ddl(tb))
		noErr(t, err)
	}
	// The genesis rows, into the reference too.
	for _, tb := range MetadataTables() {
		set, err := c.Rows(tb)
		noErr(t, err)
		for i := 0; i < set.Len(); i++ {
			_, cells := set.Row(i)
			_, err := db.Exec(op{table: tb.Name, insert: [][]any{cells}}.sql())
			noErr(t, err)
		}
	}

	g := &gen{r: rand.New(rand.NewPCG(seed, 2)), snap: 0, nextCatalog: 1, schemas: map[int64]string{0: "main"},
		tables: map[int64]*genTable{}, files: map[int64]int64{}, fileBegin: map[int64]int64{}, tags: map[int64][]string{}, options: map[string]bool{}, snapshots: []int64{0}}
	for i := 0; i < 60; i++ {
		ops, created := g.txn()
		c := pin(t, cat)
		for _, def := range created {
			if _, err := c.CreateTable(def, true); err != nil {
				t.Fatalf("CREATE TABLE %s: %v", def.Name, err)
			}
			_, err := db.Exec(ddl(def))
			noErr(t, err)
		}
		for _, o := range ops {
			o.apply(t, c)
			if _, err := db.Exec(o.sql()); err != nil {
				t.Fatalf("reference: %s: %v", o.sql(), err)
			}
		}
		left, err := Commit(bg, cat, c)
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		d, err := cat.Dump(bg)
		noErr(t, err)
		v, err := NewView(d)
		noErr(t, err)
		if len(left.Tables()) != len(v.Tables()) {
			t.Fatalf("after transaction %d the committed view has %d tables, a fresh one %d", i, len(left.Tables()), len(v.Tables()))
		}
		for _, tb := range v.Tables() {
			want, got := referenceRows(t, db, tb), servedRows(t, v, tb)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Fatalf("after transaction %d, %s:\n DuckDB holds %q\n moraine serves %q", i, tb.Name, want, got)
			}
			if kept := servedRows(t, left, left.Lookup(tb.Name)); strings.Join(kept, "\n") != strings.Join(got, "\n") {
				t.Fatalf("after transaction %d, %s: the committed view keeps %q, a fresh read serves %q", i, tb.Name, kept, got)
			}
		}
		if h := d.Head; h.SnapshotID != core.SnapshotID(g.snap) {
			t.Fatalf("head %d, want %d", h.SnapshotID, g.snap)
		}
	}
}
