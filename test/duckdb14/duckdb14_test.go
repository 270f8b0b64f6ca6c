// Package duckdb14_test runs the sqllogictest runner against DuckDB v1.4.4
// (duckdb-go v2.5.5, engine.New) and tests the sqllogictest-v1.4.4 command.
package duckdb14_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/internal/sqllogictest"
	"github.com/moraine-go/moraine/test/duckdb14/engine"
)

// The runner's own testdata, shared with the main module's engine.
var runnerTestdata = filepath.Join("..", "..", "internal", "sqllogictest", "testdata")

func options() sqllogictest.Options {
	return sqllogictest.Options{
		Engine:   engine.New(),
		Settings: map[string]string{"allow_unsigned_extensions": "true"},
	}
}

// TestRender: values render as DuckDB's own runner renders them (TIME
// 24:00:00, JSON, MAP with non-scalar keys, unnamed STRUCTs, TIMESTAMPTZ,
// DECIMAL, nested lists, blobs, ...) and compare as it compares them.
func TestRender(t *testing.T) {
	sqllogictest.RunExpectations(t, filepath.Join("testdata", "render"), options())
}

// TestRunnerTestdata runs the runner's files written for real DuckDB
// (testdata/pass and testdata/duckdb) on v1.4.4. require moraine (the
// main module builds a test extension for it) may be unmet here.
func TestRunnerTestdata(t *testing.T) {
	t.Setenv("MORAINE_SLT_REQUIRED", "required-value")
	opts := options()
	opts.AllowSkip = []string{"moraine"}
	opts.Env = map[string]string{"MORAINE_SLT_GREETING": "hello from Options.Env"}
	sqllogictest.RunDir(t, filepath.Join(runnerTestdata, "pass"), opts)
	sqllogictest.RunExpectations(t, filepath.Join(runnerTestdata, "duckdb"), options())
}

// ducklakeExtension is DuckLake for DuckDB v1.4.4 beside the repository
// (../shared/ducklake), or MORAINE_DUCKLAKE_EXTENSION.
func ducklakeExtension(t *testing.T) string {
	t.Helper()
	p := os.Getenv("MORAINE_DUCKLAKE_EXTENSION")
	if p == "" {
		p = filepath.Join("..", "..", "..", "shared", "ducklake", "v1.4.4", "ducklake.duckdb_extension")
	}
	abs, err := filepath.Abs(p)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		t.Fatalf("DuckLake for DuckDB v1.4.4 is needed (../shared/ducklake/v1.4.4/ducklake.duckdb_extension beside the repository, or MORAINE_DUCKLAKE_EXTENSION): %v", err)
	}
	return abs
}

// ducklakeSample are DuckLake's own test files (../shared/ducklake/tests)
// that pass on DuckLake's default catalog, a DuckDB file, and run quickly.
var ducklakeSample = []string{
	"test/sql/alter/add_column.test",
	"test/sql/concurrent/concurrent_insert_data_inlining.test", // concurrentloop
	"test/sql/data_inlining/basic_data_inlining.test",
	"test/sql/delete/truncate_table.test",
	"test/sql/general/generated_columns.test",
	"test/sql/migration/v01_partitioned.test", // unzip, data/ of the tests
	"test/sql/types/map.test",
	"test/sql/types/timestamp.test",
	"test/sql/update/update_rollback.test",
}

// TestDuckLakeSample runs a few DuckLake test files on DuckLake's default
// catalog (DUCKLAKE_CONNECTION __TEST_DIR__/{UUID}.db, as the files say),
// from the DuckLake tests' directory as DuckLake's runner does.
func TestDuckLakeSample(t *testing.T) {
	ext := ducklakeExtension(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "ducklake", "tests"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("DuckLake's tests: %v", err)
	}
	opts := options()
	opts.Extensions = map[string]string{"ducklake": ext}
	t.Chdir(dir)
	for _, f := range ducklakeSample {
		t.Run(f, func(t *testing.T) { sqllogictest.RunFile(t, f, opts) })
	}
}

// command returns sqllogictest-v1.4.4: the one `make extension` built when
// MORAINE_EXTENSION_DIR names a directory holding it, else one built here.
func command(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("MORAINE_EXTENSION_DIR"); dir != "" {
		bin, err := filepath.Abs(filepath.Join(dir, "sqllogictest-v1.4.4"))
		if err == nil {
			_, err = os.Stat(bin)
		}
		if err == nil {
			return bin
		}
	}
	bin := filepath.Join(t.TempDir(), "sqllogictest-v1.4.4")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sqllogictest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestCommand checks what sqllogictest-v1.4.4 prints and its exit status.
func TestCommand(t *testing.T) {
	bin := command(t)
	dir := filepath.Join("testdata", "cmd")
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	p := func(name string) string { return filepath.Join(dir, name) }

	out, _, code := run(p("pass.test"), p("skip.test"))
	want := "PASS " + p("pass.test") + "\nSKIP " + p("skip.test") + " require httpfs: the extension is not available\n1 passed, 0 failed, 1 skipped\n"
	if out != want || code != 0 {
		t.Errorf("pass and skip: exit %d, output\n%s\nwant\n%s", code, out, want)
	}

	out, stderr, code := run(p("fail.test"), p("pass.test"))
	want = "FAIL " + p("fail.test") + ":6 query result differs: row 1, column 1: \"2\" <> expected \"3\"\nPASS " + p("pass.test") + "\n1 passed, 1 failed, 0 skipped\n"
	if out != want || code != 1 || !strings.Contains(stderr, "SELECT i + 1 FROM t") {
		t.Errorf("fail: exit %d, output\n%s\nwant\n%s\nstderr:\n%s", code, out, want, stderr)
	}

	out, _, code = run("--env", "MORAINE_SLT14_GREETING=from --env", p("env.test"))
	if out != "PASS "+p("env.test")+"\n1 passed, 0 failed, 0 skipped\n" || code != 0 {
		t.Errorf("--env: exit %d, output\n%s", code, out)
	}

	out, _, code = run("--timeout", "2", p("timeout.test"))
	if !regexp.MustCompile(`^FAIL `+regexp.QuoteMeta(p("timeout.test"))+`:3 timeout: the file ran longer than 2s \(killed\)\n0 passed, 1 failed, 0 skipped\n$`).MatchString(out) || code != 1 {
		t.Errorf("--timeout: exit %d, output\n%s", code, out)
	}

	// A directory is searched for *.test files; bad usage exits 2.
	out, _, _ = run("--timeout", "60", filepath.Join("testdata", "render"))
	if !strings.Contains(out, "PASS "+filepath.Join("testdata", "render", "types.test")+"\n") {
		t.Errorf("a directory: output\n%s", out)
	}
	if _, _, code := run(); code != 2 {
		t.Errorf("no PATH: exit %d, want 2", code)
	}
	if _, _, code := run("--extension", filepath.Join(t.TempDir(), "missing"), p("pass.test")); code != 2 {
		t.Errorf("a missing --extension: exit %d, want 2", code)
	}
}
