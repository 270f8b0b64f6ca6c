package sqlfn

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
)

// The write path: each call is one commit (one new snapshot) on a
// read-write attach. Every write function takes author := and
// commit_message := (recorded in ducklake_snapshot_changes).

var commitParams = []Param{
	{Name: "author", Type: TypeVarchar, Doc: "recorded as the snapshot's author"},
	{Name: "commit_message", Type: TypeVarchar, Doc: "recorded as the snapshot's commit message"},
}

// commit runs fn as one commit on the lake named by the first argument.
func commit(ctx context.Context, in *Instance, a *Args, fn func(tx *core.Transaction) error) (core.SnapshotID, error) {
	l, err := a.lake(in)
	if err != nil {
		return 0, err
	}
	author, hasAuthor, err := a.namedStr("author")
	if err != nil {
		return 0, err
	}
	msg, hasMsg, err := a.namedStr("commit_message")
	if err != nil {
		return 0, err
	}
	return l.Catalog.Commit(ctx, func(tx *core.Transaction) error {
		if hasAuthor {
			tx.SetAuthor(author)
		}
		if hasMsg {
			tx.SetCommitMessage(msg)
		}
		return fn(tx)
	})
}

// schemaID resolves a schema name in a transaction.
func schemaID(tx *core.Transaction, name string) (core.SchemaID, error) {
	s, ok := tx.View().SchemaByName(name)
	if !ok {
		return 0, errorf(core.NotFound, "schema %s does not exist", quote(name))
	}
	return s.ID, nil
}

// tableOf resolves a table reference in a transaction.
func tableOf(tx *core.Transaction, ref string) (core.Table, error) {
	schema, table, err := parseQualified(ref)
	if err != nil {
		return core.Table{}, err
	}
	t, ok := tx.View().TableByName(schema, table)
	if !ok {
		return core.Table{}, errorf(core.NotFound, "table %s.%s does not exist", quote(schema), quote(table))
	}
	return t, nil
}

// topColumns lists a table's top-level columns in order.
func topColumns(s *core.CatalogView, table core.TableID) []core.Column {
	var out []core.Column
	for _, c := range s.Columns(table) {
		if c.Parent == nil {
			out = append(out, c)
		}
	}
	return out
}

func writeFunction(name, doc string, params []Param, named []Param, columns []Column, check func(a *Args) error,
	run func(ctx context.Context, in *Instance, a *Args) ([]any, error)) *Function {
	f := &Function{
		Name:    name,
		Doc:     doc,
		Params:  append([]Param{{Name: "lake", Type: TypeVarchar, Doc: "an attached lake (read-write)"}}, params...),
		Named:   append(append([]Param(nil), named...), commitParams...),
		Columns: columns,
		check: func(a *Args) error {
			if _, err := a.str(0); err != nil {
				return err
			}
			for _, p := range commitParams {
				if _, _, err := a.namedStr(p.Name); err != nil {
					return err
				}
			}
			if check != nil {
				return check(a)
			}
			return nil
		},
	}
	f.run = func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
		row, err := run(ctx, in, a)
		if err != nil {
			return nil, err
		}
		return &Table{Columns: f.Columns, Rows: [][]any{row}}, nil
	}
	return f
}

func strParam(name, doc string) Param { return Param{Name: name, Type: TypeVarchar, Doc: doc} }

