// Package slatetest holds test doubles for the engine's plug points: an
// in-memory WAL that implements slate.WriterInit, slate.WalReader and
// slate.WalGC. Every WAL implementation must pass the engine's write/replay
// tests; this one proves the seam works without object-store I/O.
package slatetest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core/slate"
)

// MemWAL is an in-memory WAL shared by every writer and reader handed it.
// Each Append becomes its own WAL id and is durable at once. Fencing is by
// epoch: FenceAndInit records the manifest's epoch as the owner's, writes
// an empty fence id, and any writer holding an older epoch then fails with
// ErrFenced on its next Append. By default it never asks the engine to
// flush its memtable; FlushMemtableAfter makes it ask.
type MemWAL struct {
	mu         sync.Mutex
	files      map[uint64]memFile
	owner      uint64 // epoch allowed to append
	appends    int
	flushAfter uint64 // ShouldFlushMemtable threshold (0: never)
	asked      int    // ShouldFlushMemtable calls that answered true
}

type memFile struct {
	rows    []slate.Row
	created time.Time
}

// NewMemWAL returns an empty WAL.
func NewMemWAL() *MemWAL { return &MemWAL{files: map[uint64]memFile{}} }

// Appends counts Append calls that landed (all writers).
func (w *MemWAL) Appends() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.appends
}

// FlushMemtableAfter makes every writer's ShouldFlushMemtable ask the
// engine to freeze its memtable once n or more WAL ids lie above the
// replay point it passes (as the native WAL does at
// Settings.MaxWalFlushesBeforeL0Flush). n = 0, the default, never asks.
func (w *MemWAL) FlushMemtableAfter(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushAfter = uint64(max(n, 0))
}

// MemtableFlushRequests counts the ShouldFlushMemtable calls that answered
// true (all writers).
func (w *MemWAL) MemtableFlushRequests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked
}

// IDs returns the ids present, ascending.
func (w *MemWAL) IDs() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []uint64
	for id := range w.files {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (w *MemWAL) lastLocked(lowerBound uint64) uint64 {
	last := lowerBound
	for id := range w.files {
		if id > last {
			last = id
		}
	}
	return last
}

// FenceAndInit implements slate.WriterInit.
func (w *MemWAL) FenceAndInit(ctx context.Context, m slate.WriterManifest) (slate.WalIterator, slate.WalWriter, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m.Epoch() < w.owner {
		return nil, nil, fmt.Errorf("%w: epoch %d is older than the WAL's owner %d", slate.ErrFenced, m.Epoch(), w.owner)
	}
	w.owner = m.Epoch()
	fence := w.lastLocked(m.ReplayAfterWalID()) + 1
	w.files[fence] = memFile{created: time.Now()}
	it := &memIter{wal: w, next: m.ReplayAfterWalID() + 1, end: fence + 1}
	wr := &memWriter{wal: w, epoch: m.Epoch(), last: fence}
	return it, wr, nil
}

// Iterator implements slate.WalReader.
func (w *MemWAL) Iterator(ctx context.Context, r slate.WalRange) (slate.WalIterator, error) {
	if r.Start == 0 {
		return nil, fmt.Errorf("%w: WAL ids start at 1", slate.ErrInvalid)
	}
	return &memIter{wal: w, next: r.Start, end: r.End}, nil
}

// LastWalID implements slate.WalReader.
func (w *MemWAL) LastWalID(ctx context.Context, lowerBound uint64) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastLocked(lowerBound), nil
}

