package cabi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/extension/internal/storage"
)

// Open catalogs are shared within a process: every attach of one store
// with the same options (from any DuckDB database or connection) gets a
// moraine_catalog handle of its own on one open catalog, and each named
// lake of the store is opened once. Two opens of one store would be two
// writers, and on the single-writer path the second fences the first: a
// process that attaches two lakes of one store (DuckLake's METADATA_SCHEMA
// attaches the store once per lake) or one store twice stays one writer.
// The last handle's moraine_detach closes the catalog.
var opened struct {
	mu sync.Mutex
	m  map[string]*openEntry
}

type openEntry struct {
	ready chan struct{} // closed once cat and err are set
	cat   attachedCatalog
	err   error
	refs  int
}

// acquire returns the catalog open under key, opening it with open when
// no handle holds it; every successful acquire is paired with a release.
// Racing acquires of one key open it once; a failed open is not kept.
func acquire(key string, open func() (*attach.Attached, error)) (attachedCatalog, error) {
	opened.mu.Lock()
	if opened.m == nil {
		opened.m = map[string]*openEntry{}
	}
	if e, ok := opened.m[key]; ok {
		e.refs++
		opened.mu.Unlock()
		<-e.ready
		if e.err != nil {
			opened.mu.Lock()
			e.refs--
			opened.mu.Unlock()
			return attachedCatalog{}, e.err
		}
		return e.cat, nil
	}
	e := &openEntry{ready: make(chan struct{}), refs: 1}
	opened.m[key] = e
	opened.mu.Unlock()

	a, err := open()
	var lake *storage.Lake
	if err == nil {
		lake = storage.NewLake(a.Catalog, a.Config.Path, a.Config.WalStore)
		if err = lake.CheckAttach(context.Background(), a.Config.ReadOnly); err != nil {
			a.Close(context.Background())
		}
	}
	opened.mu.Lock()
	if err != nil {
		e.err = err
		e.refs--
		delete(opened.m, key)
	} else {
		e.cat = attachedCatalog{Attached: a, lake: lake, key: key}
	}
	opened.mu.Unlock()
	close(e.ready)
	return e.cat, err
}

// release drops one reference to the catalog open under key; the last one
// closes it.
func release(ctx context.Context, key string) error {
	opened.mu.Lock()
	e, ok := opened.m[key]
	if !ok {
		opened.mu.Unlock()
		return nil
	}
	e.refs--
	if e.refs > 0 {
		opened.mu.Unlock()
		return nil
	}
	delete(opened.m, key)
	opened.mu.Unlock()
	return e.cat.Close(ctx)
}

// attachKey names an attach's store and options: attaches with equal keys
// share one open catalog.
func attachKey(path string, opts []attach.Option, leaveEmpty bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q leave_empty=%v", path, leaveEmpty)
	opts = slices.Clone(opts)
	slices.SortStableFunc(opts, func(x, y attach.Option) int {
		return strings.Compare(strings.ToUpper(x.Name), strings.ToUpper(y.Name))
	})
	for _, o := range opts {
		fmt.Fprintf(&b, " %s=%#v", strings.ToUpper(o.Name), o.Value)
	}
	return b.String()
}

// lakeKey names a named lake of the store open under root.
func lakeKey(root, name string) string {
	return root + "\x00lake " + core.FoldLakeName(name)
}