func writeFunctions() []*Function {
	tableParam := strParam("table", "table or schema.table (schema main by default)")
	return []*Function{
		writeFunction("moraine_create_schema", "Create a schema.",
			[]Param{strParam("schema", "the schema name")}, nil,
			[]Column{{"snapshot_id", TypeUbigint}, {"schema_id", TypeUbigint}},
			func(a *Args) error { _, err := a.str(1); return err },
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				name, _ := a.str(1)
				var id core.SchemaID
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) (err error) {
					id, err = tx.CreateSchema(name)
					return err
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(id)}, nil
			}),
		writeFunction("moraine_drop_schema", "Drop a schema (cascade := true drops its tables and views too).",
			[]Param{strParam("schema", "the schema name")}, []Param{{Name: "cascade", Type: TypeBoolean, Doc: "drop the schema's tables and views too"}},
			[]Column{{"snapshot_id", TypeUbigint}},
			func(a *Args) error {
				if _, err := a.str(1); err != nil {
					return err
				}
				_, err := a.namedBool("cascade")
				return err
			},
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				name, _ := a.str(1)
				cascade, _ := a.namedBool("cascade")
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					id, err := schemaID(tx, name)
					if err != nil {
						return err
					}
					return tx.DropSchema(id, cascade)
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap)}, nil
			}),
		writeFunction("moraine_create_table", "Create a table: columns is 'name TYPE [NOT NULL], ...'.",
			[]Param{tableParam, strParam("columns", "the columns: 'name TYPE [NOT NULL], ...'")}, nil,
			[]Column{{"snapshot_id", TypeUbigint}, {"table_id", TypeUbigint}},
			func(a *Args) error {
				ref, err := a.str(1)
				if err != nil {
					return err
				}
				if _, _, err := parseQualified(ref); err != nil {
					return err
				}
				spec, err := a.str(2)
				if err != nil {
					return err
				}
				_, err = parseColumns(spec)
				return err
			},
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				spec, _ := a.str(2)
				schema, table, _ := parseQualified(ref)
				defs, err := parseColumns(spec)
				if err != nil {
					return nil, err
				}
				var id core.TableID
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					sid, err := schemaID(tx, schema)
					if err != nil {
						return err
					}
					id, err = tx.CreateTable(sid, table, defs)
					return err
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(id)}, nil
			}),
		writeFunction("moraine_add_column", "Add a column to a table: column is 'name TYPE [NOT NULL]'.",
			[]Param{tableParam, strParam("column", "the column: 'name TYPE [NOT NULL]'")}, nil,
			[]Column{{"snapshot_id", TypeUbigint}, {"column_id", TypeUbigint}},
			func(a *Args) error {
				spec, err := a.str(2)
				if err != nil {
					return err
				}
				_, err = parseColumn(spec)
				return err
			},
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				spec, _ := a.str(2)
				def, err := parseColumn(spec)
				if err != nil {
					return nil, err
				}
				var id core.ColumnID
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					id, err = tx.AddColumn(t.ID, def)
					return err
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(id)}, nil
			}),
		writeFunction("moraine_drop_table", "Drop a table.",
			[]Param{tableParam}, nil,
			[]Column{{"snapshot_id", TypeUbigint}},
			func(a *Args) error { _, err := a.str(1); return err },
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					return tx.DropTable(t.ID)
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap)}, nil
			}),
		writeFunction("moraine_insert", "Insert rows into a table as inlined data: rows is a list of structs (by column name) or of lists (by position).",
			[]Param{tableParam, {Name: "rows", Type: TypeAny, Doc: "[{'col': value, ...}, ...] or [[value, ...], ...]"}}, nil,
			[]Column{{"snapshot_id", TypeUbigint}, {"first_row_id", TypeUbigint}, {"row_count", TypeUbigint}},
			func(a *Args) error {
				if _, err := a.str(1); err != nil {
					return err
				}
				rows := a.Pos[2]
				if rows.Type != TypeList || len(rows.Children) == 0 {
					return errorf(core.InvalidArgument, "rows must be a non-empty list of structs or lists, got %s", rows.SQL())
				}
				return nil
			},
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				var first uint64
				n := len(a.Pos[2].Children)
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					columns := topColumns(tx.View(), t.ID)
					rows, err := convertRows(columns, a.Pos[2].Children)
					if err != nil {
						return err
					}
					if first, err = tx.InlineInsert(t.ID, rows); err != nil {
						return err
					}
					return updateColumnStats(tx, t.ID, columns, rows)
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), first, uint64(n)}, nil
			}),
		writeFunction("moraine_delete", "Delete inlined rows by row id.",
			[]Param{tableParam, {Name: "row_ids", Type: TypeAny, Doc: "a list of row ids"}}, nil,
			[]Column{{"snapshot_id", TypeUbigint}, {"row_count", TypeUbigint}},
			func(a *Args) error { _, err := rowIDs(a.Pos[2]); return err },
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				ids, err := rowIDs(a.Pos[2])
				if err != nil {
					return nil, err
				}
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					return tx.InlineDelete(t.ID, ids)
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(len(ids))}, nil
			}),
		writeFunction("moraine_register_data_file", "Register a data file the caller wrote (metadata only: the file is not read).",
			[]Param{tableParam, strParam("path", "the file's path (relative to the table's data path)")},
			[]Param{{Name: "record_count", Type: TypeBigint}, {Name: "file_size_bytes", Type: TypeBigint}, {Name: "footer_size", Type: TypeBigint}},
			[]Column{{"snapshot_id", TypeUbigint}, {"data_file_id", TypeUbigint}},
			func(a *Args) error { return checkU64s(a, "record_count", "file_size_bytes", "footer_size") },
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				path, err := a.str(2)
				if err != nil {
					return nil, err
				}
				records, _, _ := a.namedU64("record_count")
				size, _, _ := a.namedU64("file_size_bytes")
				footer, _, _ := a.namedU64("footer_size")
				var id core.DataFileID
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					id, err = tx.RegisterDataFile(core.DataFileDef{TableID: t.ID, Path: path, PathIsRelative: true,
						RecordCount: records, FileSizeBytes: size, FooterSize: footer})
					return err
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(id)}, nil
			}),
		writeFunction("moraine_register_delete_file", "Register a delete file for one data file (metadata only).",
			[]Param{tableParam, {Name: "data_file_id", Type: TypeBigint}, strParam("path", "the delete file's path")},
			[]Param{{Name: "delete_count", Type: TypeBigint}, {Name: "file_size_bytes", Type: TypeBigint}, {Name: "footer_size", Type: TypeBigint}},
			[]Column{{"snapshot_id", TypeUbigint}, {"delete_file_id", TypeUbigint}},
			func(a *Args) error {
				if _, ok := asU64(a.Pos[2]); !ok {
					return errorf(core.InvalidArgument, "data_file_id must be a non-negative integer, got %s", a.Pos[2].SQL())
				}
				return checkU64s(a, "delete_count", "file_size_bytes", "footer_size")
			},
			func(ctx context.Context, in *Instance, a *Args) ([]any, error) {
				ref, _ := a.str(1)
				file, _ := asU64(a.Pos[2])
				path, err := a.str(3)
				if err != nil {
					return nil, err
				}
				count, _, _ := a.namedU64("delete_count")
				size, _, _ := a.namedU64("file_size_bytes")
				footer, _, _ := a.namedU64("footer_size")
				var id core.DeleteFileID
				snap, err := commit(ctx, in, a, func(tx *core.Transaction) error {
					t, err := tableOf(tx, ref)
					if err != nil {
						return err
					}
					id, err = tx.RegisterDeleteFile(core.DeleteFileDef{TableID: t.ID, DataFileID: core.DataFileID(file), Path: path,
						PathIsRelative: true, DeleteCount: count, FileSizeBytes: size, FooterSize: footer})
					return err
				})
				if err != nil {
					return nil, err
				}
				return []any{uint64(snap), uint64(id)}, nil
			}),
	}
}

