//go:build cgo

package duckdbtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/internal/sqllogictest"
	"github.com/moraine-go/moraine/tools/exttrailer/extrepo"
)

// The runner's testdata, run here against DuckDB 1.5.6 through this
// module's engine (the runner module has no DuckDB of its own).
var runnerTestdata = filepath.Join("..", "sqllogictest", "testdata")

func passOptions(t *testing.T) sqllogictest.Options {
	ext := BuildTestExtension(t, t.TempDir())
	t.Setenv("MORAINE_SLT_REQUIRED", "required-value")
	return sqllogictest.Options{
		Engine:     Engine(),
		Settings:   map[string]string{"allow_unsigned_extensions": "true"},
		Extensions: map[string]string{"moraine": ext},
		Env:        map[string]string{"MORAINE_SLT_GREETING": "hello from Options.Env"},
	}
}

// TestPass runs the runner's testdata/pass with RunDir: every file must pass.
func TestPass(t *testing.T) {
	sqllogictest.RunDir(t, filepath.Join(runnerTestdata, "pass"), passOptions(t))
}

// TestPassReports checks what a passing run reports besides success.
func TestPassReports(t *testing.T) {
	opts := passOptions(t)
	rec := &sqllogictest.Recorder{TB: t}
	sqllogictest.RunFile(rec, filepath.Join(runnerTestdata, "pass", "basics.test"), opts)
	if len(rec.Errors) != 0 || len(rec.Skips) != 0 {
		t.Fatalf("errors %q, skipped %q", rec.Errors, rec.Skips)
	}
	logs := strings.Join(rec.Logs, "\n")
	b, err := os.ReadFile(filepath.Join(runnerTestdata, "pass", "basics.test"))
	if err != nil {
		t.Fatal(err)
	}
	haltLine := slices.Index(strings.Split(string(b), "\n"), "halt") + 1
	for _, want := range []string{"basics.test: 1 records not run (mode skip)", fmt.Sprintf("basics.test:%d: halt: the rest of the file is not run", haltLine)} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs %q lack %q", logs, want)
		}
	}
}

// TestFail runs each file of testdata/fail and checks the failure message.
func TestFail(t *testing.T) {
	dir := filepath.Join(runnerTestdata, "fail")
	cases := map[string][]string{
		"wrong_result.test": {"wrong_result.test:4: query result differs: row 1, column 1: \"2\" <> expected \"3\"",
			"SQL:\n    SELECT i\n    FROM t", "expected (1 lines):\n    3", "actual (nosort, 1 rows, as the file would hold it):\n    2"},
		"ok_fails.test":       {"ok_fails.test:3: statement ok failed", "SELEC 1", "Parser Error"},
		"error_succeeds.test": {"error_succeeds.test:1: statement error succeeded", "expected an error matching:\n    some error"},
		"wrong_error.test": {"wrong_error.test:1: statement error failed with the wrong error",
			"expected an error matching:\n    Parser Error", "actual error:\n    Catalog Error: Table with name nope does not exist!"},
		"regex_error.test":       {"regex_error.test:1: statement error failed with the wrong error", "<!REGEX>:Catalog.*nope"},
		"maybe_wrong_error.test": {"maybe_wrong_error.test:1: statement maybe failed with an unexpected error"},
		"unset_var.test":         {"unset_var.test:1: ${MORAINE_SLT_UNSET_VAR} is not set"},
		"require_missing.test": {"require_missing.test:1: require moraine_slt_no_such_extension: the extension cannot be loaded",
			"a skipped file is a failure here", `list "moraine_slt_no_such_extension" in Options.AllowSkip`, "# allow-skip: <reason>"},
		"require_env_missing.test": {"require_env_missing.test:1: require-env MORAINE_SLT_UNSET_VAR: the variable is not set",
			"a skipped file is a failure here", `"env:MORAINE_SLT_UNSET_VAR"`},
		"column_count.test": {"column_count.test:1: query result differs: the query returns 1 columns, the record declares 2 (II)"},
		"row_count.test":    {"row_count.test:1: query result differs: expected 2 rows, got 1"},
		"tab_missing.test":  {"tab_missing.test:1: query result differs: expected line 1 has 1 tab-separated values, the query returns 2 columns"},
		"nosort_order.test": {"nosort_order.test:1: query result differs: row 1, column 1: \"2\" <> expected \"1\""},
		"loop_failure.test": {"loop_failure.test:3: query result differs: row 1, column 1: \"false\" <> expected \"true\"",
			"SELECT 2 < 2", "(in loop iteration i=2)"},
		"float_tolerance.test":  {"float_tolerance.test:1: query result differs: row 1, column 1: \"1.5\" <> expected \"1.6\""},
		"label_mismatch.test":   {"label_mismatch.test:6: query result differs: label lbl: the result differs from the query at line 1"},
		"parse_error.test":      {"sqllogictest: " + filepath.Join(dir, "parse_error.test") + ":4: query needs column types"},
		"named_connection.test": {"named_connection.test:6: statement error succeeded", "SQL (connection con1):\n    SELECT 1"},
		"nested_mismatch.test":  {"nested_mismatch.test:1: query result differs: row 1, column 1: \"{'a': [1, 2]}\" <> expected \"{'a': [1, 3]}\""},
		"json_column.test":      {"json_column.test:1: query failed", "cannot render", "cast the column to VARCHAR in the query"},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(cases) {
		t.Errorf("testdata/fail holds %d files, the test expects %d", len(entries), len(cases))
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &sqllogictest.Recorder{TB: t}
			sqllogictest.RunFile(rec, filepath.Join(dir, name), sqllogictest.Options{Engine: Engine()})
			if len(rec.Skips) != 0 {
				t.Fatalf("skipped: %q", rec.Skips)
			}
			if len(rec.Errors) != 1 {
				t.Fatalf("got %d failures, want 1: %q", len(rec.Errors), rec.Errors)
			}
			for _, w := range wants {
				if !strings.Contains(rec.Errors[0], w) {
					t.Errorf("failure message lacks %q:\n%s", w, rec.Errors[0])
				}
			}
			if !strings.HasPrefix(rec.Errors[0], filepath.Join(dir, name)+":") && !strings.HasPrefix(rec.Errors[0], "sqllogictest: "+filepath.Join(dir, name)+":") {
				t.Errorf("failure message does not start with the file name:\n%s", rec.Errors[0])
			}
		})
	}
}

