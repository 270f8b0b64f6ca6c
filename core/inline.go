package core

import (
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/moraine-go/moraine/core/keys"
)

// chunkState is one chunk of inlined rows: the rows one commit inserted
// into a table (under one schema version). Row ends (inline deletes) are
// kept on the rows; archived is set once a flush moved the chunk out of
// the live table.
type chunkState struct {
	table         TableID
	schemaVersion uint64
	begin         SnapshotID
	seq           uint64
	rows          []InlinedRow
	archivedAt    *SnapshotID // set when a flush ended the chunk
}

// endAt ends r at e, an inline-delete record's end, unless r's chunk
// records r's end itself (from format 13 a row written through
// ducklake_inlined_data_* does: DuckLake 1.0 inserts a row's new version
// under the same row id, which a record keyed by row id cannot tell
// apart).
func (r *InlinedRow) endAt(e SnapshotID) {
	if r.End == nil {
		r.End = &e
	}
}

// compareChunks orders one table's chunks as views keep them: by begin
// snapshot, then sequence (then schema version, which never ties in
// practice but makes the order total).
func compareChunks(a, b *chunkState) int {
	return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.seq, b.seq), cmp.Compare(a.schemaVersion, b.schemaVersion))
}

// topColumns is the layout of an inlined row: the table's top-level
// columns in column order (InlineInsert writes one value per entry).
func (s *CatalogView) topColumns(table TableID) []*Column {
	var top []*Column
	for _, c := range s.columns[table] {
		if c.Parent == nil {
			top = append(top, c)
		}
	}
	slices.SortFunc(top, func(a, b *Column) int { return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.ID, b.ID)) })
	return top
}

// InlineInsert stores rows directly in the catalog (DuckLake data
// inlining). Each row holds one value per top-level column, in column
// order. It returns the first row id assigned; the rows take consecutive
// ids.
func (t *Transaction) InlineInsert(table TableID, rows [][]Value) (uint64, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, errorf(InvalidArgument, "inline insert into table %d has no rows", table)
	}
	top := t.next.topColumns(table)
	for i, r := range rows {
		if len(r) != len(top) {
			return 0, errorf(InvalidArgument, "inline insert into table %d: row %d has %d values, the table has %d columns", table, i, len(r), len(top))
		}
		for j, v := range r {
			if v.String != nil && !utf8.ValidString(*v.String) {
				return 0, errorf(InvalidArgument, "inline insert into table %d: row %d column %d is a string that is not valid UTF-8 (store it as bytes)", table, i, j)
			}
			if v.IsNull() && !top[j].NullsAllowed {
				return 0, errorf(Constraint, "inline insert into table %d: row %d has NULL in column %q, which is NOT NULL", table, i, top[j].Name)
			}
		}
	}
	st := *t.statsFor(table)
	first := st.NextRowID
	c := &chunkState{table: table, schemaVersion: t.schemaVersion, begin: t.id, seq: t.chunkSeq[table]}
	t.chunkSeq[table]++
	for i, r := range rows {
		c.rows = append(c.rows, InlinedRow{RowID: first + uint64(i), Versioned: Versioned{Begin: t.id}, Values: slices.Clone(r)})
	}
	t.next.inlined[table] = append(slices.Clip(t.next.inlined[table]), c)
	t.put(keys.InlineLiveInsert(uint64(table), c.schemaVersion, uint64(c.begin), c.seq), encodeInlineChunk(c))
	st.RecordCount += uint64(len(rows))
	st.NextRowID += uint64(len(rows))
	t.setStats(&st)
	t.noteTable(chInsertedInto, table)
	return first, nil
}

// InlineDelete deletes inlined rows by row id. Every id must be a live
// inlined row of the table.
func (t *Transaction) InlineDelete(table TableID, rowIDs []uint64) error {
	if _, err := t.tableOf(table); err != nil {
		return err
	}
	want := map[uint64]bool{}
	for _, id := range rowIDs {
		want[id] = true
	}
	chunks := slices.Clone(t.next.inlined[table])
	found := 0
	for ci, c := range chunks {
		var nc *chunkState
		for ri, r := range c.rows {
			if !want[r.RowID] || r.End != nil {
				continue
			}
			if nc == nil {
				cp := *c
				cp.rows = slices.Clone(c.rows)
				nc = &cp
				chunks[ci] = nc
			}
			nc.rows[ri].End = end(t.id)
			t.put(keys.InlineLiveDelete(uint64(table), r.RowID), encodeInlineDelete(t.id))
			delete(want, r.RowID)
			found++
		}
	}
	if len(want) > 0 {
		var missing []uint64
		for id := range want {
			missing = append(missing, id)
		}
		slices.Sort(missing)
		return errorf(NotFound, "table %d has no live inlined rows with ids %v", table, missing)
	}
	t.next.inlined[table] = chunks
	st := *t.statsFor(table)
	st.RecordCount = subFloor(st.RecordCount, uint64(found))
	t.setStats(&st)
	t.noteTable(chDeletedFrom, table)
	return nil
}

// FlushInlined moves a table's live inlined rows into a data file the
// caller has written (its RecordCount must equal the live inlined rows):
// the file is registered and the inlined rows end at this snapshot (time
// travel before it still sees them inlined).
func (t *Transaction) FlushInlined(table TableID, file DataFileDef) (DataFileID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	live := t.next.InlinedRowCount(table)
	if live == 0 {
		return 0, errorf(NotFound, "table %d has no inlined rows to flush", table)
	}
	if file.RecordCount != uint64(live) {
		return 0, errorf(InvalidArgument, "flush of table %d: the file holds %d rows but %d inlined rows are live", table, file.RecordCount, live)
	}
	file.TableID = table
	if file.RowIDStart == nil {
		first := ^uint64(0)
		for _, c := range t.next.inlined[table] {
			for _, r := range c.rows {
				if r.End == nil && r.RowID < first {
					first = r.RowID
				}
			}
		}
		file.RowIDStart = &first
	}
	before := *t.statsFor(table)
	id, err := t.RegisterDataFile(file)
	if err != nil {
		return 0, err
	}
	// The rows were already counted when inlined.
	st := *t.statsFor(table)
	st.RecordCount = before.RecordCount
	st.NextRowID = before.NextRowID
	t.setStats(&st)
	t.archiveInlined(table)
	t.noteTable(chFlushedInlined, table)
	return id, nil
}

// archiveInlined ends every live chunk of table at this snapshot.
func (t *Transaction) archiveInlined(table TableID) {
	chunks := t.next.inlined[table]
	if len(chunks) == 0 {
		return
	}
	for _, c := range chunks {
		live := keys.InlineLiveInsert(uint64(table), c.schemaVersion, uint64(c.begin), c.seq)
		if c.begin == t.id {
			t.del(live) // inserted and flushed in one commit: never visible inlined
		} else {
			t.del(live)
			t.put(keys.InlineArchivedInsert(uint64(table), c.schemaVersion, uint64(c.begin), c.seq, uint64(t.id)), encodeInlineChunk(c))
		}
		for _, r := range c.rows {
			if r.End != nil {
				t.del(keys.InlineLiveDelete(uint64(table), r.RowID))
				if *r.End != t.id && c.begin != t.id {
					t.put(keys.InlineArchivedDelete(uint64(table), r.RowID, uint64(t.id)), encodeInlineDelete(*r.End))
				}
			}
		}
	}
	delete(t.next.inlined, table)
}
