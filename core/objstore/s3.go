package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3Store keeps objects in an S3 bucket (AWS or any S3-compatible server:
// versitygw, MinIO, R2, ...) under an optional key prefix.
//
// # Layout
//
// Key k is stored as the S3 key prefix+"/"+k (just k when the prefix is
// empty), byte for byte, with no escaping, so other S3 clients (DuckDB
// reading data files) see the same names. List strips the prefix back off.
// S3 imposes its own key rules on top of the package contract: a full key
// (prefix included) must be valid UTF-8 and at most MaxKeyLen bytes; keys
// that break either are refused with ErrInvalid. Servers that map keys to a
// filesystem (versitygw's posix backend) add the local backend's limits: one
// key cannot be both an object and a "directory" of other keys.
//
// # Conditional writes
//
// PutIfAbsent sends If-None-Match: * and PutIfMatch sends If-Match: etag, so
// the server decides atomically; nothing is emulated with a read first.
// Answers map as follows:
//
//   - 412 PreconditionFailed: PutIfAbsent -> ErrExists, PutIfMatch ->
//     ErrPrecondition.
//   - 404 on PutIfMatch (the key is gone) -> ErrNotFound.
//   - 409 ConditionalRequestConflict (AWS: another conditional write to the
//     key is in flight; nothing was written): PutIfMatch -> ErrPrecondition,
//     because the caller's ETag is about to be (or has just been) superseded
//     and re-reading is the right reaction either way. PutIfAbsent ->
//     ErrTransient, not ErrExists: the in-flight write may still fail, so
//     claiming the key is taken could send the caller after an object that
//     never appears. Retrying resolves it into success or a genuine 412
//     (and the retrying transport already treats "transient, then exists"
//     by reading the object back).
//
// The SDK's own retries are disabled (one attempt per call): an SDK-level
// retry of a conditional write whose first attempt landed would turn our own
// success into ErrExists/ErrPrecondition with no way to tell. Retrying is
// the job of RetryingStore, which resolves those ambiguities.
//
// # Errors
//
// Every SDK error is classified here and returned as *Error; the SDK error
// stays reachable as Err (errors.As). 404 -> ErrNotFound (NoSuchBucket ->
// ErrInvalid: a missing bucket is a configuration error, not a missing
// object), 403 and bad or missing credentials -> ErrAccessDenied, 5xx,
// 429, throttling (SlowDown), RequestTimeout, clock skew, timeouts and
// connection failures -> ErrTransient, other 4xx and 501 NotImplemented ->
// ErrInvalid, a cancelled or expired context -> that context error (never
// transient).
//
// # ETags
//
// ETags are passed through exactly as the server sends them (quoted, as S3
// does) and sent back as given. The one exception is a server that omits the
// quotes in some answers but not others: an unquoted ETag is quoted so that
// Put, Head and List agree.
//
// # Checksums
//
// Request checksums are only computed, and response checksums only
// validated, when an operation requires them. The SDK's default (CRC32
// trailers with aws-chunked bodies on every PUT) is rejected by several
// S3-compatible servers and buys nothing here: the engine checksums its own
// files.
type S3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or "dir" (no leading or trailing '/')
	pageSize int
}

var _ Store = (*S3Store)(nil)

