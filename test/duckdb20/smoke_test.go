// Package duckdb20 is the DuckDB 2.0.0 load smoke test of
// moraine.duckdb_extension. It is its own module because it links DuckDB
// 2.0.0 (duckdb-go v2.20000.0) while the main module pins DuckDB 1.5.6
// (v2.10506.0); one module cannot have both.
//
// It needs the built extension: MORAINE_EXTENSION_DIR names the directory
// holding moraine.duckdb_extension and repository/ (`make test` sets it to
// build/; the default is ../../build). A missing extension fails the test.
//
//	make extension && (cd test/duckdb20 && go test ./...)
package duckdb20

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

func extensionDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MORAINE_EXTENSION_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "build")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "moraine.duckdb_extension")); err != nil {
		t.Fatalf("no moraine.duckdb_extension in %s (run make extension, or set MORAINE_EXTENSION_DIR): %v", dir, err)
	}
	return dir
}

// open opens an in-memory DuckDB that may load unsigned extensions and keeps
// its extension directory inside the test's directory.
func open(t *testing.T) *sql.Conn {
	t.Helper()
	tmp := t.TempDir()
	q := url.Values{}
	q.Set("allow_unsigned_extensions", "true")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("extension_directory", filepath.Join(tmp, "extensions"))
	db, err := sql.Open("duckdb", "?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func exec(t *testing.T, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func queryRow(t *testing.T, c *sql.Conn, q string, dest ...any) {
	t.Helper()
	if err := c.QueryRowContext(context.Background(), q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func TestDuckDBVersion(t *testing.T) {
	c := open(t)
	var v string
	queryRow(t, c, "SELECT library_version FROM pragma_version()", &v)
	if v != "v2.0.0" {
		t.Fatalf("this module should link DuckDB v2.0.0, got %s", v)
	}
}

// The same file DuckDB 1.5.6 loads, installed from the private repository
// (its v2.0.0 directory), loads and works in DuckDB 2.0.0.
func TestInstallLoadAndUse(t *testing.T) {
	dir := extensionDir(t)
	c := open(t)
	exec(t, c, "INSTALL moraine FROM "+quote(filepath.Join(dir, "repository")))
	exec(t, c, "LOAD moraine")
	var name, from string
	queryRow(t, c, "SELECT extension_name, installed_from FROM duckdb_extensions() WHERE extension_name = 'moraine' AND loaded", &name, &from)

	lake := filepath.Join(t.TempDir(), "lake")
	var role string
	var format, head uint64
	// DuckDB 2.0 binds table functions twice: the attach must still happen
	// once (a second run would find the name taken).
	queryRow(t, c, "SELECT role, format, head_snapshot FROM moraine_attach('w', "+quote(lake)+")", &role, &format, &head)
	if role != "writer" || format != 13 || head != 0 {
		t.Fatalf("attach: %s %d %d", role, format, head)
	}
	queryRow(t, c, "SELECT role FROM moraine_attach('r', "+quote(lake)+", read_only := true, reader_poll_interval_ms := 20)", &role)
	if role != "reader" {
		t.Fatalf("reader attach: %s", role)
	}
	var snap, id uint64
	queryRow(t, c, "SELECT * FROM moraine_create_table('w', 't', 'id BIGINT, name VARCHAR')", &snap, &id)
	var first, n uint64
	queryRow(t, c, "SELECT * FROM moraine_insert('w', 't', [{'id': 1, 'name': 'a'}, {'id': 2, 'name': 'b'}])", &snap, &first, &n)
	if snap != 2 || n != 2 {
		t.Fatalf("insert: snapshot %d, %d rows", snap, n)
	}
	// The reader sees the commit within a few poll intervals.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var count uint64
		queryRow(t, c, "SELECT count(*) FROM moraine_ducklake_snapshot('r')", &count)
		if count == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader still sees %d snapshots", count)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var names string
	queryRow(t, c, "SELECT string_agg(name, ',' ORDER BY id) FROM moraine_ducklake_inlined_data('r', 't')", &names)
	if names != "a,b" {
		t.Fatalf("inlined rows: %q", names)
	}
	var changes string
	queryRow(t, c, "SELECT changes_made FROM moraine_ducklake_snapshot_changes('w', snapshot := 1) WHERE snapshot_id = 1", &changes)
	if changes != `created_table:"main"."t"` {
		t.Fatalf("changes_made %q", changes)
	}
	// Errors surface as DuckDB errors with the library's message.
	_, err := c.ExecContext(context.Background(), "SELECT * FROM moraine_attach('x', "+quote(lake)+", read_only := 'maybe')")
	if err == nil || !strings.Contains(err.Error(), "attach option READ_ONLY: 'maybe' is not accepted") {
		t.Fatalf("bad option: %v", err)
	}
	_, err = c.ExecContext(context.Background(), "SELECT * FROM moraine_create_schema('r', 's')")
	if err == nil || !strings.Contains(err.Error(), "the catalog was opened read-only") {
		t.Fatalf("write on a reader: %v", err)
	}
	queryRow(t, c, "SELECT name FROM moraine_detach('w')", &name)
	var lakes uint64
	queryRow(t, c, "SELECT count(*) FROM moraine_lakes()", &lakes)
	if lakes != 1 {
		t.Fatalf("%d lakes after detach", lakes)
	}
}

// LOAD by path works too, and a database without allow_unsigned_extensions
// refuses the unsigned file.
func TestLoadByPathAndUnsignedRefused(t *testing.T) {
	ext := filepath.Join(extensionDir(t), "moraine.duckdb_extension")
	c := open(t)
	exec(t, c, "LOAD "+quote(ext))
	var n uint64
	queryRow(t, c, "SELECT count(*) FROM moraine_lakes()", &n)

	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&extension_directory="+url.QueryEscape(filepath.Join(t.TempDir(), "ext")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec("LOAD " + quote(ext))
	if err == nil || !strings.Contains(err.Error(), "unsigned extensions are disabled") {
		t.Fatalf("LOAD without allow_unsigned_extensions: %v", err)
	}
}
