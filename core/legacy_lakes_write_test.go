//go:build legacylakes

package core_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// TestWriteLegacyLakes writes the legacy lakes again, replacing those in
// legacyLakesDir. It is a generator, not a test, so it is built only with
// the legacylakes tag:
//
//	go test -tags legacylakes ./core -run TestWriteLegacyLakes
//
// The lakes stand for stores older builds wrote: write them again only
// when the fixture content itself must change.
func TestWriteLegacyLakes(t *testing.T) {
	for _, l := range legacyLakes {
		dir := filepath.Join(legacyLakesDir, legacyLakeName(l.content, l.format, l.origin))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		store, err := objstore.NewLocal(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := core.WriteLegacyLakeForTest(bg, store, core.CatalogOptions{}, l.format, l.origin, l.populate); err != nil {
			t.Fatalf("writing %s: %v", dir, err)
		}
		// The local store's scratch directories: empty, and made again
		// by every open.
		for _, scratch := range []string{".tmp", ".locks"} {
			if err := os.RemoveAll(filepath.Join(dir, scratch)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
