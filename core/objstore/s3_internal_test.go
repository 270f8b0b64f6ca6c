package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"
)

// fakeS3 answers every request with one canned S3 error and counts the
// requests; it checks the classification of answers versitygw does not
// produce on demand (409, 5xx, throttling) and that the SDK does not retry.
type fakeS3 struct {
	status int
	code   string
	hits   atomic.Int32
	last   atomic.Pointer[http.Request]
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	io.Copy(io.Discard, r.Body)
	f.last.Store(r)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(f.status)
	if r.Method != http.MethodHead {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>canned</Message><RequestId>1</RequestId></Error>`, f.code)
	}
}

func newFakeS3(t *testing.T, status int, code string) (*S3Store, *fakeS3) {
	t.Helper()
	f := &fakeS3{status: status, code: code}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := NewS3(context.Background(), "bucket", "pre", S3Options{
		Endpoint: srv.URL, AccessKeyID: "ak", SecretAccessKey: "sk", Region: "us-east-1",
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

func TestS3ClassifyCannedAnswers(t *testing.T) {
	ctx := context.Background()
	type call func(s *S3Store) error
	putIfAbsent := func(s *S3Store) error { _, err := s.PutIfAbsent(ctx, "k", []byte("x")); return err }
	putIfMatch := func(s *S3Store) error { _, err := s.PutIfMatch(ctx, "k", []byte("x"), `"e"`); return err }
	put := func(s *S3Store) error { _, err := s.Put(ctx, "k", []byte("x")); return err }
	get := func(s *S3Store) error { _, _, err := s.Get(ctx, "k"); return err }
	head := func(s *S3Store) error { _, err := s.Head(ctx, "k"); return err }
	list := func(s *S3Store) error { _, _, err := s.ListPage(ctx, "", ""); return err }
	del := func(s *S3Store) error { return s.Delete(ctx, "k") }

	for _, tc := range []struct {
		name   string
		status int
		code   string
		fn     call
		want   error // nil: success
	}{
		{"412 put-if-absent", 412, "PreconditionFailed", putIfAbsent, ErrExists},
		{"412 put-if-match", 412, "PreconditionFailed", putIfMatch, ErrPrecondition},
		{"409 conflict put-if-absent", 409, "ConditionalRequestConflict", putIfAbsent, ErrTransient},
		{"409 conflict put-if-match", 409, "ConditionalRequestConflict", putIfMatch, ErrPrecondition},
		{"404 put-if-match", 404, "NoSuchKey", putIfMatch, ErrNotFound},
		{"404 get", 404, "NoSuchKey", get, ErrNotFound},
		{"404 head (no body)", 404, "", head, ErrNotFound},
		{"404 delete", 404, "NoSuchKey", del, nil},
		{"no such bucket", 404, "NoSuchBucket", put, ErrInvalid},
		{"403 put", 403, "AccessDenied", put, ErrAccessDenied},
		{"403 head (no body)", 403, "", head, ErrAccessDenied},
		{"bad signature", 403, "SignatureDoesNotMatch", list, ErrAccessDenied},
		{"unknown access key (versitygw: 404)", 404, "XAdminUserNotFound", put, ErrAccessDenied},
		{"clock skew", 403, "RequestTimeTooSkewed", put, ErrTransient},
		{"503 slow down", 503, "SlowDown", put, ErrTransient},
		{"500", 500, "InternalError", get, ErrTransient},
		{"502 no code", 502, "", head, ErrTransient},
		{"429", 429, "TooManyRequests", list, ErrTransient},
		{"400 request timeout", 400, "RequestTimeout", put, ErrTransient},
		{"400 invalid argument", 400, "InvalidArgument", put, ErrInvalid},
		{"501 not implemented", 501, "NotImplemented", putIfMatch, ErrInvalid},
		{"409 object/dir conflict", 409, "ObjectParentIsFile", putIfAbsent, ErrInvalid},
		{"409 other", 409, "BucketNotEmpty", del, ErrInvalid},
		{"409 operation aborted", 409, "OperationAborted", put, ErrTransient},
		{"301 wrong region", 301, "PermanentRedirect", get, ErrInvalid},
		{"400 wrong region", 400, "AuthorizationHeaderMalformed", put, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newFakeS3(t, tc.status, tc.code)
			err := tc.fn(s)
			if hits := f.hits.Load(); hits != 1 {
				t.Fatalf("%d requests; the SDK must not retry", hits)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var oe *Error
			if !errors.As(err, &oe) || oe.Err == nil {
				t.Fatalf("%v is not an *Error with its cause", err)
			}
			if tc.code != "" {
				var ae smithy.APIError
				if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
					t.Fatalf("the SDK error is not reachable: %v", err)
				}
			}
			if strings.Contains(err.Error(), "sk") && strings.Contains(err.Error(), "secret") {
				t.Fatalf("error mentions a secret: %v", err)
			}
		})
	}
}

func TestS3InvalidRangeIsEmpty(t *testing.T) {
	s, f := newFakeS3(t, 416, "InvalidRange")
	b, err := s.GetRange(context.Background(), "k", 5, 10)
	if err != nil || len(b) != 0 {
		t.Fatalf("GetRange past the end = %q, %v", b, err)
	}
	if r := f.last.Load(); r.Header.Get("Range") != "bytes=5-14" {
		t.Fatalf("Range header %q", r.Header.Get("Range"))
	}
}

func TestS3ConditionalHeadersAndNoChecksumTrailer(t *testing.T) {
	ctx := context.Background()
	s, f := newFakeS3(t, 500, "InternalError")
	s.PutIfAbsent(ctx, "k", []byte("data"))
	r := f.last.Load()
	if r.Header.Get("If-None-Match") != "*" || r.Header.Get("If-Match") != "" {
		t.Fatalf("PutIfAbsent headers: %v", r.Header)
	}
	if r.URL.Path != "/bucket/pre/k" {
		t.Fatalf("path-style URL with the prefix: got %s", r.URL.Path)
	}
	for h := range r.Header {
		lh := strings.ToLower(h)
		if strings.HasPrefix(lh, "x-amz-checksum") || lh == "x-amz-trailer" || (lh == "content-encoding" && strings.Contains(r.Header.Get(h), "aws-chunked")) {
			t.Fatalf("PUT carries checksum header %s: %v", h, r.Header)
		}
	}
	s.PutIfMatch(ctx, "k", []byte("data"), `"abc"`)
	if r := f.last.Load(); r.Header.Get("If-Match") != `"abc"` || r.Header.Get("If-None-Match") != "" {
		t.Fatalf("PutIfMatch headers: %v", r.Header)
	}
}

func TestS3ContextErrors(t *testing.T) {
	// A server that never answers: the deadline ends the call, and it is
	// reported as the context's error, not as transient.
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	s, err := NewS3(context.Background(), "bucket", "", S3Options{Endpoint: srv.URL, AccessKeyID: "a", SecretAccessKey: "b"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.PutIfAbsent(ctx, "k", []byte("x"))
	if !errors.Is(err, context.DeadlineExceeded) || IsTransient(err) {
		t.Fatalf("got %v, want the deadline", err)
	}
}

func TestS3Options(t *testing.T) {
	ctx := context.Background()
	f := false
	for _, tc := range []struct {
		opts S3Options
		want error
	}{
		{S3Options{URLStyle: "virtual"}, ErrInvalid},
		{S3Options{AccessKeyID: "only-id"}, ErrInvalid},
		{S3Options{Endpoint: "ftp://host"}, ErrInvalid},
		{S3Options{Endpoint: "127.0.0.1:9000", UseSSL: &f, AccessKeyID: "a", SecretAccessKey: "b"}, nil},
		{S3Options{Endpoint: "s3.example.com", URLStyle: "vhost", AccessKeyID: "a", SecretAccessKey: "b"}, nil},
	} {
		s, err := NewS3(ctx, "b", "p/q", tc.opts, 0)
		if tc.want == nil {
			if err != nil {
				t.Fatalf("%+v: %v", tc.opts, err)
			}
			if s.String() != "s3://b/p/q" {
				t.Fatalf("String() = %s", s.String())
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Fatalf("%+v: got %v, want %v", tc.opts, err, tc.want)
		}
	}
	if got, _ := normalizeEndpoint("127.0.0.1:9000", &f); got != "http://127.0.0.1:9000" {
		t.Fatalf("endpoint without scheme, UseSSL=false: %s", got)
	}
	if got, _ := normalizeEndpoint("minio.local:9000/", nil); got != "https://minio.local:9000" {
		t.Fatalf("endpoint without scheme, UseSSL unset: %s", got)
	}
}

func TestS3MissingCredentialsIsAccessDenied(t *testing.T) {
	// No credentials anywhere: the failure to obtain them is reported as
	// access denied, not as a transient transport error.
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, f := newFakeS3(t, 200, "")
	s2, err := NewS3(context.Background(), "bucket", "", S3Options{Endpoint: *s.client.Options().BaseEndpoint}, 0)
	if err == nil {
		_, err = s2.Put(context.Background(), "k", []byte("x"))
	}
	if !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("got %v, want access denied", err)
	}
	if f.hits.Load() != 0 {
		t.Fatalf("an unsigned request was sent")
	}
	t.Log(err)
}
