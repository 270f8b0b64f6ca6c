package core

// advance.go: moving a materialized head view forward over the slots that
// landed on top of it, without re-reading the store.
//
// A commit-log committer that loses a race has just been handed the
// winners' slots; re-materializing the whole catalog for its retry (load)
// costs time in proportion to the catalog, once per loss, and under
// contention it was most of every committer's CPU. advanceView applies the
// slots' writes to a copy of the view instead. It covers the writes of
// data-only commits (snapshot records, data and delete files, statistics,
// schema versions, GC entries, inlined rows inserted and deleted); a slot
// writing anything else (schemas, tables, columns, views, macros, tags,
// options, partitioning, sorting, a flush of inlined rows) makes it decline, and
// the caller loads. Tests compare every
// advanced view with a full load (checkAdvance).

import (
	"maps"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/moraine-go/moraine/core/keys"
)

// checkAdvance makes every advanced view be compared with a full load
// (tests set it; a difference is an Internal error). advancedViews counts
// the views advanced (tests read it).
var (
	checkAdvance  bool
	advancedViews atomic.Int64
)

// advanceView returns v with batches applied (slots that landed, in order,
// the first prepared against v's head), or ok false when it cannot.
func advanceView(v *CatalogView, batches []LogBatch) (_ *CatalogView, ok bool, err error) {
	if v == nil || len(batches) == 0 || batches[0].Head != v.head {
		return nil, false, nil
	}
	n := v.clone()
	a := advancer{n: n, owned: map[any]bool{}, ownedChunks: map[*chunkState]bool{}}
	head := v.head
	for _, b := range batches {
		if b.Head != head {
			return nil, false, nil // not contiguous
		}
		for _, w := range b.Writes {
			applied, err := a.apply(w)
			if err != nil || !applied {
				return nil, false, err
			}
		}
		a.endInlinedRows()
		if n.head == head {
			return nil, false, nil // a slot without a head stamp
		}
		head = n.head
	}
	if n.snap.ID != n.head.SnapshotID {
		return nil, false, nil // the head's snapshot record was not among the writes
	}
	// A written entity not visible at the head (none should be) would be
	// filtered by load; decline rather than guess.
	for _, v := range a.written {
		if !v.VisibleAt(n.snap.ID) {
			return nil, false, nil
		}
	}
	n.dropStatsOfAbsentTables()
	advancedViews.Add(1)
	return n, true, nil
}

// advancer applies writes to n, copying every inner map it changes once.
type advancer struct {
	n       *CatalogView
	owned   map[any]bool // inner maps already copied (by their outer key)
	written []Versioned  // versions of the entities written
	ends    []inlineEnd  // the slot's live inline deletes, applied after its inserts
	// ownedChunks are chunks this advance made or copied (writable).
	ownedChunks map[*chunkState]bool
}

type ownKey struct {
	field string
	id    uint64
}

// own returns m writable: a copy the first time per (field, id).
func own[K comparable, V any](a *advancer, field string, id uint64, m map[K]V) map[K]V {
	k := ownKey{field, id}
	if m == nil {
		// None yet, or an earlier write of this advance emptied it and
		// setInner dropped it: a new one (the caller stores it back).
		a.owned[k] = true
		return map[K]V{}
	}
	if a.owned[k] {
		return m
	}
	a.owned[k] = true
	return maps.Clone(m)
}

func (a *advancer) apply(w LogWrite) (bool, error) {
	n := a.n
	k, err := keys.Decode(w.Key)
	if err != nil {
		return false, wrapf(Corruption, err, "decoding key %x", w.Key)
	}
	del := w.Delete
	switch k.Shape {
	case keys.ShapeHead:
		if del {
			return false, nil
		}
		h, err := decodeHead(w.Value)
		if err != nil {
			return false, err
		}
		n.head = Head{SnapshotID: h.SnapshotID, BatchSeq: h.BatchSeq}
		return true, nil
	case keys.ShapeSnapshot:
		if del {
			return false, nil
		}
		s, err := decodeSnapshot(w.Value)
		if err != nil {
			return false, err
		}
		if s.ID >= n.snap.ID {
			n.snap = *s
		}
		return true, nil
	case keys.ShapeSchemaVersion:
		if del {
			return false, nil
		}
		sv, err := decodeSchemaVersion(w.Value)
		if err != nil {
			return false, err
		}
		n.schemaVersions = append(slices.Clip(n.schemaVersions), SchemaVersion{TableID: TableID(k.Comps[0]), BeginSnapshot: SnapshotID(k.Comps[1]), SchemaVersion: sv})
		sort.SliceStable(n.schemaVersions, func(i, j int) bool {
			x, y := n.schemaVersions[i], n.schemaVersions[j]
			if x.BeginSnapshot != y.BeginSnapshot {
				return x.BeginSnapshot < y.BeginSnapshot
			}
			return x.TableID < y.TableID
		})
		return true, nil
	case keys.ShapeGcFile:
		id := DataFileID(k.Comps[0])
		if del {
			delete(n.gcFiles, id)
			return true, nil
		}
		g, err := decodeGcFile(w.Value)
		if err != nil {
			return false, err
		}
		n.gcFiles[g.DataFileID] = g
		return true, nil
	case keys.ShapeCurrent:
		return a.applyCurrent(k, w)
	case keys.ShapeInlineLiveInsert:
		return a.applyInlineChunk(k, w)
	case keys.ShapeInlineLiveDelete:
		if del {
			return false, nil // a delete record dropped: a flush; load
		}
		e, err := decodeInlineDelete(w.Value)
		if err != nil {
			return false, err
		}
		a.ends = append(a.ends, inlineEnd{TableID(k.Comps[0]), k.Comps[1], e})
		return true, nil
	case keys.ShapeHistory, keys.ShapeNameDir, keys.ShapeDeleteTarget, keys.ShapeChangelog,
		keys.ShapeInlineArchivedInsert, keys.ShapeInlineArchivedDelete:
		return true, nil // not part of a head view
	}
	return false, nil
}

