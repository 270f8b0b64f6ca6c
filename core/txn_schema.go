package core

import (
	"slices"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/keys"
)

// ColumnDef describes a column to create. Nested types (struct, list, map)
// carry their children; a list has one child (the element), a map two
// (key, value).
type ColumnDef struct {
	Name         string
	Type         string // DuckLake type string: int64, varchar, struct, list, decimal(10,2), ...
	NullsAllowed *bool  // default true
	Default      *string
	Children     []ColumnDef
}

// ColumnChange alters a column; nil fields stay as they are.
type ColumnChange struct {
	Type         *string
	Default      *string
	DropDefault  bool
	NullsAllowed *bool
}

// ---- schemas ----

// CreateSchema creates a schema; its data path defaults to "<name>/"
// relative to the catalog's data path.
func (t *Transaction) CreateSchema(name string) (SchemaID, error) {
	if err := checkName("schema", name); err != nil {
		return 0, err
	}
	if _, ok := t.next.schemaByName[name]; ok {
		return 0, errorf(AlreadyExists, "schema %q already exists", name)
	}
	s := &Schema{ID: SchemaID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(),
		Name: name, Path: name + "/", PathIsRelative: true}
	t.next.schemas[s.ID] = s
	t.next.schemaByName[name] = s.ID
	t.put(keys.CurrentSchema(uint64(s.ID)), encodeSchema(s))
	t.touchName(keys.NameSchema, 0, name)
	t.note(change{Kind: chCreatedSchema, Name: []string{name}})
	t.shape(0)
	return s.ID, nil
}

// DropSchema drops a schema. Without cascade it must be empty; with cascade
// its tables and views are dropped too.
func (t *Transaction) DropSchema(id SchemaID, cascade bool) error {
	s, ok := t.next.schemas[id]
	if !ok {
		return errorf(NotFound, "schema %d does not exist", id)
	}
	tables := t.next.Tables(id)
	views := t.next.Views(id)
	macros := t.next.Macros(id)
	if !cascade && (len(tables) > 0 || len(views) > 0 || len(macros) > 0) {
		return errorf(Constraint, "schema %q is not empty (%d tables, %d views, %d macros); drop them first or drop with cascade", s.Name, len(tables), len(views), len(macros))
	}
	for _, m := range macros {
		if err := t.DropMacro(m.ID); err != nil {
			return err
		}
	}
	for _, tb := range tables {
		if err := t.DropTable(tb.ID); err != nil {
			return err
		}
	}
	for _, v := range views {
		if err := t.DropView(v.ID); err != nil {
			return err
		}
	}
	delete(t.next.schemas, id)
	delete(t.next.schemaByName, s.Name)
	retire(t, s, keys.KindSchema, encodeSchema, uint64(id))
	t.touchName(keys.NameSchema, 0, s.Name)
	t.note(change{Kind: chDroppedSchema, ID: uint64(id)})
	t.shape(0)
	return nil
}

func (t *Transaction) schemaOf(id SchemaID) (*Schema, error) {
	s, ok := t.next.schemas[id]
	if !ok {
		return nil, errorf(NotFound, "schema %d does not exist", id)
	}
	return s, nil
}

func (t *Transaction) tableOf(id TableID) (*Table, error) {
	tb, ok := t.next.tables[id]
	if !ok {
		return nil, errorf(NotFound, "table %d does not exist", id)
	}
	return tb, nil
}

// ---- tables ----

func (t *Transaction) relationNameTaken(schema SchemaID, name string) bool {
	if _, ok := t.next.tableByName[schema][name]; ok {
		return true
	}
	_, ok := t.next.viewByName[schema][name]
	return ok
}

