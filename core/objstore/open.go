package objstore

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
)

// Options configure Open.
type Options struct {
	// PageSize caps how many objects one ListPage returns (0: the backend's
	// default, 1000). Tests use small pages to exercise pagination.
	PageSize int
	// S3 settings, used by s3:// URIs.
	S3 S3Options
}

// S3Options configure the S3 backend. Empty fields fall back to the standard
// AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and
// shared config files.
type S3Options struct {
	// Endpoint is the server's base URL ("http://127.0.0.1:7070"); empty
	// means AWS itself. A bare host:port takes its scheme from UseSSL.
	Endpoint string
	// Region defaults to AWS_REGION, else "us-east-1".
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// URLStyle is "path" or "vhost". Default: "path" when Endpoint is set
	// (S3-compatible servers), "vhost" for AWS.
	URLStyle string
	// UseSSL selects https for an Endpoint given without a scheme (nil:
	// https).
	UseSSL *bool
}

// AcceptedURIForms lists the store URIs Open understands, for messages.
const AcceptedURIForms = "file:///abs/dir, a local path (dir or ./dir), memory://name, s3://bucket[/prefix]"

// Open resolves a store URI:
//
//	file:///abs/dir      local filesystem store rooted at /abs/dir
//	/abs/dir, ./rel/dir  the same, from a plain path
//	memory://name        in-process store; the same name is the same store
//	s3://bucket/prefix   S3 (or an S3-compatible server), keys under prefix
//
// Anything else is refused with an error naming the accepted forms.
func Open(ctx context.Context, uri string, opts Options) (Store, error) {
	if uri == "" {
		return nil, newErrorf("open", uri, ErrInvalid, "empty store URI; accepted forms: %s", AcceptedURIForms)
	}
	scheme, rest, hasScheme := strings.Cut(uri, "://")
	if !hasScheme {
		if strings.Contains(uri, ":") && !strings.HasPrefix(uri, "/") && !strings.HasPrefix(uri, ".") {
			// "s3:bucket", "c:foo", "memory:x": a scheme without "//".
			return nil, newErrorf("open", uri, ErrInvalid, "store URI %q is not a recognised form; accepted forms: %s", uri, AcceptedURIForms)
		}
		return NewLocal(uri, opts.PageSize)
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(uri)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" || !filepath.IsAbs(u.Path) {
			return nil, newErrorf("open", uri, ErrInvalid, "file URI %q must be file:///absolute/dir; accepted forms: %s", uri, AcceptedURIForms)
		}
		return NewLocal(u.Path, opts.PageSize)
	case "memory":
		if rest == "" {
			return nil, newErrorf("open", uri, ErrInvalid, "memory URI %q needs a name (memory://name); accepted forms: %s", uri, AcceptedURIForms)
		}
		return OpenMemory(rest, opts.PageSize), nil
	case "s3":
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, newErrorf("open", uri, ErrInvalid, "s3 URI %q has no bucket (s3://bucket/prefix); accepted forms: %s", uri, AcceptedURIForms)
		}
		return NewS3(ctx, bucket, strings.Trim(prefix, "/"), opts.S3, opts.PageSize)
	default:
		return nil, newErrorf("open", uri, ErrInvalid, "unknown store scheme %q; accepted forms: %s", scheme, AcceptedURIForms)
	}
}
