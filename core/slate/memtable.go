package slate

import (
	"bytes"
	"sync"

	"github.com/google/btree"
	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// memtable is a sorted in-memory table of rows (key ascending, seq
// descending). The active memtable takes inserts under mu; once frozen it
// never changes, so readers of frozen memtables need no lock.
type memtable struct {
	mu       sync.RWMutex
	tree     *btree.BTreeG[base.Row]
	size     int
	rows     int
	firstSeq uint64 // lowest seq inserted (0: empty)
	lastSeq  uint64 // highest seq inserted

	// Set at freeze.
	replayPoint uint64 // WAL id whose content (and all below) this and older memtables hold
}

func rowLess(a, b base.Row) bool { return base.Compare(a, b) < 0 }

func newMemtable() *memtable {
	return &memtable{tree: btree.NewG(32, rowLess)}
}

// add inserts one batch's rows.
func (m *memtable) add(rows []base.Row) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rows {
		if old, replaced := m.tree.ReplaceOrInsert(r); replaced {
			m.size -= old.Size()
		} else {
			m.rows++
		}
		m.size += r.Size()
		if m.firstSeq == 0 || r.Seq < m.firstSeq {
			m.firstSeq = r.Seq
		}
		if r.Seq > m.lastSeq {
			m.lastSeq = r.Seq
		}
	}
}

func (m *memtable) empty() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rows == 0
}

func (m *memtable) estimatedSize() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.size
}

// get returns the newest version of key with seq <= maxSeq.
func (m *memtable) get(key []byte, maxSeq uint64) (base.Row, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out base.Row
	found := false
	m.tree.AscendGreaterOrEqual(base.Row{Key: key, Seq: maxSeq}, func(r base.Row) bool {
		if bytes.Equal(r.Key, key) {
			out, found = r, true
		}
		return false
	})
	return out, found
}

// snapshot returns a tree that later inserts do not affect (copy-on-write).
func (m *memtable) snapshot() *btree.BTreeG[base.Row] {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tree.Clone()
}

// allRows returns every row in table order (for L0 flush of a frozen
// memtable).
func (m *memtable) allRows() []base.Row {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]base.Row, 0, m.rows)
	m.tree.Ascend(func(r base.Row) bool {
		out = append(out, r)
		return true
	})
	return out
}
