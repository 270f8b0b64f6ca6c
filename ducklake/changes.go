package ducklake

// changes.go is the overlay: Changes holds one DuckDB transaction's
// uncommitted writes to the metadata catalog over the View it pinned.
//
// The model, per table:
//
//   - base rows: the table's rows at the pinned head (View.Rows), never
//     modified; a base row's rowid is its index in them;
//   - deleted base rowids;
//   - updated base rows: rowid -> the row's new full value (a row updated
//     and then deleted is only deleted);
//   - inserted rows, in insertion order; the i-th has rowid len(base)+i,
//     stable for the transaction, and may itself be updated or deleted
//     again (a deleted inserted row leaves its rowid unused).
//
// A table the transaction created has no base rows. What a scan of the
// transaction reads (Rows) is the merge: the base rows not deleted, with
// their updates, in rowid order, then the live inserted rows. Every write
// is one statement's batch and is atomic: it is checked as a whole first
// (column count, cell types, NOT NULL, the primary key against the pinned
// head plus the transaction's own live rows, including the batch) and
// changes nothing when refused. Rows are copied on write, so a RowSet taken
// before a write keeps reading what it saw.
//
// Cells are what View.Rows documents (nil, int64, uint64, float64, bool,
// string, []byte, time.Time) plus Encoded: a value of any DuckDB type in
// DuckDB's binary serialization, kept as given.
//
// Commit reads the change set through Changed and Created (read-only
// views: they return fresh slices of shared rows, which must not be
// modified).

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core"
)

// Changes is one transaction's uncommitted writes over the View it pinned.
// Safe for concurrent use.
type Changes struct {
	view *View

	mu      sync.Mutex
	created []*Table          // in creation order
	byName  map[string]*Table // created tables by lower-cased name
	dropped map[*Table]bool   // tables of the view dropped
	// altered maps the lower-cased name of each table the transaction
	// altered to its table now; replaced marks the view's tables altered
	// (alter.go).
	altered  map[string]*Table
	replaced map[*Table]bool
	tables   map[*Table]*TableChanges
	order    []*TableChanges // in the order of each table's first change
}

// NewChanges starts an empty change set over v.
func NewChanges(v *View) *Changes {
	return &Changes{view: v, byName: map[string]*Table{}, dropped: map[*Table]bool{}, altered: map[string]*Table{},
		replaced: map[*Table]bool{}, tables: map[*Table]*TableChanges{}}
}

// View is the view the changes are over.
func (c *Changes) View() *View { return c.view }

// DataPath is the lake's data path as the transaction sees it: the value
// of ducklake_metadata's global data_path row ("" for none, or a store
// holding no lake).
func (c *Changes) DataPath() string { return c.globalOption("data_path") }

// globalOption is the value of a global ducklake_metadata row as the
// transaction sees it ("" for none).
func (c *Changes) globalOption(name string) string {
	t := c.Lookup("ducklake_metadata")
	if t == nil {
		return ""
	}
	set, err := c.Rows(t)
	if err != nil {
		return ""
	}
	key, value, scope := t.ColumnIndex("key"), t.ColumnIndex("value"), t.ColumnIndex("scope")
	for _, r := range set.Cells() {
		if k, _ := r[key].(string); k == name && (scope < 0 || r[scope] == nil) {
			v, _ := r[value].(string)
			return v
		}
	}
	return ""
}

// Empty reports whether the transaction wrote nothing: no table created,
// no base row deleted or updated, no inserted row live.
func (c *Changes) Empty() bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.created) > 0 || len(c.dropped) > 0 || len(c.altered) > 0 {
		return false
	}
	for _, tc := range c.order {
		if len(tc.deleted) > 0 || len(tc.updated) > 0 || tc.live > 0 {
			return false
		}
	}
	return true
}

// Tables lists the tables the transaction sees: the view's it did not
// drop, then those it created, in creation order.
func (c *Changes) Tables() []*Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Table
	for _, t := range c.view.Tables() {
		switch {
		case c.replaced[t]:
			out = append(out, c.altered[strings.ToLower(t.Name)])
		case !c.dropped[t]:
			out = append(out, t)
		}
	}
	return append(out, c.created...)
}

// Lookup finds a table the transaction sees by name, case-insensitively;
// nil if there is none.
func (c *Changes) Lookup(name string) *Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookup(name)
}

