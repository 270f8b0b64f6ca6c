package slate

import (
	"log/slog"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
)

// Settings are the engine's tunables. Zero values take the defaults (which
// follow SlateDB's, see reference-slatedb.md §9).
type Settings struct {
	// FlushInterval paces native WAL uploads (default 100ms). FlushContinuous
	// uploads as soon as there is data (one upload in flight at a time, so
	// concurrent writers share uploads); FlushManual uploads only on size,
	// on Flush, or when a Write waits for durability.
	FlushInterval time.Duration
	// L0SSTSizeBytes freezes the memtable at this estimated size and also
	// flushes the native WAL buffer at it (default 64 MiB).
	L0SSTSizeBytes int
	// MaxWalFlushesBeforeL0Flush: the native WAL asks for a memtable flush
	// after this many WAL files past the replay point (default 4096).
	MaxWalFlushesBeforeL0Flush int
	// ManifestPollInterval: how often the writer re-reads the manifest to
	// notice a newer writer (default 1s; negative: never).
	ManifestPollInterval time.Duration
	// BlockSize of SST data blocks (default 4096).
	BlockSize int
	// BloomBitsPerKey for L0 and run SSTs (default 10).
	BloomBitsPerKey int
	// MinFilterKeys: build a bloom filter only for SSTs with at least this
	// many keys (default 1000, SlateDB's; tiny tables are cheaper without).
	MinFilterKeys int
	// WholeObjectBytes: SSTs at most this large are read with one GET and
	// kept in memory; larger ones are read by block (default 1 MiB).
	WholeObjectBytes int
	// L0MaxSSTs: L0 flushes wait while L0 holds this many SSTs and the
	// in-process compactor is running and healthy (default 8), so L0 cannot
	// grow without bound. With the background compactor off (or fenced by
	// another compactor) flushes never wait.
	L0MaxSSTs int
}

func (s *Settings) fill() {
	if s.FlushInterval == 0 {
		s.FlushInterval = 100 * time.Millisecond
	}
	if s.L0SSTSizeBytes <= 0 {
		s.L0SSTSizeBytes = 64 << 20
	}
	if s.MaxWalFlushesBeforeL0Flush <= 0 {
		s.MaxWalFlushesBeforeL0Flush = 4096
	}
	if s.ManifestPollInterval == 0 {
		s.ManifestPollInterval = time.Second
	}
	if s.BlockSize <= 0 {
		s.BlockSize = 4096
	}
	if s.BloomBitsPerKey <= 0 {
		s.BloomBitsPerKey = 10
	}
	if s.MinFilterKeys == 0 {
		s.MinFilterKeys = 1000
	}
	if s.WholeObjectBytes == 0 {
		s.WholeObjectBytes = 1 << 20
	}
	if s.L0MaxSSTs <= 0 {
		s.L0MaxSSTs = 8
	}
}

// Special FlushInterval values.
const (
	FlushContinuous time.Duration = -1
	FlushManual     time.Duration = -2
)

type options struct {
	settings   Settings
	walStore   objstore.Store
	walWriter  WriterInit
	walReader  WalReader
	walGC      WalGC
	logger     *slog.Logger
	readerOpts ReaderOptions
	gc         GCOptions
	compactor  CompactorOptions
}

// Option configures Open and OpenReader.
type Option func(*options)

// WithSettings sets the engine's tunables.
func WithSettings(s Settings) Option { return func(o *options) { o.settings = s } }

// WithWalStore keeps the native WAL in another object store (for example a
// low-latency bucket). The manifest records its identity; opening with a
// different WAL store is refused.
func WithWalStore(s objstore.Store) Option { return func(o *options) { o.walStore = s } }

// WithWalWriter plugs in another WAL for the writer (the commit log).
func WithWalWriter(w WriterInit) Option { return func(o *options) { o.walWriter = w } }

// WithWalReader plugs in another WAL for readers.
func WithWalReader(r WalReader) Option { return func(o *options) { o.walReader = r } }

// WithWalGC sets how garbage collection deletes WAL files of a plugged-in
// WAL (DB.RunGC, the background GC and the standalone RunGC). Without it a
// plugged WriterInit that also implements WalGC is used, and the native
// WAL collects its own files.
func WithWalGC(g WalGC) Option { return func(o *options) { o.walGC = g } }

// WithGC configures the writer's garbage collector (see GCOptions; the
// background collector is on by default, Interval < 0 turns it off).
func WithGC(g GCOptions) Option { return func(o *options) { o.gc = g } }

// WithCompactor configures the writer's in-process compactor (see
// CompactorOptions; on by default, PollInterval < 0 turns the background
// compactor off, DB.Compact still works).
func WithCompactor(c CompactorOptions) Option { return func(o *options) { o.compactor = c } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

func buildOptions(opts []Option) options {
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	o.settings.fill()
	o.gc.fill()
	o.compactor.fill()
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o
}