// CreateTable creates a table with its columns.
func (t *Transaction) CreateTable(schema SchemaID, name string, columns []ColumnDef) (TableID, error) {
	s, err := t.schemaOf(schema)
	if err != nil {
		return 0, err
	}
	if err := checkName("table", name); err != nil {
		return 0, err
	}
	if t.relationNameTaken(schema, name) {
		return 0, errorf(AlreadyExists, "a table or view named %q already exists in schema %q", name, s.Name)
	}
	tb := &Table{ID: TableID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(),
		SchemaID: schema, Name: name, Path: name + "/", PathIsRelative: true}
	t.next.tables[tb.ID] = tb
	byName := innerCopy(t, t.next.tableByName, schema)
	byName[name] = tb.ID
	t.put(keys.CurrentTable(uint64(tb.ID)), encodeTable(tb))
	t.touchName(keys.NameTable, uint64(schema), name)
	var order uint64
	for _, def := range columns {
		if _, err := t.addColumn(tb.ID, def, nil, &order); err != nil {
			return 0, err
		}
	}
	st := &TableStats{TableID: tb.ID}
	t.next.tableStats[tb.ID] = st
	t.put(keys.CurrentTableStats(uint64(tb.ID)), encodeTableStats(st))
	t.note(change{Kind: chCreatedTable, Name: []string{s.Name, name}})
	t.shape(tb.ID)
	return tb.ID, nil
}

// RenameTable renames a table (a new version of it).
func (t *Transaction) RenameTable(id TableID, name string) error {
	tb, err := t.tableOf(id)
	if err != nil {
		return err
	}
	if err := checkName("table", name); err != nil {
		return err
	}
	if name == tb.Name {
		return nil
	}
	if t.relationNameTaken(tb.SchemaID, name) {
		return errorf(AlreadyExists, "a table or view named %q already exists in schema %d", name, tb.SchemaID)
	}
	old := tb.Name
	nv := *tb
	nv.Name = name
	t.newVersionTable(tb, &nv)
	byName := innerCopy(t, t.next.tableByName, tb.SchemaID)
	delete(byName, old)
	byName[name] = id
	t.touchName(keys.NameTable, uint64(tb.SchemaID), old)
	t.touchName(keys.NameTable, uint64(tb.SchemaID), name)
	t.noteTable(chAlteredTable, id)
	t.shape(id)
	return nil
}

// newVersionTable ends tb's current version and makes nv (same id) live.
func (t *Transaction) newVersionTable(tb, nv *Table) {
	replaceVersion(t, tb, nv, keys.KindTable, encodeTable, uint64(tb.ID))
	t.next.tables[nv.ID] = nv
}

// DropTable drops a table with its columns, files, partitioning, sorting
// and inlined rows.
func (t *Transaction) DropTable(id TableID) error {
	tb, err := t.tableOf(id)
	if err != nil {
		return err
	}
	for _, c := range t.next.columns[id] {
		t.endColumn(c)
	}
	delete(t.next.columns, id)
	for _, f := range t.next.dataFiles[id] {
		t.endDataFile(f)
	}
	delete(t.next.dataFiles, id)
	for _, d := range t.next.deleteFiles[id] {
		t.endDeleteFile(d)
	}
	delete(t.next.deleteFiles, id)
	if p, ok := t.next.partitions[id]; ok {
		t.endPartition(p)
	}
	if s, ok := t.next.sorts[id]; ok {
		t.endSort(s)
	}
	t.archiveInlined(id)
	delete(t.next.tables, id)
	byName := innerCopy(t, t.next.tableByName, tb.SchemaID)
	delete(byName, tb.Name)
	retire(t, tb, keys.KindTable, encodeTable, uint64(id))
	t.touchName(keys.NameTable, uint64(tb.SchemaID), tb.Name)
	// The table's versioned rows were ended above (time travel keeps them);
	// its statistics are unversioned, so they go.
	delete(t.next.tableStats, id)
	t.del(keys.CurrentTableStats(uint64(id)))
	for cid := range t.next.colStats[id] {
		t.del(keys.CurrentTableColumnStats(uint64(id), uint64(cid)))
	}
	delete(t.next.colStats, id)
	t.noteTable(chDroppedTable, id)
	t.shape(id)
	return nil
}

// ---- columns ----

