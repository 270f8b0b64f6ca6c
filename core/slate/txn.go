package slate

import (
	"context"
	"fmt"
	"sort"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// Txn is a snapshot-isolation transaction: it reads the database as of its
// start plus its own buffered writes, and its Commit fails with
// ErrTxnConflict if a batch committed after it started wrote any key it
// writes. Conflicts are detected in this process (the writer is the only
// process that can commit).
type Txn struct {
	db       *DB
	startSeq uint64
	batch    *WriteBatch
	done     bool
}

// Begin starts a transaction at the latest committed seq.
func (db *DB) Begin() (*Txn, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.checkOpenLocked(); err != nil {
		return nil, err
	}
	t := &Txn{db: db, startSeq: db.committed, batch: NewWriteBatch()}
	db.txns[t] = struct{}{}
	return t, nil
}

// StartSeq is the seq the transaction reads at.
func (t *Txn) StartSeq() uint64 { return t.startSeq }

// Put buffers a write.
func (t *Txn) Put(key, value []byte) { t.batch.Put(key, value) }

// Delete buffers a delete.
func (t *Txn) Delete(key []byte) { t.batch.Delete(key) }

// Batch exposes the buffered writes (read-only use).
func (t *Txn) Batch() *WriteBatch { return t.batch }

// Get reads key: the transaction's own write if any, else the database at
// the start seq.
func (t *Txn) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	if i, ok := t.batch.index[string(key)]; ok {
		r := t.batch.rows[i]
		if r.Kind == base.KindDelete {
			return nil, false, nil
		}
		return r.Value, true, nil
	}
	v, err := t.db.viewAt(t.startSeq)
	if err != nil {
		return nil, false, err
	}
	return getValue(ctx, v, key)
}

// Scan iterates [start, end) as the transaction sees it.
func (t *Txn) Scan(ctx context.Context, start, end []byte) *Iterator {
	v, err := t.db.viewAt(t.startSeq)
	if err != nil {
		return errIterator(err)
	}
	own := make([]base.Row, 0, len(t.batch.rows))
	for _, r := range t.batch.rows {
		if start != nil && string(r.Key) < string(start) {
			continue
		}
		r.Seq = ^uint64(0)
		own = append(own, r)
	}
	sort.Slice(own, func(i, j int) bool { return string(own[i].Key) < string(own[j].Key) })
	return &Iterator{it: v.scan(ctx, start, end, &sliceIter{rows: own})}
}

// Commit applies the buffered writes as one batch, or fails with
// ErrTxnConflict. A transaction with no writes commits trivially.
func (t *Txn) Commit(ctx context.Context, opts WriteOptions) (WriteHandle, error) {
	if t.done {
		return WriteHandle{}, fmt.Errorf("%w: transaction already finished", ErrInvalid)
	}
	defer t.Rollback()
	return t.db.write(ctx, t.batch, opts, t)
}

// Rollback abandons the transaction (safe to call after Commit).
func (t *Txn) Rollback() {
	if t.done {
		return
	}
	t.done = true
	t.db.mu.Lock()
	delete(t.db.txns, t)
	t.db.pruneRecentLocked()
	t.db.mu.Unlock()
}

// checkConflictLocked fails if a batch committed after t started wrote a
// key t writes.
func (db *DB) checkConflictLocked(t *Txn) error {
	for _, c := range db.recent {
		if c.seq <= t.startSeq {
			continue
		}
		for _, r := range t.batch.rows {
			if _, ok := c.keys[string(r.Key)]; ok {
				return fmt.Errorf("%w (key %q written at seq %d, after this transaction's start %d)", ErrTxnConflict, r.Key, c.seq, t.startSeq)
			}
		}
	}
	return nil
}

// pruneRecentLocked drops commit records no active transaction can
// conflict with.
func (db *DB) pruneRecentLocked() {
	if len(db.txns) == 0 {
		db.recent = nil
		return
	}
	minStart := ^uint64(0)
	for t := range db.txns {
		if t.startSeq < minStart {
			minStart = t.startSeq
		}
	}
	i := 0
	for i < len(db.recent) && db.recent[i].seq <= minStart {
		i++
	}
	db.recent = db.recent[i:]
}
