package registrytest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

var bg = context.Background()

// countingProvider is a reader-only provider over an empty log.
type countingProvider struct {
	mu    sync.Mutex
	calls int
}

func (p *countingProvider) consulted() int { p.mu.Lock(); defer p.mu.Unlock(); return p.calls }
func (p *countingProvider) bump()          { p.mu.Lock(); p.calls++; p.mu.Unlock() }

func (p *countingProvider) WriterInit(objstore.Store, string) slate.WriterInit { p.bump(); return nil }
func (p *countingProvider) Reader(objstore.Store, string) slate.WalReader {
	p.bump()
	return emptyLog{}
}
func (p *countingProvider) Committer(objstore.Store, string) core.Committer { p.bump(); return nil }
func (p *countingProvider) Session() core.CommitLogProvider                 { return nil }

type emptyLog struct{}

func (emptyLog) Iterator(context.Context, slate.WalRange) (slate.WalIterator, error) {
	return emptyIter{}, nil
}
func (emptyLog) LastWalID(_ context.Context, lb uint64) (uint64, error) { return lb, nil }

type emptyIter struct{}

func (emptyIter) Next(context.Context) (*slate.WalRows, error) { return nil, nil }
func (emptyIter) Close() error                                 { return nil }

func TestCommitLogRegistry(t *testing.T) {
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{}) // before any registration: single writer
	if err != nil {
		t.Fatal(err)
	}
	c.Close(bg)

	registered := &countingProvider{}
	if err := core.RegisterCommitLog(registered); err != nil {
		t.Fatalf("first registration: %v", err)
	}
	if err := core.RegisterCommitLog(&countingProvider{}); !errors.Is(err, core.Configuration) {
		t.Fatalf("second registration: %v, want Configuration", err)
	}

	// A read-write open now goes through the registered (reader-only)
	// provider and is refused.
	if _, err := core.Open(bg, store, core.CatalogOptions{}); !errors.Is(err, core.Configuration) {
		t.Fatalf("read-write open after registration: %v, want Configuration", err)
	}

	// An open with no provider of its own uses the registered one.
	before := registered.consulted()
	ro, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1})
	if err != nil {
		t.Fatalf("read-only open through the registered provider: %v", err)
	}
	ro.Close(bg)
	if registered.consulted() == before {
		t.Fatal("an open without its own provider did not use the registered one")
	}

	// An open carrying its own provider never consults the registered one.
	own := &countingProvider{}
	before = registered.consulted()
	ro, err = core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1, CommitLog: own})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close(bg)
	if registered.consulted() != before {
		t.Fatal("an open carrying its own provider consulted the registered one")
	}
	if own.consulted() == 0 {
		t.Fatal("the open's own provider was not used")
	}
}
