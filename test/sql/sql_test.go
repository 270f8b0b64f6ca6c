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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/internal/duckdbtest"
	"github.com/moraine-go/moraine/internal/sqllogictest"
	"github.com/moraine-go/moraine/internal/testutil/lakes"
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
			"MORAINE_FUTURE_LAKE":     lakes.FutureFormat(t),
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