func checkU64s(a *Args, names ...string) error {
	for _, n := range names {
		if _, _, err := a.namedU64(n); err != nil {
			return err
		}
	}
	return nil
}

func rowIDs(v Value) ([]uint64, error) {
	if v.Type != TypeList || len(v.Children) == 0 {
		return nil, errorf(core.InvalidArgument, "row_ids must be a non-empty list of row ids, got %s", v.SQL())
	}
	out := make([]uint64, len(v.Children))
	for i, c := range v.Children {
		n, ok := asU64(c)
		if !ok {
			return nil, errorf(core.InvalidArgument, "row_ids[%d] is %s, not a row id", i+1, c.SQL())
		}
		out[i] = n
	}
	return out, nil
}

// convertRows turns moraine_insert's rows into core values in column
// order. A struct row names its columns (any case; missing ones are NULL),
// a list row gives every column in order.
func convertRows(columns []core.Column, rows []Value) ([][]core.Value, error) {
	out := make([][]core.Value, len(rows))
	for r, row := range rows {
		vals := make([]Value, len(columns))
		if row.Type == TypeStruct && unnamed(row) {
			row.Type = TypeList // a row(...) value: by position
		}
		switch row.Type {
		case TypeStruct:
			for i := range vals {
				vals[i] = Value{Type: TypeNull}
			}
			for f, name := range row.Names {
				idx := -1
				for i, c := range columns {
					if strings.EqualFold(c.Name, name) {
						idx = i
						break
					}
				}
				if idx < 0 {
					return nil, errorf(core.InvalidArgument, "row %d: the table has no column %s", r+1, quote(name))
				}
				vals[idx] = row.Children[f]
			}
		case TypeList:
			if len(row.Children) != len(columns) {
				return nil, errorf(core.InvalidArgument, "row %d has %d values, the table has %d columns", r+1, len(row.Children), len(columns))
			}
			copy(vals, row.Children)
		default:
			return nil, errorf(core.InvalidArgument, "row %d is %s; each row must be a struct or a list", r+1, row.SQL())
		}
		out[r] = make([]core.Value, len(columns))
		for i, c := range columns {
			v, err := toCell(c, vals[i])
			if err != nil {
				return nil, withContext(err, "row %d, column %s (%s)", r+1, quote(c.Name), c.Type)
			}
			out[r][i] = v
		}
	}
	return out, nil
}