// nextColumnID allocates a column id. Column ids must never be reused
// within a table, dropped columns included; drawing them from the catalog
// id counter guarantees that without a per-table high-water mark.
func (t *Transaction) nextColumnID() ColumnID {
	return ColumnID(t.allocCatalogID())
}

func (t *Transaction) addColumn(table TableID, def ColumnDef, parent *ColumnID, order *uint64) (ColumnID, error) {
	if err := checkName("column", def.Name); err != nil {
		return 0, err
	}
	if def.Type == "" {
		return 0, errorf(InvalidArgument, "column %q has no type", def.Name)
	}
	for _, c := range t.next.columns[table] {
		if c.Name == def.Name && ptrEq(c.Parent, parent) {
			return 0, errorf(AlreadyExists, "column %q already exists in table %d", def.Name, table)
		}
	}
	nulls := true
	if def.NullsAllowed != nil {
		nulls = *def.NullsAllowed
	}
	if !nulls && def.Default == nil && t.hasRows(table) {
		return 0, errorf(Constraint, "column %q is NOT NULL without a default, but table %d already has rows", def.Name, table)
	}
	c := &Column{TableID: table, ID: t.nextColumnID(), Versioned: Versioned{Begin: t.id}, Order: *order,
		Name: def.Name, Type: def.Type, InitialDefault: def.Default, DefaultValue: def.Default, NullsAllowed: nulls, Parent: parent}
	*order++
	cols := innerCopy(t, t.next.columns, table)
	cols[c.ID] = c
	t.put(keys.CurrentColumn(uint64(table), uint64(c.ID)), encodeColumn(c))
	for _, child := range def.Children {
		p := c.ID
		if _, err := t.addColumn(table, child, &p, order); err != nil {
			return 0, err
		}
	}
	return c.ID, nil
}

func ptrTo[T any](v T) *T { return &v }

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func (t *Transaction) hasRows(table TableID) bool {
	if st, ok := t.next.tableStats[table]; ok && st.RecordCount > 0 {
		return true
	}
	return len(t.next.dataFiles[table]) > 0
}

// AddColumn adds a top-level column at the end of the table.
func (t *Transaction) AddColumn(table TableID, def ColumnDef) (ColumnID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	var order uint64
	for _, c := range t.next.columns[table] {
		if c.Order >= order {
			order = c.Order + 1
		}
	}
	id, err := t.addColumn(table, def, nil, &order)
	if err != nil {
		return 0, err
	}
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return id, nil
}

func (t *Transaction) columnOf(table TableID, id ColumnID) (*Column, error) {
	if _, err := t.tableOf(table); err != nil {
		return nil, err
	}
	c, ok := t.next.columns[table][id]
	if !ok {
		return nil, errorf(NotFound, "column %d does not exist in table %d", id, table)
	}
	return c, nil
}

// newVersionColumn ends c and makes nv live.
func (t *Transaction) newVersionColumn(c, nv *Column) {
	replaceVersion(t, c, nv, keys.KindColumn, encodeColumn, uint64(c.TableID), uint64(c.ID))
	cols := innerCopy(t, t.next.columns, c.TableID)
	cols[nv.ID] = nv
}

func (t *Transaction) endColumn(c *Column) {
	retire(t, c, keys.KindColumn, encodeColumn, uint64(c.TableID), uint64(c.ID))
}

// RenameColumn renames a column.
func (t *Transaction) RenameColumn(table TableID, id ColumnID, name string) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	if err := checkName("column", name); err != nil {
		return err
	}
	for _, o := range t.next.columns[table] {
		if o.ID != id && o.Name == name && ptrEq(o.Parent, c.Parent) {
			return errorf(AlreadyExists, "column %q already exists in table %d", name, table)
		}
	}
	nv := *c
	nv.Name = name
	t.newVersionColumn(c, &nv)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// AlterColumn changes a column's type, default or nullability.
