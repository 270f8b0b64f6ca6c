package slate

import (
	"context"
	"fmt"
	"sort"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// WriteBatch is an ordered set of puts and deletes applied atomically with
// one seq. A later operation on a key replaces an earlier one.
type WriteBatch struct {
	rows  []base.Row
	index map[string]int
}

// NewWriteBatch returns an empty batch.
func NewWriteBatch() *WriteBatch { return &WriteBatch{index: map[string]int{}} }

func (b *WriteBatch) add(r base.Row) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	if i, ok := b.index[string(r.Key)]; ok {
		b.rows[i] = r
		return
	}
	b.index[string(r.Key)] = len(b.rows)
	b.rows = append(b.rows, r)
}

// Put sets key to value (both are copied).
func (b *WriteBatch) Put(key, value []byte) {
	b.add(base.Row{Key: append([]byte(nil), key...), Value: append([]byte{}, value...), Kind: base.KindPut})
}

// Delete removes key (the key is copied).
func (b *WriteBatch) Delete(key []byte) {
	b.add(base.Row{Key: append([]byte(nil), key...), Kind: base.KindDelete})
}

// Len is the number of distinct keys in the batch.
func (b *WriteBatch) Len() int { return len(b.rows) }

// Ops calls fn for each operation in key order (value nil for deletes).
func (b *WriteBatch) Ops(fn func(key, value []byte, del bool)) {
	rows := append([]base.Row(nil), b.rows...)
	sort.Slice(rows, func(i, j int) bool { return string(rows[i].Key) < string(rows[j].Key) })
	for _, r := range rows {
		fn(r.Key, r.Value, r.Kind == base.KindDelete)
	}
}

// WriteOptions control one write.
type WriteOptions struct {
	// NoWait returns as soon as the batch is visible, before the WAL has
	// made it durable; use the handle's AwaitDurable to wait later.
	NoWait bool
	// Seq, when non-zero, is the seq to give the batch. It must exceed the
	// last seq the database assigned (the commit log uses this to give slot
	// k the seq base+k).
	Seq uint64
}

// WriteHandle identifies an applied batch.
type WriteHandle struct {
	Seq uint64
	db  *DB
}

// AwaitDurable waits until the batch is durable, or the database closes.
func (h WriteHandle) AwaitDurable(ctx context.Context) error {
	if h.db == nil {
		return nil
	}
	return h.db.waitFor(ctx, func() bool { return h.db.durable >= h.Seq })
}

// Write applies the batch. By default it returns once the batch is durable.
func (db *DB) Write(ctx context.Context, b *WriteBatch, opts WriteOptions) (WriteHandle, error) {
	return db.write(ctx, b, opts, nil)
}

func (db *DB) write(ctx context.Context, b *WriteBatch, opts WriteOptions, txn *Txn) (WriteHandle, error) {
	if err := ctx.Err(); err != nil {
		return WriteHandle{}, err
	}
	db.mu.Lock()
	if err := db.checkOpenLocked(); err != nil {
		db.mu.Unlock()
		return WriteHandle{}, err
	}
	if txn != nil {
		if err := db.checkConflictLocked(txn); err != nil {
			db.mu.Unlock()
			return WriteHandle{}, err
		}
	}
	if b == nil || len(b.rows) == 0 {
		h := WriteHandle{Seq: db.committed, db: db}
		db.mu.Unlock()
		return h, nil
	}
	seq := db.lastSeq + 1
	if opts.Seq != 0 {
		if opts.Seq <= db.lastSeq {
			db.mu.Unlock()
			return WriteHandle{}, fmt.Errorf("%w: seqnum %d does not exceed the last seq %d", ErrInvalid, opts.Seq, db.lastSeq)
		}
		seq = opts.Seq
	}
	rows := make([]base.Row, len(b.rows))
	for i, r := range b.rows {
		r.Seq = seq
		rows[i] = r
	}
	if err := db.wal.Append(rows); err != nil {
		db.mu.Unlock()
		db.fail(err)
		return WriteHandle{}, err
	}
	db.lastSeq = seq
	db.mem.add(rows)
	db.committed = seq
	if len(db.txns) > 0 {
		keys := make(map[string]struct{}, len(rows))
		for _, r := range rows {
			keys[string(r.Key)] = struct{}{}
		}
		db.recent = append(db.recent, committedBatch{seq: seq, keys: keys})
	}
	db.maybeFreezeLocked()
	db.signalLocked()
	db.mu.Unlock()
	h := WriteHandle{Seq: seq, db: db}
	if opts.NoWait {
		return h, nil
	}
	if db.opts.settings.FlushInterval == FlushManual {
		// Nothing else will upload the WAL: the waiting writer does.
		if err := db.wal.Flush(ctx); err != nil {
			return h, err
		}
	}
	return h, h.AwaitDurable(ctx)
}

