package provider

import (
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// Defaults of Options.
const (
	DefaultFlushSlots      = 64
	DefaultRetention       = 10 * time.Minute
	DefaultReadConcurrency = 8
)

// Options configure a Provider. Zero values take the defaults.
type Options struct {
	// FlushSlots is the folder's memtable flush cadence in slots: the
	// writer's ShouldFlushMemtable asks the engine to write its memtable
	// out once this many slots are past the store's replay point, so a cold
	// open replays at most about that many slots, one GET each (default
	// 64; negative: never ask).
	FlushSlots int
	// Retention: truncation keeps slots younger than this, whatever the
	// engine's collector asks (default 10 min; negative: no minimum, for
	// tests). It also bounds how long a committer trusts what it last saw
	// of the tail (half of it; see the package doc), so every process
	// sharing a log should use the same value.
	Retention time.Duration
	// ReadConcurrency bounds the GETs one read keeps in flight when it
	// fetches several slots (replay, a lost race's landed slots; default 8).
	ReadConcurrency int
	// Logger receives the provider's warnings (default slog.Default()).
	Logger *slog.Logger
}

func (o *Options) fill() {
	if o.FlushSlots == 0 {
		o.FlushSlots = DefaultFlushSlots
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.ReadConcurrency <= 0 {
		o.ReadConcurrency = DefaultReadConcurrency
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// freshWindow is how long a tail observation lets a committer race the
// next slot without checking the floor afterwards (0: always check).
func (o Options) freshWindow() time.Duration {
	if o.Retention <= 0 {
		return 0
	}
	return o.Retention / 2
}

// retention is the minimum age of a slot the collector deletes.
func (o Options) retention() time.Duration { return max(o.Retention, 0) }

// Provider is moraine's in-tree commit log (see the package doc for the
// protocol). It implements core.CommitLogProvider.
//
// A Provider caches facts about each log it is handed (the base, the
// floor, how far the tail is known): the writer, reader, collector and
// committer it returns for the same store handle and path share them, so
// one open's reader and committer never ask the bucket what the other
// already learned. Session returns a fresh Provider per open, so the cache
// lives as long as the open; a Provider used directly (without Session)
// keeps one entry per store handle it was ever given.
type Provider struct {
	opts Options

	mu   sync.Mutex
	logs []*sharedLog
}

// New returns a provider.
func New(opts Options) *Provider {
	opts.fill()
	return &Provider{opts: opts}
}

// Options returns the provider's options, defaults filled in.
func (p *Provider) Options() Options { return p.opts }

// state returns the shared state of the log at path in store. Store handles
// are told apart by identity (two handles on one bucket share nothing;
// that costs requests, never correctness).
func (p *Provider) state(store objstore.Store, path string) *sharedLog {
	comparable := store != nil && reflect.TypeOf(store).Comparable()
	p.mu.Lock()
	defer p.mu.Unlock()
	if comparable {
		for _, l := range p.logs {
			if l.store == store && l.root == trimPath(path) {
				return l
			}
		}
	}
	l := newLogState(store, path, p.opts)
	if comparable {
		p.logs = append(p.logs, l)
	}
	return l
}

func trimPath(path string) string {
	for len(path) > 0 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	return path
}

// WriterInit returns a fresh WAL plug for an engine writer that folds the
// log into the store (slate.WithWalWriter). The value also implements
// slate.WalGC: the engine uses it to truncate the log when no other
// collector is given.
func (p *Provider) WriterInit(logStore objstore.Store, path string) slate.WriterInit {
	return &WriterInit{Collector{l: p.state(logStore, path)}}
}

// Reader returns the WAL reader over the log (slate.WithWalReader).
func (p *Provider) Reader(logStore objstore.Store, path string) slate.WalReader {
	return &Reader{l: p.state(logStore, path)}
}

// GC returns the log's collector (slate.WithWalGC).
func (p *Provider) GC(logStore objstore.Store, path string) slate.WalGC {
	return &Collector{l: p.state(logStore, path)}
}

// Committer returns the log's committer.
func (p *Provider) Committer(logStore objstore.Store, path string) core.Committer {
	return &Committer{l: p.state(logStore, path)}
}

// Session returns a fresh Provider with the same options: the state it
// caches (see Provider) is scoped to one catalog open.
func (p *Provider) Session() core.CommitLogProvider { return New(p.opts) }

var _ core.CommitLogProvider = (*Provider)(nil)