// TestSkip: unmet requirements skip the file only where allowed.
func TestSkip(t *testing.T) {
	dir := filepath.Join(runnerTestdata, "skip")
	run := func(t *testing.T, name string, opts sqllogictest.Options) *sqllogictest.Recorder {
		rec := &sqllogictest.Recorder{TB: t}
		sqllogictest.RunFile(rec, filepath.Join(dir, name), opts)
		return rec
	}
	cases := []struct {
		file       string
		allow      []string
		wantSkip   string // substring of the skip message; "" means the run must fail
		wantFailed string
	}{
		{"allowed_in_file.test", nil, "(skip allowed: needs an extension that is not built here)", ""},
		{"allowed_by_option.test", []string{"moraine_slt_optional_extension"},
			`require moraine_slt_optional_extension: the extension cannot be loaded`, ""},
		{"allowed_by_option.test", nil, "", "a skipped file is a failure here"},
		{"env_allowed_by_option.test", []string{"env:MORAINE_SLT_OPTIONAL_ENV"}, "require-env MORAINE_SLT_OPTIONAL_ENV: the variable is not set", ""},
		{"env_allowed_by_option.test", []string{"MORAINE_SLT_OPTIONAL_ENV"}, "", "a skipped file is a failure here"},
		{"vector_size.test", []string{"vector_size"}, "require vector_size 4096: the vector size is 2048", ""},
		{"vector_size.test", nil, "", "require vector_size 4096: the vector size is 2048"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s allow=%v", c.file, c.allow), func(t *testing.T) {
			rec := run(t, c.file, sqllogictest.Options{Engine: Engine(), AllowSkip: c.allow})
			if c.wantSkip != "" {
				if len(rec.Errors) != 0 || len(rec.Skips) != 1 || !strings.Contains(rec.Skips[0], c.wantSkip) {
					t.Fatalf("errors %q, skipped %q; want one skip containing %q", rec.Errors, rec.Skips, c.wantSkip)
				}
				if !strings.HasPrefix(rec.Skips[0], filepath.Join(dir, c.file)+":") {
					t.Errorf("skip message does not name the file and line: %q", rec.Skips[0])
				}
				return
			}
			if len(rec.Skips) != 0 || len(rec.Errors) != 1 || !strings.Contains(rec.Errors[0], c.wantFailed) {
				t.Fatalf("errors %q, skipped %q; want one failure containing %q", rec.Errors, rec.Skips, c.wantFailed)
			}
		})
	}
}

// TestHomeUntouched: with the default settings, installing an extension
// writes into the file's __TEST_DIR__, nothing into $HOME.
func TestHomeUntouched(t *testing.T) {
	platform, version := Host(t)
	ext := BuildTestExtension(t, t.TempDir())
	repo := t.TempDir()
	if _, err := extrepo.Layout(repo, ext, version, platform); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	path := filepath.Join(t.TempDir(), "home.test")
	test := "statement ok\nINSTALL moraine FROM '" + repo + "'\n\nstatement ok\nLOAD moraine\n\n" +
		"query T\nSELECT starts_with(install_path, '__TEST_DIR__/extensions/') FROM duckdb_extensions() WHERE extension_name = 'moraine'\n----\ntrue\n"
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &sqllogictest.Recorder{TB: t}
	sqllogictest.RunFile(rec, path, sqllogictest.Options{Engine: Engine(), Settings: map[string]string{"allow_unsigned_extensions": "true"}})
	if len(rec.Errors) != 0 {
		t.Fatal(rec.Errors)
	}
	entries, err := os.ReadDir(home)
	if err != nil || len(entries) != 0 {
		t.Fatalf("HOME holds %v (%v)", entries, err)
	}
}

// TestRunnerConformance runs the runner's testdata/duckdb, its files for
// real DuckDB with their expected outcomes (the same files run on DuckDB
// v1.4.4 in test/duckdb14).
func TestRunnerConformance(t *testing.T) {
	sqllogictest.RunExpectations(t, filepath.Join(runnerTestdata, "duckdb"), sqllogictest.Options{Engine: Engine()})
}
