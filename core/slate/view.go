package slate

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/moraine-go/moraine/core/slate/internal/base"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/moraine-go/moraine/core/slate/internal/sst"
)

// view is a consistent read cut: a seq and every source that may hold rows
// at or below it, newest source first. Sources partition seqs in order
// (memtables hold newer rows than L0, newer L0s than older, L0 than runs),
// so the first source holding a version of a key <= seq holds the newest.
type view struct {
	seq    uint64
	mems   []*memtable // newest first
	tree   tree
	tables *tableCache
	// stats, when set, counts point reads and the SSTs they consult.
	stats *readStats
}

// readStats counts point reads for ReadStats (shared by every view of one
// DB or Reader; safe for concurrent use).
type readStats struct {
	gets        atomic.Int64
	sstReads    atomic.Int64
	filterSkips atomic.Int64
}

func (s *readStats) snapshot() ReadStats {
	if s == nil {
		return ReadStats{}
	}
	return ReadStats{Gets: s.gets.Load(), SSTsConsulted: s.sstReads.Load(), FilterSkips: s.filterSkips.Load()}
}

// ReadStats counts point reads (Get) since the handle opened, to measure
// read amplification: SSTsConsulted / Gets is the mean number of tables a
// Get searched (after key-range and bloom-filter checks).
type ReadStats struct {
	// Gets is the number of point reads (DB, Snapshot, Txn or Reader Get).
	Gets int64
	// SSTsConsulted counts SSTs whose blocks a Get searched.
	SSTsConsulted int64
	// FilterSkips counts SSTs a Get skipped because their bloom filter
	// ruled the key out.
	FilterSkips int64
}

func (v *view) get(ctx context.Context, key []byte) (base.Row, bool, error) {
	if v.stats != nil {
		v.stats.gets.Add(1)
	}
	for _, m := range v.mems {
		if r, ok := m.get(key, v.seq); ok {
			return r, true, nil
		}
	}
	for _, h := range v.tree.l0 {
		if r, ok, err := v.getSST(ctx, h, key); err != nil || ok {
			return r, ok, err
		}
	}
	for _, run := range v.tree.runs {
		h, ok := findInRun(run, key)
		if !ok {
			continue
		}
		if r, ok, err := v.getSST(ctx, h, key); err != nil || ok {
			return r, ok, err
		}
	}
	return base.Row{}, false, nil
}

func (v *view) getSST(ctx context.Context, h manifest.SST, key []byte) (base.Row, bool, error) {
	if bytes.Compare(key, h.FirstKey) < 0 || bytes.Compare(key, h.LastKey) > 0 || h.MinSeq > v.seq {
		return base.Row{}, false, nil
	}
	t, err := v.tables.open(ctx, h)
	if err != nil {
		return base.Row{}, false, err
	}
	if !t.MayContain(key) {
		if v.stats != nil {
			v.stats.filterSkips.Add(1)
		}
		return base.Row{}, false, nil
	}
	if v.stats != nil {
		v.stats.sstReads.Add(1)
	}
	r, ok, err := t.Get(ctx, key, v.seq)
	if err != nil {
		return base.Row{}, false, wrapCorrupt(err)
	}
	return r, ok, nil
}

func findInRun(run manifest.Run, key []byte) (manifest.SST, bool) {
	lo, hi := 0, len(run.SSTs)
	for lo < hi {
		mid := (lo + hi) / 2
		if bytes.Compare(run.SSTs[mid].LastKey, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(run.SSTs) && bytes.Compare(run.SSTs[lo].FirstKey, key) <= 0 {
		return run.SSTs[lo], true
	}
	return manifest.SST{}, false
}

// sources returns one row iterator per source, each starting at start and
// filtered to seq <= v.seq, newest source first.
func (v *view) sources(ctx context.Context, start []byte) []rowIter {
	var out []rowIter
	for _, m := range v.mems {
		out = append(out, &seqFilter{in: treeIter(m.snapshot(), start), maxSeq: v.seq})
	}
	for _, h := range v.tree.l0 {
		if h.MinSeq > v.seq || (start != nil && bytes.Compare(h.LastKey, start) < 0) {
			continue
		}
		out = append(out, &seqFilter{in: &lazySST{ctx: ctx, tables: v.tables, h: h, from: start}, maxSeq: v.seq})
	}
	for _, run := range v.tree.runs {
		out = append(out, &seqFilter{in: &runIter{ctx: ctx, tables: v.tables, run: run, from: start}, maxSeq: v.seq})
	}
	return out
}

// scan returns the visible pairs in [start, end) (nil end: unbounded),
// with extra (a transaction's own writes) layered on top.
func (v *view) scan(ctx context.Context, start, end []byte, extra rowIter) rowIter {
	srcs := v.sources(ctx, start)
	if extra != nil {
		srcs = append([]rowIter{extra}, srcs...)
	}
	return &visibleIter{in: newMergeIter(srcs), maxSeq: ^uint64(0), end: end}
}

// seqFilter drops rows newer than maxSeq.
type seqFilter struct {
	in     rowIter
	maxSeq uint64
}

func (f *seqFilter) next() (base.Row, bool) {
	for {
		r, ok := f.in.next()
		if !ok || r.Seq <= f.maxSeq {
			return r, ok
		}
	}
}
func (f *seqFilter) err() error { return f.in.err() }
func (f *seqFilter) close()     { f.in.close() }

// lazySST opens its table on first use.
type lazySST struct {
	ctx    context.Context
	tables *tableCache
	h      manifest.SST
	from   []byte
	it     *sst.Iterator
	e      error
}

func (l *lazySST) next() (base.Row, bool) {
	if l.e != nil {
		return base.Row{}, false
	}
	if l.it == nil {
		t, err := l.tables.open(l.ctx, l.h)
		if err != nil {
			l.e = err
			return base.Row{}, false
		}
		l.it = t.Iter(l.ctx, l.from)
	}
	r, ok := l.it.Next()
	if !ok {
		if err := l.it.Err(); err != nil {
			l.e = wrapCorrupt(err)
		}
	}
	return r, ok
}
func (l *lazySST) err() error { return l.e }
func (l *lazySST) close()     {}

// runIter walks a sorted run's SSTs in key order from a start key.
type runIter struct {
	ctx    context.Context
	tables *tableCache
	run    manifest.Run
	from   []byte
	i      int
	cur    *lazySST
	e      error
	inited bool
}

func (r *runIter) next() (base.Row, bool) {
	if !r.inited {
		r.inited = true
		if r.from != nil {
			for r.i < len(r.run.SSTs) && bytes.Compare(r.run.SSTs[r.i].LastKey, r.from) < 0 {
				r.i++
			}
		}
	}
	for {
		if r.cur == nil {
			if r.i >= len(r.run.SSTs) {
				return base.Row{}, false
			}
			r.cur = &lazySST{ctx: r.ctx, tables: r.tables, h: r.run.SSTs[r.i], from: r.from}
			r.i++
		}
		row, ok := r.cur.next()
		if ok {
			return row, true
		}
		if err := r.cur.err(); err != nil {
			r.e = err
			return base.Row{}, false
		}
		r.cur = nil
	}
}
func (r *runIter) err() error { return r.e }
func (r *runIter) close()     {}
