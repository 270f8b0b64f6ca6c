package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/objstore/objstoretest"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

func s3Factory(t *testing.T, pageSize int) objstore.Store {
	s, _ := s3test.NewStore(t, s3test.PageSize(pageSize))
	return s
}

func TestS3Conformance(t *testing.T) {
	t.Parallel()
	objstoretest.Run(t, s3Factory)
}

func TestRetryingS3Conformance(t *testing.T) {
	t.Parallel()
	objstoretest.Run(t, func(t *testing.T, pageSize int) objstore.Store {
		return objstore.WithRetry(s3Factory(t, pageSize), objstore.RetryOptions{})
	})
}

func wantKind(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got %v, want an error matching %v", what, err, kind)
	}
	var oe *objstore.Error
	if !errors.As(err, &oe) {
		t.Fatalf("%s: %T is not an *objstore.Error", what, err)
	}
}

func TestS3Basics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, loc := s3test.NewStore(t, s3test.PageSize(3))

	if got, want := s.String(), "s3://"+loc.Bucket+"/"+loc.Prefix; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}

	// Put, Get, Head.
	data := []byte("0123456789")
	etag, err := s.Put(ctx, "obj", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) {
		t.Fatalf("ETag %s is not quoted as S3 gives it", etag)
	}
	got, info, err := s.Get(ctx, "obj")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if info.Key != "obj" || info.Size != 10 || info.ETag != etag || info.LastModified.IsZero() {
		t.Fatalf("Get info = %+v (etag from put %s)", info, etag)
	}
	hinfo, err := s.Head(ctx, "obj")
	if err != nil || hinfo != info {
		t.Fatalf("Head = %+v, %v; want %+v", hinfo, err, info)
	}
	_, _, err = s.Get(ctx, "missing")
	wantKind(t, "Get missing", err, objstore.ErrNotFound)
	_, err = s.Head(ctx, "missing")
	wantKind(t, "Head missing", err, objstore.ErrNotFound)

	// Ranges.
	for _, tc := range []struct {
		off, n int64
		want   string
	}{
		{0, -1, "0123456789"},
		{0, 3, "012"},
		{3, 4, "3456"},
		{7, -1, "789"},
		{7, 100, "789"},
		{3, math.MaxInt64, "3456789"},
		{9, 1, "9"},
		{10, 1, ""},
		{10, -1, ""},
		{50, 5, ""},
		{4, 0, ""},
	} {
		b, err := s.GetRange(ctx, "obj", tc.off, tc.n)
		if err != nil || string(b) != tc.want {
			t.Fatalf("GetRange(%d, %d) = %q, %v; want %q", tc.off, tc.n, b, err, tc.want)
		}
	}
	_, err = s.GetRange(ctx, "obj", -1, 2)
	wantKind(t, "GetRange negative offset", err, objstore.ErrInvalid)
	_, err = s.GetRange(ctx, "missing", 0, 2)
	wantKind(t, "GetRange missing", err, objstore.ErrNotFound)
	_, err = s.GetRange(ctx, "missing", 0, 0)
	wantKind(t, "GetRange missing, empty range", err, objstore.ErrNotFound)
	if _, err := s.Put(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, -1}, {0, 5}, {1, -1}} {
		b, err := s.GetRange(ctx, "empty", r[0], r[1])
		if err != nil || len(b) != 0 {
			t.Fatalf("GetRange(empty, %d, %d) = %q, %v", r[0], r[1], b, err)
		}
	}

	// Listing with pagination (page size 3, 10 keys) and prefix isolation.
	var want []string
	for i := range 10 {
		k := fmt.Sprintf("l/%02d", i)
		want = append(want, k)
		if _, err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, "m/x", nil); err != nil {
		t.Fatal(err)
	}
	page, more, err := s.ListPage(ctx, "l/", "")
	if err != nil || len(page) != 3 || !more || page[0].Key != "l/00" {
		t.Fatalf("ListPage = %v, %v, %v; want 3 keys and more", page, more, err)
	}
	all, err := objstore.ListAll(ctx, s, "l/", "")
	if err != nil || fmt.Sprint(keys(all)) != fmt.Sprint(want) {
		t.Fatalf("ListAll = %v, %v; want %v", keys(all), err, want)
	}
	for _, o := range all {
		if o.Size != 4 || o.ETag == "" || !strings.HasPrefix(o.ETag, `"`) {
			t.Fatalf("listed %+v", o)
		}
	}
	after, err := objstore.ListAll(ctx, s, "l/", "l/04")
	if err != nil || fmt.Sprint(keys(after)) != fmt.Sprint(want[5:]) {
		t.Fatalf("ListAll after l/04 = %v, %v", keys(after), err)
	}
	everything, err := objstore.ListAll(ctx, s, "", "")
	if err != nil || len(everything) != 13 { // obj, empty, l/00..09, m/x
		t.Fatalf("ListAll(\"\") = %v, %v", keys(everything), err)
	}
	other, _ := s3test.NewStore(t)
	if o, err := objstore.ListAll(ctx, other, "", ""); err != nil || len(o) != 0 {
		t.Fatalf("a fresh prefix lists %v, %v", keys(o), err)
	}

	// The layout is prefix/key in the bucket, readable by other clients.
	root, err := objstore.Open(ctx, "s3://"+loc.Bucket, objstore.Options{S3: loc.S3})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _, err := root.Get(ctx, loc.Prefix+"/l/03"); err != nil || string(raw) != "l/03" {
		t.Fatalf("raw Get of %s/l/03 = %q, %v", loc.Prefix, raw, err)
	}
	// Reopening the location sees the same objects.
	again, err := loc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := again.Head(ctx, "obj"); err != nil || h.ETag != etag {
		t.Fatalf("reopened Head = %+v, %v", h, err)
	}

	// PutIfAbsent.
	e1, err := s.PutIfAbsent(ctx, "once", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.PutIfAbsent(ctx, "once", []byte("second"))
	wantKind(t, "PutIfAbsent on an existing key", err, objstore.ErrExists)
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "PreconditionFailed" {
		t.Fatalf("the SDK cause is not reachable through errors.As: %v", err)
	}
	if b, _, _ := s.Get(ctx, "once"); string(b) != "first" {
		t.Fatalf("PutIfAbsent overwrote: %q", b)
	}

	// PutIfMatch.
	e2, err := s.PutIfMatch(ctx, "once", []byte("third"), e1)
	if err != nil {
		t.Fatal(err)
	}
	if e2 == e1 {
		t.Fatalf("PutIfMatch kept the ETag %s", e2)
	}
	_, err = s.PutIfMatch(ctx, "once", []byte("stale"), e1)
	wantKind(t, "PutIfMatch with a stale ETag", err, objstore.ErrPrecondition)
	_, err = s.PutIfMatch(ctx, "once", []byte("empty etag"), "")
	wantKind(t, "PutIfMatch with an empty ETag", err, objstore.ErrPrecondition)
	_, err = s.PutIfMatch(ctx, "nothing-here", []byte("x"), e2)
	wantKind(t, "PutIfMatch on a missing key", err, objstore.ErrNotFound)
	if b, _, _ := s.Get(ctx, "once"); string(b) != "third" {
		t.Fatalf("after failed PutIfMatch: %q", b)
	}

	// Delete is idempotent.
	for i := range 2 {
		if err := s.Delete(ctx, "once"); err != nil {
			t.Fatalf("Delete #%d: %v", i, err)
		}
	}
	_, _, err = s.Get(ctx, "once")
	wantKind(t, "Get after Delete", err, objstore.ErrNotFound)
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Fatal(err)
	}

	// Keys S3 cannot hold.
	_, err = s.Put(ctx, "", nil)
	wantKind(t, "empty key", err, objstore.ErrInvalid)
	_, err = s.Put(ctx, "bad/\xff", nil)
	wantKind(t, "invalid UTF-8", err, objstore.ErrInvalid)
	_, err = s.Put(ctx, strings.Repeat("k", objstore.MaxKeyLen-len(loc.Prefix)), nil)
	wantKind(t, "key too long with the prefix", err, objstore.ErrInvalid)

	// Context cancellation is reported as such, never as transient.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Put(cctx, "cancelled", []byte("x"))
	if !errors.Is(err, context.Canceled) || objstore.IsTransient(err) {
		t.Fatalf("Put with a cancelled context: %v", err)
	}
}