// NewS3 returns a store over bucket, keeping keys under prefix (already
// trimmed of '/'; empty: the bucket's root). Settings missing from opts come
// from the standard AWS environment and shared config files. pageSize <= 0
// means DefaultPageSize (S3's own maximum page is 1000). No request is made:
// a wrong bucket or credentials surface on first use.
func NewS3(ctx context.Context, bucket, prefix string, opts S3Options, pageSize int) (*S3Store, error) {
	const op = "open"
	if bucket == "" {
		return nil, newError(op, "", ErrInvalid, "empty S3 bucket name")
	}
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	prefix = strings.Trim(prefix, "/")
	where := "s3://" + bucket
	if prefix != "" {
		where += "/" + prefix
	}

	pathStyle := false
	switch opts.URLStyle {
	case "":
		pathStyle = opts.Endpoint != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	case "path":
		pathStyle = true
	case "vhost":
	default:
		return nil, newErrorf(op, where, ErrInvalid, "S3 URL style %q is not recognised; accepted values: \"path\", \"vhost\" (or empty for the default)", opts.URLStyle)
	}

	endpoint := ""
	if opts.Endpoint != "" {
		var err error
		if endpoint, err = normalizeEndpoint(opts.Endpoint, opts.UseSSL); err != nil {
			return nil, &Error{Op: op, Key: where, Kind: ErrInvalid, Msg: "bad S3 endpoint", Err: err}
		}
	}

	if (opts.AccessKeyID == "") != (opts.SecretAccessKey == "") {
		return nil, newError(op, where, ErrInvalid, "S3 static credentials need both an access key ID and a secret access key")
	}

	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		// The engine reads and writes many objects in parallel; keep
		// enough idle connections to avoid reconnecting for each.
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 128
	})
	loadOpts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		config.WithRetryMaxAttempts(1),
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.AccessKeyID != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, ctxError(op, where, cerr)
		}
		return nil, &Error{Op: op, Key: where, Kind: ErrInvalid, Msg: "loading AWS configuration", Err: err}
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if opts.URLStyle == "" && cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		pathStyle = true // an endpoint from the shared config file
	}
	if cfg.Credentials != nil && opts.AccessKeyID == "" {
		// Tag failures to obtain credentials so classify can tell them from
		// transport failures.
		cfg.Credentials = credsProvider{cfg.Credentials}
	}

	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 1
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3Store{client: client, bucket: bucket, prefix: prefix, pageSize: pageSize}, nil
}

// normalizeEndpoint gives a scheme-less endpoint one (https unless useSSL is
// false) and checks the result is a usable base URL.
func normalizeEndpoint(ep string, useSSL *bool) (string, error) {
	if !strings.Contains(ep, "://") {
		scheme := "https"
		if useSSL != nil && !*useSSL {
			scheme = "http"
		}
		ep = scheme + "://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("endpoint %q: scheme must be http or https", ep)
	}
	if u.Host == "" {
		return "", fmt.Errorf("endpoint %q has no host", ep)
	}
	return strings.TrimRight(ep, "/"), nil
}

// credsProvider marks credential-retrieval failures (see classify).
type credsProvider struct{ aws.CredentialsProvider }

func (p credsProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := p.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return c, &credentialsError{err}
	}
	return c, nil
}

type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return "obtaining AWS credentials: " + e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// Bucket returns the store's bucket.
func (s *S3Store) Bucket() string { return s.bucket }

// Prefix returns the key prefix inside the bucket ("" for none), without
// slashes at either end.
func (s *S3Store) Prefix() string { return s.prefix }

func (s *S3Store) String() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

// full maps a store key to its S3 key.
func (s *S3Store) full(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// objectKey validates key and returns its S3 key.
func (s *S3Store) objectKey(op, key string) (string, error) {
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	if msg := s3KeyProblem(key); msg != "" {
		return "", newError(op, key, ErrInvalid, msg)
	}
	full := s.full(key)
	if len(full) > MaxKeyLen {
		return "", newErrorf(op, key, ErrInvalid, "key is %d bytes with the store prefix; S3's limit is %d", len(full), MaxKeyLen)
	}
	return full, nil
}

// s3KeyProblem says why key cannot be stored portably on S3 servers ("" if
// it can):
//   - S3 keys are UTF-8 (AWS refuses anything else);
//   - ListObjectsV2 answers in XML 1.0, which cannot carry most C0 control
//     characters; AWS works around that with encoding-type=url, but not every
//     server implements it (versitygw returns U+FFFD instead), so a listed
//     key would differ from the stored one;
//   - servers that map keys to a filesystem (versitygw's posix backend,
//     MinIO) normalise or refuse empty, "." and ".." path components
//     ("a//b" lists as "a/b", "a/.." is a directory), so such keys would not
//     round-trip either.
func s3KeyProblem(key string) string {
	if !utf8.ValidString(key) {
		return "S3 keys must be valid UTF-8"
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return fmt.Sprintf("S3 keys cannot portably hold control character %#02x (S3 lists keys in XML)", c)
		}
	}
	for _, comp := range strings.Split(key, "/") {
		switch comp {
		case "", ".", "..":
			return fmt.Sprintf("S3 keys cannot portably hold an empty, \".\" or \"..\" path component (got %q)", comp)
		}
	}
	return ""
}