// inlineEnd is a live inline delete: row of table ended at end.
type inlineEnd struct {
	table TableID
	row   uint64
	end   SnapshotID
}

// applyInlineChunk adds, replaces or removes a live inlined chunk, keeping
// the table's chunks in load's order.
func (a *advancer) applyInlineChunk(k keys.Key, w LogWrite) (bool, error) {
	n := a.n
	t := TableID(k.Comps[0])
	c := &chunkState{table: t, schemaVersion: k.Comps[1], begin: SnapshotID(k.Comps[2]), seq: k.Comps[3]}
	list := a.ownInlined(t)
	i, found := slices.BinarySearchFunc(list, c, compareChunks)
	if w.Delete {
		if found {
			list = slices.Delete(list, i, i+1)
		}
	} else {
		rows, err := decodeInlineChunk(w.Value)
		if err != nil {
			return false, err
		}
		for _, r := range rows {
			r.Begin = c.begin
			c.rows = append(c.rows, r)
		}
		a.written = append(a.written, Versioned{Begin: c.begin})
		a.ownedChunks[c] = true
		if found {
			list[i] = c
		} else {
			list = slices.Insert(list, i, c)
		}
	}
	if len(list) == 0 {
		delete(n.inlined, t)
	} else {
		n.inlined[t] = list
	}
	return true, nil
}

// endInlinedRows applies the slot's live inline deletes to the chunks
// holding their rows (after the slot's inserts, as load applies every
// delete to every chunk). A chunk the older view shares is copied first.
func (a *advancer) endInlinedRows() {
	for _, e := range a.ends {
		if len(a.n.inlined[e.table]) == 0 {
			continue
		}
		list := a.ownInlined(e.table)
		for ci, c := range list {
			for ri := range c.rows {
				if c.rows[ri].RowID != e.row || c.rows[ri].End != nil {
					continue // another row, or one whose chunk records its end (endAt)
				}
				if !a.ownedChunks[c] {
					cp := *c
					cp.rows = slices.Clone(c.rows)
					c = &cp
					list[ci] = c
					a.ownedChunks[c] = true
				}
				c.rows[ri].endAt(e.end)
			}
		}
	}
	a.ends = a.ends[:0]
}

// ownInlined returns table's chunk list writable (a copy, once per
// advance); the caller stores it back when it changes its length.
func (a *advancer) ownInlined(t TableID) []*chunkState {
	k := ownKey{"inlined", uint64(t)}
	if !a.owned[k] {
		a.owned[k] = true
		if list := a.n.inlined[t]; len(list) > 0 {
			a.n.inlined[t] = slices.Clone(list)
		}
	}
	return a.n.inlined[t]
}

func (a *advancer) applyCurrent(k keys.Key, w LogWrite) (bool, error) {
	n := a.n
	del := w.Delete
	switch k.Kind {
	case keys.KindDataFile:
		t, id := TableID(k.Comps[0]), DataFileID(k.Comps[1])
		m := own(a, "dataFiles", uint64(t), n.dataFiles[t])
		if del {
			delete(m, id)
		} else {
			x, err := decodeDataFile(w.Value)
			if err != nil {
				return false, err
			}
			a.written = append(a.written, x.Versioned)
			m[x.ID] = x
		}
		setInner(n.dataFiles, t, m)
	case keys.KindDeleteFile:
		t, id := TableID(k.Comps[0]), DeleteFileID(k.Comps[1])
		m := own(a, "deleteFiles", uint64(t), n.deleteFiles[t])
		if del {
			delete(m, id)
		} else {
			x, err := decodeDeleteFile(w.Value)
			if err != nil {
				return false, err
			}
			a.written = append(a.written, x.Versioned)
			m[x.ID] = x
		}
		setInner(n.deleteFiles, t, m)
	case keys.KindFileColumnStats:
		f, col := DataFileID(k.Comps[1]), ColumnID(k.Comps[2])
		m := own(a, "fileStats", uint64(f), n.fileStats[f])
		if del {
			delete(m, col)
		} else {
			x, err := decodeFileColumnStats(w.Value)
			if err != nil {
				return false, err
			}
			m[x.ColumnID] = x
		}
		setInner(n.fileStats, f, m)
	case keys.KindTableStats:
		t := TableID(k.Comps[0])
		if del {
			delete(n.tableStats, t)
		} else {
			x, err := decodeTableStats(w.Value)
			if err != nil {
				return false, err
			}
			n.tableStats[x.TableID] = x
		}
	case keys.KindTableColumnStats:
		t, col := TableID(k.Comps[0]), ColumnID(k.Comps[1])
		m := own(a, "colStats", uint64(t), n.colStats[t])
		if del {
			delete(m, col)
		} else {
			x, err := decodeTableColumnStats(w.Value)
			if err != nil {
				return false, err
			}
			m[x.ColumnID] = x
		}
		setInner(n.colStats, t, m)
	case keys.KindInlinedTable, keys.KindInlinedDeleteTable, keys.KindInlinedFileDelete, keys.KindFileVariantStats:
		// Not part of a head view (load skips them too).
	default:
		return false, nil
	}
	return true, nil
}

// setInner stores m under id, or removes id when m is empty (load never
// makes an empty inner map).
func setInner[K comparable, IK comparable, V any](outer map[K]map[IK]V, id K, m map[IK]V) {
	if len(m) == 0 {
		delete(outer, id)
		return
	}
	outer[id] = m
}
