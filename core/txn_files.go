package core

import (
	"slices"

	"github.com/moraine-go/moraine/core/keys"
)

// DataFileDef registers a data file; ids and begin snapshot are assigned.
type DataFileDef struct {
	TableID         TableID
	Path            string
	PathIsRelative  bool
	Format          string // default "parquet"
	RecordCount     uint64
	FileSizeBytes   uint64
	FooterSize      uint64
	RowIDStart      *uint64 // default: the table's next row id
	FileOrder       *uint64 // default: the new file id
	PartitionID     *PartitionID
	EncryptionKey   *string
	PartialFileInfo *string
	MappingID       *MappingID
	PartitionValues []PartitionValue
	// ColumnStats are recorded as ducklake_file_column_stats rows.
	ColumnStats []FileColumnStats
}

// DeleteFileDef registers a delete file for one data file.
type DeleteFileDef struct {
	TableID        TableID
	DataFileID     DataFileID
	Path           string
	PathIsRelative bool
	Format         string // default "parquet"
	DeleteCount    uint64
	FileSizeBytes  uint64
	FooterSize     uint64
	EncryptionKey  *string
}

// ---- data and delete files ----

// RegisterDataFile adds a data file to a table and updates its stats
// (record count, next row id, size).
func (t *Transaction) RegisterDataFile(def DataFileDef) (DataFileID, error) {
	if _, err := t.tableOf(def.TableID); err != nil {
		return 0, err
	}
	if def.Path == "" {
		return 0, errorf(InvalidArgument, "data file for table %d has no path", def.TableID)
	}
	st := t.statsFor(def.TableID)
	id := DataFileID(t.allocFileID())
	f := &DataFile{TableID: def.TableID, ID: id, Versioned: Versioned{Begin: t.id}, Path: def.Path, PathIsRelative: def.PathIsRelative,
		Format: def.Format, RecordCount: def.RecordCount, FileSizeBytes: def.FileSizeBytes, FooterSize: ptrTo(def.FooterSize),
		PartitionID: def.PartitionID, EncryptionKey: def.EncryptionKey, PartialFileInfo: def.PartialFileInfo,
		MappingID: def.MappingID, PartitionValues: slices.Clone(def.PartitionValues)}
	if f.Format == "" {
		f.Format = "parquet"
	}
	f.FileOrder = ptrTo(uint64(id))
	if def.FileOrder != nil {
		f.FileOrder = ptrTo(*def.FileOrder)
	}
	f.RowIDStart = ptrTo(st.NextRowID)
	if def.RowIDStart != nil {
		f.RowIDStart = ptrTo(*def.RowIDStart)
	}
	files := innerCopy(t, t.next.dataFiles, def.TableID)
	files[id] = f
	t.put(keys.CurrentDataFile(uint64(def.TableID), uint64(id)), encodeDataFile(f))
	nst := *st
	nst.RecordCount += def.RecordCount
	nst.FileSizeBytes += def.FileSizeBytes
	if e := *f.RowIDStart + def.RecordCount; e > nst.NextRowID {
		nst.NextRowID = e
	}
	t.setStats(&nst)
	for _, cs := range def.ColumnStats {
		cs.TableID, cs.DataFileID = def.TableID, id
		if err := t.SetFileColumnStats(cs); err != nil {
			return 0, err
		}
	}
	t.noteTable(chInsertedInto, def.TableID)
	return id, nil
}

func (t *Transaction) statsFor(table TableID) *TableStats {
	if st, ok := t.next.tableStats[table]; ok {
		return st
	}
	return &TableStats{TableID: table}
}

func (t *Transaction) setStats(st *TableStats) {
	t.next.tableStats[st.TableID] = st
	t.put(keys.CurrentTableStats(uint64(st.TableID)), encodeTableStats(st))
}

func (t *Transaction) endDataFile(f *DataFile) {
	retire(t, f, keys.KindDataFile, encodeDataFile, uint64(f.TableID), uint64(f.ID))
}