// quoteETag returns etag as S3 spells it: in double quotes.
func quoteETag(etag *string) string {
	if etag == nil || *etag == "" {
		return ""
	}
	e := *etag
	if strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}

func (s *S3Store) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	const op = "get"
	full, err := s.objectKey(op, key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, ctxError(op, key, err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &full})
	if err != nil {
		return nil, ObjectInfo{}, classify(ctx, op, key, err)
	}
	defer out.Body.Close()
	data, err := readBody(out.Body, aws.ToInt64(out.ContentLength))
	if err != nil {
		return nil, ObjectInfo{}, classify(ctx, op, key, err)
	}
	info := ObjectInfo{
		Key:          key,
		Size:         int64(len(data)),
		ETag:         quoteETag(out.ETag),
		LastModified: aws.ToTime(out.LastModified),
	}
	return data, info, nil
}

// readBody reads a response body, preallocating from Content-Length.
func readBody(r io.Reader, n int64) ([]byte, error) {
	if n <= 0 || n > 1<<30 {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+1))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func (s *S3Store) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	const op = "get-range"
	full, err := s.objectKey(op, key)
	if err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, newErrorf(op, key, ErrInvalid, "range offset %d is negative", off)
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, key, err)
	}
	if length == 0 {
		// An empty range cannot be expressed in a Range header; the answer
		// is empty if the object exists.
		if _, err := s.Head(ctx, key); err != nil {
			if e, ok := err.(*Error); ok {
				e.Op = op
			}
			return nil, err
		}
		return []byte{}, nil
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &full}
	if off > 0 || length > 0 {
		r := "bytes=" + strconv.FormatInt(off, 10) + "-"
		if length > 0 && length <= math.MaxInt64-off {
			r += strconv.FormatInt(off+length-1, 10)
		}
		in.Range = &r
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if isInvalidRange(err) {
			// S3 answers 416 for a range that starts at or past the end
			// (including any range of an empty object); the contract says
			// that is zero bytes.
			return []byte{}, nil
		}
		return nil, classify(ctx, op, key, err)
	}
	defer out.Body.Close()
	data, err := readBody(out.Body, aws.ToInt64(out.ContentLength))
	if err != nil {
		return nil, classify(ctx, op, key, err)
	}
	if in.Range != nil && aws.ToString(out.ContentRange) == "" {
		// The server ignored the Range header (200 with the whole
		// object): cut the range out here.
		start, end, err := clipRange(int64(len(data)), off, length)
		if err != nil {
			return nil, err
		}
		data = data[start:end]
	}
	if length > 0 && int64(len(data)) > length {
		data = data[:length]
	}
	return data, nil
}

func isInvalidRange(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidRange" {
		return true
	}
	return httpStatus(err) == http.StatusRequestedRangeNotSatisfiable
}

func (s *S3Store) Head(ctx context.Context, key string) (ObjectInfo, error) {
	const op = "head"
	full, err := s.objectKey(op, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, ctxError(op, key, err)
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &full})
	if err != nil {
		return ObjectInfo{}, classify(ctx, op, key, err)
	}
	return ObjectInfo{
		Key:          key,
		Size:         aws.ToInt64(out.ContentLength),
		ETag:         quoteETag(out.ETag),
		LastModified: aws.ToTime(out.LastModified),
	}, nil
}

