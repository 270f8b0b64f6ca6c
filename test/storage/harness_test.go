// Package storage tests the DuckDB v1.4.4 storage extension
// (build/v1.4.4/moraine.duckdb_extension) end to end, from the main module,
// where the catalog's Go API, the S3 test server and the request counters
// are at hand. DuckDB v1.4.4 itself runs in separate processes built from
// the test/duckdb14 module (which cannot share this module's DuckDB 1.5.6):
//
//   - build/sqllogictest-v1.4.4 runs test/sql/storage/*.test, with fixtures
//     made here handed over as --env variables;
//   - build/duckdb-shell-v1.4.4 is a DuckDB process driven over a pipe, for
//     tests that act between two statements (a commit through the Go API
//     while a DuckDB transaction is open).
//
// MORAINE_EXTENSION_DIR names the directory holding v1.4.4/, repository/
// and the two commands (`make test` sets it to build/);
// MORAINE_COMMITLOG_EXTENSION_DIR the commit-log build's (default
// <MORAINE_EXTENSION_DIR>/commitlog). Without the first the harness runs
// `make extension` in the repository first.
package storage

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

var bg = context.Background()

// dir is the directory of the built extension and commands.
var dir string

// version is the DuckDB release the package tests (MORAINE_DUCKDB_VERSION,
// default v1.4.4): its extension files, hosts and DuckLake. make test runs
// the package once per release of duckdb-versions.txt.
var version = "v1.4.4"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}

func run(m *testing.M) int {
	if v := os.Getenv("MORAINE_DUCKDB_VERSION"); v != "" {
		version = v
	}
	dir = os.Getenv("MORAINE_EXTENSION_DIR")
	commitLogDir = os.Getenv("MORAINE_COMMITLOG_EXTENSION_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(), "build")
		cmd := exec.Command("make", "--no-print-directory", "extension")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "make extension (set MORAINE_EXTENSION_DIR to use a built one): %v\n%s", err, out)
			return 1
		}
	}
	if commitLogDir == "" {
		commitLogDir = filepath.Join(dir, "commitlog")
	}
	for _, f := range []string{extension(), commitLogExtension(), sqllogictest(), shell(), officialShell()} {
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(os.Stderr, "MORAINE_EXTENSION_DIR=%s: %v (run make extension)\n", dir, err)
			return 1
		}
	}
	tmp, err := os.MkdirTemp("", "moraine-storage-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	moraineBin = filepath.Join(tmp, "moraine")
	code := m.Run()
	s3test.Stop()
	return code
}

// commitLogDir is the commit-log build's output directory
// (MORAINE_COMMITLOG_EXTENSION_DIR, default <dir>/commitlog).
var commitLogDir string

func extension() string { return filepath.Join(dir, version, "moraine.duckdb_extension") }

// commitLogExtension is the commit-log build of the storage extension.
func commitLogExtension() string {
	return filepath.Join(commitLogDir, version, "moraine_commitlog.duckdb_extension")
}

// ducklakeExtension is DuckLake built for DuckDB v1.4.4 (../shared).
func ducklakeExtension() string {
	return filepath.Join(repoRoot(), "..", "shared", "ducklake", version, "ducklake.duckdb_extension")
}

func repository() string   { return filepath.Join(dir, "repository") }
func sqllogictest() string { return filepath.Join(dir, "sqllogictest-"+version) }
func shell() string        { return filepath.Join(dir, "duckdb-shell-"+version) }

// officialShell is shell()'s interface over DuckDB's official v1.4.4
// libduckdb.so, opened with RTLD_LOCAL as Python, Node and Java open it
// (make official-v1.4.4).
func officialShell() string { return filepath.Join(dir, "duckdb-official-"+version) }

// officialNodeDir holds DuckDB's official v1.4.4 Node client and its
// libduckdb.so (tools/official-duckdb.sh): the Node client's test runs
// there whatever the package's version.
func officialNodeDir() string { return filepath.Join(dir, "official", "v1.4.4") }

// A host is a DuckDB v1.4.4 build the tests run user paths in: shell is
// its shell command (the README's scripts), sltArgs the arguments that make
// build/sqllogictest-v1.4.4 run files in it.
type host struct {
	name, shell string
	sltArgs     []string
}

// hosts are the two DuckDB v1.4.4 builds every user path is tested in:
// duckdb-go (DuckDB linked in, its symbols exported) and DuckDB's official
// libduckdb.so (symbols kept local: the extension must carry its own).
func hosts() []host {
	return []host{{"duckdb-go", shell(), nil}, {"official", officialShell(), []string{"--host", "official"}}}
}

