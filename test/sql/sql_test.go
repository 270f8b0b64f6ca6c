//go:build cgo

// Package sql runs the sqllogictest files of this directory in real DuckDB
// (duckdb-go v2.10506.0, DuckDB 1.5.6) with the built extension, through
// internal/sqllogictest.
//
// The extension comes from MORAINE_EXTENSION_DIR (a directory holding
// moraine.duckdb_extension and repository/, as `make extension` leaves in
// build/; `make test` sets it). Without it, TestMain builds the extension
// with cmake into a temporary directory, exactly as `make extension` does.
//
// The files get these variables (${NAME}):
//
//	MORAINE_EXTENSION      the extension file (require moraine loads it)
//	MORAINE_REPOSITORY     the private repository (INSTALL moraine FROM ...)
//	MORAINE_FUTURE_LAKE    a lake whose format is newer than this build reads
//	MORAINE_SQL_S3_*       an S3 location and its settings (URI, ENDPOINT,
//	                       HOSTPORT, KEY_ID, SECRET, REGION): the server of
//	                       internal/testutil/s3test (versitygw, or
//	                       MORAINE_S3_ENDPOINT's)
package sql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/internal/duckdbtest"
	"github.com/moraine-go/moraine/internal/sqllogictest"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

var extDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	extDir = os.Getenv("MORAINE_EXTENSION_DIR")
	if extDir == "" {
		tmp, err := os.MkdirTemp("", "moraine-ext-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		if err := buildExtension(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "building the extension (set MORAINE_EXTENSION_DIR to use a built one):", err)
			return 1
		}
		extDir = tmp
	}
	if _, err := os.Stat(filepath.Join(extDir, "moraine.duckdb_extension")); err != nil {
		fmt.Fprintf(os.Stderr, "MORAINE_EXTENSION_DIR=%s holds no moraine.duckdb_extension (run make extension): %v\n", extDir, err)
		return 1
	}
	code := m.Run()
	s3test.Stop()
	return code
}

// buildExtension runs the build `make extension` runs, into dir.
func buildExtension(dir string) error { return duckdbtest.BuildExtension(dir, "") }

// futureLake creates a lake and stamps its format one past what this build
// reads, as a newer moraine would leave it.
func futureLake(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "future")
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.Open(ctx, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := slate.Open(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	// sys/format: the "MRNE" frame, version 0, then FormatValue
	// {format_version = 1, writer_version = 2} (proto/moraine/store/v1).
	v := append([]byte("MRNE"), 0)
	v = protowire.AppendTag(v, 1, protowire.VarintType)
	v = protowire.AppendVarint(v, core.FormatCurrent+1)
	v = protowire.AppendTag(v, 2, protowire.BytesType)
	v = protowire.AppendString(v, "moraine-go/99.0.0")
	b := slate.NewWriteBatch()
	b.Put(keys.Format(), v)
	if _, err := db.Write(ctx, b, slate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Check the stamp took: this build must refuse the lake.
	if _, err := core.OpenReadOnly(ctx, store, core.CatalogOptions{}); err == nil || core.KindOf(err) != core.Migration {
		t.Fatalf("the future-format lake opens read-only: %v", err)
	}
	return dir
}

func TestSQL(t *testing.T) {
	ext := filepath.Join(extDir, "moraine.duckdb_extension")
	loc := s3test.NewLocation(t)
	_, hostPort, _ := strings.Cut(loc.Server.Endpoint, "://")
	// The files of this directory; storage/ holds the storage extension's,
	// which run on DuckDB v1.4.4 (test/storage).
	files, err := filepath.Glob("*.test")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files (%v)", err)
	}
	opts := sqllogictest.Options{
		Engine:     duckdbtest.Engine(),
		Settings:   map[string]string{"allow_unsigned_extensions": "true"},
		Extensions: map[string]string{"moraine": ext},
		Env: map[string]string{
			"MORAINE_EXTENSION":       ext,
			"MORAINE_REPOSITORY":      filepath.Join(extDir, "repository"),
			"MORAINE_FUTURE_LAKE":     futureLake(t),
			"MORAINE_SQL_S3_URI":      loc.URI,
			"MORAINE_SQL_S3_ENDPOINT": loc.Server.Endpoint,
			"MORAINE_SQL_S3_HOSTPORT": hostPort,
			"MORAINE_SQL_S3_KEY_ID":   loc.Server.AccessKey,
			"MORAINE_SQL_S3_SECRET":   loc.Server.SecretKey,
			"MORAINE_SQL_S3_REGION":   loc.Server.Region,
		},
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) { sqllogictest.RunFile(t, f, opts) })
	}
}
