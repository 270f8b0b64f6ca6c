package slate_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/oklog/ulid/v2"
)

// Helpers shared by the upkeep tests (GC, compaction, checkpoints, WAL
// store moves).

// nativeStoreEnvs: the native WAL on the memory store and on the local
// filesystem store. Upkeep tests that exercise object layout (GC, crash
// sweeps, WAL store moves) run on both.
func nativeStoreEnvs() []*env {
	return []*env{{name: "memory", store: memStore}, {name: "local", store: localStore}}
}

// manifestIDs lists the manifest ids present, ascending.
func manifestIDs(t *testing.T, s objstore.Store) []uint64 {
	t.Helper()
	infos, err := objstore.ListAll(bg, s, "db/manifest/", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, o := range infos {
		name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, "db/manifest/"), ".manifest")
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			t.Fatalf("manifest key %q: %v", o.Key, err)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// walDataIDs lists the ids of the non-empty (non-fence) WAL files present.
func walDataIDs(t *testing.T, s objstore.Store) []uint64 {
	t.Helper()
	infos, err := objstore.ListAll(bg, s, "db/wal/", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, o := range infos {
		if o.Size == 0 {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(o.Key, "db/wal/"), ".sst"), 10, 64)
		if err != nil {
			t.Fatalf("WAL key %q: %v", o.Key, err)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// sstIDs lists the tables under compacted/, ascending.
func sstIDs(t *testing.T, s objstore.Store) []ulid.ULID {
	t.Helper()
	infos, err := objstore.ListAll(bg, s, "db/compacted/", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []ulid.ULID
	for _, o := range infos {
		id, err := ulid.ParseStrict(strings.TrimSuffix(strings.TrimPrefix(o.Key, "db/compacted/"), ".sst"))
		if err != nil {
			t.Fatalf("SST key %q: %v", o.Key, err)
		}
		out = append(out, id)
	}
	slices.SortFunc(out, ulid.ULID.Compare)
	return out
}

// waitStoreClockPast returns once an object written to s now is stamped
// (LastModified) after t0. The local store stamps with the filesystem's
// clock, which may be coarser than time.Now: without the wait an object
// written just after t0 could carry a time before it. It waits for the
// clock, it asserts nothing about it.
func waitStoreClockPast(t *testing.T, s objstore.Store, t0 time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := s.Put(bg, "probe/clock", []byte("x")); err != nil {
			t.Fatal(err)
		}
		info, err := s.Head(bg, "probe/clock")
		if err != nil {
			t.Fatal(err)
		}
		if info.LastModified.After(t0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's clock stays at %v, not after %v", info.LastModified, t0)
		}
		time.Sleep(time.Millisecond)
	}
}

// without returns the elements of a not in b, in a's order.
func without[T comparable](a, b []T) []T {
	var out []T
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// waitUntil polls cond every few milliseconds until it holds, failing the
// test with what() after a generous deadline (a loaded CI machine is slow:
// tests count work, not time).
func waitUntil(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting after 60s: %s", what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