// moraineBin is cmd/moraine, built on first use.
var (
	moraineBin   string
	moraineBuilt sync.Once
	moraineErr   error
)

// moraine runs the moraine command.
func moraine(t *testing.T, args ...string) string {
	t.Helper()
	moraineBuilt.Do(func() {
		cmd := exec.Command("go", "build", "-o", moraineBin, "./cmd/moraine")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			moraineErr = fmt.Errorf("go build ./cmd/moraine: %v\n%s", err, out)
		}
	})
	if moraineErr != nil {
		t.Fatal(moraineErr)
	}
	out, err := exec.Command(moraineBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("moraine %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// A DuckDB v1.4.4 process (build/duckdb-shell-v1.4.4).
type duck struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	errs *lockedBuilder
}

// lockedBuilder is the process's stderr, written by exec's copying
// goroutine and read by the test's.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type result struct {
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
	Error   string      `json:"error"`
}

// startDuck starts a DuckDB process with the storage extension loaded;
// env is added to its environment.
func startDuck(t testing.TB, env ...string) *duck {
	t.Helper()
	return startDuckWith(t, extension(), env...)
}

// startDuckWith starts a DuckDB process with the extension file ext loaded.
func startDuckWith(t testing.TB, ext string, env ...string) *duck {
	t.Helper()
	return startDuckOn(t, shell(), ext, env...)
}

// startDuckOn starts a DuckDB process of the host shell sh with the
// extension file ext loaded.
func startDuckOn(t testing.TB, sh, ext string, env ...string) *duck {
	t.Helper()
	cmd := exec.Command(sh, "--setting", "extension_directory="+filepath.Join(t.TempDir(), "ext"))
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &duck{t: t, cmd: cmd, in: in, errs: &lockedBuilder{}}
	cmd.Stderr = d.errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.out = bufio.NewScanner(stdout)
	d.out.Buffer(make([]byte, 1<<20), 64<<20)
	t.Cleanup(d.close)
	d.ok("", "LOAD "+sqlString(ext))
	return d
}

func (d *duck) close() {
	if d.in == nil {
		return
	}
	d.in.Close()
	d.in = nil
	if err := d.cmd.Wait(); err != nil {
		d.t.Errorf("duckdb-shell exited: %v\n%s", err, d.errs.String())
	}
}

// query runs sql on connection conn.
func (d *duck) query(conn, sql string) result {
	d.t.Helper()
	r, err := d.try(conn, sql)
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}

// try runs sql on connection conn; an error is the process's (it died or
// stopped answering), a failed statement is r.Error. Safe to call from
// any one goroutine at a time.
func (d *duck) try(conn, sql string) (result, error) {
	if err := d.send(conn, sql); err != nil {
		return result{}, err
	}
	return d.receive()
}

// send writes one request; receive reads its answer.
func (d *duck) send(conn, sql string) error {
	req, _ := json.Marshal(map[string]string{"conn": conn, "sql": sql})
	if _, err := fmt.Fprintf(d.in, "%s\n", req); err != nil {
		return fmt.Errorf("writing to duckdb-shell: %v", err)
	}
	return nil
}

func (d *duck) receive() (result, error) {
	if !d.out.Scan() {
		return result{}, fmt.Errorf("duckdb-shell stopped answering (%v)", d.out.Err())
	}
	var r result
	if err := json.Unmarshal(d.out.Bytes(), &r); err != nil {
		return result{}, fmt.Errorf("duckdb-shell answered %q: %v", d.out.Text(), err)
	}
	return r, nil
}

// kill SIGKILLs the process and reaps it.
func (d *duck) kill() {
	if d.in == nil {
		return
	}
	d.cmd.Process.Kill()
	d.in.Close()
	d.in = nil
	d.cmd.Wait()
}

// ok runs sql and fails the test on an error.
func (d *duck) ok(conn, sql string) result {
	d.t.Helper()
	r := d.query(conn, sql)
	if r.Error != "" {
		d.t.Fatalf("%s [%s]: %s", sql, conn, r.Error)
	}
	return r
}

// value runs a query of one value.
func (d *duck) value(conn, sql string) string {
	d.t.Helper()
	r := d.ok(conn, sql)
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		d.t.Fatalf("%s [%s]: %d rows, want one value", sql, conn, len(r.Rows))
	}
	if r.Rows[0][0] == nil {
		return "NULL"
	}
	return *r.Rows[0][0]
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// addSchema commits one schema through the Go API.
func addSchema(t *testing.T, c *core.Catalog, name string) core.SnapshotID {
	t.Helper()
	id, err := c.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.CreateSchema(name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
