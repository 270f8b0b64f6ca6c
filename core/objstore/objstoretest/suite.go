// Package objstoretest is the conformance suite every objstore backend and
// wrapper must pass. It lives in a non-test file so any package can run it
// against its own store (memory, local, S3, wrappers stacked on them).
package objstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moraine-go/moraine/core/objstore"
)

// Factory returns a fresh, empty store for one subtest. The store must list
// at most pageSize objects per ListPage when pageSize > 0 (backends take it
// as their page-size option); Run uses a small page size to test pagination
// without thousands of objects, and one test with more than 1000 keys at the
// default page size.
type Factory func(t *testing.T, pageSize int) objstore.Store

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newStore Factory)
	}{
		{"GetMissing", testGetMissing},
		{"PutGetHead", testPutGetHead},
		{"EmptyObject", testEmptyObject},
		{"Ranges", testRanges},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfMatch", testPutIfMatch},
		{"DeleteIdempotentAndRecreate", testDelete},
		{"ListOrderPrefixStartAfter", testList},
		{"ListPagination", testListPagination},
		{"ListMoreThanOneDefaultPage", testListThousand},
		{"BinaryKeysAndValues", testBinary},
		{"RacePutIfAbsent", testRacePutIfAbsent},
		{"RacePutIfMatch", testRacePutIfMatch},
		{"InvalidKey", testInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

func ctx() context.Context { return context.Background() }

func mustPut(t *testing.T, s objstore.Store, key string, data []byte) string {
	t.Helper()
	etag, err := s.Put(ctx(), key, data)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	if etag == "" {
		t.Fatalf("Put(%q) returned an empty ETag", key)
	}
	return etag
}

func mustGet(t *testing.T, s objstore.Store, key string) ([]byte, objstore.ObjectInfo) {
	t.Helper()
	data, info, err := s.Get(ctx(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return data, info
}

func wantKind(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, kind)
	}
}

func testGetMissing(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	_, _, err := s.Get(ctx(), "nope")
	wantKind(t, "Get missing", err, objstore.ErrNotFound)
	_, err = s.GetRange(ctx(), "nope", 0, 10)
	wantKind(t, "GetRange missing", err, objstore.ErrNotFound)
	_, err = s.Head(ctx(), "nope")
	wantKind(t, "Head missing", err, objstore.ErrNotFound)
	_, err = s.PutIfMatch(ctx(), "nope", []byte("x"), `"whatever"`)
	wantKind(t, "PutIfMatch missing", err, objstore.ErrNotFound)
	if _, _, err := s.Get(ctx(), "nope"); err == nil {
		t.Fatal("PutIfMatch on a missing key created it")
	}
}

func testPutGetHead(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	e1 := mustPut(t, s, "a/b/c.txt", []byte("hello"))
	data, info := mustGet(t, s, "a/b/c.txt")
	if string(data) != "hello" || info.Size != 5 || info.ETag != e1 || info.Key != "a/b/c.txt" {
		t.Fatalf("Get = %q %+v, want hello size 5 etag %s", data, info, e1)
	}
	if info.LastModified.IsZero() {
		t.Fatal("Get returned a zero LastModified")
	}
	h, err := s.Head(ctx(), "a/b/c.txt")
	if err != nil || h.Size != 5 || h.ETag != e1 {
		t.Fatalf("Head = %+v, %v; want size 5 etag %s", h, err, e1)
	}
	e2 := mustPut(t, s, "a/b/c.txt", []byte("bye"))
	if e2 == e1 {
		t.Fatalf("overwrite kept ETag %s", e1)
	}
	data, _ = mustGet(t, s, "a/b/c.txt")
	if string(data) != "bye" {
		t.Fatalf("after overwrite Get = %q", data)
	}
}

func testEmptyObject(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	if _, err := s.PutIfAbsent(ctx(), "wal/00000000000000000001.sst", nil); err != nil {
		t.Fatalf("PutIfAbsent empty: %v", err)
	}
	data, info := mustGet(t, s, "wal/00000000000000000001.sst")
	if len(data) != 0 || info.Size != 0 {
		t.Fatalf("empty object read back as %d bytes (size %d)", len(data), info.Size)
	}
	h, err := s.Head(ctx(), "wal/00000000000000000001.sst")
	if err != nil || h.Size != 0 {
		t.Fatalf("Head empty = %+v, %v", h, err)
	}
	_, err = s.PutIfAbsent(ctx(), "wal/00000000000000000001.sst", []byte("data"))
	wantKind(t, "PutIfAbsent over an empty object", err, objstore.ErrExists)
	got, err := objstore.ListAll(ctx(), s, "wal/", "")
	if err != nil || len(got) != 1 || got[0].Size != 0 {
		t.Fatalf("List of empty object = %+v, %v", got, err)
	}
	r, err := s.GetRange(ctx(), "wal/00000000000000000001.sst", 0, 10)
	if err != nil || len(r) != 0 {
		t.Fatalf("GetRange on empty object = %q, %v", r, err)
	}
}

func testRanges(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	mustPut(t, s, "r", []byte("0123456789"))
	cases := []struct {
		off, n int64
		want   string
	}{
		{0, 10, "0123456789"},
		{0, -1, "0123456789"},
		{2, 3, "234"},
		{7, -1, "789"},
		{7, 100, "789"}, // runs past the end: cut at the end
		{9, 1, "9"},     // last byte
		{10, 5, ""},     // starts at the end
		{100, 5, ""},    // starts past the end
		{3, 0, ""},      // zero length
		{0, 1, "0"},     // first byte
		{5, 5, "56789"}, // exactly to the end
		{5, 6, "56789"}, // one past the end
		{11, -1, ""},    // open range past the end
		{1, 8, "12345678"},
	}
	for _, c := range cases {
		got, err := s.GetRange(ctx(), "r", c.off, c.n)
		if err != nil {
			t.Fatalf("GetRange(%d,%d): %v", c.off, c.n, err)
		}
		if string(got) != c.want {
			t.Errorf("GetRange(%d,%d) = %q, want %q", c.off, c.n, got, c.want)
		}
	}
	_, err := s.GetRange(ctx(), "r", -1, 2)
	wantKind(t, "GetRange negative offset", err, objstore.ErrInvalid)
}

func testPutIfAbsent(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	e1, err := s.PutIfAbsent(ctx(), "m/1", []byte("first"))
	if err != nil || e1 == "" {
		t.Fatalf("PutIfAbsent on a free key: %q, %v", e1, err)
	}
	_, err = s.PutIfAbsent(ctx(), "m/1", []byte("second"))
	wantKind(t, "PutIfAbsent on a taken key", err, objstore.ErrExists)
	for _, k := range []error{objstore.ErrPrecondition, objstore.ErrNotFound, objstore.ErrTransient} {
		if errors.Is(err, k) {
			t.Fatalf("ErrExists also matches %v", k)
		}
	}
	data, info := mustGet(t, s, "m/1")
	if string(data) != "first" || info.ETag != e1 {
		t.Fatalf("loser changed the object: %q etag %s (want first, %s)", data, info.ETag, e1)
	}
}

func testPutIfMatch(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	e1 := mustPut(t, s, "cas", []byte("v1"))
	e2, err := s.PutIfMatch(ctx(), "cas", []byte("v2"), e1)
	if err != nil {
		t.Fatalf("PutIfMatch with the current ETag: %v", err)
	}
	if e2 == e1 || e2 == "" {
		t.Fatalf("PutIfMatch returned ETag %q (old %q)", e2, e1)
	}
	_, err = s.PutIfMatch(ctx(), "cas", []byte("v3"), e1)
	wantKind(t, "PutIfMatch with a stale ETag", err, objstore.ErrPrecondition)
	data, info := mustGet(t, s, "cas")
	if string(data) != "v2" || info.ETag != e2 {
		t.Fatalf("after stale CAS: %q %s, want v2 %s", data, info.ETag, e2)
	}
	// Same bytes again still changes state only through the current ETag.
	e3, err := s.PutIfMatch(ctx(), "cas", []byte("v2"), e2)
	if err != nil {
		t.Fatalf("PutIfMatch same bytes: %v", err)
	}
	if _, err := s.PutIfMatch(ctx(), "cas", []byte("v4"), e3); err != nil {
		t.Fatalf("PutIfMatch after same-bytes write: %v", err)
	}
	// An ETag from PutIfAbsent works for PutIfMatch.
	ea, err := s.PutIfAbsent(ctx(), "cas2", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx(), "cas2", []byte("b"), ea); err != nil {
		t.Fatalf("PutIfMatch with PutIfAbsent's ETag: %v", err)
	}
	// A Head ETag works too.
	h, err := s.Head(ctx(), "cas2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx(), "cas2", []byte("c"), h.ETag); err != nil {
		t.Fatalf("PutIfMatch with Head's ETag: %v", err)
	}
}

func testDelete(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	if err := s.Delete(ctx(), "never-existed"); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
	mustPut(t, s, "d/x", []byte("1"))
	if err := s.Delete(ctx(), "d/x"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Delete(ctx(), "d/x"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	_, _, err := s.Get(ctx(), "d/x")
	wantKind(t, "Get after Delete", err, objstore.ErrNotFound)
	if _, err := s.PutIfAbsent(ctx(), "d/x", []byte("2")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	data, _ := mustGet(t, s, "d/x")
	if string(data) != "2" {
		t.Fatalf("re-created object = %q", data)
	}
	got, err := objstore.ListAll(ctx(), s, "d/", "")
	if err != nil || len(got) != 1 {
		t.Fatalf("List after re-create = %+v, %v", got, err)
	}
}

func keysOf(infos []objstore.ObjectInfo) []string {
	out := make([]string, len(infos))
	for i, o := range infos {
		out[i] = o.Key
	}
	return out
}

func testList(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	keys := []string{"wal/00000000000000000002.sst", "wal/00000000000000000010.sst", "wal/00000000000000000001.sst",
		"manifest/00000000000000000001.manifest", "walrus", "wal/sub/deep/x", "w", "wal/00000000000000000003.sst"}
	for i, k := range keys {
		mustPut(t, s, k, []byte{byte(i)})
	}
	all, err := objstore.ListAll(ctx(), s, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"manifest/00000000000000000001.manifest", "w", "wal/00000000000000000001.sst", "wal/00000000000000000002.sst",
		"wal/00000000000000000003.sst", "wal/00000000000000000010.sst", "wal/sub/deep/x", "walrus"}
	if got := keysOf(all); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("List all = %v\nwant %v", got, want)
	}
	cases := []struct {
		prefix, after string
		want          []string
	}{
		{"wal/", "", want[2:7]},
		{"wal", "", want[2:8]},
		{"wal/", "wal/00000000000000000002.sst", want[4:7]},
		{"wal/0000", "wal/00000000000000000001.sst", want[3:6]},
		{"wal/", "wal/00000000000000000002", want[3:7]}, // startAfter need not be a key
		{"wal/", "zzz", nil},
		{"nothing/", "", nil},
		{"", "w", want[2:]},
		{"wal/sub/", "", []string{"wal/sub/deep/x"}},
		{"wal/sub/deep/x", "", []string{"wal/sub/deep/x"}},
		{"manifest/00000000000000000001.manifest", "manifest/00000000000000000001.manifest", nil},
	}
	for _, c := range cases {
		got, err := objstore.ListAll(ctx(), s, c.prefix, c.after)
		if err != nil {
			t.Fatalf("List(%q, %q): %v", c.prefix, c.after, err)
		}
		if g := keysOf(got); strings.Join(g, ",") != strings.Join(c.want, ",") {
			t.Errorf("List(%q, after %q) = %v, want %v", c.prefix, c.after, g, c.want)
		}
	}
	for _, o := range all {
		if o.Size != 1 || o.ETag == "" || o.LastModified.IsZero() {
			t.Errorf("List entry %+v lacks size/etag/time", o)
		}
	}
}

func testListPagination(t *testing.T, newStore Factory) {
	s := newStore(t, 7)
	const n = 50
	for i := 0; i < n; i++ {
		mustPut(t, s, fmt.Sprintf("p/%04d", i), nil)
	}
	mustPut(t, s, "q", nil)
	page, more, err := s.ListPage(ctx(), "p/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 7 || !more {
		t.Fatalf("first page: %d objects, more=%v; want 7, true", len(page), more)
	}
	all, err := objstore.ListAll(ctx(), s, "p/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("List across pages: %d objects, want %d", len(all), n)
	}
	for i, o := range all {
		if want := fmt.Sprintf("p/%04d", i); o.Key != want {
			t.Fatalf("List[%d] = %q, want %q", i, o.Key, want)
		}
	}
	after, err := objstore.ListAll(ctx(), s, "p/", "p/0042")
	if err != nil || len(after) != 7 || after[0].Key != "p/0043" {
		t.Fatalf("List after p/0042 = %v, %v", keysOf(after), err)
	}
	// Stopping the iterator early is allowed.
	count := 0
	for _, err := range objstore.List(ctx(), s, "p/", "") {
		if err != nil {
			t.Fatal(err)
		}
		count++
		if count == 10 {
			break
		}
	}
	if count != 10 {
		t.Fatalf("early stop counted %d", count)
	}
}

func testListThousand(t *testing.T, newStore Factory) {
	if testing.Short() {
		t.Skip("-short: 1100 PUTs")
	}
	s := newStore(t, 0)
	const n = 1100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := s.Put(ctx(), fmt.Sprintf("big/%05d", i), []byte("x")); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	page, more, err := s.ListPage(ctx(), "big/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page) >= n || !more {
		t.Fatalf("one page held %d of %d objects (more=%v): pagination not exercised", len(page), n, more)
	}
	all, err := objstore.ListAll(ctx(), s, "big/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n || all[0].Key != "big/00000" || all[n-1].Key != fmt.Sprintf("big/%05d", n-1) {
		t.Fatalf("List of %d keys returned %d", n, len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Key >= all[i].Key {
			t.Fatalf("List out of order at %d: %q >= %q", i, all[i-1].Key, all[i].Key)
		}
	}
}

func testBinary(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	val := make([]byte, 256*3)
	for i := range val {
		val[i] = byte(i)
	}
	// Portable keys: every backend must store them as given.
	keys := []string{"bin/sp ace", "bin/%41", "bin/.dot", "bin/ünï", "bin/a+b=c&d", "bin/tab\t", "bin/q?x#y", "bin/~*'()!"}
	// Raw keys: a backend may refuse them with ErrInvalid (S3 requires
	// UTF-8 and has no empty, "." or ".." segments) but must never store
	// them under another name.
	raw := []string{"bin/\x01\x02\xff", "bin/..", "bin/\x7f\x80", "bin/a//b", "bin/./c"}
	for _, k := range keys {
		if _, err := s.PutIfAbsent(ctx(), k, val); err != nil {
			t.Fatalf("PutIfAbsent(%q): %v", k, err)
		}
	}
	for _, k := range raw {
		_, err := s.PutIfAbsent(ctx(), k, val)
		switch {
		case err == nil:
			keys = append(keys, k)
		case errors.Is(err, objstore.ErrInvalid):
			if _, _, gerr := s.Get(ctx(), k); !errors.Is(gerr, objstore.ErrInvalid) && !errors.Is(gerr, objstore.ErrNotFound) {
				t.Fatalf("refused key %q then Get returned %v", k, gerr)
			}
		default:
			t.Fatalf("PutIfAbsent(%q): %v (want success or ErrInvalid)", k, err)
		}
	}
	for _, k := range keys {
		data, info := mustGet(t, s, k)
		if !bytes.Equal(data, val) || info.Key != k {
			t.Fatalf("Get(%q) returned %d bytes key %q", k, len(data), info.Key)
		}
	}
	got, err := objstore.ListAll(ctx(), s, "bin/", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Fatalf("List returned %q, want the %d keys %q", keysOf(got), len(keys), keys)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].Key >= got[i].Key {
			t.Fatalf("binary keys out of byte order: %q >= %q", got[i-1].Key, got[i].Key)
		}
	}
	seen := map[string]bool{}
	for _, o := range got {
		seen[o.Key] = true
	}
	for _, k := range keys {
		if !seen[k] {
			t.Fatalf("List lost key %q (got %q)", k, keysOf(got))
		}
	}
}

const racers = 32

func testRacePutIfAbsent(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	for round := 0; round < 3; round++ {
		key := fmt.Sprintf("race/%d", round)
		var wins atomic.Int32
		var winner atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, racers)
		for g := 0; g < racers; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				<-start
				_, err := s.PutIfAbsent(ctx(), key, []byte(fmt.Sprintf("racer-%d", g)))
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int32(g))
				case errors.Is(err, objstore.ErrExists):
				default:
					errs <- err
				}
			}(g)
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("racer failed with an unexpected error: %v", err)
		}
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d PutIfAbsent winners, want exactly 1", round, wins.Load())
		}
		data, _ := mustGet(t, s, key)
		if want := fmt.Sprintf("racer-%d", winner.Load()); string(data) != want {
			t.Fatalf("stored %q, winner wrote %q", data, want)
		}
	}
}

