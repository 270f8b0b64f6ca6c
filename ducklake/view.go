package ducklake

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/moraine-go/moraine/core"
)

// View is the metadata catalog at one head: the tables DuckLake sees and,
// on demand, their rows. Rows are built once per table and kept, so every
// scan of a View returns the same rows in the same order (a row's index is
// its rowid). Safe for concurrent use.
type View struct {
	// dump is what rows not yet built are built from: the dump read at
	// head, or for a view a commit left (Changes.committed) the pinned
	// view's, which still holds the tables the commit did not change.
	dump    *core.Dump
	head    core.Head
	hasLake bool
	spec    *Spec
	tables  []*Table
	byName  map[string]*Table

	mu   sync.Mutex
	rows map[*Table][][]any
}

// NewView serves a dump of the catalog as DuckLake 0.3's tables (see
// NewViewAs).
func NewView(d *core.Dump) (*View, error) { return NewViewAs(d, spec03) }

// NewViewAs serves a dump of the catalog as the DuckLake spec its lake
// records (ducklake_metadata's version row), or as fallback when it
// records none (a lake the Go API wrote). A version moraine does not serve
// is refused, naming the ones it does. A nil dump is a store holding no
// lake yet: it lists no tables (DuckLake initializes a lake when it finds
// no metadata table).
func NewViewAs(d *core.Dump, fallback *Spec) (*View, error) {
	v := &View{dump: d, byName: map[string]*Table{}, rows: map[*Table][][]any{}, spec: fallback}
	if d == nil {
		return v, nil
	}
	if version := recordedVersion(d); version != "" {
		s, err := SpecOf(version)
		if err != nil {
			return nil, err
		}
		v.spec = s
	}
	v.head, v.hasLake = d.Head, true
	v.tables = append(v.tables, v.spec.tables...)
	// DuckLake's inlined-data tables as it created them; a lake the Go API
	// wrote has none, and its inlined rows follow the table's columns.
	for _, it := range d.InlinedTables {
		t := &Table{Name: it.Name, PrimaryKey: -1, Inlined: &InlinedTable{TableID: uint64(it.TableID), SchemaVersion: it.SchemaVersion},
			Columns: slices.Clone(inlinedLeading)}
		for _, c := range it.Columns {
			t.Columns = append(t.Columns, Column{Name: c.Name, Type: c.Type})
		}
		v.tables = append(v.tables, t)
	}
	for _, g := range undeclaredInlined(d) {
		t, err := inlinedTable(d, g.TableID, g.SchemaVersion, g.Rows)
		if err != nil {
			return nil, err
		}
		v.tables = append(v.tables, t)
	}
	for _, it := range d.InlinedDeleteTables {
		v.tables = append(v.tables, inlinedDeleteTable(uint64(it.TableID)))
	}
	for _, t := range v.tables {
		v.byName[strings.ToLower(t.Name)] = t
	}
	return v, nil
}

// Spec is the DuckLake specification the view serves.
func (v *View) Spec() *Spec { return v.spec }

// HasLake reports whether the store holds a lake.
func (v *View) HasLake() bool { return v.hasLake }

// Head is the head stamp the view was read at (zero without a lake).
func (v *View) Head() core.Head { return v.head }

// Tables lists the tables: the spec's metadata tables in creation order,
// the inlined-data tables by table id and schema version, then the
// inlined-deletion tables by table id.
func (v *View) Tables() []*Table { return v.tables }

// Lookup finds a table by name, case-insensitively as DuckDB does; nil if
// there is none.
func (v *View) Lookup(name string) *Table { return v.byName[strings.ToLower(name)] }

// Rows returns every row of t, one cell per column: nil (NULL), int64,
// uint64, float64, bool, string, []byte or time.Time. BIGINT columns hold
// int64, VARCHAR and UUID columns string, BOOLEAN bool, TIMESTAMP WITH TIME
// ZONE time.Time; an inlined-data table's own columns hold what the catalog
// stored (the scan casts it to the column's type). The result is shared
// and must not be modified.
func (v *View) Rows(t *Table) ([][]any, error) {
	if v.byName[strings.ToLower(t.Name)] != t {
		return nil, &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("table %q is not in this view of the catalog", t.Name)}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if rows, ok := v.rows[t]; ok {
		return rows, nil
	}
	var rows [][]any
	switch {
	case t.Inlined != nil:
		rows = inlinedRows(v.dump, t)
	case t.InlinedDeletes != nil:
		rows = inlinedDeleteRows(v.dump, t.InlinedDeletes.TableID)
	default:
		rows = project(metadataRows[t.Name](v.dump, t.spec), t)
	}
	v.rows[t] = rows
	return rows, nil
}

