package s3test_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

func TestMain(m *testing.M) {
	if os.Getenv("S3TEST_CRASH_CHILD") == "1" {
		crashChild()
		return
	}
	s3test.Main(m)
}

func TestStoreAndLocation(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	if os.Getenv(s3test.EnvEndpoint) != srv.Endpoint {
		t.Fatalf("%s=%q, want the server's endpoint %q exported for child processes",
			s3test.EnvEndpoint, os.Getenv(s3test.EnvEndpoint), srv.Endpoint)
	}
	s, loc := s3test.NewStore(t, s3test.PageSize(2))
	if !strings.HasPrefix(loc.Prefix, "TestStoreAndLocation-") || loc.URI != "s3://"+srv.Bucket+"/"+loc.Prefix {
		t.Fatalf("location %+v", loc)
	}
	if s.String() != loc.URI {
		t.Fatalf("store %s, location %s", s, loc.URI)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.PutIfAbsent(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	page, more, err := s.ListPage(ctx, "", "")
	if err != nil || len(page) != 2 || !more {
		t.Fatalf("page size option not applied: %v %v %v", page, more, err)
	}
	// Another handle, as another process would open it.
	again, err := objstore.Open(ctx, loc.URI, objstore.Options{S3: loc.S3})
	if err != nil {
		t.Fatal(err)
	}
	if all, err := objstore.ListAll(ctx, again, "", ""); err != nil || len(all) != 3 {
		t.Fatalf("reopened store lists %v, %v", all, err)
	}
	// Every store is a fresh prefix.
	s2, loc2 := s3test.NewStore(t)
	if loc2.Prefix == loc.Prefix {
		t.Fatal("two stores share a prefix")
	}
	if all, err := objstore.ListAll(ctx, s2, "", ""); err != nil || len(all) != 0 {
		t.Fatalf("fresh store lists %v, %v", all, err)
	}
	t.Run("sub/test name", func(t *testing.T) {
		_, l := s3test.NewStore(t)
		if strings.ContainsAny(l.Prefix, "/ ") {
			t.Fatalf("prefix %q", l.Prefix)
		}
	})
}

// TestCrashedTestBinaryDoesNotLeakServer runs this test binary as a child
// that starts versitygw and then dies by SIGKILL without any cleanup; the
// server must die with it (PR_SET_PDEATHSIG).
func TestCrashedTestBinaryDoesNotLeakServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Log("parent-death signal is Linux-only; elsewhere Main/Stop stop the server")
		return
	}
	if _, err := s3test.FindVersitygw(); err != nil && os.Getenv(s3test.EnvEndpoint) != "" {
		// The tests use an external server and the harness starts none:
		// there is no child to leak.
		t.Logf("no versitygw to start; nothing to check: %v", err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MORAINE_S3_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// The killed child cannot remove its server's directory; keep it in
	// ours.
	cmd.Env = append(cmd.Env, "S3TEST_CRASH_CHILD=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, rerr := bufio.NewReader(out).ReadString('\n')
	werr := cmd.Wait()
	if rerr != nil || !strings.HasPrefix(line, "endpoint ") {
		t.Fatalf("child printed %q (%v), exit %v", line, rerr, werr)
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child exit: %v", werr)
	}
	u, err := url.Parse(strings.TrimSpace(strings.TrimPrefix(line, "endpoint ")))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return // the server is gone
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("versitygw at %s outlived its killed test binary", u.Host)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// crashChild starts a server through the harness, reports its endpoint and
// kills itself without cleanup.
func crashChild() {
	srv := s3test.Start(fatalTB{})
	os.Stdout.WriteString("endpoint " + srv.Endpoint + "\n")
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// fatalTB is a testing.TB for use outside a test (the crash child).
type fatalTB struct{ testing.TB }

func (fatalTB) Helper() {}
func (fatalTB) Fatalf(format string, args ...any) {
	os.Stderr.WriteString("crash child: " + format + "\n")
	os.Exit(3)
}