// unnamed reports a struct without field names (DuckDB's (1, 'a') rows).
func unnamed(v Value) bool {
	for _, n := range v.Names {
		if n != "" {
			return false
		}
	}
	return true
}

func intRange(t string) (lo, hi int64, ok bool) {
	switch t {
	case "int8":
		return math.MinInt8, math.MaxInt8, true
	case "int16":
		return math.MinInt16, math.MaxInt16, true
	case "int32":
		return math.MinInt32, math.MaxInt32, true
	case "int64":
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

func uintMax(t string) (uint64, bool) {
	switch t {
	case "uint8":
		return math.MaxUint8, true
	case "uint16":
		return math.MaxUint16, true
	case "uint32":
		return math.MaxUint32, true
	case "uint64":
		return math.MaxUint64, true
	}
	return 0, false
}

func notAccepted(v Value, what string) error {
	return errorf(core.InvalidArgument, "%s (%s) is not %s", v.SQL(), v.typeDesc(), what)
}

// toCell converts one value for a column of DuckLake type c.Type.
func toCell(c core.Column, v Value) (core.Value, error) {
	if v.IsNull() {
		if !c.NullsAllowed {
			return core.Value{}, errorf(core.Constraint, "NULL in a NOT NULL column")
		}
		return core.Value{}, nil
	}
	if v.Type == TypeList || v.Type == TypeStruct {
		return core.Value{}, errorf(core.Unsupported, "nested values are not supported (got %s)", v.SQL())
	}
	t := strings.ToLower(c.Type)
	if lo, hi, ok := intRange(t); ok {
		var n int64
		switch v.Type {
		case TypeBigint:
			n = v.Int
		case TypeUbigint:
			if v.Uint > math.MaxInt64 {
				return core.Value{}, notAccepted(v, "in range")
			}
			n = int64(v.Uint)
		case TypeDouble:
			if v.Double != math.Trunc(v.Double) || v.Double < math.MinInt64 || v.Double >= math.MaxInt64 {
				return core.Value{}, notAccepted(v, "an integer")
			}
			n = int64(v.Double)
		case TypeVarchar, TypeOther:
			x, err := strconv.ParseInt(strings.TrimSpace(v.Str), 10, 64)
			if err != nil {
				return core.Value{}, notAccepted(v, "an integer")
			}
			n = x
		default:
			return core.Value{}, notAccepted(v, "an integer")
		}
		if n < lo || n > hi {
			return core.Value{}, notAccepted(v, "in range for "+t)
		}
		return core.Value{Int: &n}, nil
	}
	if hi, ok := uintMax(t); ok {
		var n uint64
		switch v.Type {
		case TypeBigint:
			if v.Int < 0 {
				return core.Value{}, notAccepted(v, "in range for "+t)
			}
			n = uint64(v.Int)
		case TypeUbigint:
			n = v.Uint
		default:
			x, ok := asU64(v)
			if !ok {
				return core.Value{}, notAccepted(v, "an unsigned integer")
			}
			n = x
		}
		if n > hi {
			return core.Value{}, notAccepted(v, "in range for "+t)
		}
		return core.Value{Uint: &n}, nil
	}
	switch t {
	case "float32", "float64":
		var f float64
		switch v.Type {
		case TypeDouble:
			f = v.Double
		case TypeBigint:
			f = float64(v.Int)
		case TypeUbigint:
			f = float64(v.Uint)
		case TypeVarchar, TypeOther:
			x, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
			if err != nil {
				return core.Value{}, notAccepted(v, "a number")
			}
			f = x
		default:
			return core.Value{}, notAccepted(v, "a number")
		}
		if t == "float32" {
			f = float64(float32(f))
		}
		return core.Value{Float: &f}, nil
	case "boolean":
		b, ok := attach.ParseBool(v.Scalar())
		if !ok || v.Type == TypeDouble {
			return core.Value{}, notAccepted(v, "a boolean")
		}
		return core.Value{Bool: &b}, nil
	case "blob":
		switch v.Type {
		case TypeBlob:
			b := append([]byte{}, v.Bytes...)
			return core.Value{Bytes: b}, nil
		case TypeVarchar:
			return core.Value{Bytes: []byte(v.Str)}, nil
		}
		return core.Value{}, notAccepted(v, "a blob")
	}
	// Every other type is kept as its text.
	var s string
	switch v.Type {
	case TypeVarchar, TypeOther:
		s = v.Str
	case TypeBigint:
		s = strconv.FormatInt(v.Int, 10)
	case TypeUbigint:
		s = strconv.FormatUint(v.Uint, 10)
	case TypeDouble:
		s = strconv.FormatFloat(v.Double, 'g', -1, 64)
	case TypeBoolean:
		s = strconv.FormatBool(v.Bool)
	default:
		return core.Value{}, notAccepted(v, "text")
	}
	return core.Value{String: &s}, nil
}

// updateColumnStats folds inserted rows into ducklake_table_column_stats:
// contains_null, contains_nan, and min/max (as text) for scalar columns.
func updateColumnStats(tx *core.Transaction, table core.TableID, columns []core.Column, rows [][]core.Value) error {
	have := map[core.ColumnID]core.TableColumnStats{}
	for _, s := range tx.View().TableColumnStats(table) {
		have[s.ColumnID] = s
	}
	for i, c := range columns {
		st, ok := have[c.ID]
		if !ok {
			st = core.TableColumnStats{TableID: table, ColumnID: c.ID}
		}
		containsNull := st.ContainsNull != nil && *st.ContainsNull
		for _, row := range rows {
			v := row[i]
			if v.IsNull() {
				containsNull = true
				continue
			}
			if v.Float != nil && math.IsNaN(*v.Float) {
				t := true
				st.ContainsNaN = &t
				continue
			}
			if v.Float != nil {
				f := false
				if st.ContainsNaN == nil {
					st.ContainsNaN = &f
				}
			}
			text, less, ok := statText(v)
			if !ok {
				continue
			}
			if st.MinValue == nil || less(text, *st.MinValue) {
				s := text
				st.MinValue = &s
			}
			if st.MaxValue == nil || less(*st.MaxValue, text) {
				s := text
				st.MaxValue = &s
			}
		}
		st.ContainsNull = &containsNull
		if err := tx.UpdateColumnStats(st); err != nil {
			return err
		}
	}
	return nil
}

// statText renders a value for min/max and returns how such texts compare.
func statText(v core.Value) (string, func(a, b string) bool, bool) {
	switch {
	case v.Int != nil:
		return strconv.FormatInt(*v.Int, 10), func(a, b string) bool {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return x < y
		}, true
	case v.Uint != nil:
		return strconv.FormatUint(*v.Uint, 10), func(a, b string) bool {
			x, _ := strconv.ParseUint(a, 10, 64)
			y, _ := strconv.ParseUint(b, 10, 64)
			return x < y
		}, true
	case v.Float != nil:
		return strconv.FormatFloat(*v.Float, 'g', -1, 64), func(a, b string) bool {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return x < y
		}, true
	case v.Bool != nil:
		return strconv.FormatBool(*v.Bool), func(a, b string) bool { return a == "false" && b == "true" }, true
	case v.String != nil:
		return *v.String, func(a, b string) bool { return a < b }, true
	}
	return "", nil, false
}