// inlinedLeading are the first columns of every inlined-data table.
var inlinedLeading = []Column{
	{Name: "row_id", Type: TypeBigint},
	{Name: "begin_snapshot", Type: TypeBigint},
	{Name: "end_snapshot", Type: TypeBigint},
}

// undeclaredInlined lists the dump's groups of inlined rows whose table
// and schema version have no inlined-data table DuckLake declared (the
// rows a lake the Go API wrote holds), in dump order.
func undeclaredInlined(d *core.Dump) []*core.InlinedRows {
	declared := map[[2]uint64]bool{}
	for _, it := range d.InlinedTables {
		declared[[2]uint64{uint64(it.TableID), it.SchemaVersion}] = true
	}
	var out []*core.InlinedRows
	for i := range d.Inlined {
		if g := &d.Inlined[i]; !declared[[2]uint64{uint64(g.TableID), g.SchemaVersion}] {
			out = append(out, g)
		}
	}
	return out
}

// inlinedTable describes ducklake_inlined_data_<table>_<version>: row_id,
// begin_snapshot, end_snapshot, then the table's columns as they stood
// under that schema version.
func inlinedTable(d *core.Dump, table core.TableID, sv uint64, rows []core.InlinedRow) (*Table, error) {
	at, ok := schemaVersionBegin(d, table, sv)
	if !ok && len(rows) > 0 {
		at, ok = rows[0].Begin, true
	}
	if !ok {
		at = d.Head.SnapshotID
	}
	t := &Table{
		Name:       InlinedTableName(uint64(table), sv),
		PrimaryKey: -1,
		Inlined:    &InlinedTable{TableID: uint64(table), SchemaVersion: sv},
		Columns:    slices.Clone(inlinedLeading),
	}
	children := func(parent core.ColumnID) []core.Column {
		var out []core.Column
		for _, c := range d.Columns {
			if c.TableID == table && c.Parent != nil && *c.Parent == parent && c.VisibleAt(at) {
				out = append(out, c)
			}
		}
		slices.SortFunc(out, func(a, b core.Column) int {
			return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.ID, b.ID))
		})
		return out
	}
	for _, c := range d.ColumnsAt(table, at) {
		typ, err := columnType(c, children)
		if err != nil {
			return nil, &core.Error{Kind: core.Corruption, Msg: fmt.Sprintf("%s: %v", t.Name, err)}
		}
		t.Columns = append(t.Columns, Column{Name: c.Name, Type: typ})
	}
	return t, nil
}

// schemaVersionBegin is the snapshot at which table took schema version sv.
func schemaVersionBegin(d *core.Dump, table core.TableID, sv uint64) (core.SnapshotID, bool) {
	for _, s := range d.SchemaVersions {
		if s.TableID == table && s.SchemaVersion == sv {
			return s.BeginSnapshot, true
		}
	}
	return 0, false
}

func inlinedRows(d *core.Dump, t *Table) [][]any {
	var group *core.InlinedRows
	for i := range d.Inlined {
		g := &d.Inlined[i]
		if uint64(g.TableID) == t.Inlined.TableID && g.SchemaVersion == t.Inlined.SchemaVersion {
			group = g
			break
		}
	}
	if group == nil {
		return nil
	}
	width := len(t.Columns) - len(inlinedLeading)
	rows := make([][]any, 0, len(group.Rows))
	for _, r := range group.Rows {
		row := make([]any, 0, len(t.Columns))
		row = append(row, int64(r.RowID), int64(r.Begin), end(r.Versioned))
		for i := 0; i < width; i++ {
			var cell any
			if i < len(r.Values) {
				cell = valueCell(r.Values[i])
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// valueCell is a stored inlined value as a cell.
func valueCell(v core.Value) any {
	switch {
	case v.Int != nil:
		return *v.Int
	case v.Uint != nil:
		return *v.Uint
	case v.Float != nil:
		return *v.Float
	case v.Bool != nil:
		return *v.Bool
	case v.String != nil:
		return *v.String
	case v.Bytes != nil:
		return v.Bytes
	case v.DuckDB != nil:
		return Encoded(v.DuckDB)
	}
	return nil
}

// inlinedDeleteRows are the rows of ducklake_inlined_delete_<table>:
// file_id, row_id, begin_snapshot, by data file and row id.
func inlinedDeleteRows(d *core.Dump, table uint64) [][]any {
	var rows [][]any
	for _, x := range d.InlinedFileDeletes {
		if uint64(x.TableID) == table {
			rows = append(rows, []any{int64(x.DataFileID), int64(x.RowID), int64(x.Begin)})
		}
	}
	return rows
}
