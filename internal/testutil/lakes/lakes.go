// Package lakes makes lakes for tests: fixtures several test packages
// share.
package lakes

import (
	"context"
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// FutureFormat creates a lake in a fresh directory and stamps its format
// one past what this build reads, as a newer moraine would leave it; it
// returns the directory. Opening it must be refused with Migration.
func FutureFormat(t testing.TB) string {
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

// legacy holds lakes at the older formats 9, 10 and 11, each a local store's
// directory, written once by core's TestWriteLegacyLakes (which says how to
// write them again). "all:" keeps the local store's escaped names that
// begin with a dot or an underscore.
//
//go:embed all:testdata/legacy
var legacy embed.FS

// Legacy copies the legacy lake name (a directory of testdata/legacy, e.g.
// "full-9") into a fresh directory and returns it: a local store holding a
// catalog at that lake's older format, for migration tests and the format
// refusals.
func Legacy(t testing.TB, name string) string {
	t.Helper()
	src, err := fs.Sub(legacy, "testdata/legacy/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(src, "."); err != nil {
		t.Fatalf("no legacy lake %q in internal/testutil/lakes/testdata/legacy: %v", name, err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, src); err != nil {
		t.Fatal(err)
	}
	return dir
}
