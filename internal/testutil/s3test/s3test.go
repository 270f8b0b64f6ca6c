// Package s3test gives tests a real S3-compatible server, so that S3 code
// paths are always exercised and never silently skipped.
//
// # Where the server comes from
//
// Start (and NewStore, which calls it) resolves a server once per test
// process:
//
//  1. If MORAINE_S3_ENDPOINT is set, that server is used, with
//     MORAINE_S3_ACCESS_KEY and MORAINE_S3_SECRET_KEY (both required),
//     MORAINE_S3_BUCKET (default "moraine-test") and MORAINE_S3_REGION
//     (default "us-east-1"). An endpoint without a scheme means http. This
//     is what .ci/run does, and how a developer points the tests at MinIO,
//     R2 or AWS.
//  2. Otherwise the harness starts versitygw itself: the binary named by
//     MORAINE_VERSITYGW, else "versitygw" on PATH, in $GOBIN, or in
//     $(go env GOPATH)/bin. It listens on 127.0.0.1 on a free port and
//     serves a fresh temporary directory through its posix backend.
//  3. If neither is available the test fails (t.Fatal) with instructions;
//     it never skips.
//
// After starting versitygw the harness exports MORAINE_S3_* into its own
// environment, so test binaries that re-execute themselves (multi-process
// tests) or spawn other programs reach the same server instead of starting
// their own.
//
// # Lifecycle of a server the harness started
//
// Call Main from the package's TestMain:
//
//	func TestMain(m *testing.M) { s3test.Main(m) }
//
// Main runs the tests, then stops versitygw and removes its directory. A
// package that already has a TestMain calls Stop after m.Run instead. On
// Linux the child also gets PR_SET_PDEATHSIG(SIGKILL) from a thread that
// lives as long as the test process, so a test binary that crashes, is
// killed, or lacks a TestMain never leaks a server. Its temporary directory
// ($TMPDIR/moraine-s3test-*) is left behind in that case; the next test
// process that starts versitygw removes directories whose owner is gone.
//
// # Isolation
//
// Every NewStore call gets a unique key prefix (the test's name plus random
// hex) in one shared bucket, so tests can run in parallel, in many packages
// at once, against one server. On an external server, a passing test's
// objects are deleted at cleanup; a failing test's are kept for inspection.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/moraine-go/moraine/core/objstore"
)

// Environment variables the harness reads (and, after starting versitygw,
// sets for child processes).
const (
	EnvEndpoint  = "MORAINE_S3_ENDPOINT"
	EnvAccessKey = "MORAINE_S3_ACCESS_KEY"
	EnvSecretKey = "MORAINE_S3_SECRET_KEY"
	EnvBucket    = "MORAINE_S3_BUCKET"
	EnvRegion    = "MORAINE_S3_REGION"
	// EnvVersitygw names the versitygw binary to start (optional).
	EnvVersitygw = "MORAINE_VERSITYGW"
)

// VersitygwVersion is the versitygw release the project tests against.
const VersitygwVersion = "v1.8.0"

// DefaultBucket is the bucket tests use unless MORAINE_S3_BUCKET says
// otherwise.
const DefaultBucket = "moraine-test"

// installHint is the fix printed when no server can be had.
const installHint = `install versitygw (the harness looks for it on PATH, in $GOBIN and in $(go env GOPATH)/bin, or at $MORAINE_VERSITYGW):

    make versitygw     (from the repository; or: go install github.com/versity/versitygw/cmd/versitygw@` + VersitygwVersion + `)

or point the tests at a running S3-compatible server:

    export MORAINE_S3_ENDPOINT=http://127.0.0.1:7070 MORAINE_S3_ACCESS_KEY=... MORAINE_S3_SECRET_KEY=...
    # optional: MORAINE_S3_BUCKET (default ` + DefaultBucket + `), MORAINE_S3_REGION (default us-east-1)`

