package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/slate"
)

// kvReader is what materialization reads through: an engine transaction,
// snapshot, reader or the database itself.
type kvReader interface {
	Get(ctx context.Context, key []byte) ([]byte, bool, error)
	Scan(ctx context.Context, start, end []byte) *slate.Iterator
}

// storeErr maps an engine error to the catalog's kinds.
func storeErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	msg := fmt.Sprintf(format, args...)
	switch {
	case errors.Is(err, slate.ErrFenced):
		return wrapf(Fenced, err, "%s: another read-write open took this catalog; reopen to continue", msg)
	case errors.Is(err, slate.ErrCorrupt):
		return wrapf(Corruption, err, "%s", msg)
	case errors.Is(err, slate.ErrWalStoreMismatch):
		return wrapf(Configuration, err, "%s: set CatalogOptions.WalStore (the wal_store attach option) to the store the catalog records", msg)
	case errors.Is(err, slate.ErrClosed):
		return wrapf(InvalidArgument, err, "%s: the catalog is closed", msg)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return wrapf(Interrupted, err, "%s", msg)
	}
	return wrapf(Store, err, "%s", msg)
}

// headStamp is the write that stamps head without a claim (every commit,
// the bootstrap, a migration batch, a slot); headStampClaim (claim.go),
// which it calls, is the one writer of the head record.
func headStamp(h Head) (key, value []byte) { return headStampClaim(h, nil) }

func readHead(ctx context.Context, kv kvReader) (Head, bool, error) {
	v, ok, err := kv.Get(ctx, keys.Head())
	if err != nil || !ok {
		return Head{}, ok, storeErr(err, "reading the catalog head")
	}
	h, err := decodeHead(v)
	if err != nil {
		return Head{}, false, err
	}
	return Head{SnapshotID: h.SnapshotID, BatchSeq: h.BatchSeq}, true, nil
}

func readFormat(ctx context.Context, kv kvReader) (*formatRecord, bool, error) {
	v, ok, err := kv.Get(ctx, keys.Format())
	if err != nil || !ok {
		return nil, ok, storeErr(err, "reading the catalog format")
	}
	f, err := decodeFormat(v)
	return f, err == nil, err
}

// scanPrefix calls fn for every key under prefix.
func scanPrefix(ctx context.Context, kv kvReader, prefix []byte, fn func(k keys.Key, value []byte) error) error {
	start, end := keys.PrefixRange(prefix)
	it := kv.Scan(ctx, start, end)
	defer it.Close()
	for it.Next() {
		k, err := keys.Decode(it.Key())
		if err != nil {
			return wrapf(Corruption, err, "decoding key %x", it.Key())
		}
		if err := fn(k, it.Value()); err != nil {
			return err
		}
	}
	return storeErr(it.Err(), "scanning %x", prefix)
}

