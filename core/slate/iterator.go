package slate

import (
	"bytes"
	"container/heap"
	"iter"

	"github.com/google/btree"
	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// rowIter yields rows in base.Compare order.
type rowIter interface {
	next() (base.Row, bool)
	err() error
	close()
}

// seqIter adapts a pull function.
type pullIter struct {
	nextFn func() (base.Row, error, bool)
	stop   func()
	e      error
}

func (p *pullIter) next() (base.Row, bool) {
	if p.e != nil {
		return base.Row{}, false
	}
	r, err, ok := p.nextFn()
	if !ok {
		return base.Row{}, false
	}
	if err != nil {
		p.e = err
		return base.Row{}, false
	}
	return r, true
}

func (p *pullIter) err() error { return p.e }
func (p *pullIter) close()     { p.stop() }

func fromSeq2(s iter.Seq2[base.Row, error]) *pullIter {
	next, stop := iter.Pull2(s)
	return &pullIter{nextFn: func() (base.Row, error, bool) {
		r, err, ok := next()
		return r, err, ok
	}, stop: stop}
}

// treeIter walks a memtable tree from a start key.
func treeIter(t *btree.BTreeG[base.Row], from []byte) *pullIter {
	return fromSeq2(func(yield func(base.Row, error) bool) {
		visit := func(r base.Row) bool { return yield(r, nil) }
		if from == nil {
			t.Ascend(visit)
		} else {
			t.AscendGreaterOrEqual(base.Row{Key: from, Seq: ^uint64(0)}, visit)
		}
	})
}

// sliceIter walks rows already in order.
type sliceIter struct {
	rows []base.Row
	i    int
}

func (s *sliceIter) next() (base.Row, bool) {
	if s.i >= len(s.rows) {
		return base.Row{}, false
	}
	s.i++
	return s.rows[s.i-1], true
}
func (s *sliceIter) err() error { return nil }
func (s *sliceIter) close()     {}

// mergeIter merges sources; ties on (key, seq) keep the lower source index
// (sources are given newest first).
type mergeIter struct {
	h       mergeHeap
	e       error
	sources []rowIter
}

type mergeItem struct {
	row base.Row
	src int
}

type mergeHeap struct {
	items []mergeItem
}

func (h mergeHeap) Len() int { return len(h.items) }
func (h mergeHeap) Less(i, j int) bool {
	if c := base.Compare(h.items[i].row, h.items[j].row); c != 0 {
		return c < 0
	}
	return h.items[i].src < h.items[j].src
}
func (h mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)   { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	n := len(h.items)
	it := h.items[n-1]
	h.items = h.items[:n-1]
	return it
}

func newMergeIter(sources []rowIter) *mergeIter {
	m := &mergeIter{sources: sources}
	for i, s := range sources {
		if r, ok := s.next(); ok {
			m.h.items = append(m.h.items, mergeItem{r, i})
		} else if err := s.err(); err != nil && m.e == nil {
			m.e = err
		}
	}
	heap.Init(&m.h)
	return m
}

func (m *mergeIter) next() (base.Row, bool) {
	if m.e != nil || m.h.Len() == 0 {
		return base.Row{}, false
	}
	top := m.h.items[0]
	if r, ok := m.sources[top.src].next(); ok {
		m.h.items[0] = mergeItem{r, top.src}
		heap.Fix(&m.h, 0)
	} else {
		if err := m.sources[top.src].err(); err != nil {
			m.e = err
			return base.Row{}, false
		}
		heap.Pop(&m.h)
	}
	return top.row, true
}

func (m *mergeIter) err() error { return m.e }

func (m *mergeIter) close() {
	for _, s := range m.sources {
		s.close()
	}
}

// visibleIter turns a merged row stream into the user's view at seq: per
// key the newest version with seq <= maxSeq, tombstones hidden, keys in
// [start, end).
type visibleIter struct {
	in      rowIter
	maxSeq  uint64
	end     []byte
	lastKey []byte
	haveKey bool
}

func (v *visibleIter) next() (base.Row, bool) {
	for {
		r, ok := v.in.next()
		if !ok {
			return base.Row{}, false
		}
		if v.end != nil && bytes.Compare(r.Key, v.end) >= 0 {
			return base.Row{}, false
		}
		if r.Seq > v.maxSeq {
			continue
		}
		if v.haveKey && bytes.Equal(r.Key, v.lastKey) {
			continue // an older version of a key already decided
		}
		v.lastKey = append(v.lastKey[:0], r.Key...)
		v.haveKey = true
		if r.Kind == base.KindDelete {
			continue
		}
		return r, true
	}
}

func (v *visibleIter) err() error { return v.in.err() }
func (v *visibleIter) close()     { v.in.close() }

// Iterator walks key/value pairs in ascending key order. Call Next before
// the first Key; check Err after Next returns false; always Close.
type Iterator struct {
	it  rowIter
	cur base.Row
	e   error
}

// Next advances to the next pair.
func (it *Iterator) Next() bool {
	if it.e != nil || it.it == nil {
		return false
	}
	r, ok := it.it.next()
	if !ok {
		it.e = it.it.err()
		return false
	}
	it.cur = r
	return true
}

// Key is the current key (valid until the next call to Next).
func (it *Iterator) Key() []byte { return it.cur.Key }

// Value is the current value (valid until the next call to Next).
func (it *Iterator) Value() []byte { return it.cur.Value }

// Seq is the seq of the current version.
func (it *Iterator) Seq() uint64 { return it.cur.Seq }

// Err reports the error that ended the iteration, if any.
func (it *Iterator) Err() error { return it.e }

// Close releases the iterator.
func (it *Iterator) Close() {
	if it.it != nil {
		it.it.close()
		it.it = nil
	}
}

func errIterator(err error) *Iterator { return &Iterator{e: err} }