// Server is a running S3-compatible server with a bucket ready for tests.
type Server struct {
	Endpoint  string // base URL, with scheme ("http://127.0.0.1:41234")
	Region    string
	AccessKey string
	SecretKey string
	Bucket    string // exists and is writable
	// External is true when the server came from MORAINE_S3_ENDPOINT,
	// false when this process started versitygw.
	External bool
}

// S3Options returns the objstore settings that reach the server.
func (s Server) S3Options() objstore.S3Options {
	return objstore.S3Options{
		Endpoint:        s.Endpoint,
		Region:          s.Region,
		AccessKeyID:     s.AccessKey,
		SecretAccessKey: s.SecretKey,
		URLStyle:        "path",
	}
}

// Env returns the MORAINE_S3_* assignments ("KEY=value") that make another
// process's harness use this server; append them to exec.Cmd.Env.
func (s Server) Env() []string {
	return []string{
		EnvEndpoint + "=" + s.Endpoint,
		EnvAccessKey + "=" + s.AccessKey,
		EnvSecretKey + "=" + s.SecretKey,
		EnvBucket + "=" + s.Bucket,
		EnvRegion + "=" + s.Region,
	}
}

var (
	once      sync.Once
	server    Server
	serverErr error

	procMu sync.Mutex
	proc   *gwProcess // the versitygw this process started, if any
)

// Start returns the test process's S3 server, starting versitygw on first
// use when MORAINE_S3_ENDPOINT is not set. It fails the test (never skips)
// when no server can be had.
func Start(t testing.TB) Server {
	t.Helper()
	once.Do(func() { server, serverErr = resolve() })
	if serverErr != nil {
		t.Fatalf("s3test: %v", serverErr)
	}
	return server
}

// Main runs the package's tests and then stops the versitygw the harness
// started, if any; it does not return. Use it as the package's TestMain:
//
//	func TestMain(m *testing.M) { s3test.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop shuts down the versitygw this process started (if any) and removes
// its data. Packages with their own TestMain call it after m.Run. The
// server is gone afterwards: no test may use it after Stop.
func Stop() {
	procMu.Lock()
	p := proc
	proc = nil
	procMu.Unlock()
	if p != nil {
		p.stop()
	}
}

func resolve() (Server, error) {
	if ep := os.Getenv(EnvEndpoint); ep != "" {
		return external(ep)
	}
	bin, err := FindVersitygw()
	if err != nil {
		return Server{}, err
	}
	if v := versitygwVersion(bin); v != VersitygwVersion {
		fmt.Fprintf(os.Stderr, "s3test: %s is versitygw %s; the project tests against %s (behaviour may differ). To match CI, %s\n", bin, v, VersitygwVersion, installHint)
	}
	sweepStale()
	srv, p, err := startVersitygw(bin)
	if err != nil {
		return Server{}, err
	}
	procMu.Lock()
	proc = p
	procMu.Unlock()
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	return srv, nil
}

