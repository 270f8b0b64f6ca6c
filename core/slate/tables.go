package slate

import (
	"context"
	"fmt"
	"sync"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/moraine-go/moraine/core/slate/internal/sst"
	"github.com/oklog/ulid/v2"
)

// tableCache opens SSTs under compacted/ and keeps them open. Small tables
// are fetched whole (one GET, then no further requests); large ones are read
// by byte range, block by block.
type tableCache struct {
	store objstore.Store
	dir   string
	whole int

	mu sync.Mutex
	m  map[ulid.ULID]*sst.Table
}

func newTableCache(store objstore.Store, root string, whole int) *tableCache {
	return &tableCache{store: store, dir: joinPath(root, "compacted/"), whole: whole, m: map[ulid.ULID]*sst.Table{}}
}

func (c *tableCache) key(id ulid.ULID) string { return c.dir + id.String() + ".sst" }

func (c *tableCache) parseKey(key string) (ulid.ULID, bool) {
	if len(key) != len(c.dir)+26+4 || key[:len(c.dir)] != c.dir || key[len(key)-4:] != ".sst" {
		return ulid.ULID{}, false
	}
	id, err := ulid.ParseStrict(key[len(c.dir) : len(c.dir)+26])
	return id, err == nil
}

// add caches a table the process just wrote.
func (c *tableCache) add(id ulid.ULID, data []byte) {
	if len(data) > c.whole {
		return
	}
	t, err := sst.OpenBytes(data)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.m[id] = t
	c.mu.Unlock()
}

func (c *tableCache) open(ctx context.Context, h manifest.SST) (*sst.Table, error) {
	c.mu.Lock()
	t, ok := c.m[h.ID]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	key := c.key(h.ID)
	var err error
	if h.Size <= int64(c.whole) {
		var data []byte
		data, _, err = c.store.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("slate: reading SST %s: %w", h.ID, err)
		}
		t, err = sst.OpenBytes(data)
	} else {
		rr := func(ctx context.Context, off, n int64) ([]byte, error) { return c.store.GetRange(ctx, key, off, n) }
		t, err = sst.Open(ctx, rr, h.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: SST %s: %v", ErrCorrupt, h.ID, err)
	}
	c.mu.Lock()
	c.m[h.ID] = t
	c.mu.Unlock()
	return t, nil
}

// retain drops cached tables not in keep.
func (c *tableCache) retain(keep map[ulid.ULID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.m {
		if !keep[id] {
			delete(c.m, id)
		}
	}
}

// tree is an immutable view of the on-store part of the LSM.
type tree struct {
	l0   []manifest.SST // newest first
	runs []manifest.Run // newest first
}

func treeOf(m *manifest.Manifest) tree {
	c := m.Clone()
	return tree{l0: c.L0, runs: c.Runs}
}

func (t tree) ids() map[ulid.ULID]bool {
	out := map[ulid.ULID]bool{}
	for _, s := range t.l0 {
		out[s.ID] = true
	}
	for _, r := range t.runs {
		for _, s := range r.SSTs {
			out[s.ID] = true
		}
	}
	return out
}