func keys(infos []objstore.ObjectInfo) []string {
	var out []string
	for _, o := range infos {
		out = append(out, o.Key)
	}
	return out
}

// TestS3ErrorClassification drives real failures through the SDK.
func TestS3ErrorClassification(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, loc := s3test.NewStore(t)

	bad := loc.S3
	bad.SecretAccessKey = "wrong-" + bad.SecretAccessKey
	s, err := objstore.Open(ctx, loc.URI, objstore.Options{S3: bad})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, "k", []byte("x"))
	wantKind(t, "wrong secret", err, objstore.ErrAccessDenied)

	unknown := loc.S3
	unknown.AccessKeyID = "no-such-key-id"
	if s, err = objstore.Open(ctx, loc.URI, objstore.Options{S3: unknown}); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutIfAbsent(ctx, "k", []byte("x"))
	wantKind(t, "unknown access key id", err, objstore.ErrAccessDenied)

	s, err = objstore.Open(ctx, "s3://no-such-bucket-moraine/p", objstore.Options{S3: loc.S3})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Get(ctx, "k")
	if !errors.Is(err, objstore.ErrInvalid) && !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Get in a missing bucket: %v", err)
	}
	_, err = s.Put(ctx, "k", []byte("x"))
	wantKind(t, "Put in a missing bucket", err, objstore.ErrInvalid)

	// Nothing listens on a port we just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := loc.S3
	dead.Endpoint = "http://" + l.Addr().String()
	l.Close()
	s, err = objstore.Open(ctx, loc.URI, objstore.Options{S3: dead})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, "k", []byte("x"))
	wantKind(t, "connection refused", err, objstore.ErrTransient)

	// A deadline is the context's error, not transient.
	dctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-dctx.Done()
	good, err := loc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = good.Put(dctx, "k", []byte("x"))
	if !errors.Is(err, context.DeadlineExceeded) || objstore.IsTransient(err) {
		t.Fatalf("Put past its deadline: %v", err)
	}

	for _, style := range []string{"virtual", "PATH"} {
		o := loc.S3
		o.URLStyle = style
		_, err := objstore.Open(ctx, loc.URI, objstore.Options{S3: o})
		wantKind(t, "URL style "+style, err, objstore.ErrInvalid)
		if !strings.Contains(err.Error(), `"path"`) || !strings.Contains(err.Error(), `"vhost"`) {
			t.Fatalf("URL style error does not name the accepted values: %v", err)
		}
	}
}

