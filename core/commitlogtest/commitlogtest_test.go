package commitlogtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/commitlogtest"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/provider"
)

// private is a broken provider: each instance keeps its log in a store of
// its own instead of the one it is given, so committers of one lake never
// see each other's slots (a library that, say, ignored the store's prefix).
type private struct {
	inner core.CommitLogProvider
	own   objstore.Store
}

func newPrivate() core.CommitLogProvider {
	return &private{inner: provider.New(provider.Options{}), own: objstore.NewMemory(0)}
}

func (p *private) WriterInit(_ objstore.Store, path string) slate.WriterInit {
	return p.inner.WriterInit(p.own, path)
}
func (p *private) Reader(_ objstore.Store, path string) slate.WalReader {
	return p.inner.Reader(p.own, path)
}
func (p *private) Committer(_ objstore.Store, path string) core.Committer {
	return p.inner.Committer(p.own, path)
}
func (p *private) Session() core.CommitLogProvider { return nil }

// The suite is not vacuous: a provider that does not share its log between
// the opens of one lake fails it (run in a child process, whose failure is
// the expected outcome).
func TestTheSuiteFailsABrokenProvider(t *testing.T) {
	if os.Getenv("COMMITLOGTEST_BROKEN") == "1" {
		commitlogtest.Run(t, func(t *testing.T) core.CommitLogProvider { return newPrivate() })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTheSuiteFailsABrokenProvider$", "-test.timeout=120s", "-test.v")
	cmd.Env = append(os.Environ(), "COMMITLOGTEST_BROKEN=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a provider that keeps each open's log to itself:\n%s", out)
	}
	if !strings.Contains(string(out), "--- FAIL: TestTheSuiteFailsABrokenProvider/") {
		t.Fatalf("the child failed, but not in a check of the suite (%v):\n%s", err, out)
	}
	var failed []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "--- FAIL: TestTheSuiteFailsABrokenProvider/") {
			failed = append(failed, strings.TrimSpace(l))
		}
	}
	t.Logf("the broken provider fails %d checks: %s", len(failed), strings.Join(failed, "; "))
}