func (c *Changes) lookup(name string) *Table {
	if t := c.altered[strings.ToLower(name)]; t != nil {
		return t
	}
	if t := c.view.Lookup(name); t != nil && !c.dropped[t] && !c.replaced[t] {
		return t
	}
	return c.byName[strings.ToLower(name)]
}

// RowSet is a table's rows as the transaction saw them at one moment,
// each with its rowid, in rowid order. Later writes do not change it.
type RowSet struct {
	base  [][]any // an unchanged table: rowid = index
	ids   []int64
	cells [][]any
}

// Len is the number of rows.
func (r RowSet) Len() int {
	if r.ids == nil {
		return len(r.base)
	}
	return len(r.ids)
}

// Row returns the i-th row (0 <= i < Len) and its rowid. The cells are
// shared and must not be modified.
func (r RowSet) Row(i int) (rowid int64, cells []any) {
	if r.ids == nil {
		return int64(i), r.base[i]
	}
	return r.ids[i], r.cells[i]
}

// Cells returns every row's cells, in rowid order. The result is shared
// (the view's rows, or the slice the RowSet holds) and must not be
// modified.
func (r RowSet) Cells() [][]any {
	if r.ids == nil {
		return r.base
	}
	return r.cells
}

// Rows returns what a scan of t in the transaction reads: t's rows at the
// pinned head with the transaction's own changes applied.
func (c *Changes) Rows(t *Table) (RowSet, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rowsLocked(t)
}

func (c *Changes) rowsLocked(t *Table) (RowSet, error) {
	if c.lookup(t.Name) != t {
		return RowSet{}, notInTransaction(t.Name)
	}
	tc := c.tables[t]
	if tc == nil {
		base, err := c.view.Rows(t)
		if err != nil {
			return RowSet{}, err
		}
		return RowSet{base: base}, nil
	}
	rs := RowSet{ids: make([]int64, 0, len(tc.base)+tc.live), cells: make([][]any, 0, len(tc.base)+tc.live)}
	for i, row := range tc.base {
		id := int64(i)
		if tc.deleted[id] {
			continue
		}
		if u, ok := tc.updated[id]; ok {
			row = u
		}
		rs.ids = append(rs.ids, id)
		rs.cells = append(rs.cells, row)
	}
	for i, row := range tc.inserted {
		if row == nil {
			continue
		}
		rs.ids = append(rs.ids, int64(len(tc.base)+i))
		rs.cells = append(rs.cells, row)
	}
	return rs, nil
}

func notInTransaction(name string) error {
	return &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("table %q does not exist in this transaction's view of the lake", name)}
}

// TableChanges is what a transaction did to one table. Its methods are
// read-only: the slices they return are fresh, the rows in them shared.
type TableChanges struct {
	table   *Table
	created bool
	// replaced: the transaction altered the table; this is its new shape,
	// every row inserted (alter.go).
	replaced bool
	base     [][]any
	deleted  map[int64]bool
	updated  map[int64][]any
	// inserted rows in insertion order, nil once deleted again (a live
	// row is never nil: it has a cell for each of its table's columns, and
	// every table the overlay writes to has columns).
	inserted [][]any
	live     int // inserted rows not deleted

	// keys maps each live row's primary-key value to its rowid; built on
	// first need for tables with a primary key.
	keys map[any]int64
}

// Table is the table changed.
func (tc *TableChanges) Table() *Table { return tc.table }

// Created reports whether the transaction created the table.
func (tc *TableChanges) Created() bool { return tc.created }

// Replaced reports whether the transaction altered the table: this is its
// new shape, its rows all inserted.
func (tc *TableChanges) Replaced() bool { return tc.replaced }

// Base is the table's rows at the pinned head (rowid = index), nil for a
// table the transaction created. Shared: do not modify.
func (tc *TableChanges) Base() [][]any { return tc.base }

