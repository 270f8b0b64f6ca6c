package core_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// spyProvider is a reader-only provider over an empty log that records how
// the catalog consults it.
type spyProvider struct {
	mu        sync.Mutex
	calls     []string
	paths     []string
	lastWalID int
	iterators int
}

func (s *spyProvider) note(call, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
	s.paths = append(s.paths, path)
}

func (s *spyProvider) WriterInit(_ objstore.Store, path string) slate.WriterInit {
	s.note("WriterInit", path)
	return nil
}

func (s *spyProvider) Reader(_ objstore.Store, path string) slate.WalReader {
	s.note("Reader", path)
	return &emptyLog{spy: s}
}

func (s *spyProvider) Committer(_ objstore.Store, path string) core.Committer {
	s.note("Committer", path)
	return nil // reader-only
}

func (s *spyProvider) Session() core.CommitLogProvider { return nil }

type emptyLog struct{ spy *spyProvider }

func (e *emptyLog) Iterator(ctx context.Context, r slate.WalRange) (slate.WalIterator, error) {
	e.spy.mu.Lock()
	e.spy.iterators++
	e.spy.mu.Unlock()
	return emptyIter{}, nil
}

func (e *emptyLog) LastWalID(ctx context.Context, lowerBound uint64) (uint64, error) {
	e.spy.mu.Lock()
	e.spy.lastWalID++
	e.spy.mu.Unlock()
	return lowerBound, nil
}

type emptyIter struct{}

func (emptyIter) Next(context.Context) (*slate.WalRows, error) { return nil, nil }
func (emptyIter) Close() error                                 { return nil }

// RFC 0024 test obligation: with a provider over an empty log, a read-only
// open asks the provider for its reader by the catalog's path and resolves
// the log's end through it.
func TestReadOnlyOpenAsksTheProviderForItsReaderByPath(t *testing.T) {
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{Path: "lakes/one"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close(bg)
	// The catalog must be log-resident for a provider-served read to make
	// sense; the refusal without a provider is tested elsewhere. A native
	// catalog read through a provider is still served (the log is empty).
	spy := &spyProvider{}
	ro, err := core.OpenReadOnly(bg, store, core.CatalogOptions{Path: "lakes/one", CommitLog: spy, ReaderPollInterval: -1, CommitLogTail: true})
	if err != nil {
		t.Fatalf("read-only open with a provider: %v", err)
	}
	defer ro.Close(bg)
	spy.mu.Lock()
	calls, paths, iters := strings.Join(spy.calls, ","), spy.paths, spy.iterators
	spy.mu.Unlock()
	if calls != "Reader" || paths[0] != "lakes/one" {
		t.Fatalf("provider calls %q with paths %q, want one Reader call for lakes/one", calls, paths)
	}
	if iters == 0 {
		t.Fatal("the read-only open never asked the provider's reader for the log (its end was not resolved through it)")
	}
	if _, err := ro.View(bg); err != nil {
		t.Fatal(err)
	}
}

// RFC 0024 test obligation: a read-write open with a (reader-only)
// provider is refused before the provider is consulted for any log I/O.
func TestReadWriteOpenWithAReaderOnlyProviderIsRefusedFirst(t *testing.T) {
	spy := &spyProvider{}
	store := objstore.NewMemory(0)
	_, err := core.Open(bg, store, core.CatalogOptions{CommitLog: spy})
	wantKind(t, err, core.Configuration)
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if strings.Join(spy.calls, ",") != "Committer" {
		t.Fatalf("provider calls %v: only the capability check (Committer) may come before the refusal", spy.calls)
	}
	if n, _ := objstore.ListAll(bg, store, "", ""); len(n) != 0 {
		t.Fatalf("the refused open wrote %d objects", len(n))
	}
}

// RFC 0024 test obligation: a store stamped log-resident is refused by
// both open paths without a provider, naming the library.
func TestLogResidentStoreNeedsAProvider(t *testing.T) {
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close(bg)
	if err := core.SetFormatForTest(bg, store, "", core.FormatLegacyLog, nil); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() error{
		"read-write": func() error { _, err := core.Open(bg, store, core.CatalogOptions{}); return err },
		"read-only": func() error {
			_, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1})
			return err
		},
	} {
		err := open()
		if !errors.Is(err, core.Migration) || !strings.Contains(err.Error(), "commit-log library") || !core.NeedsCommitLog(err) {
			t.Fatalf("%s open of a format-10 store: %v (NeedsCommitLog %v)", name, err, core.NeedsCommitLog(err))
		}
	}
	// Other refusals are not this one.
	if err := core.SetFormatForTest(bg, store, "", 99, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1}); !errors.Is(err, core.Migration) || core.NeedsCommitLog(err) {
		t.Fatalf("a future format: %v (NeedsCommitLog %v)", err, core.NeedsCommitLog(err))
	}
}
