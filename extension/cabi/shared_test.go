package cabi

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moraine-go/moraine/attach"
)

func openMemory(t *testing.T, name string) func() (*attach.Attached, error) {
	return func() (*attach.Attached, error) {
		cfg, err := attach.Parse("memory://"+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Open(context.Background())
	}
}

// Attaches of one store with one set of options share one open catalog
// (racing ones included); the last release closes it, and a failed open is
// not kept.
func TestAttachesOfOneStoreShareOneCatalog(t *testing.T) {
	const n = 8
	var opens atomic.Int32
	open := openMemory(t, t.Name())
	counted := func() (*attach.Attached, error) { opens.Add(1); return open() }
	key := attachKey("memory://"+t.Name(), []attach.Option{{Name: "b", Value: true}, {Name: "A", Value: int64(1)}}, true)
	if other := attachKey("memory://"+t.Name(), []attach.Option{{Name: "a", Value: int64(1)}, {Name: "B", Value: true}}, true); other != key {
		t.Fatalf("the same options in another order and case give another key:\n%s\n%s", key, other)
	}
	if other := attachKey("memory://"+t.Name(), []attach.Option{{Name: "a", Value: int64(2)}, {Name: "B", Value: true}}, true); other == key {
		t.Fatalf("other options give the same key %s", key)
	}
	cats := make([]attachedCatalog, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := acquire(key, counted)
			if err != nil {
				t.Error(err)
			}
			cats[i] = c
		}()
	}
	wg.Wait()
	if opens.Load() != 1 {
		t.Fatalf("%d acquires opened the store %d times, want once", n, opens.Load())
	}
	for _, c := range cats[1:] {
		if c.Catalog != cats[0].Catalog || c.lake != cats[0].lake {
			t.Fatal("two acquires of one key got different catalogs")
		}
	}
	for i := range n - 1 {
		if err := release(context.Background(), key); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
		if _, err := cats[0].Catalog.View(context.Background()); err != nil {
			t.Fatalf("the catalog closed with %d handles left: %v", n-1-i, err)
		}
	}
	if err := release(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if _, err := cats[0].Catalog.View(context.Background()); err == nil {
		t.Fatal("the last release left the catalog open")
	}
	// Opened again after the last release: a fresh open.
	if _, err := acquire(key, counted); err != nil || opens.Load() != 2 {
		t.Fatalf("acquire after the last release: %v (opens %d, want 2)", err, opens.Load())
	}
	release(context.Background(), key)

	boom := errors.New("boom")
	if _, err := acquire("failing", func() (*attach.Attached, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed open: %v", err)
	}
	if _, err := acquire("failing", openMemory(t, t.Name()+"-2")); err != nil {
		t.Fatalf("acquire after a failed open: %v", err)
	}
	release(context.Background(), "failing")
	opened.mu.Lock()
	left := len(opened.m)
	opened.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d catalogs left open after every release", left)
	}
}
