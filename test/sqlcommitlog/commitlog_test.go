//go:build cgo

// Package sqlcommitlog runs the sqllogictest files of this directory in
// real DuckDB against the commit-log build of the extension
// (`make extension-commitlog`: the Go half built with the in-tree commit
// log's glue, provider/glue,
// which registers the in-tree commit log at load), so every read-write
// attach is a committer (RFC 0024).
//
// The extension comes from MORAINE_COMMITLOG_EXTENSION_DIR (`make test`
// sets it to build/commitlog); without it, TestMain builds it with cmake
// into a temporary directory.
package sqlcommitlog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/moraine-go/moraine/internal/duckdbtest"
	"github.com/moraine-go/moraine/internal/sqllogictest"
)

var extDir string

func TestMain(m *testing.M) {
	extDir = os.Getenv("MORAINE_COMMITLOG_EXTENSION_DIR")
	if extDir == "" {
		tmp, err := os.MkdirTemp("", "moraine-ext-commitlog-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := duckdbtest.BuildExtension(tmp, "provider/glue"); err != nil {
			fmt.Fprintln(os.Stderr, "building the commit-log extension (set MORAINE_COMMITLOG_EXTENSION_DIR to use a built one):", err)
			os.RemoveAll(tmp)
			os.Exit(1)
		}
		extDir = tmp
		code := m.Run()
		os.RemoveAll(tmp)
		os.Exit(code)
	}
	if _, err := os.Stat(filepath.Join(extDir, "moraine.duckdb_extension")); err != nil {
		fmt.Fprintf(os.Stderr, "MORAINE_COMMITLOG_EXTENSION_DIR=%s holds no moraine.duckdb_extension (run make extension-commitlog): %v\n", extDir, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestSQLCommitLog(t *testing.T) {
	ext := filepath.Join(extDir, "moraine.duckdb_extension")
	sqllogictest.RunDir(t, ".", sqllogictest.Options{
		Engine:     duckdbtest.Engine(),
		Settings:   map[string]string{"allow_unsigned_extensions": "true"},
		Extensions: map[string]string{"moraine": ext},
	})
}