// Deleted lists the deleted base rowids in ascending order.
func (tc *TableChanges) Deleted() []int64 {
	out := make([]int64, 0, len(tc.deleted))
	for id := range tc.deleted {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// UpdatedRow is a base row's new value.
type UpdatedRow struct {
	RowID int64
	Row   []any
}

// Updated lists the updated base rows (not deleted since) in ascending
// rowid order, each with its new full row.
func (tc *TableChanges) Updated() []UpdatedRow {
	out := make([]UpdatedRow, 0, len(tc.updated))
	for id, row := range tc.updated {
		out = append(out, UpdatedRow{RowID: id, Row: row})
	}
	slices.SortFunc(out, func(a, b UpdatedRow) int { return cmp.Compare(a.RowID, b.RowID) })
	return out
}

// Inserted lists the live inserted rows in insertion order, with their
// current values.
func (tc *TableChanges) Inserted() [][]any {
	out := make([][]any, 0, tc.live)
	for _, row := range tc.inserted {
		if row != nil {
			out = append(out, row)
		}
	}
	return out
}

// Changed lists every table the transaction created or wrote to, in the
// order of its first change (a table whose writes cancelled out, such as
// rows inserted and deleted again, is listed too).
func (c *Changes) Changed() []*TableChanges {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.order)
}

// Created lists the tables the transaction created, in creation order;
// their Columns are the definitions as created (an inlined-data table's
// types exactly as DuckDB gave them, a metadata table's DuckLake 0.3's).
func (c *Changes) Created() []*Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.created)
}

// table resolves a write's target table.
func (c *Changes) table(name string) (*Table, *TableChanges, error) {
	t := c.lookup(name)
	if t == nil {
		return nil, nil, notInTransaction(name)
	}
	if tc := c.tables[t]; tc != nil {
		return t, tc, nil
	}
	// Not changed yet: read its base rows (changesOf records the table
	// only once the write is accepted, see commitTable).
	base, err := c.view.Rows(t)
	if err != nil {
		return nil, nil, err
	}
	return t, &TableChanges{table: t, base: base, deleted: map[int64]bool{}, updated: map[int64][]any{}}, nil
}

// commitTable records tc as changed (a no-op when it already is).
func (c *Changes) commitTable(tc *TableChanges) {
	if c.tables[tc.table] == nil {
		c.tables[tc.table] = tc
		c.order = append(c.order, tc)
	}
}

// current is the live row at rowid, if any.
func (tc *TableChanges) current(id int64) ([]any, bool) {
	n := int64(len(tc.base))
	switch {
	case id < 0:
		return nil, false
	case id < n:
		if tc.deleted[id] {
			return nil, false
		}
		if u, ok := tc.updated[id]; ok {
			return u, true
		}
		return tc.base[id], true
	case id-n < int64(len(tc.inserted)):
		row := tc.inserted[id-n]
		return row, row != nil
	}
	return nil, false
}

// rowidLimit is one past the largest rowid the table has used.
func (tc *TableChanges) rowidLimit() int64 { return int64(len(tc.base) + len(tc.inserted)) }

// ensureKeys builds the primary-key index of the live rows.
func (tc *TableChanges) ensureKeys() {
	if tc.keys != nil || tc.table.PrimaryKey < 0 {
		return
	}
	tc.keys = map[any]int64{}
	pk := tc.table.PrimaryKey
	for id := int64(0); id < tc.rowidLimit(); id++ {
		if row, ok := tc.current(id); ok && row[pk] != nil {
			tc.keys[overlayKey(row[pk])] = id
		}
	}
}

// Insert adds rows to the named table, each with one cell per column in
// the table's column order. The rows are copied (their []byte cells are
// kept and must not be modified afterwards). It refuses the whole batch
// when a row has the wrong number of cells or a cell of an unknown Go
// type (core.InvalidArgument), a NULL in a NOT NULL or PRIMARY KEY column,
// or a key that a live row of the transaction (or another row of the
// batch) already holds (core.Constraint, in DuckDB's wording).
func (c *Changes) Insert(name string, rows [][]any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, tc, err := c.table(name)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	copies := make([][]any, len(rows))
	for i, row := range rows {
		if len(row) != len(t.Columns) {
			return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("INSERT into %s: row %d has %d values; the table has %d columns", t.Name, i, len(row), len(t.Columns))}
		}
		for j, cell := range row {
			if err := checkCell(t, j, cell); err != nil {
				return err
			}
		}
		copies[i] = slices.Clone(row)
	}
	pk := t.PrimaryKey
	var batch map[any]bool
	if pk >= 0 {
		tc.ensureKeys()
		batch = make(map[any]bool, len(rows))
		for _, row := range copies {
			k := overlayKey(row[pk])
			if _, taken := tc.keys[k]; taken || batch[k] {
				return duplicateKey(t, row[pk])
			}
			batch[k] = true
		}
	}
	c.commitTable(tc)
	for _, row := range copies {
		id := tc.rowidLimit()
		tc.inserted = append(tc.inserted, row)
		tc.live++
		if pk >= 0 {
			tc.keys[overlayKey(row[pk])] = id
		}
	}
	return nil
}

