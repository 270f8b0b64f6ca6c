package attach

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

// ignoringProxy fronts an S3 server and makes it look like one that
// ignores If-None-Match: a PUT the server refuses for the condition (412)
// is answered 200 OK, as a server that writes over the object would. It
// counts the answers it changed.
func ignoringProxy(t *testing.T, endpoint string) (string, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var faked atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPut && r.Request.Header.Get("If-None-Match") != "" && r.StatusCode == http.StatusPreconditionFailed {
			faked.Add(1)
			r.Body.Close()
			r.StatusCode, r.Status = http.StatusOK, "200 OK"
			r.Body = io.NopCloser(strings.NewReader(""))
			r.ContentLength = 0
			r.Header.Del("Content-Length")
			r.Header.Set("ETag", `"ignored"`)
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL, &faked
}

// A read-write attach of an S3 store that ignores conditional writes is
// refused by name before the catalog writes anything; through the same
// server without the proxy the store attaches, and READ_ONLY attaches
// through the proxy (a reader writes nothing).
func TestAttachRefusesAStoreIgnoringConditionalWrites(t *testing.T) {
	ctx := context.Background()
	loc := s3test.NewLocation(t)
	proxyURL, faked := ignoringProxy(t, loc.Server.Endpoint)
	config := func(endpoint string, extra ...any) *Config {
		kv := append([]any{"S3_ENDPOINT", endpoint, "S3_KEY_ID", loc.Server.AccessKey, "S3_SECRET", loc.Server.SecretKey,
			"S3_REGION", loc.Server.Region, "S3_URL_STYLE", "path"}, extra...)
		c, err := Parse(loc.URI+"/lake", opts(kv...))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	_, err := config(proxyURL).Open(ctx)
	if core.KindOf(err) != core.Configuration || !strings.Contains(err.Error(), "does not honour conditional writes") ||
		!strings.Contains(err.Error(), loc.Bucket) {
		t.Fatalf("read-write attach through a server ignoring If-None-Match: %v, want a Configuration error naming the store", err)
	}
	if faked.Load() != 1 {
		t.Fatalf("the proxy answered %d refused creates with 200, want the probe's one", faked.Load())
	}
	store, err := loc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(t, store); len(keys) != 0 {
		t.Fatalf("the refused attach left %q in the store", keys)
	}

	a, err := config(loc.Server.Endpoint).Open(ctx)
	if err != nil {
		t.Fatalf("read-write attach through the server itself: %v", err)
	}
	if _, err := a.Catalog.Head(ctx); err != nil {
		t.Fatalf("the attached lake: %v", err)
	}
	a.Close(ctx)
	r, err := config(proxyURL, "READ_ONLY", true).Open(ctx)
	if err != nil {
		t.Fatalf("READ_ONLY attach through the proxy: %v", err)
	}
	r.Close(ctx)
}

func listKeys(t *testing.T, s objstore.Store) []string {
	t.Helper()
	objs, err := objstore.ListAll(context.Background(), s, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}
