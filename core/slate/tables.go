package slate

import (
	"context"
	"crypto/rand"
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

// drop forgets a cached table (no longer in the tree).
func (c *tableCache) drop(id ulid.ULID) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// openScan opens a table for one sequential pass (compaction): small tables
// come whole in one GET, large ones through a read-ahead of
// scanReadAhead bytes per request instead of one request per block. It
// uses a cached table when there is one and caches nothing.
func (c *tableCache) openScan(ctx context.Context, h manifest.SST) (*sst.Table, error) {
	c.mu.Lock()
	t, ok := c.m[h.ID]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	key := c.key(h.ID)
	var err error
	if h.Size <= int64(max(c.whole, scanReadAhead)) {
		var data []byte
		data, _, err = c.store.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("slate: reading SST %s: %w", h.ID, err)
		}
		t, err = sst.OpenBytes(data)
	} else {
		ra := &readAhead{store: c.store, key: key, size: h.Size}
		t, err = sst.Open(ctx, ra.read, h.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: SST %s: %v", ErrCorrupt, h.ID, err)
	}
	return t, nil
}

// scanReadAhead is how much a sequential table scan fetches per request.
const scanReadAhead = 4 << 20

// readAhead serves ranged reads of one object from a window fetched
// scanReadAhead bytes at a time (a sequential scan costs one GET per
// window, not one per block).
type readAhead struct {
	store objstore.Store
	key   string
	size  int64

	mu  sync.Mutex
	off int64
	buf []byte // never written after it is fetched: slices of it are handed out
}

func (r *readAhead) read(ctx context.Context, off, n int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off >= r.off && off+n <= r.off+int64(len(r.buf)) {
		lo := off - r.off
		return r.buf[lo : lo+n : lo+n], nil
	}
	if n >= scanReadAhead {
		return r.store.GetRange(ctx, r.key, off, n)
	}
	want := min(int64(scanReadAhead), r.size-off)
	if want < n {
		want = n
	}
	buf, err := r.store.GetRange(ctx, r.key, off, want)
	if err != nil {
		return nil, err
	}
	if int64(len(buf)) < n {
		return buf, nil // short: the table reports it
	}
	r.off, r.buf = off, buf
	return r.buf[:n:n], nil
}

// mintAfter returns a new ULID greater than floor whose time is no earlier
// than floor's, even if the clock stepped back: GC's ULID-time cutoffs rely
// on it (see the package doc).
func mintAfter(floor ulid.ULID) ulid.ULID {
	id := ulid.Make()
	if id.Compare(floor) > 0 {
		return id
	}
	ms := floor.Time() + 1
	return ulid.MustNew(min(ms, ulid.MaxTime()), rand.Reader)
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
