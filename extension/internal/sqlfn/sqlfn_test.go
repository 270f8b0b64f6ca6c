package sqlfn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
)

var ctx = context.Background()

func vstr(s string) Value     { return Value{Type: TypeVarchar, Str: s} }
func vint(n int64) Value      { return Value{Type: TypeBigint, Int: n} }
func vbool(b bool) Value      { return Value{Type: TypeBoolean, Bool: b} }
func vlist(vs ...Value) Value { return Value{Type: TypeList, Children: vs} }

func vstruct(kv ...any) Value {
	v := Value{Type: TypeStruct}
	for i := 0; i < len(kv); i += 2 {
		v.Names = append(v.Names, kv[i].(string))
		v.Children = append(v.Children, kv[i+1].(Value))
	}
	return v
}

// call binds and executes a function by name.
func call(t *testing.T, in *Instance, name string, pos []Value, named map[string]Value) (*Table, error) {
	t.Helper()
	f := Lookup(name)
	if f == nil {
		t.Fatalf("no function %s", name)
	}
	b, err := f.Bind(ctx, in, pos, named)
	if err != nil {
		return nil, err
	}
	return b.Execute(ctx)
}

func mustCall(t *testing.T, in *Instance, name string, pos []Value, named map[string]Value) *Table {
	t.Helper()
	tb, err := call(t, in, name, pos, named)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tb
}

func wantErr(t *testing.T, err error, kind core.Kind, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v %q", kind, substr)
	}
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %v (kind %v), want kind %v containing %q", err, core.KindOf(err), kind, substr)
	}
}

func newLake(t *testing.T, in *Instance, name string) {
	t.Helper()
	uri := fmt.Sprintf("memory://sqlfn-%s-%s", t.Name(), name)
	mustCall(t, in, "moraine_attach", []Value{vstr(name), vstr(uri)}, nil)
	t.Cleanup(func() { in.Close(ctx) })
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Functions() {
		if seen[f.Name] {
			t.Errorf("%s registered twice", f.Name)
		}
		seen[f.Name] = true
		if !strings.HasPrefix(f.Name, "moraine_") || f.Doc == "" || f.run == nil {
			t.Errorf("%s: bad registration", f.Name)
		}
		for _, p := range append(append([]Param{}, f.Params...), f.Named...) {
			if p.Name != strings.ToLower(p.Name) || p.Name == "" {
				t.Errorf("%s: parameter %q", f.Name, p.Name)
			}
			if p.Type == TypeNull || p.Type == TypeAbsent || p.Type == TypeList || p.Type == TypeStruct || p.Type == TypeOther {
				t.Errorf("%s: parameter %s has value-only type %s", f.Name, p.Name, p.Type)
			}
		}
		if f.Signature() == "" {
			t.Errorf("%s: no signature", f.Name)
		}
	}
	for _, want := range []string{"moraine_attach", "moraine_detach", "moraine_lakes", "moraine_ducklake_snapshot",
		"moraine_ducklake_snapshot_changes", "moraine_ducklake_schema", "moraine_ducklake_table", "moraine_ducklake_column",
		"moraine_ducklake_data_file", "moraine_ducklake_delete_file", "moraine_ducklake_table_stats",
		"moraine_ducklake_table_column_stats", "moraine_ducklake_schema_versions", "moraine_ducklake_inlined_data",
		"moraine_create_schema", "moraine_drop_schema", "moraine_create_table", "moraine_drop_table", "moraine_insert"} {
		if !seen[want] {
			t.Errorf("no %s", want)
		}
	}
}

func TestBindChecksArguments(t *testing.T) {
	in := NewInstance()
	defer in.Close(ctx)
	f := Lookup("moraine_detach")
	_, err := f.Bind(ctx, in, nil, nil)
	wantErr(t, err, core.InvalidArgument, "takes 1 positional arguments (name), got 0")
	_, err = f.Bind(ctx, in, []Value{{Type: TypeNull}}, nil)
	wantErr(t, err, core.InvalidArgument, "the argument name is NULL")
	_, err = f.Bind(ctx, in, []Value{vstr("x")}, map[string]Value{"nope": vint(1)})
	wantErr(t, err, core.InvalidArgument, `no named parameter "nope"`)
	_, err = Lookup("moraine_attach").Bind(ctx, in, []Value{vint(1), vstr("memory://x")}, nil)
	wantErr(t, err, core.InvalidArgument, "name must be a string, got 1")
	// An absent named parameter is not given.
	if _, err := Lookup("moraine_attach").Bind(ctx, in, []Value{vstr("x"), vstr("memory://x")}, map[string]Value{"read_only": {Type: TypeAbsent}}); err != nil {
		t.Fatal(err)
	}
	// Bind never attaches.
	if len(in.Lakes()) != 0 {
		t.Fatal("bind attached a lake")
	}
}

