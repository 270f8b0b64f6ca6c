package sqlfn

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// moraine_ducklake_inlined_data(lake, table [, schema_version := V]
// [, snapshot := S]) is DuckLake's ducklake_inlined_data_<table>_<V>: the
// rows inlined into table under schema version V (default: the newest one
// holding rows), with row_id, begin_snapshot and end_snapshot, then the
// table's columns as they were under V. table is a name (table or
// schema.table) or a table id.
func inlinedDataFunction() *Function {
	return &Function{
		Name: "moraine_ducklake_inlined_data",
		Doc:  "ducklake_inlined_data_<table>_<schema version>: a table's inlined rows with their lifetimes.",
		Params: []Param{
			{Name: "lake", Type: TypeVarchar, Doc: "an attached lake"},
			{Name: "table", Type: TypeAny, Doc: "table or schema.table, or a table id"},
		},
		Named: []Param{
			{Name: "schema_version", Type: TypeBigint, Doc: "the schema version the rows were written under (default: the newest holding rows)"},
			snapshotParam,
		},
		run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
			d, err := dumpOf(ctx, in, a)
			if err != nil {
				return nil, err
			}
			table, err := resolveTable(d, a.Pos[1])
			if err != nil {
				return nil, err
			}
			sv, hasSV, err := a.namedU64("schema_version")
			if err != nil {
				return nil, err
			}
			var group *core.InlinedRows
			for i := range d.Inlined {
				g := &d.Inlined[i]
				if g.TableID != table.ID || len(g.Rows) == 0 {
					continue
				}
				if hasSV && g.SchemaVersion == sv || !hasSV && (group == nil || g.SchemaVersion > group.SchemaVersion) {
					group = g
				}
			}
			var columns []core.Column
			if group != nil {
				columns = d.ColumnsAt(table.ID, group.Rows[0].Begin)
			} else {
				// No rows: the columns of the table's latest version.
				s := d.Head.SnapshotID
				if d.At != nil {
					s = *d.At
				}
				if table.End != nil {
					s = *table.End - 1
				}
				columns = d.ColumnsAt(table.ID, s)
			}
			t := &Table{Columns: []Column{{"row_id", TypeUbigint}, {"begin_snapshot", TypeUbigint}, {"end_snapshot", TypeUbigint}}}
			taken := map[string]bool{"row_id": true, "begin_snapshot": true, "end_snapshot": true}
			for _, c := range columns {
				name := c.Name
				for i := 1; taken[strings.ToLower(name)]; i++ {
					name = c.Name + "_" + strconv.Itoa(i)
				}
				taken[strings.ToLower(name)] = true
				t.Columns = append(t.Columns, Column{Name: name, Type: outType(c.Type)})
			}
			if group == nil {
				return t, nil
			}
			for _, r := range group.Rows {
				row := []any{r.RowID, uint64(r.Begin), end(r.Versioned)}
				for i := range columns {
					var v core.Value
					if i < len(r.Values) {
						v = r.Values[i]
					}
					cell, err := fromCell(v, t.Columns[3+i].Type)
					if err != nil {
						return nil, withContext(err, "row %d, column %s", r.RowID, quote(columns[i].Name))
					}
					row = append(row, cell)
				}
				t.Rows = append(t.Rows, row)
			}
			return t, nil
		},
	}
}

// resolveTable finds a table of a dump by id or name; among several
// versions it takes the live one, else the latest.
func resolveTable(d *core.Dump, ref Value) (core.Table, error) {
	var match func(t core.Table) bool
	var what string
	if id, ok := asU64(ref); ok && ref.Type != TypeVarchar {
		match = func(t core.Table) bool { return uint64(t.ID) == id }
		what = "table id " + strconv.FormatUint(id, 10)
	} else if ref.Type == TypeVarchar {
		schema, name, err := parseQualified(ref.Str)
		if err != nil {
			return core.Table{}, err
		}
		schemas := map[core.SchemaID]string{}
		for _, s := range d.Schemas {
			schemas[s.ID] = s.Name
		}
		match = func(t core.Table) bool { return t.Name == name && schemas[t.SchemaID] == schema }
		what = "table " + quote(schema) + "." + quote(name)
	} else {
		return core.Table{}, errorf(core.InvalidArgument, "table must be a name or a table id, got %s", ref.SQL())
	}
	var best *core.Table
	for i := range d.Tables {
		t := &d.Tables[i]
		if !match(*t) {
			continue
		}
		if best == nil || (best.End != nil && (t.End == nil || t.Begin > best.Begin)) {
			best = t
		}
	}
	if best == nil {
		return core.Table{}, errorf(core.NotFound, "%s does not exist", what)
	}
	return *best, nil
}

// fromCell converts a stored inlined value to a result cell of type t.
func fromCell(v core.Value, t Type) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	mismatch := func() error {
		return errorf(core.Corruption, "an inlined value does not fit the column's type %s", t)
	}
	switch t {
	case TypeBigint:
		switch {
		case v.Int != nil:
			return *v.Int, nil
		case v.Uint != nil && *v.Uint <= math.MaxInt64:
			return int64(*v.Uint), nil
		}
		return nil, mismatch()
	case TypeUbigint:
		switch {
		case v.Uint != nil:
			return *v.Uint, nil
		case v.Int != nil && *v.Int >= 0:
			return uint64(*v.Int), nil
		}
		return nil, mismatch()
	case TypeDouble:
		switch {
		case v.Float != nil:
			return *v.Float, nil
		case v.Int != nil:
			return float64(*v.Int), nil
		case v.Uint != nil:
			return float64(*v.Uint), nil
		}
		return nil, mismatch()
	case TypeBoolean:
		if v.Bool != nil {
			return *v.Bool, nil
		}
		return nil, mismatch()
	case TypeBlob:
		switch {
		case v.Bytes != nil:
			return v.Bytes, nil
		case v.String != nil:
			return []byte(*v.String), nil
		}
		return nil, mismatch()
	}
	switch {
	case v.String != nil:
		return *v.String, nil
	case v.Int != nil:
		return strconv.FormatInt(*v.Int, 10), nil
	case v.Uint != nil:
		return strconv.FormatUint(*v.Uint, 10), nil
	case v.Float != nil:
		return strconv.FormatFloat(*v.Float, 'g', -1, 64), nil
	case v.Bool != nil:
		return strconv.FormatBool(*v.Bool), nil
	case v.Bytes != nil:
		return string(v.Bytes), nil
	}
	return nil, mismatch()
}