func external(ep string) (Server, error) {
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	srv := Server{
		Endpoint:  strings.TrimRight(ep, "/"),
		Region:    envOr(EnvRegion, "us-east-1"),
		AccessKey: os.Getenv(EnvAccessKey),
		SecretKey: os.Getenv(EnvSecretKey),
		Bucket:    envOr(EnvBucket, DefaultBucket),
		External:  true,
	}
	if srv.AccessKey == "" || srv.SecretKey == "" {
		return Server{}, fmt.Errorf("%s=%s is set but %s and %s must be set too (the server's access key and secret)",
			EnvEndpoint, ep, EnvAccessKey, EnvSecretKey)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ensureBucket(ctx, srv, nil); err != nil {
		return Server{}, fmt.Errorf("S3 server %s (from %s): %w", srv.Endpoint, EnvEndpoint, err)
	}
	return srv, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// FindVersitygw locates the versitygw binary the harness would start (see
// the package doc for where it looks); the error says how to install it.
func FindVersitygw() (string, error) {
	if p := os.Getenv(EnvVersitygw); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable file; %s", EnvVersitygw, p, installHint)
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, gp := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	if goTool, err := exec.LookPath("go"); err == nil {
		if out, err := exec.Command(goTool, "env", "GOBIN", "GOPATH").Output(); err == nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) == 2 {
				if gobin := strings.TrimSpace(lines[0]); gobin != "" {
					dirs = append(dirs, gobin)
				}
				for _, gp := range filepath.SplitList(strings.TrimSpace(lines[1])) {
					dirs = append(dirs, filepath.Join(gp, "bin"))
				}
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no S3 server for the S3 tests: %s is not set and no versitygw binary was found (looked on PATH and in %s). To fix, %s",
		EnvEndpoint, strings.Join(dirs, ", "), installHint)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// gwProcess is a versitygw child process.
type gwProcess struct {
	cmd    *exec.Cmd
	dir    string        // removed by stop
	exited chan struct{} // closed when the process is gone
	log    *lockedBuffer
}

func (p *gwProcess) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	os.RemoveAll(p.dir)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // keep the start: that is where startup errors are
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// versitygwVersion reads the module version a versitygw binary was built
// at ("unknown" when it carries no Go build information).
func versitygwVersion(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil || info.Main.Path != "github.com/versity/versitygw" || info.Main.Version == "" {
		return "unknown"
	}
	return info.Main.Version
}

// startVersitygw starts versitygw on a free loopback port, retrying with
// another port if the chosen one was taken in the meantime.
func startVersitygw(bin string) (Server, *gwProcess, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		srv, p, err := startOnce(bin)
		if err == nil {
			return srv, p, nil
		}
		lastErr = err
	}
	return Server{}, nil, lastErr
}

const dirPattern = "moraine-s3test-"

// sweepStale removes server directories left by test processes that died
// without cleaning up (their owner's pid is recorded in the directory).
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPattern+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && processGone(pid) {
			os.RemoveAll(d)
		}
	}
}