func TestPanicsBecomeInternalErrors(t *testing.T) {
	f := &Function{Name: "boom", Columns: []Column{{"x", TypeBigint}},
		run: func(context.Context, *Instance, *Args) (*Table, error) { panic("kaboom") }}
	b, err := f.Bind(ctx, NewInstance(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Execute(ctx)
	wantErr(t, err, core.Internal, "panic: kaboom")
}

func TestAttachLakesDetach(t *testing.T) {
	in := NewInstance()
	newLake(t, in, "w")
	tb := mustCall(t, in, "moraine_lakes", nil, nil)
	if len(tb.Rows) != 1 || tb.Rows[0][0] != "w" || tb.Rows[0][2] != "writer" {
		t.Fatalf("lakes: %v", tb.Rows)
	}
	_, err := call(t, in, "moraine_attach", []Value{vstr("W"), vstr("memory://other")}, nil)
	wantErr(t, err, core.AlreadyExists, "a lake named 'W' is already attached")
	_, err = call(t, in, "moraine_attach", []Value{vstr("x"), vstr("memory://other")}, map[string]Value{"checkpoint": vstr("nope")})
	wantErr(t, err, core.InvalidArgument, "attach option CHECKPOINT: 'nope' is not accepted")
	mustCall(t, in, "moraine_detach", []Value{vstr("w")}, nil)
	_, err = call(t, in, "moraine_detach", []Value{vstr("w")}, nil)
	wantErr(t, err, core.NotFound, "no lake named 'w' is attached (attached: none)")
	in.Close(ctx)
	_, err = call(t, in, "moraine_attach", []Value{vstr("w"), vstr("memory://after-close")}, nil)
	wantErr(t, err, core.InvalidArgument, "the database is closing")
}

func TestWriteAndReadBack(t *testing.T) {
	in := NewInstance()
	newLake(t, in, "l")
	l := []Value{vstr("l")}
	mustCall(t, in, "moraine_create_table", append(l, vstr("t"), vstr("id BIGINT NOT NULL, name VARCHAR, ok BOOLEAN")), nil)
	tb := mustCall(t, in, "moraine_insert", append(l, vstr("t"), vlist(
		vstruct("id", vint(1), "name", vstr("a"), "ok", vbool(true)),
		vstruct("", vint(2), "", Value{Type: TypeNull}, "", vstr("no")),
	)), map[string]Value{"author": vstr("me")})
	if fmt.Sprint(tb.Rows) != "[[2 0 2]]" {
		t.Fatalf("insert: %v", tb.Rows)
	}
	tb = mustCall(t, in, "moraine_ducklake_inlined_data", append(l, vstr("main.t")), nil)
	var cols []string
	for _, c := range tb.Columns {
		cols = append(cols, c.Name+" "+c.Type.String())
	}
	if fmt.Sprint(cols) != "[row_id UBIGINT begin_snapshot UBIGINT end_snapshot UBIGINT id BIGINT name VARCHAR ok BOOLEAN]" {
		t.Fatalf("columns %v", cols)
	}
	if fmt.Sprint(tb.Rows) != "[[0 2 <nil> 1 a true] [1 2 <nil> 2 <nil> false]]" {
		t.Fatalf("rows %v", tb.Rows)
	}
	tb = mustCall(t, in, "moraine_ducklake_snapshot_changes", l, nil)
	if len(tb.Rows) != 3 || tb.Rows[2][2] != "me" {
		t.Fatalf("changes %v", tb.Rows)
	}
	tb = mustCall(t, in, "moraine_ducklake_table_column_stats", l, nil)
	if fmt.Sprint(tb.Rows) != "[[1 2 false <nil> 1 2 <nil>] [1 3 true <nil> a a <nil>] [1 4 false <nil> false true <nil>]]" {
		t.Fatalf("column stats %v", tb.Rows)
	}
	// Time travel to 1: the table, no rows.
	tb = mustCall(t, in, "moraine_ducklake_inlined_data", append(l, vint(1)), map[string]Value{"snapshot": vint(1)})
	if len(tb.Rows) != 0 || len(tb.Columns) != 6 {
		t.Fatalf("at 1: %v %v", tb.Columns, tb.Rows)
	}
	_, err := call(t, in, "moraine_insert", append(l, vstr("t"), vlist(vstruct("name", vstr("x")))), nil)
	wantErr(t, err, core.Constraint, "row 1, column 'id' (int64): NULL in a NOT NULL column")
	_, err = call(t, in, "moraine_ducklake_table", l, map[string]Value{"snapshot": vstr("x")})
	wantErr(t, err, core.InvalidArgument, "snapshot must be a non-negative integer, got 'x'")
}

// A bound reading call executed again reads again; one whose columns
// changed in between is refused.
func TestExecuteAgain(t *testing.T) {
	in := NewInstance()
	newLake(t, in, "l")
	l := []Value{vstr("l")}
	mustCall(t, in, "moraine_create_table", append(l, vstr("t"), vstr("id BIGINT")), nil)
	b, err := Lookup("moraine_ducklake_snapshot").Bind(ctx, in, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := b.Execute(ctx)
	mustCall(t, in, "moraine_create_schema", append(l, vstr("s")), nil)
	tb2, err := b.Execute(ctx)
	if err != nil || len(tb2.Rows) != len(tb.Rows)+1 {
		t.Fatalf("again: %v %v", tb2, err)
	}
	b, err = Lookup("moraine_ducklake_inlined_data").Bind(ctx, in, append(l, vstr("t")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Execute(ctx); err != nil {
		t.Fatal(err)
	}
	mustCall(t, in, "moraine_add_column", append(l, vstr("t"), vstr("c VARCHAR")), nil)
	_, err = b.Execute(ctx)
	wantErr(t, err, core.Constraint, "the result columns changed since the query was bound")
}

func TestParseQualified(t *testing.T) {
	for in, want := range map[string]string{
		"t": "main|t", "s.t": "s|t", `"a.b"."c"`: "a.b|c", `"x""y".z`: `x"y|z`,
	} {
		s, tb, err := parseQualified(in)
		if err != nil || s+"|"+tb != want {
			t.Errorf("parseQualified(%q) = %q %q %v, want %s", in, s, tb, err, want)
		}
	}
	for _, bad := range []string{"", "a.b.c", `"open`, "a..b", ".t"} {
		if _, _, err := parseQualified(bad); err == nil {
			t.Errorf("parseQualified(%q) accepted", bad)
		}
	}
}

func TestParseColumns(t *testing.T) {
	defs, err := parseColumns(`id BIGINT NOT NULL, "my col" decimal(10, 2), t timestamp with time zone NULL, n numeric, f FLOAT`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range defs {
		got = append(got, fmt.Sprintf("%s:%s:%v", d.Name, d.Type, *d.NullsAllowed))
	}
	if fmt.Sprint(got) != "[id:int64:false my col:decimal(10,2):true t:timestamptz:true n:decimal(18,3):true f:float32:true]" {
		t.Fatalf("%v", got)
	}
	for spec, want := range map[string]string{
		"id":                  "expected 'name TYPE [NOT NULL]'",
		"id WIDGET":           "unknown type 'WIDGET'",
		"id INT[]":            "nested types are not supported",
		"id STRUCT(a INT)":    "nested types are not supported",
		"a INT, A INT":        "column 'A' appears twice",
		"d DECIMAL(40,2)":     "DECIMAL width must be 1 to 38",
		`"unterminated INT`:   "unterminated quote",
		"  ":                  "the column list is empty",
		"a INT,":              "an empty column",
		"a DECIMAL(5,2), b X": "unknown type 'X'",
	} {
		if _, err := parseColumns(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseColumns(%q) = %v, want %q", spec, err, want)
		}
	}
}

func TestToCellAndBack(t *testing.T) {
	col := func(typ string) core.Column { return core.Column{Name: "c", Type: typ, NullsAllowed: true} }
	for _, tc := range []struct {
		typ  string
		in   Value
		want string // fromCell(toCell(in)) rendered, or "error: ..."
	}{
		{"int8", vint(-128), "-128"},
		{"int8", vint(128), "error: 128 (BIGINT) is not in range for int8"},
		{"int32", vstr("42"), "42"},
		{"int64", Value{Type: TypeDouble, Double: 3}, "3"},
		{"int64", Value{Type: TypeDouble, Double: 3.5}, "error: 3.5 (DOUBLE) is not an integer"},
		{"int64", Value{Type: TypeUbigint, Uint: math.MaxUint64}, "error: 18446744073709551615 (UBIGINT) is not in range"},
		{"uint8", vint(-1), "error: -1 (BIGINT) is not in range for uint8"},
		{"uint64", Value{Type: TypeUbigint, Uint: math.MaxUint64}, "18446744073709551615"},
		{"float32", Value{Type: TypeDouble, Double: 0.1}, fmt.Sprint(float64(float32(0.1)))},
		{"float64", Value{Type: TypeOther, TypeName: "DECIMAL", Str: "1.25"}, "1.25"},
		{"float64", vstr("x"), "error: 'x' (VARCHAR) is not a number"},
		{"boolean", vstr("yes"), "true"},
		{"boolean", vint(2), "error: 2 (BIGINT) is not a boolean"},
		{"varchar", vint(7), "7"},
		{"varchar", Value{Type: TypeOther, TypeName: "DATE", Str: "2024-01-01"}, "2024-01-01"},
		{"blob", Value{Type: TypeBlob, Bytes: []byte{0, 1}}, "[0 1]"},
		{"blob", vint(1), "error: 1 (BIGINT) is not a blob"},
		{"date", vstr("2024-01-01"), "2024-01-01"},
		{"int64", vlist(vint(1)), "error: nested values are not supported"},
		{"int64", Value{Type: TypeNull}, "<nil>"},
	} {
		v, err := toCell(col(tc.typ), tc.in)
		got := ""
		if err != nil {
			got = "error: " + strings.TrimPrefix(err.Error(), core.KindOf(err).String()+": ")
		} else {
			cell, err := fromCell(v, outType(tc.typ))
			if err != nil {
				got = "fromCell error: " + err.Error()
			} else {
				got = fmt.Sprint(cell)
			}
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s <- %s: got %q, want %q", tc.typ, tc.in.SQL(), got, tc.want)
		}
	}
	if _, err := toCell(core.Column{Name: "c", Type: "int64"}, Value{Type: TypeNull}); !errors.Is(err, core.Constraint) {
		t.Errorf("NULL in NOT NULL: %v", err)
	}
}

func TestValueRendering(t *testing.T) {
	v := vlist(vstruct("a", vint(1), "b", vstr("it's")), Value{Type: TypeBlob, Bytes: []byte{0xab}},
		Value{Type: TypeOther, TypeName: "DATE", Str: "2024-01-01"}, Value{Type: TypeNull}, vbool(true),
		Value{Type: TypeDouble, Double: 1.5}, Value{Type: TypeUbigint, Uint: 3})
	want := `[{'a': 1, 'b': 'it''s'}, '\xab'::BLOB, '2024-01-01'::DATE, NULL, true, 1.5, 3]`
	if got := v.SQL(); got != want {
		t.Fatalf("SQL() = %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		v    Value
		want any
	}{
		{Value{Type: TypeOther, TypeName: "DECIMAL", Str: "1.5"}, 1.5},
		{Value{Type: TypeOther, TypeName: "HUGEINT", Str: "12"}, int64(12)},
		{Value{Type: TypeOther, TypeName: "DATE", Str: "2024-01-01"}, "2024-01-01"},
		{Value{Type: TypeAbsent}, nil},
		{vint(-4), int64(-4)},
	} {
		if got := tc.v.Scalar(); got != tc.want {
			t.Errorf("Scalar(%s) = %#v, want %#v", tc.v.SQL(), got, tc.want)
		}
	}
}

func TestTableCheck(t *testing.T) {
	tb := &Table{Columns: []Column{{"a", TypeBigint}}, Rows: [][]any{{int64(1)}, {nil}, {"x"}}}
	if err := tb.check(); err == nil || !strings.Contains(err.Error(), "row 2 column a (BIGINT) holds string") {
		t.Fatalf("check: %v", err)
	}
	tb.Rows = [][]any{{int64(1), int64(2)}}
	if err := tb.check(); err == nil {
		t.Fatal("a row too wide passed")
	}
}

// extension/README.md documents every function and every attach option.
func TestREADMEDocumentsEverything(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, f := range Functions() {
		name := f.Name
		if table, ok := strings.CutPrefix(name, "moraine_ducklake_"); ok && table != "inlined_data" {
			// Listed by table name in the metadata section.
			if !regexp.MustCompile(`\b` + table + `\b`).MatchString(readme) {
				t.Errorf("extension/README.md does not list the metadata table %s", table)
			}
			continue
		}
		if !strings.Contains(readme, "`"+name+"(") {
			t.Errorf("extension/README.md does not document %s", name)
		}
		for _, p := range f.Named {
			if !strings.Contains(readme, p.Name) {
				t.Errorf("extension/README.md does not mention %s's parameter %s", name, p.Name)
			}
		}
	}
	for _, o := range attach.Known() {
		if !strings.Contains(readme, "`"+strings.ToLower(o)+"`") {
			t.Errorf("extension/README.md does not document the attach option %s", o)
		}
	}
}
