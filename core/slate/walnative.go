package slate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/base"
	"github.com/moraine-go/moraine/core/slate/internal/sst"
)

// NativeWAL is the object-store WAL: one file per flush under
// <root>/wal/<20-digit id>.sst, written create-if-absent with contiguous
// ids. A zero-byte object is a fence: a writer opening the database claims
// the next free id with an empty object, so an older writer's next flush at
// that id fails (ErrFenced) and writes nothing. A writer that finds its next
// id taken while the manifest still holds its epoch has met the fence of an
// opener that lost the race to it, and moves past it (see
// nativeWriter.takenByLosingOpener).
//
// It implements WriterInit, WalReader and WalGC.
type NativeWAL struct {
	store objstore.Store
	dir   string // "<root>/wal/"
	cfg   walConfig
	log   *slog.Logger
}

type walConfig struct {
	flushInterval       time.Duration // <= 0: no ticker
	flushBytes          int           // flush when the buffer reaches this size
	maxFlushesBeforeL0  uint64        // ShouldFlushMemtable threshold
	blockSize           int
	uploadsBeforeReport int
}

// NewNativeWAL returns the native WAL of the database at root in store,
// with the engine's default settings.
func NewNativeWAL(store objstore.Store, root string) *NativeWAL {
	s := Settings{}
	s.fill()
	return newNativeWAL(store, root, s, slog.Default())
}

func newNativeWAL(store objstore.Store, root string, s Settings, log *slog.Logger) *NativeWAL {
	return &NativeWAL{
		store: store,
		dir:   joinPath(root, "wal/"),
		cfg: walConfig{
			flushInterval:      s.FlushInterval,
			flushBytes:         s.L0SSTSizeBytes,
			maxFlushesBeforeL0: uint64(s.MaxWalFlushesBeforeL0Flush),
			blockSize:          s.BlockSize,
		},
		log: log,
	}
}

func joinPath(root, rest string) string {
	root = strings.TrimSuffix(root, "/")
	if root == "" {
		return rest
	}
	return root + "/" + rest
}

func (n *NativeWAL) key(id uint64) string { return fmt.Sprintf("%s%020d.sst", n.dir, id) }