// Delete deletes the rows of the named table with these rowids and returns
// how many it deleted: a rowid listed twice, or deleted before, counts
// once or not at all. A rowid the table never had is refused
// (core.InvalidArgument) and nothing is deleted.
func (c *Changes) Delete(name string, rowids []int64) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, tc, err := c.table(name)
	if err != nil {
		return 0, err
	}
	for _, id := range rowids {
		if id < 0 || id >= tc.rowidLimit() {
			return 0, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("DELETE from %s: no row with rowid %d", t.Name, id)}
		}
	}
	if len(rowids) == 0 {
		return 0, nil
	}
	c.commitTable(tc)
	n := 0
	base := int64(len(tc.base))
	for _, id := range rowids {
		row, live := tc.current(id)
		if !live {
			continue
		}
		if tc.keys != nil && row[t.PrimaryKey] != nil {
			delete(tc.keys, overlayKey(row[t.PrimaryKey]))
		}
		if id < base {
			tc.deleted[id] = true
			delete(tc.updated, id)
		} else {
			tc.inserted[id-base] = nil
			tc.live--
		}
		n++
	}
	return n, nil
}

// Update sets columns cols (indexes into the table's columns, each at most
// once) of the rows with these rowids: rows[i] holds the new values of
// rowids[i], one per column of cols. A rowid listed twice takes its last
// values. It refuses the whole batch for a rowid that is not a live row, a
// bad column or cell (core.InvalidArgument), a NULL in a NOT NULL or
// PRIMARY KEY column, or a primary key another live row keeps
// (core.Constraint); keys are checked after the whole batch, so rows may
// trade keys.
func (c *Changes) Update(name string, rowids []int64, cols []int, rows [][]any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, tc, err := c.table(name)
	if err != nil {
		return err
	}
	if len(rows) != len(rowids) {
		return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("UPDATE of %s: %d rowids for %d rows of values", t.Name, len(rowids), len(rows))}
	}
	if len(rowids) == 0 {
		return nil
	}
	seen := map[int]bool{}
	keyChanges := false
	for _, col := range cols {
		if col < 0 || col >= len(t.Columns) || seen[col] {
			return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("UPDATE of %s: column number %d is out of range or given twice (the table has %d columns)", t.Name, col, len(t.Columns))}
		}
		seen[col] = true
		keyChanges = keyChanges || col == t.PrimaryKey
	}
	next := map[int64][]any{}
	var order []int64
	for i, id := range rowids {
		row, ok := next[id]
		if !ok {
			cur, live := tc.current(id)
			if !live {
				return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("UPDATE of %s: no live row with rowid %d", t.Name, id)}
			}
			row = slices.Clone(cur)
			order = append(order, id)
		}
		if len(rows[i]) != len(cols) {
			return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("UPDATE of %s: row %d has %d values for %d columns", t.Name, i, len(rows[i]), len(cols))}
		}
		for j, col := range cols {
			if err := checkCell(t, col, rows[i][j]); err != nil {
				return err
			}
			row[col] = rows[i][j]
		}
		next[id] = row
	}
	pk := t.PrimaryKey
	if keyChanges {
		tc.ensureKeys()
		claimed := map[any]int64{}
		for _, id := range order {
			k := overlayKey(next[id][pk])
			if other, dup := claimed[k]; dup && other != id {
				return duplicateKey(t, next[id][pk])
			}
			claimed[k] = id
			if owner, taken := tc.keys[k]; taken && owner != id {
				if _, moving := next[owner]; !moving {
					return duplicateKey(t, next[id][pk])
				}
			}
		}
	}
	c.commitTable(tc)
	base := int64(len(tc.base))
	for _, id := range order {
		if keyChanges {
			old, _ := tc.current(id)
			if old[pk] != nil && tc.keys[overlayKey(old[pk])] == id {
				delete(tc.keys, overlayKey(old[pk]))
			}
		}
		if id < base {
			tc.updated[id] = next[id]
		} else {
			tc.inserted[id-base] = next[id]
		}
	}
	if keyChanges {
		for _, id := range order {
			tc.keys[overlayKey(next[id][pk])] = id
		}
	}
	return nil
}