func testRacePutIfMatch(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	etag := mustPut(t, s, "cas-race", []byte("base"))
	for round := 0; round < 3; round++ {
		var wins atomic.Int32
		var winner atomic.Int32
		var winnerTag atomic.Value
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, racers)
		for g := 0; g < racers; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				<-start
				e, err := s.PutIfMatch(ctx(), "cas-race", []byte(fmt.Sprintf("r%d-g%d", round, g)), etag)
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(int32(g))
					winnerTag.Store(e)
				case errors.Is(err, objstore.ErrPrecondition):
				default:
					errs <- err
				}
			}(g)
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("racer failed with an unexpected error: %v", err)
		}
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d PutIfMatch winners, want exactly 1", round, wins.Load())
		}
		data, info := mustGet(t, s, "cas-race")
		if want := fmt.Sprintf("r%d-g%d", round, winner.Load()); string(data) != want {
			t.Fatalf("stored %q, winner wrote %q", data, want)
		}
		etag = winnerTag.Load().(string)
		if info.ETag != etag {
			t.Fatalf("stored ETag %s, winner got %s", info.ETag, etag)
		}
	}
}

func testInvalidKey(t *testing.T, newStore Factory) {
	s := newStore(t, 0)
	_, err := s.Put(ctx(), "", []byte("x"))
	wantKind(t, "Put empty key", err, objstore.ErrInvalid)
	_, err = s.PutIfAbsent(ctx(), strings.Repeat("k", objstore.MaxKeyLen+1), []byte("x"))
	wantKind(t, "PutIfAbsent over-long key", err, objstore.ErrInvalid)
	_, _, err = s.Get(ctx(), "")
	wantKind(t, "Get empty key", err, objstore.ErrInvalid)
}