// load materializes the catalog. With at nil it builds the head state from
// the current subspace only; with at set it builds the state at that
// snapshot from current plus history.
func load(ctx context.Context, kv kvReader, at *SnapshotID) (*CatalogView, error) {
	head, ok, err := readHead(ctx, kv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(NotFound, "the store holds no moraine catalog (no head record)")
	}
	target := head.SnapshotID
	if at != nil {
		if *at > head.SnapshotID {
			return nil, errorf(NotFound, "snapshot %d does not exist (the latest is %d)", *at, head.SnapshotID)
		}
		target = *at
	}
	sv, ok, err := kv.Get(ctx, keys.Snapshot(uint64(target)))
	if err != nil {
		return nil, storeErr(err, "reading snapshot %d", target)
	}
	if !ok {
		return nil, errorf(SnapshotExpired, "snapshot %d is no longer available", target)
	}
	snap, err := decodeSnapshot(sv)
	if err != nil {
		return nil, err
	}
	s := newCatalogView()
	s.snap = *snap
	if at == nil {
		s.head = head
	} else {
		s.head = Head{SnapshotID: target}
	}
	visible := func(v Versioned) bool { return v.VisibleAt(target) }
	add := func(k keys.Key, value []byte) error {
		switch k.Kind {
		case keys.KindSchema:
			x, err := decodeSchema(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.schemas[x.ID] = x
			s.schemaByName[x.Name] = x.ID
		case keys.KindTable:
			x, err := decodeTable(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.tables[x.ID] = x
			if s.tableByName[x.SchemaID] == nil {
				s.tableByName[x.SchemaID] = map[string]TableID{}
			}
			s.tableByName[x.SchemaID][x.Name] = x.ID
		case keys.KindView:
			x, err := decodeView(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.views[x.ID] = x
			if s.viewByName[x.SchemaID] == nil {
				s.viewByName[x.SchemaID] = map[string]ViewID{}
			}
			s.viewByName[x.SchemaID][x.Name] = x.ID
		case keys.KindColumn:
			x, err := decodeColumn(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			if s.columns[x.TableID] == nil {
				s.columns[x.TableID] = map[ColumnID]*Column{}
			}
			s.columns[x.TableID][x.ID] = x
		case keys.KindDataFile:
			x, err := decodeDataFile(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			if s.dataFiles[x.TableID] == nil {
				s.dataFiles[x.TableID] = map[DataFileID]*DataFile{}
			}
			s.dataFiles[x.TableID][x.ID] = x
		case keys.KindDeleteFile:
			x, err := decodeDeleteFile(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			if s.deleteFiles[x.TableID] == nil {
				s.deleteFiles[x.TableID] = map[DeleteFileID]*DeleteFile{}
			}
			s.deleteFiles[x.TableID][x.ID] = x
		case keys.KindPartition:
			x, err := decodePartition(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.partitions[x.TableID] = x
		case keys.KindSort:
			x, err := decodeSort(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.sorts[x.TableID] = x
		case keys.KindMacro:
			x, err := decodeMacro(value)
			if err != nil || !visible(x.Versioned) {
				return err
			}
			s.macros[x.ID] = x
			if s.macroByName[x.SchemaID] == nil {
				s.macroByName[x.SchemaID] = map[string]MacroID{}
			}
			s.macroByName[x.SchemaID][macroKey(x.kind(), x.Name)] = x.ID
		case keys.KindTableStats:
			x, err := decodeTableStats(value)
			if err != nil {
				return err
			}
			s.tableStats[x.TableID] = x
		case keys.KindTableColumnStats:
			x, err := decodeTableColumnStats(value)
			if err != nil {
				return err
			}
			if s.colStats[x.TableID] == nil {
				s.colStats[x.TableID] = map[ColumnID]*TableColumnStats{}
			}
			s.colStats[x.TableID][x.ColumnID] = x
		case keys.KindFileColumnStats:
			x, err := decodeFileColumnStats(value)
			if err != nil {
				return err
			}
			if s.fileStats[x.DataFileID] == nil {
				s.fileStats[x.DataFileID] = map[ColumnID]*FileColumnStats{}
			}
			s.fileStats[x.DataFileID][x.ColumnID] = x
		case keys.KindTag:
			x, err := decodeTags(value)
			if err != nil {
				return err
			}
			s.tags[x.ObjectID] = x
		case keys.KindOption:
			x, err := decodeOptions(value)
			if err != nil {
				return err
			}
			s.options[scopeKey{x.Scope, x.ScopeID}] = x
		case keys.KindMapping:
			x, err := decodeMapping(value)
			if err != nil {
				return err
			}
			s.mappings[x.ID] = x
		}
		return nil
	}
	if err := scanPrefix(ctx, kv, keys.CurrentEntityPrefix(), add); err != nil {
		return nil, err
	}
	if at != nil {
		if err := scanPrefix(ctx, kv, keys.SubspacePrefix(keys.SubspaceHistory), add); err != nil {
			return nil, err
		}
	}
	s.dropStatsOfAbsentTables()
	if err := loadInlined(ctx, kv, s, target, at != nil); err != nil {
		return nil, err
	}
	if s.schemaVersions, err = scanSchemaVersions(ctx, kv, target); err != nil {
		return nil, err
	}
	err = scanPrefix(ctx, kv, keys.GcFilePrefix(), func(k keys.Key, value []byte) error {
		g, err := decodeGcFile(value)
		if err != nil {
			return err
		}
		s.gcFiles[g.DataFileID] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// loadInlined reads inlined row chunks visible at target and applies the
// inline deletes that ended rows at or before it.
func loadInlined(ctx context.Context, kv kvReader, s *CatalogView, target SnapshotID, history bool) error {
	type chunkKey struct {
		table          TableID
		sv, begin, seq uint64
	}
	chunks := map[chunkKey]*chunkState{}
	addChunk := func(k keys.Key, value []byte, archivedAt *SnapshotID) error {
		ck := chunkKey{TableID(k.Comps[0]), k.Comps[1], k.Comps[2], k.Comps[3]}
		if SnapshotID(ck.begin) > target {
			return nil
		}
		if archivedAt != nil && *archivedAt <= target {
			return nil
		}
		rows, err := decodeInlineChunk(value)
		if err != nil {
			return err
		}
		c := &chunkState{table: ck.table, schemaVersion: ck.sv, begin: SnapshotID(ck.begin), seq: ck.seq, archivedAt: archivedAt}
		for _, r := range rows {
			r.Begin = SnapshotID(ck.begin)
			c.rows = append(c.rows, r)
		}
		chunks[ck] = c
		return nil
	}
	if err := scanPrefix(ctx, kv, keys.InlineLiveInsertPrefix(), func(k keys.Key, v []byte) error { return addChunk(k, v, nil) }); err != nil {
		return err
	}
	if history {
		if err := scanPrefix(ctx, kv, keys.InlineArchivedInsertPrefix(), func(k keys.Key, v []byte) error {
			e := SnapshotID(k.End)
			return addChunk(k, v, &e)
		}); err != nil {
			return err
		}
	}
	ends := map[TableID]map[uint64]SnapshotID{}
	addDelete := func(k keys.Key, v []byte) error {
		e, err := decodeInlineDelete(v)
		if err != nil {
			return err
		}
		t := TableID(k.Comps[0])
		if ends[t] == nil {
			ends[t] = map[uint64]SnapshotID{}
		}
		ends[t][k.Comps[1]] = e
		return nil
	}
	if err := scanPrefix(ctx, kv, keys.InlineLiveDeletePrefix(), addDelete); err != nil {
		return err
	}
	if history {
		if err := scanPrefix(ctx, kv, keys.InlineArchivedDeletePrefix(), func(k keys.Key, v []byte) error {
			if SnapshotID(k.End) <= target {
				return nil
			}
			return addDelete(k, v)
		}); err != nil {
			return err
		}
	}
	var list []*chunkState
	for _, c := range chunks {
		for i := range c.rows {
			if e, ok := ends[c.table][c.rows[i].RowID]; ok {
				c.rows[i].endAt(e)
			}
		}
		list = append(list, c)
	}
	slices.SortFunc(list, compareChunks)
	for _, c := range list {
		s.inlined[c.table] = append(s.inlined[c.table], c)
	}
	return nil
}

// scanSchemaVersions returns the schema-version records that began at or
// before target, by begin snapshot, then table.
func scanSchemaVersions(ctx context.Context, kv kvReader, target SnapshotID) ([]SchemaVersion, error) {
	var out []SchemaVersion
	err := scanPrefix(ctx, kv, keys.SchemaVersionPrefix(), func(k keys.Key, value []byte) error {
		if SnapshotID(k.Comps[1]) > target {
			return nil
		}
		v, err := decodeSchemaVersion(value)
		if err != nil {
			return err
		}
		out = append(out, SchemaVersion{TableID: TableID(k.Comps[0]), BeginSnapshot: SnapshotID(k.Comps[1]), SchemaVersion: v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.BeginSnapshot != b.BeginSnapshot {
			return a.BeginSnapshot < b.BeginSnapshot
		}
		return a.TableID < b.TableID
	})
	return out, nil
}