// checkCell checks a cell written to column j of t: a Go type a cell may
// have, and NULL only where the column allows it.
func checkCell(t *Table, j int, cell any) error {
	switch cell.(type) {
	case nil:
		if t.Columns[j].NotNull || j == t.PrimaryKey {
			return &core.Error{Kind: core.Constraint, Msg: fmt.Sprintf("NOT NULL constraint failed: %s.%s", t.Name, t.Columns[j].Name)}
		}
	case int64, uint64, float64, bool, string, []byte, time.Time, Encoded:
	default:
		return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%s.%s: a value of Go type %T is not a cell", t.Name, t.Columns[j].Name, cell)}
	}
	return nil
}

// duplicateKey is DuckDB's primary-key violation (its ART index's wording:
// DuckLake retries on "primary key").
func duplicateKey(t *Table, key any) error {
	return &core.Error{Kind: core.Constraint, Msg: fmt.Sprintf("Duplicate key \"%s: %s\" violates primary key constraint.", t.Columns[t.PrimaryKey].Name, keyText(key))}
}

func keyText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case string:
		return x
	case []byte:
		return fmt.Sprintf("%q", x)
	case Encoded:
		return fmt.Sprintf("(%d encoded bytes)", len(x))
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999-07")
	}
	return fmt.Sprint(v)
}

// Primary-key values as map keys: integers of either signedness compare by
// value, bytes by content, times by their instant.
type (
	overlayBytes   string
	overlayEncoded string
	overlayTime    int64
)

func overlayKey(v any) any {
	switch x := v.(type) {
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
	case []byte:
		return overlayBytes(x)
	case Encoded:
		return overlayEncoded(x)
	case time.Time:
		return overlayTime(x.UnixMicro())
	}
	return v
}