// Collect implements slate.WalGC (fences, i.e. empty ids, are kept).
func (w *MemWAL) Collect(ctx context.Context, referenced []slate.WalRange, minAge time.Duration, dryRun bool) ([]uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []uint64
	cutoff := time.Now().Add(-minAge)
	for id, f := range w.files {
		if len(f.rows) == 0 || f.created.After(cutoff) {
			continue
		}
		keep := false
		for _, r := range referenced {
			keep = keep || r.Contains(id)
		}
		if !keep {
			out = append(out, id)
			if !dryRun {
				delete(w.files, id)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

type memIter struct {
	wal       *MemWAL
	next, end uint64
}

func (it *memIter) Next(ctx context.Context) (*slate.WalRows, error) {
	it.wal.mu.Lock()
	defer it.wal.mu.Unlock()
	if it.end != 0 && it.next >= it.end {
		return nil, nil
	}
	f, ok := it.wal.files[it.next]
	if !ok {
		if it.end == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: id %d", slate.ErrWalTruncated, it.next)
	}
	id := it.next
	it.next++
	rows := make([]slate.Row, len(f.rows))
	for i, r := range f.rows {
		rows[i] = r.Clone()
	}
	return &slate.WalRows{Rows: rows, LastConsumedWalID: id}, nil
}

func (it *memIter) Close() error { return nil }

type memWriter struct {
	wal    *MemWAL
	epoch  uint64
	mu     sync.Mutex
	last   uint64
	seq    uint64
	hasSeq bool
	closed error
	subs   []func(slate.WalEvent)
}

func (m *memWriter) Append(rows []slate.Row) error {
	m.wal.mu.Lock()
	if m.epoch < m.wal.owner {
		m.wal.mu.Unlock()
		m.mu.Lock()
		m.closed = slate.ErrFenced
		st := m.statusLocked()
		subs := append([]func(slate.WalEvent){}, m.subs...)
		m.mu.Unlock()
		for _, fn := range subs {
			fn(slate.WalEvent{Kind: slate.WalClosed, Status: st})
		}
		return slate.ErrFenced
	}
	id := m.wal.lastLocked(0) + 1
	cp := make([]slate.Row, len(rows))
	for i, r := range rows {
		cp[i] = r.Clone()
	}
	m.wal.files[id] = memFile{rows: cp, created: time.Now()}
	m.wal.appends++
	m.wal.mu.Unlock()

	m.mu.Lock()
	m.last = id
	if len(rows) > 0 {
		m.seq, m.hasSeq = rows[0].Seq, true
	}
	st := m.statusLocked()
	subs := append([]func(slate.WalEvent){}, m.subs...)
	m.mu.Unlock()
	// Delivered after Append returns would be more realistic, but the
	// engine must cope with either; deliver on a goroutine to avoid
	// re-entering the engine's lock.
	go func() {
		for _, fn := range subs {
			fn(slate.WalEvent{Kind: slate.WalFlushed, Status: st})
		}
	}()
	return nil
}

func (m *memWriter) statusLocked() slate.WalStatus {
	return slate.WalStatus{LastFlushedWalID: m.last, LastFlushedSeq: m.seq, HasFlushedSeq: m.hasSeq, Closed: m.closed}
}

func (m *memWriter) Flush(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed != nil && m.closed != slate.ErrClosed {
		return m.closed
	}
	return nil
}

func (m *memWriter) ShouldFlushMemtable(replayAfter uint64) bool {
	m.mu.Lock()
	last := m.last
	m.mu.Unlock()
	m.wal.mu.Lock()
	defer m.wal.mu.Unlock()
	if m.wal.flushAfter == 0 || last <= replayAfter || last-replayAfter < m.wal.flushAfter {
		return false
	}
	m.wal.asked++
	return true
}

func (m *memWriter) Status() slate.WalStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statusLocked()
}

func (m *memWriter) Subscribe(fn func(slate.WalEvent)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs = append(m.subs, fn)
}

func (m *memWriter) Close(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed == nil {
		m.closed = slate.ErrClosed
	}
	return nil
}

var (
	_ slate.WriterInit = (*MemWAL)(nil)
	_ slate.WalReader  = (*MemWAL)(nil)
	_ slate.WalGC      = (*MemWAL)(nil)
)
