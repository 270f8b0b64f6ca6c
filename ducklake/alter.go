package ducklake

// alter.go: ALTER TABLE on the metadata tables, which DuckLake 1.0 sends
// when it migrates a DuckLake 0.3 catalog (ADD COLUMN with a constant
// default, DROP COLUMN), all in the transaction that raises the
// catalog's version. A table altered in a transaction is replaced in it:
// a new Table of the new shape whose rows (the old table's rows as the
// transaction saw them, reshaped) are all inserted; the commit compares
// every row of the old table with every row of the new one (stager), and
// the transaction must leave every metadata table exactly as the spec of
// the version it records defines it (checkShapes).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// AddColumn adds a column to a metadata table in the transaction, every
// row taking def (nil: NULL), the text of a constant the column's type
// reads (DuckDB's DEFAULT). With ifNotExists a column of that name already
// there is left alone (false, nil); without, it is core.AlreadyExists.
func (c *Changes) AddColumn(table string, col Column, def *string, ifNotExists bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.alterable(table)
	if err != nil {
		return false, err
	}
	if t.ColumnIndex(col.Name) >= 0 {
		if ifNotExists {
			return false, nil
		}
		return false, &core.Error{Kind: core.AlreadyExists, Msg: fmt.Sprintf("Column with name %s already exists!", col.Name)}
	}
	if col.Name == "" || strings.TrimSpace(col.Type) == "" {
		return false, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("ALTER TABLE %s ADD COLUMN: a column needs a name and a type", t.Name)}
	}
	if col.NotNull && def == nil {
		return false, &core.Error{Kind: core.Constraint, Msg: fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s: a NOT NULL column needs a default", t.Name, col.Name)}
	}
	cell, err := defaultCell(t.Name, col, def)
	if err != nil {
		return false, err
	}
	nt := &Table{Name: t.Name, PrimaryKey: t.PrimaryKey, Columns: append(slices.Clone(t.Columns), col)}
	c.replace(t, nt, func(row []any) []any { return append(slices.Clone(row), cell) })
	return true, nil
}

// DropColumn drops a column of a metadata table in the transaction. With
// ifExists a column that does not exist is left alone (false, nil);
// without, it is core.NotFound. The primary key column cannot be dropped.
func (c *Changes) DropColumn(table, column string, ifExists bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := c.alterable(table)
	if err != nil {
		return false, err
	}
	i := t.ColumnIndex(column)
	if i < 0 {
		if ifExists {
			return false, nil
		}
		return false, &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("Table %s does not have a column with name %q", t.Name, column)}
	}
	if i == t.PrimaryKey {
		return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s: the column is the primary key", t.Name, column)}
	}
	if len(t.Columns) == 1 {
		return false, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s: a table keeps at least one column", t.Name, column)}
	}
	pk := t.PrimaryKey
	if pk > i {
		pk--
	}
	nt := &Table{Name: t.Name, PrimaryKey: pk, Columns: slices.Delete(slices.Clone(t.Columns), i, i+1)}
	c.replace(t, nt, func(row []any) []any { return slices.Delete(slices.Clone(row), i, i+1) })
	return true, nil
}

// alterable resolves the table an ALTER names: a metadata table of a lake
// (DuckLake alters no other).
func (c *Changes) alterable(name string) (*Table, error) {
	t := c.lookup(name)
	if t == nil {
		return nil, notInTransaction(name)
	}
	if t.Inlined != nil || t.InlinedDeletes != nil || !c.view.HasLake() {
		return nil, &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("ALTER TABLE %s: moraine alters DuckLake's metadata tables of a lake only (as DuckLake's migration does)", t.Name)}
	}
	return t, nil
}

// replace puts nt in place of t in the transaction, with t's rows as the
// transaction sees them, reshaped. Call with c.mu held.
func (c *Changes) replace(t, nt *Table, reshape func([]any) []any) {
	rows, _ := c.rowsLocked(t)
	tc := &TableChanges{table: nt, replaced: true, deleted: map[int64]bool{}, updated: map[int64][]any{}}
	for _, r := range rows.Cells() {
		tc.inserted = append(tc.inserted, reshape(r))
	}
	tc.live = len(tc.inserted)
	if old := c.tables[t]; old != nil {
		delete(c.tables, t)
		c.order = slices.DeleteFunc(c.order, func(x *TableChanges) bool { return x == old })
	}
	c.tables[nt] = tc
	c.order = append(c.order, tc)
	key := strings.ToLower(t.Name)
	switch {
	case c.byName[key] == t: // created in this transaction
		c.byName[key] = nt
		c.created[slices.Index(c.created, t)] = nt
	case c.altered[key] == nil: // the view's
		c.replaced[t] = true
	}
	if c.byName[key] != nt {
		c.altered[key] = nt
	}
}

// Altered reports whether the transaction altered a table.
func (c *Changes) Altered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.altered) > 0
}

// defaultCell reads the text of a column's constant default as a cell of
// the column's type.
func defaultCell(table string, col Column, def *string) (any, error) {
	if def == nil {
		return nil, nil
	}
	bad := func(err error) error {
		return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s DEFAULT %q: %v", table, col.Name, col.Type, *def, err)}
	}
	switch strings.ToUpper(strings.TrimSpace(col.Type)) {
	case TypeBigint:
		v, err := strconv.ParseInt(*def, 10, 64)
		if err != nil {
			return nil, bad(err)
		}
		return v, nil
	case TypeBoolean:
		v, err := strconv.ParseBool(*def)
		if err != nil {
			return nil, bad(err)
		}
		return v, nil
	case TypeVarchar, TypeUUID:
		return *def, nil
	}
	return nil, bad(fmt.Errorf("moraine takes defaults of BIGINT, BOOLEAN, VARCHAR and UUID columns"))
}

// checkShapes: a transaction that altered a table must leave every
// metadata table as the spec of the version it records defines it (the
// version DuckLake's migration writes last), each present.
func (c *Changes) checkShapes() error {
	if !c.Altered() {
		return nil
	}
	version := c.recordedVersion()
	spec, err := SpecOf(version)
	if err != nil {
		return err
	}
	for _, want := range spec.Tables() {
		got := c.Lookup(want.Name)
		if got == nil {
			return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("the transaction records DuckLake %s but leaves no %s table", version, want.Name)}
		}
		if err := sameShape(got, want); err != nil {
			return err
		}
	}
	return nil
}

// sameShape compares a table's columns with a spec's definition: names
// (any case), types and NOT NULL (a primary key column is NOT NULL).
func sameShape(got, want *Table) error {
	describe := func(t *Table) string {
		parts := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			parts[i] = c.Name + " " + c.Type
			if c.NotNull || i == t.PrimaryKey {
				parts[i] += " NOT NULL"
			}
		}
		return strings.Join(parts, ", ")
	}
	ok := len(got.Columns) == len(want.Columns)
	for i := 0; ok && i < len(got.Columns); i++ {
		g, w := got.Columns[i], want.Columns[i]
		ok = strings.EqualFold(g.Name, w.Name) && strings.EqualFold(strings.TrimSpace(g.Type), w.Type) &&
			(g.NotNull || i == got.PrimaryKey) == (w.NotNull || i == want.PrimaryKey)
	}
	if !ok {
		return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("the transaction leaves %s as (%s); DuckLake %s's is (%s)", got.Name, describe(got), want.spec.Version, describe(want))}
	}
	return nil
}

// recordedVersion is ducklake_metadata's global version as the transaction
// leaves it ("" for none).
func (c *Changes) recordedVersion() string { return c.globalOption("version") }