// Put writes one key durably.
func (db *DB) Put(ctx context.Context, key, value []byte) error {
	b := NewWriteBatch()
	b.Put(key, value)
	_, err := db.Write(ctx, b, WriteOptions{})
	return err
}

// Delete removes one key durably.
func (db *DB) Delete(ctx context.Context, key []byte) error {
	b := NewWriteBatch()
	b.Delete(key)
	_, err := db.Write(ctx, b, WriteOptions{})
	return err
}

// viewLocked captures a read cut at seq.
func (db *DB) viewLocked(seq uint64) *view {
	mems := make([]*memtable, 0, 1+len(db.imms))
	mems = append(mems, db.mem)
	for i := len(db.imms) - 1; i >= 0; i-- {
		mems = append(mems, db.imms[i])
	}
	return &view{seq: seq, mems: mems, tree: db.tree, tables: db.tables, stats: &db.stats}
}

func (db *DB) viewAt(seq uint64) (*view, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	if seq == 0 || seq > db.committed {
		seq = db.committed
	}
	return db.viewLocked(seq), nil
}

// Get returns the value of key at the latest committed seq; found is false
// if the key has no value.
func (db *DB) Get(ctx context.Context, key []byte) (value []byte, found bool, err error) {
	v, err := db.viewAt(0)
	if err != nil {
		return nil, false, err
	}
	return getValue(ctx, v, key)
}

func getValue(ctx context.Context, v *view, key []byte) ([]byte, bool, error) {
	r, ok, err := v.get(ctx, key)
	if err != nil || !ok || r.Kind == base.KindDelete {
		return nil, false, err
	}
	return r.Value, true, nil
}

// Scan iterates keys in [start, end) at the latest committed seq (nil end:
// to the last key).
func (db *DB) Scan(ctx context.Context, start, end []byte) *Iterator {
	v, err := db.viewAt(0)
	if err != nil {
		return errIterator(err)
	}
	return &Iterator{it: v.scan(ctx, start, end, nil)}
}

// LastCommittedSeq is the seq of the newest visible batch.
func (db *DB) LastCommittedSeq() uint64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.committed
}

// Snapshot is an in-process read view at a fixed seq. It is not durable
// (not a checkpoint); Release it when done so compaction may drop the
// versions it pins.
type Snapshot struct {
	db  *DB
	seq uint64
}

// Snapshot returns a view at the latest committed seq.
func (db *DB) Snapshot() *Snapshot {
	db.mu.Lock()
	defer db.mu.Unlock()
	s := &Snapshot{db: db, seq: db.committed}
	db.snapshots[s] = struct{}{}
	return s
}

// Seq is the snapshot's seq.
func (s *Snapshot) Seq() uint64 { return s.seq }

// Get reads key at the snapshot.
func (s *Snapshot) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	v, err := s.db.viewAt(s.seq)
	if err != nil {
		return nil, false, err
	}
	return getValue(ctx, v, key)
}

// Scan iterates [start, end) at the snapshot.
func (s *Snapshot) Scan(ctx context.Context, start, end []byte) *Iterator {
	v, err := s.db.viewAt(s.seq)
	if err != nil {
		return errIterator(err)
	}
	return &Iterator{it: v.scan(ctx, start, end, nil)}
}

// Release drops the snapshot.
func (s *Snapshot) Release() {
	s.db.mu.Lock()
	delete(s.db.snapshots, s)
	s.db.mu.Unlock()
}
