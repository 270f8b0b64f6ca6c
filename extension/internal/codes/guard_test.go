package codes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// exportShaped has the shape of an export of the C ABI: Guard deferred
// first, the code and message taken from the error Guard hands over.
func exportShaped(panicWith func()) (rc Code, msg string, set bool) {
	defer Guard(func(err error) { rc, msg, set = Of(err), Message(err), true })
	if panicWith != nil {
		panicWith()
	}
	return OK, "", false
}

// A panic inside an export is recovered into INTERNAL with a message naming
// it and the stack; without one Guard does nothing. Were recover removed
// from Guard, the panics below would end the test binary.
func TestGuardRecoversPanicsIntoInternal(t *testing.T) {
	cases := []struct {
		name  string
		panic func()
		want  []string
	}{
		{"value", func() { panic("boom") }, []string{"panic in the moraine library: boom"}},
		{"error", func() { panic(Recovered("inner")) }, []string{"panic in the moraine library: internal error: panic in the moraine library: inner"}},
		{"runtime error", func() {
			var m map[string]int
			m["x"] = 1
		}, []string{"panic in the moraine library: assignment to entry in nil map"}},
		{"nil dereference", func() {
			var p *struct{ x int }
			_ = p.x
		}, []string{"panic in the moraine library: runtime error: invalid memory address or nil pointer dereference"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, msg, set := exportShaped(c.panic)
			if !set || rc != Internal {
				t.Fatalf("code %s (set %v), want INTERNAL", rc, set)
			}
			for _, w := range append(c.want, "goroutine ", "exportShaped") { // the stack is in the message
				if !strings.Contains(msg, w) {
					t.Fatalf("message %q lacks %q", msg, w)
				}
			}
		})
	}
	if rc, msg, set := exportShaped(nil); set || rc != OK || msg != "" {
		t.Fatalf("no panic: code %s, message %q, set called %v", rc, msg, set)
	}
}

// Every function package extension/cabi exports to C defers Guard as its first
// statement (so no statement of it runs unguarded), and every export with
// an error out-parameter (cerr) routes the recovered error into it and its
// return code: rc = setError(cerr, err).
func TestEveryExportDefersGuard(t *testing.T) {
	dir := filepath.Join("..", "..", "cabi")
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var exports []string
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		codesName := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/moraine-go/moraine/extension/internal/codes" {
				codesName = "codes"
				if imp.Name != nil {
					codesName = imp.Name.Name
				}
			}
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			exported := ""
			for _, c := range fn.Doc.List {
				if name, ok := strings.CutPrefix(c.Text, "//export "); ok {
					exported = strings.TrimSpace(name)
				}
			}
			if exported == "" {
				continue
			}
			exports = append(exports, exported)
			where := fset.Position(fn.Pos()).String() + ": " + exported
			if exported != fn.Name.Name {
				t.Errorf("%s: exports a function named %s", where, fn.Name.Name)
			}
			lit := guardCall(fn, codesName)
			if lit == nil {
				t.Errorf("%s: the first statement is not `defer codes.Guard(func(...) {...})`", where)
				continue
			}
			if hasParam(fn.Type.Params, "cerr") && !setsError(fn, lit) {
				t.Errorf("%s: takes cerr but its Guard does not do `%s = setError(cerr, err)`", where, resultName(fn))
			}
		}
	}
	sort.Strings(exports)
	// Not vacuous: the ABI's entry points are all seen.
	for _, want := range []string{"moraine_attach", "moraine_attach_with_commit_log", "moraine_detach", "moraine_error_free",
		"moraine_catalog_info", "moraine_functions", "moraine_bind", "moraine_execute", "moraine_table_free"} {
		if i := sort.SearchStrings(exports, want); i == len(exports) || exports[i] != want {
			t.Errorf("export %s not found (found %v)", want, exports)
		}
	}
}

// guardCall returns the function literal handed to codes.Guard when fn's
// first statement is `defer codes.Guard(func...)`.
func guardCall(fn *ast.FuncDecl, codesName string) *ast.FuncLit {
	if codesName == "" || fn.Body == nil || len(fn.Body.List) == 0 {
		return nil
	}
	def, ok := fn.Body.List[0].(*ast.DeferStmt)
	if !ok {
		return nil
	}
	sel, ok := def.Call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Guard" {
		return nil
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != codesName || len(def.Call.Args) != 1 {
		return nil
	}
	lit, _ := def.Call.Args[0].(*ast.FuncLit)
	return lit
}

func hasParam(fields *ast.FieldList, name string) bool {
	for _, f := range fields.List {
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

func resultName(fn *ast.FuncDecl) string {
	if fn.Type.Results == nil || len(fn.Type.Results.List) != 1 || len(fn.Type.Results.List[0].Names) != 1 {
		return ""
	}
	return fn.Type.Results.List[0].Names[0].Name
}

// setsError reports whether lit is func(e error) { <result> = setError(cerr, e) }.
func setsError(fn *ast.FuncDecl, lit *ast.FuncLit) bool {
	rc := resultName(fn)
	params := lit.Type.Params.List
	if rc == "" || len(params) != 1 || len(params[0].Names) != 1 || len(lit.Body.List) != 1 {
		return false
	}
	errName := params[0].Names[0].Name
	as, ok := lit.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.ASSIGN {
		return false
	}
	if id, ok := as.Lhs[0].(*ast.Ident); !ok || id.Name != rc {
		return false
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return false
	}
	f, ok1 := call.Fun.(*ast.Ident)
	a0, ok2 := call.Args[0].(*ast.Ident)
	a1, ok3 := call.Args[1].(*ast.Ident)
	return ok1 && ok2 && ok3 && f.Name == "setError" && a0.Name == "cerr" && a1.Name == errName
}