// CreateTable creates a table in the transaction and reports whether it
// did: with ifNotExists, a table of that name that already exists (in the
// view or created earlier) is left alone (false, nil); without, it is
// refused (core.AlreadyExists). Two kinds of tables may be created:
//
//   - DuckLake 0.3's 22 metadata tables, on a store that holds no lake yet
//     (DuckLake's first ATTACH creates them all, with its seed rows, in one
//     transaction), each exactly as MetadataTables defines it: column names
//     (in any case), DuckDB types as DuckDB names them (e.g. "TIMESTAMP
//     WITH TIME ZONE"), NOT NULL columns and the PRIMARY KEY (whose column
//     is NOT NULL as DuckDB makes it). The table created is
//     MetadataTables' own.
//   - ducklake_inlined_data_<table id>_<schema version> tables of a lake
//     (one the view holds, or one this transaction creates): columns
//     row_id, begin_snapshot and end_snapshot, all BIGINT, then at least
//     one column of any DuckDB type, types kept exactly as given, and no
//     constraint.
//
// Any other table is refused (core.Unsupported).
func (c *Changes) CreateTable(def *Table, ifNotExists bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if def == nil || def.Name == "" {
		return false, &core.Error{Kind: core.InvalidArgument, Msg: "CREATE TABLE: a table needs a name"}
	}
	if existing := c.lookup(def.Name); existing != nil {
		if ifNotExists {
			return false, nil
		}
		return false, &core.Error{Kind: core.AlreadyExists, Msg: fmt.Sprintf("Table with name %q already exists!", existing.Name)}
	}
	var t *Table
	if m := c.view.spec.Table(def.Name); m != nil {
		if c.view.HasLake() {
			// Unreachable while every lake lists all its spec's tables,
			// kept for safety.
			return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: the lake exists; its metadata tables cannot be created again", m.Name)}
		}
		if err := sameDefinition(def, m); err != nil {
			return false, err
		}
		t = m
	} else if m := spec10.Table(def.Name); m != nil && c.view.spec == spec03 && c.view.HasLake() {
		// DuckLake 1.0's migration of a 0.3 lake creates the tables 0.3
		// lacks (checkShapes holds the transaction to 1.0 as a whole).
		if err := sameDefinition(def, m); err != nil {
			return false, err
		}
		t = m
	} else if id, sv, ok := parseInlinedTableName(def.Name); ok {
		if !c.view.HasLake() && c.byName["ducklake_inlined_data_tables"] == nil {
			return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: the store holds no lake yet (create DuckLake's metadata tables first)", def.Name)}
		}
		var err error
		if t, err = inlinedDefinition(def, id, sv); err != nil {
			return false, err
		}
	} else if id, ok := parseInlinedDeleteTableName(def.Name); ok && c.view.spec != spec03 {
		if !c.view.HasLake() {
			return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: the store holds no lake yet (create DuckLake's metadata tables first)", def.Name)}
		}
		if err := sameColumns(def, inlinedDeleteColumns); err != nil {
			return false, err
		}
		t = inlinedDeleteTable(id)
	} else {
		return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: moraine serves DuckLake's metadata tables only (DuckLake %s's %d ducklake_* tables, created when a lake is, %s)", def.Name, c.view.spec.Version, len(c.view.spec.tables), c.view.spec.extraTables())}
	}
	c.created = append(c.created, t)
	c.byName[strings.ToLower(t.Name)] = t
	tc := &TableChanges{table: t, created: true, deleted: map[int64]bool{}, updated: map[int64][]any{}}
	c.tables[t] = tc
	c.order = append(c.order, tc)
	return true, nil
}

// DropTable drops a table DuckLake may drop, and reports whether it did:
// an inlined-data or inlined-deletion table, with its rows (DuckLake drops
// those of a table its cleanup removed, and inlined-data tables a flush
// left behind). With ifExists, a table that does not exist is left alone
// (false, nil); without, it is core.NotFound. DuckLake's metadata tables
// are never dropped (core.Unsupported).
func (c *Changes) DropTable(name string, ifExists bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.lookup(name)
	if t == nil {
		if ifExists {
			return false, nil
		}
		return false, &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("Table with name %s does not exist!", name)}
	}
	if t.Inlined == nil && t.InlinedDeletes == nil {
		return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("DROP TABLE %s: DuckLake's metadata tables are never dropped (moraine drops inlined-data and inlined-deletion tables only)", t.Name)}
	}
	_, tc, err := c.table(name)
	if err != nil {
		return false, err
	}
	c.commitTable(tc)
	for id := range tc.base {
		tc.deleted[int64(id)] = true
	}
	clear(tc.updated)
	clear(tc.inserted)
	tc.live, tc.keys = 0, nil
	if i := slices.Index(c.created, t); i >= 0 {
		c.created = slices.Delete(c.created, i, i+1)
		delete(c.byName, strings.ToLower(t.Name))
	} else {
		c.dropped[t] = true
	}
	return true, nil
}

// Dropped lists the tables of the view the transaction dropped.
func (c *Changes) Dropped() []*Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Table
	for _, t := range c.view.Tables() {
		if c.dropped[t] {
			out = append(out, t)
		}
	}
	return out
}

// sameColumns checks a CREATE TABLE of a table whose columns are fixed:
// names (in any case) and types as given, no constraint.
func sameColumns(def *Table, want []Column) error {
	refuse := func(format string, args ...any) error {
		return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: ", def.Name) + fmt.Sprintf(format, args...)}
	}
	if len(def.Columns) != len(want) {
		return refuse("%d columns; the table has %d (%s)", len(def.Columns), len(want), columnList(want))
	}
	for i, c := range def.Columns {
		if !strings.EqualFold(c.Name, want[i].Name) || !strings.EqualFold(strings.TrimSpace(c.Type), want[i].Type) {
			return refuse("column %d is %s %s; the table's is %s %s", i+1, c.Name, c.Type, want[i].Name, want[i].Type)
		}
		if c.NotNull {
			return refuse("column %s is NOT NULL; the table takes no constraint", c.Name)
		}
	}
	if def.PrimaryKey >= 0 {
		return refuse("a PRIMARY KEY; the table takes no constraint")
	}
	return nil
}

func columnList(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.Type
	}
	return strings.Join(parts, ", ")
}

