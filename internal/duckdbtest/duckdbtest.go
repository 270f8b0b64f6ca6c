//go:build cgo

// Package duckdbtest holds test helpers shared by the packages that exercise
// real DuckDB (through github.com/duckdb/duckdb-go/v2, which links DuckDB
// statically with -rdynamic, so the test binary itself is the DuckDB host):
// locating duckdb.h, compiling small C extensions with the system C compiler,
// opening databases that never touch the home directory, and Engine, the
// sqllogictest engine of this module's DuckDB (engine.go, format.go).
//
// Import it only from tests: it links DuckDB.
package duckdbtest

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver

	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

// BindingsModule is the module that ships duckdb.h for the linked DuckDB.
const BindingsModule = "github.com/duckdb/duckdb-go-bindings"

// startEnv is the environment the test binary started with. The go commands
// below run with it, so that tests which point HOME elsewhere (t.Setenv) do not
// send them to an empty module cache.
var startEnv = os.Environ()

// goCmd runs the go command with the starting environment.
func goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = startEnv
	return cmd.Output()
}

var (
	includeOnce sync.Once
	includeDir  string
	includeErr  error
)

// IncludeDir returns the directory holding duckdb.h of the DuckDB that
// duckdb-go links (the duckdb-go-bindings module directory's include/). It runs
// `go list -m` in the current directory, which must be inside this module.
func IncludeDir() (string, error) {
	includeOnce.Do(func() {
		out, err := goCmd("list", "-m", "-f", "{{.Dir}}", BindingsModule)
		if err != nil {
			includeErr = fmt.Errorf("duckdbtest: go list -m %s: %v%s", BindingsModule, err, stderrOf(err))
			return
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "include")
		if _, err := os.Stat(filepath.Join(dir, "duckdb.h")); err != nil {
			includeErr = fmt.Errorf("duckdbtest: no duckdb.h in %s: %v", dir, err)
			return
		}
		includeDir = dir
	})
	return includeDir, includeErr
}

// ModuleRoot returns the directory of the main module's go.mod.
func ModuleRoot() (string, error) {
	out, err := goCmd("env", "GOMOD")
	if err != nil {
		return "", fmt.Errorf("duckdbtest: go env GOMOD: %v%s", err, stderrOf(err))
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("duckdbtest: not inside a module")
	}
	return filepath.Dir(gomod), nil
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// CC returns the C compiler to use: $CC, or "cc".
func CC() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

// BuildSharedLibrary compiles C sources into a shared library at out with
// -std=c11 -Wall -Werror -shared -fPIC, adding duckdb.h's directory and the
// given directories to the include path. It fails the test on error.
func BuildSharedLibrary(t testing.TB, out string, sources []string, includeDirs ...string) {
	t.Helper()
	inc, err := IncludeDir()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-o", out, "-I", inc}
	for _, d := range includeDirs {
		args = append(args, "-I", d)
	}
	args = append(args, sources...)
	cmd := exec.Command(CC(), args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", CC(), strings.Join(args, " "), err, b)
	}
}

// HermeticConfig returns DuckDB settings, as DSN query parameters, that keep
// a database away from the home directory: extensions are installed into (and
// looked up in) dir/extensions, secrets are kept in dir/secrets, and nothing
// is auto-installed from the network.
func HermeticConfig(dir string) map[string]string {
	return map[string]string{
		"extension_directory":          filepath.Join(dir, "extensions"),
		"secret_directory":             filepath.Join(dir, "secrets"),
		"autoinstall_known_extensions": "false",
	}
}

// DSN builds a duckdb-go data source name: path (empty for in-memory) and
// settings as query parameters, sorted by name.
func DSN(path string, settings map[string]string) string {
	if len(settings) == 0 {
		return path
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(path)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(settings[k]))
	}
	return b.String()
}

// Open opens a DuckDB database with the given DSN and closes it when the test
// ends.
func Open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", dsn)
	if err != nil {
		t.Fatalf("open duckdb %q: %v", dsn, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		t.Fatalf("open duckdb %q: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var (
	hostOnce                  sync.Once
	hostPlatform, hostVersion string
	hostErr                   error
)

// Host returns the platform (e.g. "linux_amd64") and version (e.g. "v1.5.6")
// of the linked DuckDB.
func Host(t testing.TB) (platform, version string) {
	t.Helper()
	hostOnce.Do(func() {
		db, err := sql.Open("duckdb", "")
		if err != nil {
			hostErr = err
			return
		}
		defer db.Close()
		if err := db.QueryRow("SELECT platform FROM pragma_platform()").Scan(&hostPlatform); err != nil {
			hostErr = err
			return
		}
		hostErr = db.QueryRow("SELECT library_version FROM pragma_version()").Scan(&hostVersion)
	})
	if hostErr != nil {
		t.Fatalf("duckdbtest: asking DuckDB for its platform and version: %v", hostErr)
	}
	return hostPlatform, hostVersion
}

// TestExtensionSource is the C source of a minimal C_STRUCT extension whose
// entry point moraine_init_c_api asks for the v1.2.0 C API and succeeds.
func TestExtensionSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "moraine_ext.c")
}

// BuildTestLibrary compiles TestExtensionSource into dir/libmoraine_test.so
// (no trailer) and returns its path.
func BuildTestLibrary(t testing.TB, dir string) string {
	t.Helper()
	lib := filepath.Join(dir, "libmoraine_test.so")
	BuildSharedLibrary(t, lib, []string{TestExtensionSource()})
	return lib
}

// BuildTestExtension builds TestExtensionSource into a loadable, unsigned
// dir/moraine.duckdb_extension (ABI C_STRUCT, C API v1.2.0, the host's
// platform, extension version "test") and returns its path.
func BuildTestExtension(t testing.TB, dir string) string {
	t.Helper()
	platform, _ := Host(t)
	b, err := os.ReadFile(BuildTestLibrary(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	b, err = trailer.Append(b, trailer.Metadata{Platform: platform, Version: "v1.2.0", ExtensionVersion: "test", ABI: trailer.ABICStruct})
	if err != nil {
		t.Fatal(err)
	}
	ext := filepath.Join(dir, "moraine.duckdb_extension")
	if err := os.WriteFile(ext, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return ext
}

// BuildExtension runs the C_STRUCT part of the build `make extension` runs
// into dir (dir/cmake for cmake's files, dir/moraine.duckdb_extension and
// dir/repository as output; the storage extension is not built); glue is
// the Go half's commit-log glue, a directory relative to the repository
// ("" none; "provider/glue" the in-tree commit log's: cmake/glue_main.cmake).
func BuildExtension(dir, glue string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	if glue != "" {
		glue = filepath.Join(root, glue)
	}
	for _, args := range [][]string{
		{"-S", root, "-B", filepath.Join(dir, "cmake"), "-DMORAINE_OUTPUT_DIR=" + dir, "-DMORAINE_GO_GLUE=" + glue, "-DMORAINE_STORAGE=OFF"},
		{"--build", filepath.Join(dir, "cmake"), "--target", "extension"},
	} {
		cmd := exec.Command("cmake", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("cmake %v: %v\n%s", args, err, out)
		}
	}
	return nil
}