// TestS3Races checks the server decides conditional writes atomically:
// exactly one of 32 concurrent PutIfAbsent / PutIfMatch calls wins.
func TestS3Races(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := s3test.NewStore(t)
	const racers = 32
	race := func(t *testing.T, write func(g int) error, loser error) int {
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				switch err := write(g); {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, loser):
				default:
					t.Errorf("racer %d: %v", g, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		return int(wins.Load())
	}
	for round := range 5 {
		key := fmt.Sprintf("race-%d", round)
		if n := race(t, func(g int) error {
			_, err := s.PutIfAbsent(ctx, key, []byte(fmt.Sprint(g)))
			return err
		}, objstore.ErrExists); n != 1 {
			t.Fatalf("round %d: %d PutIfAbsent winners", round, n)
		}
		_, info, err := s.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n := race(t, func(g int) error {
			_, err := s.PutIfMatch(ctx, key, []byte(fmt.Sprint("m", g)), info.ETag)
			return err
		}, objstore.ErrPrecondition); n != 1 {
			t.Fatalf("round %d: %d PutIfMatch winners", round, n)
		}
	}
}

// TestS3Keys checks which keys round-trip through S3 (put, get, list in byte
// order) and that the ones S3 servers cannot hold faithfully are refused
// up front rather than stored under a different name.
func TestS3Keys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := s3test.NewStore(t, s3test.PageSize(4))
	val := make([]byte, 256*3)
	for i := range val {
		val[i] = byte(i)
	}
	good := []string{"bin/sp ace", "bin/%41", "bin/%2541", "bin/.dot", "bin/...", "bin/ünï", "bin/a+b=c&d",
		"bin/\x7f", "bin/tab\t", "bin/nl\n", "bin/日本", "bin/😀", "bin/x/y", "bin/x.y", "bin/~!@$^*()[]{};:',<>?|`"}
	for _, k := range good {
		if _, err := s.PutIfAbsent(ctx, k, val); err != nil {
			t.Fatalf("PutIfAbsent(%q): %v", k, err)
		}
	}
	for _, k := range good {
		data, info, err := s.Get(ctx, k)
		if err != nil || !bytes.Equal(data, val) || info.Key != k {
			t.Fatalf("Get(%q) = %d bytes, key %q, %v", k, len(data), info.Key, err)
		}
	}
	got, err := objstore.ListAll(ctx, s, "bin/", "")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(good)
	slices.Sort(want)
	if fmt.Sprintf("%q", keys(got)) != fmt.Sprintf("%q", want) {
		t.Fatalf("List = %q\nwant   %q", keys(got), want)
	}

	bad := []string{"bin/\xff", "bin/\x7f\x80", "bin/\x01\x02", "bin/nul\x00", "bin/..", "bin/./x", "bin/a//b", "bin/trail/", "/lead", "."}
	for _, k := range bad {
		_, err := s.Put(ctx, k, val)
		wantKind(t, fmt.Sprintf("Put(%q)", k), err, objstore.ErrInvalid)
	}

	// An object and a "directory" of keys under the same name conflict on
	// filesystem-backed servers; that must be ErrInvalid, never transient
	// (retrying cannot help).
	if _, err := s.Put(ctx, "dir", val); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "dir/child", val); err != nil && !errors.Is(err, objstore.ErrInvalid) {
		t.Fatalf("Put under an object: %v", err)
	}
}