// parseInlinedDeleteTableName reads ducklake_inlined_delete_<table>, in the
// form InlinedDeleteTableName writes (any case).
func parseInlinedDeleteTableName(name string) (uint64, bool) {
	lower := strings.ToLower(name)
	rest, found := strings.CutPrefix(lower, InlinedDeletePrefix)
	if !found {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || InlinedDeleteTableName(id) != lower {
		return 0, false
	}
	return id, true
}

// sameDefinition checks a CREATE TABLE of a metadata table against its
// spec's definition.
func sameDefinition(def, m *Table) error {
	v := m.spec.Version
	refuse := func(format string, args ...any) error {
		return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: ", m.Name) + fmt.Sprintf(format, args...) + fmt.Sprintf(" (moraine serves DuckLake %s's definition of its metadata tables here)", v)}
	}
	if len(def.Columns) != len(m.Columns) {
		return refuse("%d columns; DuckLake %s's table has %d", len(def.Columns), v, len(m.Columns))
	}
	for i, c := range def.Columns {
		w := m.Columns[i]
		if !strings.EqualFold(c.Name, w.Name) || !strings.EqualFold(strings.TrimSpace(c.Type), w.Type) {
			return refuse("column %d is %s %s; DuckLake %s's is %s %s", i+1, c.Name, c.Type, v, w.Name, w.Type)
		}
		gotNN := c.NotNull || i == def.PrimaryKey
		wantNN := w.NotNull || i == m.PrimaryKey
		if gotNN != wantNN {
			return refuse("column %s is %snullable; DuckLake %s's is %snullable", c.Name, notWord(!gotNN), v, notWord(!wantNN))
		}
	}
	if def.PrimaryKey != m.PrimaryKey {
		return refuse("the primary key is %s; DuckLake %s's is %s", keyName(def), v, keyName(m))
	}
	return nil
}

func notWord(nullable bool) string {
	if nullable {
		return ""
	}
	return "not "
}

func keyName(t *Table) string {
	if t.PrimaryKey < 0 || t.PrimaryKey >= len(t.Columns) {
		return "none"
	}
	return t.Columns[t.PrimaryKey].Name
}

// parseInlinedTableName reads ducklake_inlined_data_<table>_<version>, in
// the form InlinedTableName writes (any case).
func parseInlinedTableName(name string) (table, sv uint64, ok bool) {
	lower := strings.ToLower(name)
	rest, found := strings.CutPrefix(lower, InlinedTablePrefix)
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, "_")
	if !found {
		return 0, 0, false
	}
	table, err1 := strconv.ParseUint(a, 10, 64)
	sv, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || InlinedTableName(table, sv) != lower {
		return 0, 0, false
	}
	return table, sv, true
}

// inlinedDefinition checks and copies an inlined-data table's definition.
func inlinedDefinition(def *Table, id, sv uint64) (*Table, error) {
	refuse := func(format string, args ...any) error {
		return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("CREATE TABLE %s: ", def.Name) + fmt.Sprintf(format, args...)}
	}
	lead := inlinedLeading
	if len(def.Columns) <= len(lead) {
		return nil, refuse("an inlined-data table has the columns row_id, begin_snapshot, end_snapshot (BIGINT) and then the table's own; %d columns given", len(def.Columns))
	}
	t := &Table{Name: InlinedTableName(id, sv), PrimaryKey: -1, Inlined: &InlinedTable{TableID: id, SchemaVersion: sv}}
	seen := map[string]bool{}
	for i, c := range def.Columns {
		if i < len(lead) && (!strings.EqualFold(c.Name, lead[i].Name) || !strings.EqualFold(strings.TrimSpace(c.Type), lead[i].Type)) {
			return nil, refuse("column %d is %s %s; an inlined-data table's column %d is %s %s", i+1, c.Name, c.Type, i+1, lead[i].Name, lead[i].Type)
		}
		if c.Name == "" || strings.TrimSpace(c.Type) == "" {
			return nil, refuse("column %d has no name or no type", i+1)
		}
		if seen[strings.ToLower(c.Name)] {
			return nil, refuse("column %s is given twice", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if c.NotNull {
			return nil, refuse("column %s is NOT NULL; an inlined-data table takes no constraint", c.Name)
		}
		t.Columns = append(t.Columns, Column{Name: c.Name, Type: c.Type})
	}
	if def.PrimaryKey >= 0 {
		return nil, refuse("a PRIMARY KEY; an inlined-data table takes no constraint")
	}
	return t, nil
}