// ExpireDataFile ends a data file (after a merge or rewrite replaced it)
// along with its delete files, and takes its rows out of the table stats.
func (t *Transaction) ExpireDataFile(table TableID, id DataFileID) error {
	if _, err := t.tableOf(table); err != nil {
		return err
	}
	f, ok := t.next.dataFiles[table][id]
	if !ok {
		return errorf(NotFound, "data file %d is not live in table %d", id, table)
	}
	files := innerCopy(t, t.next.dataFiles, table)
	delete(files, id)
	t.endDataFile(f)
	for _, d := range t.next.deleteFiles[table] {
		if d.DataFileID == id {
			dels := innerCopy(t, t.next.deleteFiles, table)
			delete(dels, d.ID)
			t.endDeleteFile(d)
		}
	}
	st := *t.statsFor(table)
	st.RecordCount = subFloor(st.RecordCount, f.RecordCount)
	st.FileSizeBytes = subFloor(st.FileSizeBytes, f.FileSizeBytes)
	t.setStats(&st)
	t.noteTable(chMergeAdjacent, table)
	return nil
}

func subFloor(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// RegisterDeleteFile records deleted rows of one data file.
func (t *Transaction) RegisterDeleteFile(def DeleteFileDef) (DeleteFileID, error) {
	if _, err := t.tableOf(def.TableID); err != nil {
		return 0, err
	}
	if _, ok := t.next.dataFiles[def.TableID][def.DataFileID]; !ok {
		return 0, errorf(NotFound, "data file %d is not live in table %d", def.DataFileID, def.TableID)
	}
	if def.Path == "" {
		return 0, errorf(InvalidArgument, "delete file for data file %d has no path", def.DataFileID)
	}
	id := DeleteFileID(t.allocFileID())
	d := &DeleteFile{TableID: def.TableID, ID: id, Versioned: Versioned{Begin: t.id}, DataFileID: def.DataFileID,
		Path: def.Path, PathIsRelative: def.PathIsRelative, Format: def.Format, DeleteCount: def.DeleteCount,
		FileSizeBytes: def.FileSizeBytes, FooterSize: ptrTo(def.FooterSize), EncryptionKey: def.EncryptionKey}
	if d.Format == "" {
		d.Format = "parquet"
	}
	dels := innerCopy(t, t.next.deleteFiles, def.TableID)
	dels[id] = d
	t.put(keys.CurrentDeleteFile(uint64(def.TableID), uint64(id)), encodeDeleteFile(d))
	t.indexDeleteTarget(d, true)
	t.deletedFiles = append(t.deletedFiles, def.DataFileID)
	t.noteTable(chDeletedFrom, def.TableID)
	return id, nil
}

// indexDeleteTarget stages (live) or removes the delete-target index entry
// of d, in formats that keep the index.
func (t *Transaction) indexDeleteTarget(d *DeleteFile, live bool) {
	if !hasDeleteTargets(t.format) {
		return
	}
	k := keys.DeleteTarget(uint64(d.TableID), uint64(d.DataFileID), uint64(d.ID))
	if live {
		t.put(k, encodeDeleteTarget())
	} else {
		t.del(k)
	}
}

func (t *Transaction) endDeleteFile(d *DeleteFile) {
	t.del(keys.CurrentDeleteFile(uint64(d.TableID), uint64(d.ID)))
	t.indexDeleteTarget(d, false)
	recordEnd(t, d, keys.KindDeleteFile, encodeDeleteFile, uint64(d.TableID), uint64(d.ID))
}

// ExpireDeleteFile ends a delete file (after a rewrite folded it in).
func (t *Transaction) ExpireDeleteFile(table TableID, id DeleteFileID) error {
	if _, err := t.tableOf(table); err != nil {
		return err
	}
	d, ok := t.next.deleteFiles[table][id]
	if !ok {
		return errorf(NotFound, "delete file %d is not live in table %d", id, table)
	}
	dels := innerCopy(t, t.next.deleteFiles, table)
	delete(dels, id)
	t.endDeleteFile(d)
	t.noteTable(chRewriteDelete, table)
	return nil
}

// ---- statistics ----

// UpdateTableStats overwrites a table's statistics. Overwriting the
// statistics of a table that existed before the transaction records
// altered_table in changes_made (see noteStatsOverwrite).
func (t *Transaction) UpdateTableStats(st TableStats) error {
	tb, err := t.tableOf(st.TableID)
	if err != nil {
		return err
	}
	t.setStats(&st)
	t.noteStatsOverwrite(tb.ID, tb.Begin)
	return nil
}

// UpdateColumnStats overwrites one column's table-level statistics (and
// records altered_table like UpdateTableStats).
func (t *Transaction) UpdateColumnStats(cs TableColumnStats) error {
	if _, err := t.columnOf(cs.TableID, cs.ColumnID); err != nil {
		return err
	}
	t.setColumnStats(&cs)
	t.noteStatsOverwrite(cs.TableID, t.next.tables[cs.TableID].Begin)
	return nil
}

// noteStatsOverwrite notes an overwrite of statistics the transaction did
// not create; a transaction that changed nothing else of the table records
// it as altered_table (noteStatsOnlyChanges), DuckLake's word for a change
// to a table's definition: a stats-only commit then says what it changed, and
// two concurrent overwrites of one table's statistics conflict (altered
// against altered) instead of the later silently replacing the earlier;
// an insert racing it conflicts too, as DuckLake's own check refuses an
// insert into a table altered meanwhile. Statistics of a table or data
// file created in the same transaction are part of that creation.
func (t *Transaction) noteStatsOverwrite(table TableID, begin SnapshotID) {
	if begin == t.id {
		return
	}
	if t.statsOverwrites == nil {
		t.statsOverwrites = map[TableID]bool{}
	}
	t.statsOverwrites[table] = true
}

// noteStatsOnlyChanges records altered_table for every table whose
// statistics the transaction overwrote without changing its data: an
// insert, delete, compaction or flush of the same table already says so
// (it updates the table's statistics as part of it), and two inserts must
// not conflict over that.
func (t *Transaction) noteStatsOnlyChanges() {
	for table := range t.statsOverwrites {
		data := false
		for _, c := range t.changes {
			switch c.Kind {
			case chInsertedInto, chDeletedFrom, chCompacted, chMergeAdjacent, chRewriteDelete, chFlushedInlined, chInlinedInsert, chInlinedDelete, chAlteredTable, chCreatedTable, chDroppedTable:
				data = data || c.ID == uint64(table)
			}
		}
		if !data {
			t.noteTable(chAlteredTable, table)
		}
	}
}

func (t *Transaction) setColumnStats(cs *TableColumnStats) {
	innerCopy(t, t.next.colStats, cs.TableID)[cs.ColumnID] = cs
	t.put(keys.CurrentTableColumnStats(uint64(cs.TableID), uint64(cs.ColumnID)), encodeTableColumnStats(cs))
}

// SetFileColumnStats records one column's statistics for a data file
// (for a file the transaction did not register, an overwrite: altered_table,
// see noteStatsOverwrite).
func (t *Transaction) SetFileColumnStats(cs FileColumnStats) error {
	if _, ok := t.next.dataFiles[cs.TableID][cs.DataFileID]; !ok {
		return errorf(NotFound, "data file %d is not live in table %d", cs.DataFileID, cs.TableID)
	}
	if _, err := t.columnOf(cs.TableID, cs.ColumnID); err != nil {
		return err
	}
	t.setFileStats(&cs)
	t.noteStatsOverwrite(cs.TableID, t.next.dataFiles[cs.TableID][cs.DataFileID].Begin)
	return nil
}

func (t *Transaction) setFileStats(cs *FileColumnStats) {
	innerCopy(t, t.next.fileStats, cs.DataFileID)[cs.ColumnID] = cs
	t.put(keys.CurrentFileColumnStats(uint64(cs.TableID), uint64(cs.DataFileID), uint64(cs.ColumnID)), encodeFileColumnStats(cs))
}