func (t *Transaction) AlterColumn(table TableID, id ColumnID, ch ColumnChange) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	nv := *c
	if ch.Type != nil {
		if *ch.Type == "" {
			return errorf(InvalidArgument, "column %q: empty type", c.Name)
		}
		nv.Type = *ch.Type
	}
	if ch.DropDefault {
		nv.DefaultValue = nil
	} else if ch.Default != nil {
		nv.DefaultValue = ch.Default
	}
	if ch.NullsAllowed != nil {
		if !*ch.NullsAllowed && c.NullsAllowed {
			if err := t.checkNoNulls(table, c); err != nil {
				return err
			}
		}
		nv.NullsAllowed = *ch.NullsAllowed
	}
	t.newVersionColumn(c, &nv)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// DropColumn drops a column and its nested children.
func (t *Transaction) DropColumn(table TableID, id ColumnID) error {
	c, err := t.columnOf(table, id)
	if err != nil {
		return err
	}
	var drop func(c *Column)
	cols := innerCopy(t, t.next.columns, table)
	drop = func(c *Column) {
		for _, o := range cols {
			if o.Parent != nil && *o.Parent == c.ID {
				drop(o)
			}
		}
		t.endColumn(c)
		delete(cols, c.ID)
	}
	drop(c)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

// ---- views ----

// CreateView creates a view.
func (t *Transaction) CreateView(schema SchemaID, name, sql, dialect, columnAliases string) (ViewID, error) {
	s, err := t.schemaOf(schema)
	if err != nil {
		return 0, err
	}
	if err := checkName("view", name); err != nil {
		return 0, err
	}
	if t.relationNameTaken(schema, name) {
		return 0, errorf(AlreadyExists, "a table or view named %q already exists in schema %q", name, s.Name)
	}
	if dialect == "" {
		dialect = "duckdb"
	}
	v := &View{ID: ViewID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, UUID: uuid.New(), SchemaID: schema,
		Name: name, Dialect: dialect, SQL: sql, ColumnAliases: columnAliases}
	t.next.views[v.ID] = v
	byName := innerCopy(t, t.next.viewByName, schema)
	byName[name] = v.ID
	t.put(keys.CurrentView(uint64(v.ID)), encodeView(v))
	t.touchName(keys.NameView, uint64(schema), name)
	t.note(change{Kind: chCreatedView, Name: []string{s.Name, name}})
	t.shape(0)
	return v.ID, nil
}

// AlterView replaces a view's SQL (and optionally renames it).
func (t *Transaction) AlterView(id ViewID, name, sql string) error {
	v, ok := t.next.views[id]
	if !ok {
		return errorf(NotFound, "view %d does not exist", id)
	}
	nv := *v
	if name != "" && name != v.Name {
		if err := checkName("view", name); err != nil {
			return err
		}
		if t.relationNameTaken(v.SchemaID, name) {
			return errorf(AlreadyExists, "a table or view named %q already exists in schema %d", name, v.SchemaID)
		}
		byName := innerCopy(t, t.next.viewByName, v.SchemaID)
		delete(byName, v.Name)
		byName[name] = id
		t.touchName(keys.NameView, uint64(v.SchemaID), v.Name)
		t.touchName(keys.NameView, uint64(v.SchemaID), name)
		nv.Name = name
	}
	if sql != "" {
		nv.SQL = sql
	}
	replaceVersion(t, v, &nv, keys.KindView, encodeView, uint64(id))
	t.next.views[id] = &nv
	t.note(change{Kind: chAlteredView, ID: uint64(id)})
	t.shape(0)
	return nil
}

// DropView drops a view.
func (t *Transaction) DropView(id ViewID) error {
	v, ok := t.next.views[id]
	if !ok {
		return errorf(NotFound, "view %d does not exist", id)
	}
	delete(t.next.views, id)
	byName := innerCopy(t, t.next.viewByName, v.SchemaID)
	delete(byName, v.Name)
	retire(t, v, keys.KindView, encodeView, uint64(id))
	t.touchName(keys.NameView, uint64(v.SchemaID), v.Name)
	t.note(change{Kind: chDroppedView, ID: uint64(id)})
	t.shape(0)
	return nil
}

// ---- macros (format 13+) ----

// NeedsDuckLake10 refuses what (a write of DuckLake 1.0's entities, such
// as DuckLake's migration of a lake to 1.0) on a catalog whose format
// predates them, naming the raise (`moraine migrate`); nil from format 13.
func (t *Transaction) NeedsDuckLake10(what string) error { return t.needsDuckLake10(what) }

// needsDuckLake10 refuses writing a DuckLake 1.0 entity into a catalog
// whose format predates them (older builds would not see it).
func (t *Transaction) needsDuckLake10(what string) error {
	if hasDuckLake10(t.format) {
		return nil
	}
	return errorf(Migration, "%s needs catalog format %d (DuckLake 1.0's entities); this catalog is at format %d: raise it with `moraine migrate <uri>` (or core.Catalog.RaiseFormat) first", what, FormatDuckLake10, t.format)
}

// macroKind is DuckLake's change word for a macro: "scalar" or "table",
// from its implementations (a macro's overloads are all of one kind).
func macroKind(impls []MacroImpl) (string, error) {
	if len(impls) == 0 {
		return "", errorf(InvalidArgument, "a macro needs at least one implementation")
	}
	kind := impls[0].Type
	for _, im := range impls {
		if im.Type != kind {
			return "", errorf(InvalidArgument, "a macro's implementations are all scalar or all table (got %q and %q)", kind, im.Type)
		}
	}
	if kind != "scalar" && kind != "table" {
		return "", errorf(InvalidArgument, "macro implementation type %q: accepted values are scalar and table", kind)
	}
	return kind, nil
}

// CreateMacro creates a macro (with its overloads) in a schema. Macro
// names are their own namespace, apart from tables and views, and scalar
// and table macros apart from each other (as DuckDB keeps them).
func (t *Transaction) CreateMacro(schema SchemaID, name string, impls []MacroImpl) (MacroID, error) {
	if err := t.needsDuckLake10("a macro"); err != nil {
		return 0, err
	}
	s, err := t.schemaOf(schema)
	if err != nil {
		return 0, err
	}
	if err := checkName("macro", name); err != nil {
		return 0, err
	}
	kind, err := macroKind(impls)
	if err != nil {
		return 0, err
	}
	if _, ok := t.next.macroByName[schema][macroKey(kind, name)]; ok {
		return 0, errorf(AlreadyExists, "a %s macro named %q already exists in schema %q", kind, name, s.Name)
	}
	m := &Macro{ID: MacroID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, SchemaID: schema, Name: name}
	for i, im := range impls {
		im.ID = uint64(i)
		if im.Dialect == "" {
			im.Dialect = "duckdb"
		}
		im.Parameters = slices.Clone(im.Parameters)
		for j := range im.Parameters {
			im.Parameters[j].ColumnID = uint64(j)
		}
		m.Impls = append(m.Impls, im)
	}
	t.next.macros[m.ID] = m
	innerCopy(t, t.next.macroByName, schema)[macroKey(kind, name)] = m.ID
	t.put(keys.CurrentMacro(uint64(m.ID)), encodeMacro(m))
	ch := chCreatedScalarMacro
	if kind == "table" {
		ch = chCreatedTableMacro
	}
	t.note(change{Kind: ch, Name: []string{s.Name, name}})
	t.shape(0)
	return m.ID, nil
}

// DropMacro drops a macro.
func (t *Transaction) DropMacro(id MacroID) error {
	m, ok := t.next.macros[id]
	if !ok {
		return errorf(NotFound, "macro %d does not exist", id)
	}
	kind, err := macroKind(m.Impls)
	if err != nil {
		return err
	}
	delete(t.next.macros, id)
	names := innerCopy(t, t.next.macroByName, m.SchemaID)
	delete(names, macroKey(kind, m.Name))
	retire(t, m, keys.KindMacro, encodeMacro, uint64(id))
	ch := chDroppedScalarMacro
	if kind == "table" {
		ch = chDroppedTableMacro
	}
	t.note(change{Kind: ch, ID: uint64(id)})
	t.shape(0)
	return nil
}