func startOnce(bin string) (Server, *gwProcess, error) {
	dir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return Server{}, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return Server{}, nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		os.RemoveAll(dir)
		return Server{}, nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return Server{}, nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := Server{
		Endpoint:  "http://" + addr,
		Region:    "us-east-1",
		AccessKey: "moraine-test-" + randHex(4),
		SecretKey: randHex(20),
		Bucket:    DefaultBucket,
	}

	cmd := exec.Command(bin, "--port", addr, "--quiet", "--keep-alive", "posix", data)
	cmd.Env = append(os.Environ(),
		"ROOT_ACCESS_KEY="+srv.AccessKey,
		"ROOT_SECRET_KEY="+srv.SecretKey,
		"VGW_REGION="+srv.Region,
	)
	p := &gwProcess{cmd: cmd, dir: dir, exited: make(chan struct{}), log: &lockedBuffer{}}
	cmd.Stdout = p.log
	cmd.Stderr = p.log
	cmd.SysProcAttr = sysProcAttr()

	// PR_SET_PDEATHSIG fires when the thread that forked the child exits,
	// not the process. Fork from a goroutine locked to its thread that
	// stays blocked in Wait, so the thread lives as long as the child or
	// the test process.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(p.exited)
			return
		}
		started <- nil
		cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return Server{}, nil, fmt.Errorf("starting %s: %w", bin, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := ensureBucket(ctx, srv, p.exited); err != nil {
		p.stop()
		return Server{}, nil, fmt.Errorf("versitygw (%s --port %s posix %s) did not come up: %w\n--- versitygw output ---\n%s",
			bin, addr, data, err, p.log.String())
	}
	return srv, p, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func client(srv Server) *s3.Client {
	return s3.New(s3.Options{
		Region:                     srv.Region,
		BaseEndpoint:               aws.String(srv.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		RetryMaxAttempts:           1,
		Retryer:                    aws.NopRetryer{},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// ensureBucket creates the test bucket, waiting for the server to answer.
// exited (may be nil) is closed if a server we started dies meanwhile.
func ensureBucket(ctx context.Context, srv Server, exited <-chan struct{}) error {
	c := client(srv)
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.CreateBucket(actx, &s3.CreateBucketInput{Bucket: aws.String(srv.Bucket)})
		cancel()
		if err == nil {
			return nil
		}
		var ae smithy.APIError
		if errors.As(err, &ae) {
			switch ae.ErrorCode() {
			case "BucketAlreadyOwnedByYou":
				return nil
			}
			// Some other answer ("BucketAlreadyExists" from a server
			// that does not say whose it is, ...): usable if we can
			// list it.
			hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
			_, herr := c.ListObjectsV2(hctx, &s3.ListObjectsV2Input{Bucket: aws.String(srv.Bucket), MaxKeys: aws.Int32(1)})
			hcancel()
			if herr == nil {
				return nil
			}
			return fmt.Errorf("creating bucket %q: %w (and listing it: %v)", srv.Bucket, err, herr)
		}
		// No answer yet (connection refused while the server starts).
		select {
		case <-exited:
			return fmt.Errorf("the server exited: last error %w", err)
		case <-ctx.Done():
			return fmt.Errorf("no answer from %s: %w", srv.Endpoint, err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Option adjusts a store made by NewStore or a location from NewLocation.
type Option func(*Location)

// PageSize sets the store's list page size (to exercise pagination).
func PageSize(n int) Option { return func(l *Location) { l.PageSize = n } }

// Location is a unique place in the test bucket: enough to reopen the same
// store from another process or hand it to DuckDB.
type Location struct {
	URI      string // "s3://bucket/prefix"
	Bucket   string
	Prefix   string // unique per NewStore/NewLocation call, no slashes at the ends
	PageSize int    // 0: the default
	S3       objstore.S3Options
	Server   Server
}

// Options returns what objstore.Open needs to reopen the location.
func (l Location) Options() objstore.Options {
	return objstore.Options{PageSize: l.PageSize, S3: l.S3}
}

// Open opens (another handle on) the location's store.
func (l Location) Open(ctx context.Context) (objstore.Store, error) {
	return objstore.Open(ctx, l.URI, l.Options())
}

// NewLocation reserves a fresh, empty prefix in the test bucket for t.
func NewLocation(t testing.TB, opts ...Option) Location {
	t.Helper()
	srv := Start(t)
	l := Location{
		Bucket: srv.Bucket,
		Prefix: testPrefix(t.Name()),
		S3:     srv.S3Options(),
		Server: srv,
	}
	for _, o := range opts {
		o(&l)
	}
	l.URI = "s3://" + l.Bucket + "/" + l.Prefix
	if srv.External {
		t.Cleanup(func() {
			if !t.Failed() {
				cleanup(t, l)
			}
		})
	}
	return l
}

// NewStore returns a store on a fresh, empty prefix in the test bucket,
// and its location (for reopening it elsewhere).
func NewStore(t testing.TB, opts ...Option) (objstore.Store, Location) {
	t.Helper()
	l := NewLocation(t, opts...)
	st, err := l.Open(context.Background())
	if err != nil {
		t.Fatalf("s3test: opening %s: %v", l.URI, err)
	}
	return st, l
}

// testPrefix turns a test name into a unique, S3-friendly prefix.
func testPrefix(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 120 {
		s = s[:120]
	}
	return s + "-" + randHex(6)
}

// cleanup deletes what a passing test left on an external server.
func cleanup(t testing.TB, l Location) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := l.Open(ctx)
	if err != nil {
		t.Logf("s3test: cleanup of %s: %v", l.URI, err)
		return
	}
	objs, err := objstore.ListAll(ctx, st, "", "")
	if err != nil {
		t.Logf("s3test: cleanup of %s: %v", l.URI, err)
		return
	}
	for _, o := range objs {
		if err := st.Delete(ctx, o.Key); err != nil {
			t.Logf("s3test: cleanup of %s: %v", l.URI, err)
			return
		}
	}
}