func (n *NativeWAL) parseKey(key string) (uint64, bool) {
	name, ok := strings.CutPrefix(key, n.dir)
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(name, ".sst")
	if !ok || len(num) != 20 {
		return 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	return id, err == nil
}

func (n *NativeWAL) exists(ctx context.Context, id uint64) (bool, error) {
	_, err := n.store.Head(ctx, n.key(id))
	if errors.Is(err, objstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// LastWalID probes with HEAD requests: 1, 2, 4, ... ids above lowerBound
// until a miss, then binary-searches between the last hit and the miss.
// Ids are contiguous, so the answer is exact. Nothing new costs one HEAD.
func (n *NativeWAL) LastWalID(ctx context.Context, lowerBound uint64) (uint64, error) {
	hit := lowerBound
	var miss uint64
	for step := uint64(1); ; step *= 2 {
		id := lowerBound + step
		ok, err := n.exists(ctx, id)
		if err != nil {
			return 0, err
		}
		if !ok {
			miss = id
			break
		}
		hit = id
		if step >= 1<<48 {
			return 0, fmt.Errorf("slate: WAL tail probe ran past 2^48 ids above %d", lowerBound)
		}
	}
	for miss-hit > 1 {
		mid := hit + (miss-hit)/2
		ok, err := n.exists(ctx, mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hit = mid
		} else {
			miss = mid
		}
	}
	return hit, nil
}

// Iterator reads WAL files in r, one file per Next.
func (n *NativeWAL) Iterator(ctx context.Context, r WalRange) (WalIterator, error) {
	if r.Start == 0 {
		return nil, fmt.Errorf("%w: WAL ids start at 1", ErrInvalid)
	}
	return &nativeIter{wal: n, next: r.Start, end: r.End}, nil
}

type nativeIter struct {
	wal  *NativeWAL
	next uint64
	end  uint64
}

func (it *nativeIter) Next(ctx context.Context) (*WalRows, error) {
	if it.end != 0 && it.next >= it.end {
		return nil, nil
	}
	id := it.next
	data, _, err := it.wal.store.Get(ctx, it.wal.key(id))
	if errors.Is(err, objstore.ErrNotFound) {
		if it.end == 0 {
			return nil, nil // the current tail; call again later
		}
		return nil, fmt.Errorf("%w: WAL %d missing inside [%d, %d)", ErrWalTruncated, id, id, it.end)
	}
	if err != nil {
		return nil, err
	}
	it.next++
	if len(data) == 0 {
		return &WalRows{LastConsumedWalID: id}, nil // a fence
	}
	rows, err := decodeWalFile(data)
	if err != nil {
		return nil, fmt.Errorf("WAL %d: %w", id, err)
	}
	return &WalRows{Rows: rows, LastConsumedWalID: id}, nil
}

func (it *nativeIter) Close() error { return nil }

func decodeWalFile(data []byte) ([]base.Row, error) {
	t, err := sst.OpenBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	rows, err := t.Rows(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return rows, nil
}

func encodeWalFile(rows []base.Row, blockSize int) ([]byte, error) {
	b := sst.NewBuilder(sst.Options{Kind: sst.KindWAL, BlockSize: blockSize})
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			return nil, err
		}
	}
	data, _, err := b.Finish()
	return data, err
}

// Collect deletes WAL files outside every referenced range and older than
// minAge. Zero-byte fences are never deleted: a stalled older writer must
// always find its next id taken.
func (n *NativeWAL) Collect(ctx context.Context, referenced []WalRange, minAge time.Duration, dryRun bool) ([]uint64, error) {
	// The cutoff is taken before listing, so a file written while the
	// listing runs is never old enough.
	cutoff := time.Now().Add(-minAge)
	infos, err := objstore.ListAll(ctx, n.store, n.dir, "")
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, o := range infos {
		id, ok := n.parseKey(o.Key)
		if !ok || o.Size == 0 || o.LastModified.After(cutoff) {
			continue
		}
		keep := false
		for _, r := range referenced {
			if r.Contains(id) {
				keep = true
				break
			}
		}
		if keep {
			continue
		}
		if !dryRun {
			if err := n.store.Delete(ctx, o.Key); err != nil {
				return out, err
			}
		}
		out = append(out, id)
	}
	return out, nil
}

// FenceAndInit claims the WAL for the manifest's epoch: it finds the tail,
// writes a zero-byte fence at the next id (moving past ids an older writer
// takes meanwhile, re-checking the epoch each time), and returns a replay
// iterator over (ReplayAfterWalID, fence] and a writer continuing after it.
func (n *NativeWAL) FenceAndInit(ctx context.Context, m WriterManifest) (WalIterator, WalWriter, error) {
	replayAfter := m.ReplayAfterWalID()
	last, err := n.LastWalID(ctx, replayAfter)
	if err != nil {
		return nil, nil, err
	}
	fence := last + 1
	if nw := m.NextWalID(); fence < nw {
		// The manifest recorded ids up to nw-1 as used; they may have been
		// garbage collected only below the replay point, so this means a
		// WAL file is missing above the replay point.
		n.log.Warn("WAL tail is below the manifest's next WAL id", "tail", last, "next_wal_id", nw)
	}
	for {
		_, err := n.store.PutIfAbsent(ctx, n.key(fence), nil)
		if err == nil {
			break
		}
		if !errors.Is(err, objstore.ErrExists) {
			return nil, nil, fmt.Errorf("slate: fencing WAL %d: %w", fence, err)
		}
		// An older writer flushed into this id: make sure we still hold the
		// newest epoch, then move past it.
		if err := m.Refresh(ctx); err != nil {
			return nil, nil, err
		}
		fence++
	}
	it, err := n.Iterator(ctx, WalRange{Start: replayAfter + 1, End: fence + 1})
	if err != nil {
		return nil, nil, err
	}
	w := newNativeWriter(n, fence, m)
	return it, w, nil
}

// nativeWriter buffers appends and uploads them as WAL files.
type nativeWriter struct {
	wal *NativeWAL
	m   WriterManifest // the fenced manifest: re-checked when an id is taken

	mu        sync.Mutex
	cur       []base.Row
	curBytes  int
	frozen    []walFile // waiting for upload, in id order
	nextID    uint64
	flushedID uint64
	flushedSq uint64
	hasSeq    bool
	closed    error
	subs      []func(WalEvent)
	progress  chan struct{} // closed and replaced on every change

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

type walFile struct {
	id      uint64
	rows    []base.Row
	lastSeq uint64
	bytes   int
}

func newNativeWriter(n *NativeWAL, fence uint64, m WriterManifest) *nativeWriter {
	w := &nativeWriter{
		wal:       n,
		m:         m,
		nextID:    fence + 1,
		flushedID: fence,
		progress:  make(chan struct{}),
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	go w.run()
	return w
}

func (w *nativeWriter) Subscribe(fn func(WalEvent)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs = append(w.subs, fn)
}

func (w *nativeWriter) statusLocked() WalStatus {
	est := w.curBytes
	for _, f := range w.frozen {
		est += f.bytes
	}
	return WalStatus{LastFlushedWalID: w.flushedID, LastFlushedSeq: w.flushedSq, HasFlushedSeq: w.hasSeq, EstimatedBytes: est, Closed: w.closed}
}

func (w *nativeWriter) Status() WalStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statusLocked()
}

func (w *nativeWriter) Append(rows []Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed != nil {
		return w.closed
	}
	w.cur = append(w.cur, rows...)
	for _, r := range rows {
		w.curBytes += r.Size()
	}
	switch {
	case w.wal.cfg.flushBytes > 0 && w.curBytes >= w.wal.cfg.flushBytes:
		w.freezeLocked()
		w.poke()
	case w.wal.cfg.flushInterval == FlushContinuous:
		// The uploader freezes whatever has accumulated when it gets to it:
		// batches appended while an upload is in flight share the next one.
		w.poke()
	}
	return nil
}

func (w *nativeWriter) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *nativeWriter) freezeLocked() {
	if len(w.cur) == 0 {
		return
	}
	w.frozen = append(w.frozen, walFile{id: w.nextID, rows: w.cur, lastSeq: w.cur[len(w.cur)-1].Seq, bytes: w.curBytes})
	w.nextID++
	w.cur, w.curBytes = nil, 0
}

func (w *nativeWriter) signalLocked() {
	close(w.progress)
	w.progress = make(chan struct{})
}

func (w *nativeWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	if w.closed != nil {
		err := w.closed
		w.mu.Unlock()
		return err
	}
	w.freezeLocked()
	if len(w.frozen) == 0 {
		w.mu.Unlock()
		return nil // everything appended is uploaded
	}
	// The wait is for a seq, not an id: ids of files not yet uploaded move
	// up when one is found taken by a losing opener's fence (uploadAll).
	target := w.frozen[len(w.frozen)-1].lastSeq
	w.mu.Unlock()
	w.poke()
	for {
		w.mu.Lock()
		if w.hasSeq && w.flushedSq >= target {
			w.mu.Unlock()
			return nil
		}
		if w.closed != nil {
			err := w.closed
			w.mu.Unlock()
			return err
		}
		ch := w.progress
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (w *nativeWriter) ShouldFlushMemtable(replayAfter uint64) bool {
	if w.wal.cfg.maxFlushesBeforeL0 == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushedID > replayAfter && w.flushedID-replayAfter >= w.wal.cfg.maxFlushesBeforeL0
}

func (w *nativeWriter) emit(ev WalEvent) {
	w.mu.Lock()
	subs := append([]func(WalEvent){}, w.subs...)
	w.mu.Unlock()
	for _, fn := range subs {
		fn(ev)
	}
}

// run is the uploader: on every tick or kick it freezes the buffer and
// uploads frozen files one at a time, in id order.
func (w *nativeWriter) run() {
	defer close(w.done)
	var tick <-chan time.Time
	if w.wal.cfg.flushInterval > 0 {
		t := time.NewTicker(w.wal.cfg.flushInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-w.stop:
			return
		case <-tick:
			w.mu.Lock()
			w.freezeLocked()
			w.mu.Unlock()
		case <-w.kick:
			if w.wal.cfg.flushInterval == FlushContinuous {
				w.mu.Lock()
				w.freezeLocked()
				w.mu.Unlock()
			}
		}
		if !w.uploadAll() {
			return
		}
	}
}

// uploadAll uploads every frozen file; false once the WAL has closed.
func (w *nativeWriter) uploadAll() bool {
	for {
		w.mu.Lock()
		if w.closed != nil {
			w.mu.Unlock()
			return false
		}
		if len(w.frozen) == 0 {
			w.mu.Unlock()
			return true
		}
		f := w.frozen[0]
		w.mu.Unlock()

		err := w.upload(f)
		if errors.Is(err, objstore.ErrExists) {
			skip, cerr := w.takenByLosingOpener(f.id)
			if skip {
				// Move this file and every later one up by one id.
				w.mu.Lock()
				for i := range w.frozen {
					w.frozen[i].id++
				}
				w.nextID++
				w.mu.Unlock()
				continue
			}
			if cerr != nil {
				err = cerr
			}
		}

		w.mu.Lock()
		if err != nil {
			switch {
			case errors.Is(err, ErrFenced):
				err = fmt.Errorf("%w (WAL id %d is taken)", err, f.id)
			case errors.Is(err, objstore.ErrExists):
				err = fmt.Errorf("%w (WAL id %d taken by a newer writer)", ErrFenced, f.id)
			default:
				err = fmt.Errorf("slate: WAL upload of id %d failed; the database is closed: %w", f.id, err)
			}
			w.closed = err
			st := w.statusLocked()
			w.signalLocked()
			w.mu.Unlock()
			w.emit(WalEvent{Kind: WalClosed, Status: st})
			return false
		}
		w.frozen = w.frozen[1:]
		w.flushedID = f.id
		w.flushedSq, w.hasSeq = f.lastSeq, true
		st := w.statusLocked()
		w.signalLocked()
		w.mu.Unlock()
		w.emit(WalEvent{Kind: WalFlushed, Status: st})
	}
}

// takenByLosingOpener decides what a taken WAL id means. Usually a newer
// writer's fence: the manifest then holds a newer epoch and the refresh
// fails with ErrFenced. But an opener that lost the race to this writer
// may have fenced it: it claimed its (older) epoch before this writer
// claimed its own, probed the tail after this writer's fence, and fenced
// the id after it; its re-check then failed and it never writes there
// again. Every opener claims its epoch before it fences, so if the
// manifest, read after the conflict, still holds this writer's epoch, no
// newer writer has fenced anything yet: an empty object is such a losing
// opener's fence, and this writer moves past it (the ids stay contiguous,
// and replay reads a fence as an empty file). Anything else is treated as
// fencing, as before.
func (w *nativeWriter) takenByLosingOpener(id uint64) (bool, error) {
	ctx := context.Background()
	if err := w.m.Refresh(ctx); err != nil {
		return false, err
	}
	info, err := w.wal.store.Head(ctx, w.wal.key(id))
	if err != nil {
		return false, err
	}
	return info.Size == 0, nil
}

func (w *nativeWriter) upload(f walFile) error {
	data, err := encodeWalFile(f.rows, w.wal.cfg.blockSize)
	if err != nil {
		return err
	}
	_, err = w.wal.store.PutIfAbsent(context.Background(), w.wal.key(f.id), data)
	return err
}

// Close flushes what is buffered (best effort within ctx) and stops.
func (w *nativeWriter) Close(ctx context.Context) error {
	ferr := w.Flush(ctx)
	w.mu.Lock()
	if w.closed == nil {
		w.closed = ErrClosed
	}
	w.signalLocked()
	w.mu.Unlock()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	if errors.Is(ferr, ErrClosed) {
		return nil
	}
	return ferr
}

var (
	_ WriterInit = (*NativeWAL)(nil)
	_ WalReader  = (*NativeWAL)(nil)
	_ WalGC      = (*NativeWAL)(nil)
	_ WalWriter  = (*nativeWriter)(nil)
)