func (s *S3Store) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	const op = "list"
	if err := ctx.Err(); err != nil {
		return nil, false, ctxError(op, prefix, err)
	}
	if !utf8.ValidString(prefix) || !utf8.ValidString(startAfter) {
		return nil, false, newError(op, prefix, ErrInvalid, "S3 list prefix and start-after must be valid UTF-8")
	}
	// With a store prefix "p" every key lives under "p/": listing "" must
	// not return "pq/x".
	fullPrefix := prefix
	if s.prefix != "" {
		fullPrefix = s.prefix + "/" + prefix
	}
	in := &s3.ListObjectsV2Input{
		Bucket:       &s.bucket,
		Prefix:       &fullPrefix,
		MaxKeys:      aws.Int32(int32(min(s.pageSize, 1<<30))),
		EncodingType: types.EncodingTypeUrl,
	}
	if startAfter != "" {
		sa := s.full(startAfter)
		in.StartAfter = &sa
	}
	out, err := s.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, false, classify(ctx, op, prefix, err)
	}
	decode := out.EncodingType == types.EncodingTypeUrl
	page := make([]ObjectInfo, 0, len(out.Contents))
	for _, o := range out.Contents {
		k := aws.ToString(o.Key)
		if decode {
			dk, err := url.QueryUnescape(k)
			if err != nil {
				return nil, false, &Error{Op: op, Key: prefix, Kind: ErrTransient, Msg: fmt.Sprintf("server sent a badly encoded key %q", k), Err: err}
			}
			k = dk
		}
		if !strings.HasPrefix(k, fullPrefix) || (in.StartAfter != nil && k <= *in.StartAfter) {
			continue // not ours (a misbehaving server); never surface it
		}
		if s.prefix != "" {
			k = k[len(s.prefix)+1:]
		}
		page = append(page, ObjectInfo{
			Key:          k,
			Size:         aws.ToInt64(o.Size),
			ETag:         quoteETag(o.ETag),
			LastModified: aws.ToTime(o.LastModified),
		})
	}
	more := aws.ToBool(out.IsTruncated)
	if more && len(page) == 0 && len(out.Contents) == 0 {
		// A truncated page with no keys cannot be continued by start-after
		// (List would stop); report it rather than loop or lose keys.
		return nil, false, newError(op, prefix, ErrTransient, "server returned an empty truncated page")
	}
	return page, more, nil
}

func (s *S3Store) put(ctx context.Context, op, key string, data []byte, ifNoneMatch, ifMatch *string) (string, error) {
	full, err := s.objectKey(op, key)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError(op, key, err)
	}
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &full,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   ifNoneMatch,
		IfMatch:       ifMatch,
	})
	if err != nil {
		return "", classify(ctx, op, key, err)
	}
	etag := quoteETag(out.ETag)
	if etag == "" {
		// Every S3 implementation returns an ETag; without one,
		// PutIfMatch cannot work. Do not pretend.
		return "", newError(op, key, ErrInvalid, "the S3 server returned no ETag for a PUT")
	}
	return etag, nil
}

func (s *S3Store) Put(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, "put", key, data, nil, nil)
}

func (s *S3Store) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, "put-if-absent", key, data, aws.String("*"), nil)
}

func (s *S3Store) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	const op = "put-if-match"
	if etag == "" {
		// The SDK drops an empty If-Match header, which would make this
		// an unconditional write. No object has an empty ETag, so the
		// answer is "precondition failed" (or "not found").
		if _, err := s.objectKey(op, key); err != nil {
			return "", err
		}
		if _, err := s.Head(ctx, key); err != nil {
			if e, ok := err.(*Error); ok {
				e.Op = op
			}
			return "", err
		}
		return "", newError(op, key, ErrPrecondition, "empty etag")
	}
	return s.put(ctx, op, key, data, nil, aws.String(etag))
}

func (s *S3Store) Delete(ctx context.Context, key string) error {
	const op = "delete"
	full, err := s.objectKey(op, key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError(op, key, err)
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &full})
	if err != nil {
		cerr := classify(ctx, op, key, err)
		if errors.Is(cerr, ErrNotFound) {
			return nil // idempotent (AWS answers 204 anyway; some servers 404)
		}
		return cerr
	}
	return nil
}

// httpStatus returns the HTTP status of a failed request, 0 if there was no
// response.
func httpStatus(err error) int {
	var he interface{ HTTPStatusCode() int }
	if errors.As(err, &he) {
		return he.HTTPStatusCode()
	}
	return 0
}

