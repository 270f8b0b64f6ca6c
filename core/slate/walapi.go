package slate

import (
	"context"
	"errors"
	"time"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// Row is one versioned key as the engine stores and journals it. Every row
// of one write batch carries the batch's seq.
type Row = base.Row

// RowKind says whether a row puts or deletes its key.
type RowKind = base.Kind

// Row kinds (wire values).
const (
	RowPut    = base.KindPut
	RowDelete = base.KindDelete
)

// The pluggable write-ahead log.
//
// The engine journals every write batch through a WalWriter before it
// becomes visible, and on open replays what the WAL holds beyond the last
// flushed memtable. The native implementation keeps WAL files in the object
// store (wal/<20-digit id>.sst); WithWalWriter and WithWalReader plug in
// another (the commit log is one). These interfaces follow SlateDB 0.16's
// RFC-0030 traits one to one.
//
// What the engine guarantees an implementation:
//   - Open fences the manifest (bumps the writer epoch by CAS) before it
//     calls WriterInit.FenceAndInit, and re-checks the manifest after.
//   - Append is called with one whole batch at a time, batches in strictly
//     increasing seq order, never concurrently with another Append.
//   - A memtable frozen while Status().LastFlushedWalID is W records W as
//     its replay point: once that memtable is in L0, the engine will never
//     again ask for WAL ids <= W (ReplayAfterWalID only grows).
//   - Rows replayed with seq <= the manifest's LastL0Seq are skipped, so an
//     implementation may replay more than needed.
//
// What an implementation must guarantee the engine (epoch E = the epoch
// FenceAndInit was called under):
//   - After FenceAndInit returns, no writer with an epoch below E can make
//     a WAL write durable, and every durable row of older epochs not yet in
//     L0 is returned by the replay iterator.
//   - Files (units with an id) are totally ordered, ids increase, and a
//     batch never straddles two ids.
//   - WalFlushed events report LastFlushedWalID/LastFlushedSeq only for data
//     that is durable; the engine acknowledges writes on them.
//   - A WAL that discovers a newer writer reports ErrFenced (Status.Closed
//     and a WalClosed event); after that it makes nothing durable.

// WalRange is a half-open range of WAL ids [Start, End); End == 0 means
// unbounded (follow the tail).
type WalRange struct {
	Start, End uint64
}

// Contains reports whether id is in the range.
func (r WalRange) Contains(id uint64) bool { return id >= r.Start && (r.End == 0 || id < r.End) }

// WalRows is what a WalIterator yields: the rows of one or more whole
// batches (never part of one), and the last WAL id fully consumed.
type WalRows struct {
	Rows              []Row
	LastConsumedWalID uint64
}

// WalIterator walks WAL rows in seq and id order.
type WalIterator interface {
	// Next returns the next rows, or (nil, nil) at the end. For a bounded
	// range the end is final. For an open-ended range (End == 0) the end is
	// the current tail: calling Next again later continues with whatever
	// has appeared since. A missing id inside the range below a present one
	// is ErrWalTruncated.
	Next(ctx context.Context) (*WalRows, error)
	Close() error
}

// WalStatus describes a WAL writer's progress.
type WalStatus struct {
	// LastFlushedWalID is the highest WAL id whose content (and every lower
	// id's) is durable.
	LastFlushedWalID uint64
	// LastFlushedSeq is the highest durable seq; valid when HasFlushedSeq.
	LastFlushedSeq uint64
	HasFlushedSeq  bool
	// EstimatedBytes counts appended but not yet durable bytes
	// (backpressure).
	EstimatedBytes int
	// Closed is set once the WAL has stopped, with the reason (ErrFenced,
	// ErrClosed, or the I/O error that stopped it).
	Closed error
}

// WalEventKind distinguishes WAL events.
type WalEventKind int

const (
	// WalFlushed: more data became durable; Status says how much.
	WalFlushed WalEventKind = iota + 1
	// WalClosed: the WAL stopped; Status.Closed says why.
	WalClosed
)

// WalEvent is delivered to WalWriter subscribers.
type WalEvent struct {
	Kind   WalEventKind
	Status WalStatus
}

// WalWriter journals batches.
type WalWriter interface {
	// Append adds one batch (all rows share one seq). It must not block on
	// I/O; durability is reported through events and Flush.
	Append(rows []Row) error
	// Flush makes everything appended so far durable, or returns why it
	// cannot (the WAL closed).
	Flush(ctx context.Context) error
	// ShouldFlushMemtable asks the engine to freeze the memtable, given the
	// manifest's current replay point (e.g. too many WAL files to replay).
	ShouldFlushMemtable(replayAfterWalID uint64) bool
	// Status reports progress.
	Status() WalStatus
	// Subscribe registers fn for every later event. fn runs on the WAL's
	// goroutine and must not call back into the WAL.
	Subscribe(fn func(WalEvent))
	// Close flushes what it can and stops the WAL.
	Close(ctx context.Context) error
}

// WriterManifest is the fenced manifest as FenceAndInit sees it. It stays
// valid for the writer's whole lifetime, so a plugged writer may keep it to
// re-check its epoch (e.g. on Flush).
type WriterManifest interface {
	// ReplayAfterWalID is the current replay point: ids above it may hold
	// rows the tree lacks.
	ReplayAfterWalID() uint64
	// NextWalID is the next WAL id the manifest last recorded.
	NextWalID() uint64
	// LastL0Seq is the highest seq already in the tree.
	LastL0Seq() uint64
	// Epoch is the writer epoch this open holds.
	Epoch() uint64
	// Refresh reloads the manifest; it fails with ErrFenced if a newer
	// writer has taken the epoch.
	Refresh(ctx context.Context) error
}

// WriterInit fences older writers out of the WAL and starts a writer.
type WriterInit interface {
	// FenceAndInit fences the WAL below the manifest's epoch and returns an
	// iterator over every WAL id in (ReplayAfterWalID, fence] plus the
	// writer that continues after the fence.
	FenceAndInit(ctx context.Context, m WriterManifest) (WalIterator, WalWriter, error)
}

// WalReader reads a WAL without writing it (readers, CDC, the commit-log
// tail).
type WalReader interface {
	// Iterator walks ids in r (Start must be > 0).
	Iterator(ctx context.Context, r WalRange) (WalIterator, error)
	// LastWalID returns the highest present WAL id above lowerBound, or
	// lowerBound itself when there is none.
	LastWalID(ctx context.Context, lowerBound uint64) (uint64, error)
}

// WalGC deletes WAL files nothing references.
type WalGC interface {
	// Collect may delete WAL ids outside every referenced range whose
	// objects are older than minAge. With dryRun it deletes nothing. It
	// returns the ids it deleted (or would delete).
	Collect(ctx context.Context, referenced []WalRange, minAge time.Duration, dryRun bool) ([]uint64, error)
}

// Engine errors. Errors returned by the engine match these with errors.Is.
var (
	// ErrFenced: a newer writer took the database; this handle is closed.
	ErrFenced = errors.New("slate: fenced by a newer writer (detected newer DB client)")
	// ErrClosed: the handle was closed.
	ErrClosed = errors.New("slate: closed")
	// ErrTxnConflict: a transaction lost a write-write conflict.
	ErrTxnConflict = errors.New("slate: transaction conflict: a transaction committed after this one started wrote the same key")
	// ErrWalTruncated: a WAL id the engine needed is gone.
	ErrWalTruncated = errors.New("slate: WAL truncated")
	// ErrCorrupt: stored bytes failed to decode or checksum.
	ErrCorrupt = errors.New("slate: corrupt data")
	// ErrInvalid: a bad argument (e.g. a seqnum that does not advance).
	ErrInvalid = errors.New("slate: invalid argument")
	// ErrCheckpointMissing: a pinned checkpoint does not exist.
	ErrCheckpointMissing = errors.New("slate: checkpoint not found")
	// ErrNotInitialized: no database exists at the path (readers never
	// create one).
	ErrNotInitialized = errors.New("slate: no database at this path")
	// ErrWalStoreMismatch: opened with a WAL store other than the one the
	// manifest records.
	ErrWalStoreMismatch = errors.New("slate: WAL store mismatch")
)