// classify turns an SDK error into an *Error of the right kind, keeping the
// SDK error as its cause.
func classify(ctx context.Context, op, key string, err error) error {
	status := httpStatus(err)
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	mk := func(kind error, msg string) error {
		return &Error{Op: op, Key: key, Kind: kind, Msg: msg, Err: err}
	}

	if status == 0 && code == "" {
		return classifyNoResponse(ctx, op, key, err)
	}

	switch code {
	case "PreconditionFailed":
		status = http.StatusPreconditionFailed
	case "ConditionalRequestConflict":
		if op == "put-if-absent" {
			return mk(ErrTransient, "a concurrent conditional write to the key was in flight (409); nothing was written")
		}
		return mk(ErrPrecondition, "a concurrent conditional write to the key was in flight (409); nothing was written")
	case "NoSuchKey", "NotFound":
		return mk(ErrNotFound, "")
	case "NoSuchBucket":
		return mk(ErrInvalid, "the bucket does not exist")
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
		"InvalidToken", "TokenRefreshRequired", "AllAccessDisabled", "AccountProblem", "InvalidSecurity",
		"XAdminUserNotFound": // versitygw's answer (with 404) to an unknown access key id
		return mk(ErrAccessDenied, "")
	case "SlowDown", "Throttling", "ThrottlingException", "TooManyRequests", "RequestLimitExceeded",
		"InternalError", "ServiceUnavailable", "RequestTimeout", "RequestTimeTooSkewed",
		"OperationAborted", "IncompleteBody":
		return mk(ErrTransient, "")
	case "NotImplemented":
		return mk(ErrInvalid, "the S3 server does not implement this request")
	case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
		return mk(ErrInvalid, "wrong region, endpoint or URL style?")
	case "ObjectParentIsFile", "ExistingObjectIsDirectory", "DirectoryObjectContainsData",
		"XMinioParentIsObject", "XMinioObjectExistsAsDirectory", "XMinioInvalidObjectName":
		// Filesystem-backed servers (versitygw posix, MinIO): one key
		// cannot be both an object and a "directory" of other keys.
		return mk(ErrInvalid, "the server cannot hold this key next to an existing one (object/directory conflict)")
	}

	switch {
	case status == http.StatusPreconditionFailed:
		switch op {
		case "put-if-absent":
			return mk(ErrExists, "")
		default:
			return mk(ErrPrecondition, "")
		}
	case status == http.StatusNotFound:
		return mk(ErrNotFound, "")
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return mk(ErrAccessDenied, "")
	case status == http.StatusTooManyRequests, status == http.StatusRequestTimeout:
		return mk(ErrTransient, "")
	case status == http.StatusNotImplemented:
		return mk(ErrInvalid, "the S3 server does not implement this request")
	case status >= 500:
		return mk(ErrTransient, "")
	case status >= 400:
		return mk(ErrInvalid, "")
	case status == 0:
		// An API error code without a status (should not happen).
		return mk(ErrTransient, "")
	case status == http.StatusTemporaryRedirect:
		return mk(ErrTransient, "")
	case status >= 300 && status < 400:
		return mk(ErrInvalid, "redirected: wrong region, endpoint or URL style?")
	default:
		// A 2xx/3xx the SDK still failed on (for example a body it could
		// not decode): treat as a garbled response.
		if cerr := ctx.Err(); cerr != nil {
			return &Error{Op: op, Key: key, Kind: cerr, Err: err}
		}
		return mk(ErrTransient, "")
	}
}

// classifyNoResponse handles failures that got no HTTP answer: context,
// credentials, request validation, and the transport.
func classifyNoResponse(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &Error{Op: op, Key: key, Kind: cerr, Err: err}
	}
	var canceled *smithy.CanceledError
	if errors.As(err, &canceled) {
		kind := context.Canceled
		if errors.Is(canceled.Err, context.DeadlineExceeded) {
			kind = context.DeadlineExceeded
		}
		return &Error{Op: op, Key: key, Kind: kind, Err: err}
	}
	var cred *credentialsError
	if errors.As(err, &cred) {
		if isTransportError(cred.err) {
			return &Error{Op: op, Key: key, Kind: ErrTransient, Msg: "obtaining credentials", Err: err}
		}
		return &Error{Op: op, Key: key, Kind: ErrAccessDenied, Msg: "no usable AWS credentials", Err: err}
	}
	var invalid smithy.InvalidParamsError
	if errors.As(err, &invalid) {
		return &Error{Op: op, Key: key, Kind: ErrInvalid, Err: err}
	}
	var serr *smithy.SerializationError
	if errors.As(err, &serr) {
		return &Error{Op: op, Key: key, Kind: ErrInvalid, Err: err}
	}
	// Everything else is the transport (connection refused or reset,
	// timeouts, DNS, a truncated body, an undecodable answer): worth
	// retrying.
	return &Error{Op: op, Key: key, Kind: ErrTransient, Err: err}
}

// isTransportError reports network-level failures.
func isTransportError(err error) bool {
	var ne net.Error
	var send *smithyhttp.RequestSendError
	return errors.As(err, &send) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded)
}
