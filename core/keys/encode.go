package keys

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Constructors panic when given an unknown kind, a history key of an
// unversioned kind, or the wrong number of components: those are
// programming errors, never data. Decode is the checked direction.

func appendU64s(dst []byte, comps ...uint64) []byte {
	for _, c := range comps {
		dst = binary.BigEndian.AppendUint64(dst, c)
	}
	return dst
}

// build returns header (+ the kind byte when kb >= 0) + comps, allocated
// once at its final size.
func build(header []byte, kb int, comps []uint64, extra int) []byte {
	n := len(header) + 8*(len(comps)+extra)
	if kb >= 0 {
		n++
	}
	b := make([]byte, 0, n)
	b = append(b, header...)
	if kb >= 0 {
		b = append(b, byte(kb))
	}
	return appendU64s(b, comps...)
}

func mustKind(fn string, k Kind) {
	if !k.Valid() {
		panic(fmt.Sprintf("keys.%s: unknown kind 0x%02x", fn, byte(k)))
	}
}

func mustNameKind(fn string, k NameKind) {
	if !k.Valid() {
		panic(fmt.Sprintf("keys.%s: unknown name kind 0x%02x", fn, byte(k)))
	}
}

func mustArity(fn, what string, want int, comps []uint64) {
	if len(comps) != want {
		panic(fmt.Sprintf("keys.%s: %s takes %d components, got %d", fn, what, want, len(comps)))
	}
}

func mustAtMost(fn, what string, max int, comps []uint64) {
	if len(comps) > max {
		panic(fmt.Sprintf("keys.%s: %s has %d components, got %d leading ones", fn, what, max, len(comps)))
	}
}

// --- sys ---

// Format is sys/format: the catalog's format version (FormatValue).
func Format() []byte { return []byte{byte(SubspaceSys), sysFormat} }

// Head is sys/head: the head stamp {snapshot_id, batch_seq} (HeadValue).
func Head() []byte { return []byte{byte(SubspaceSys), sysHead} }

// Migration is sys/migration: the in-progress migration marker
// (MigrationValue).
func Migration() []byte { return []byte{byte(SubspaceSys), sysMigration} }

// MaintenanceStatus is sys/maintenance_status (MaintenanceStatusValue).
func MaintenanceStatus() []byte { return []byte{byte(SubspaceSys), sysMaintenanceStatus} }

// --- snapshot, schema versions, changelog ---

// Snapshot is the key of snapshot id's record (SnapshotValue).
func Snapshot(id uint64) []byte { return build(shapeInfos[ShapeSnapshot].header, -1, []uint64{id}, 0) }

// SchemaVersion is the key of a table's schema-version change at
// beginSnapshot (SchemaVersionValue).
func SchemaVersion(tableID, beginSnapshot uint64) []byte {
	return build(shapeInfos[ShapeSchemaVersion].header, -1, []uint64{tableID, beginSnapshot}, 0)
}

// SchemaVersionPrefix is the prefix of schema_version keys with the given
// leading components (none, or table_id).
func SchemaVersionPrefix(leading ...uint64) []byte {
	mustAtMost("SchemaVersionPrefix", "schema_version", 2, leading)
	return build(shapeInfos[ShapeSchemaVersion].header, -1, leading, 0)
}

// Changelog is the key of snapshot id's changelog (ChangelogValue).
func Changelog(snapshotID uint64) []byte {
	return build(shapeInfos[ShapeChangelog].header, -1, []uint64{snapshotID}, 0)
}

// --- current ---

// Current is the current key of an entity of kind with the kind's
// components (see Kind.Components).
func Current(kind Kind, comps ...uint64) []byte {
	mustKind("Current", kind)
	mustArity("Current", kind.String(), kind.Arity(), comps)
	return build(shapeInfos[ShapeCurrent].header, int(kind), comps, 0)
}

// CurrentPrefix is the prefix of kind's current keys whose first
// components are leading (at most the kind's arity).
func CurrentPrefix(kind Kind, leading ...uint64) []byte {
	mustKind("CurrentPrefix", kind)
	mustAtMost("CurrentPrefix", kind.String(), kind.Arity(), leading)
	return build(shapeInfos[ShapeCurrent].header, int(kind), leading, 0)
}

// CurrentEntityPrefix is the prefix of every current entity key (all
// kinds; not the gc-file keys).
func CurrentEntityPrefix() []byte { return build(shapeInfos[ShapeCurrent].header, -1, nil, 0) }

// Per-kind current keys: Current with the kind fixed.

// CurrentSchema is current/schema/<schema_id> (SchemaValue).
func CurrentSchema(schemaID uint64) []byte { return Current(KindSchema, schemaID) }

// CurrentTable is current/table/<table_id> (TableValue).
func CurrentTable(tableID uint64) []byte { return Current(KindTable, tableID) }

// CurrentView is current/view/<view_id> (ViewValue).
func CurrentView(viewID uint64) []byte { return Current(KindView, viewID) }

// CurrentColumn is current/column/<table_id>/<column_id> (ColumnValue).
func CurrentColumn(tableID, columnID uint64) []byte { return Current(KindColumn, tableID, columnID) }

// CurrentPartition is current/partition/<table_id>/<partition_id>
// (PartitionValue).
func CurrentPartition(tableID, partitionID uint64) []byte {
	return Current(KindPartition, tableID, partitionID)
}

// CurrentDataFile is current/data_file/<table_id>/<data_file_id>
// (DataFileValue).
func CurrentDataFile(tableID, dataFileID uint64) []byte {
	return Current(KindDataFile, tableID, dataFileID)
}

// CurrentDeleteFile is current/delete_file/<table_id>/<delete_file_id>
// (DeleteFileValue).
func CurrentDeleteFile(tableID, deleteFileID uint64) []byte {
	return Current(KindDeleteFile, tableID, deleteFileID)
}

// CurrentFileColumnStats is
// current/file_column_stats/<table_id>/<data_file_id>/<column_id>
// (FileColumnStatsValue).
func CurrentFileColumnStats(tableID, dataFileID, columnID uint64) []byte {
	return Current(KindFileColumnStats, tableID, dataFileID, columnID)
}

// CurrentTableStats is current/table_stats/<table_id> (TableStatsValue).
func CurrentTableStats(tableID uint64) []byte { return Current(KindTableStats, tableID) }

// CurrentTableColumnStats is current/table_column_stats/<table_id>/<column_id>
// (TableColumnStatsValue).
func CurrentTableColumnStats(tableID, columnID uint64) []byte {
	return Current(KindTableColumnStats, tableID, columnID)
}

// CurrentTag is current/tag/<object_id>: every tag of one object (TagsValue).
func CurrentTag(objectID uint64) []byte { return Current(KindTag, objectID) }

// CurrentOption is the option record of one scope (scopeKind: 0 global
// with scopeID 0, 1 schema, 2 table) (OptionsValue).
func CurrentOption(scopeKind, scopeID uint64) []byte {
	return Current(KindOption, scopeKind, scopeID)
}

// CurrentSort is current/sort/<table_id>/<sort_id> (SortValue).
func CurrentSort(tableID, sortID uint64) []byte { return Current(KindSort, tableID, sortID) }

// CurrentMacro is current/macro/<macro_id> (MacroValue).
func CurrentMacro(macroID uint64) []byte { return Current(KindMacro, macroID) }

// CurrentMapping is current/mapping/<table_id>/<mapping_id> (MappingValue).
func CurrentMapping(tableID, mappingID uint64) []byte {
	return Current(KindMapping, tableID, mappingID)
}

// CurrentInlinedTable is current/inlined_table/<table_id>/<schema_version>
// (InlinedTableValue).
func CurrentInlinedTable(tableID, schemaVersion uint64) []byte {
	return Current(KindInlinedTable, tableID, schemaVersion)
}

// CurrentInlinedDeleteTable is ducklake_inlined_delete_<table>'s
// definition.
func CurrentInlinedDeleteTable(tableID uint64) []byte {
	return Current(KindInlinedDeleteTable, tableID)
}

// CurrentInlinedFileDelete is one row of ducklake_inlined_delete_<table>.
func CurrentInlinedFileDelete(tableID, dataFileID, rowID uint64) []byte {
	return Current(KindInlinedFileDelete, tableID, dataFileID, rowID)
}

// CurrentFileVariantStats is the statistics of a data file's VARIANT
// column (FileVariantStatsValue).
func CurrentFileVariantStats(tableID, dataFileID, columnID uint64) []byte {
	return Current(KindFileVariantStats, tableID, dataFileID, columnID)
}

// GcFile is current/gc_file: a data file scheduled for deletion (GcFileValue).
func GcFile(dataFileID uint64) []byte {
	return build(shapeInfos[ShapeGcFile].header, -1, []uint64{dataFileID}, 0)
}

// GcFilePrefix is the prefix of every gc-file key.
func GcFilePrefix() []byte { return build(shapeInfos[ShapeGcFile].header, -1, nil, 0) }

// --- history ---

// History is the history key of an ended version of a versioned kind: the
// kind's components followed by endSnapshot.
func History(kind Kind, endSnapshot uint64, comps ...uint64) []byte {
	mustKind("History", kind)
	if !kind.Versioned() {
		panic(fmt.Sprintf("keys.History: %s is unversioned and has no history", kind))
	}
	mustArity("History", kind.String(), kind.Arity(), comps)
	return binary.BigEndian.AppendUint64(build(shapeInfos[ShapeHistory].header, int(kind), comps, 1), endSnapshot)
}

// HistoryPrefix is the prefix of kind's history keys whose first components
// are leading (at most the kind's arity; the end snapshot is not a leading
// component here).
func HistoryPrefix(kind Kind, leading ...uint64) []byte {
	mustKind("HistoryPrefix", kind)
	if !kind.Versioned() {
		panic(fmt.Sprintf("keys.HistoryPrefix: %s is unversioned and has no history", kind))
	}
	mustAtMost("HistoryPrefix", kind.String(), kind.Arity(), leading)
	return build(shapeInfos[ShapeHistory].header, int(kind), leading, 0)
}

// ToHistory turns a current key into the key its version moves to when it
// ends at endSnapshot: a current entity key of a versioned kind becomes its
// history key, a live inline insert chunk or inline delete becomes the
// archived one. Other keys give an error wrapping ErrInvalid (unversioned
// kinds, other shapes) or ErrCorrupt (not a key).
func ToHistory(current []byte, endSnapshot uint64) ([]byte, error) {
	k, err := Decode(current)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch k.Shape {
	case ShapeCurrent:
		if !k.Kind.Versioned() {
			return nil, fmt.Errorf("%w: %s is unversioned and has no history", ErrInvalid, k)
		}
		// 04 02 kind comps -> 05 kind comps end
		out = make([]byte, 0, len(current)+7)
		out = append(out, byte(SubspaceHistory))
		out = append(out, current[2:]...)
	case ShapeInlineLiveInsert, ShapeInlineLiveDelete:
		// 06 03 op comps -> 06 04 op comps end
		out = make([]byte, 0, len(current)+8)
		out = append(out, current...)
		out[1] = inlineArchived
	default:
		return nil, fmt.Errorf("%w: %s has no history form", ErrInvalid, k)
	}
	return binary.BigEndian.AppendUint64(out, endSnapshot), nil
}

// ToCurrent is ToHistory's inverse: the current (or live inline) key of a
// history (or archived inline) key, and the end snapshot it carried.
func ToCurrent(history []byte) (current []byte, endSnapshot uint64, err error) {
	k, err := Decode(history)
	if err != nil {
		return nil, 0, err
	}
	if !k.HasEnd() {
		return nil, 0, fmt.Errorf("%w: %s is not a history key", ErrInvalid, k)
	}
	body := history[:len(history)-8]
	switch k.Shape {
	case ShapeHistory:
		out := make([]byte, 0, len(body)+1)
		out = append(out, byte(SubspaceCurrent), currentEntity)
		return append(out, body[1:]...), k.End, nil
	default: // ShapeInlineArchivedInsert, ShapeInlineArchivedDelete
		out := append([]byte(nil), body...)
		out[1] = inlineLive
		return out, k.End, nil
	}
}

// --- inline ---

// InlineLiveInsert is a live chunk of inlined rows a commit at
// beginSnapshot inserted into table under schemaVersion (InlineChunk).
func InlineLiveInsert(tableID, schemaVersion, beginSnapshot, chunkSeq uint64) []byte {
	return build(shapeInfos[ShapeInlineLiveInsert].header, -1, []uint64{tableID, schemaVersion, beginSnapshot, chunkSeq}, 0)
}

// InlineLiveDelete is a live inline delete of rowID (InlineDeleteValue).
func InlineLiveDelete(tableID, rowID uint64) []byte {
	return build(shapeInfos[ShapeInlineLiveDelete].header, -1, []uint64{tableID, rowID}, 0)
}

// InlineArchivedInsert is an insert chunk a flush ended at endSnapshot.
func InlineArchivedInsert(tableID, schemaVersion, beginSnapshot, chunkSeq, endSnapshot uint64) []byte {
	return build(shapeInfos[ShapeInlineArchivedInsert].header, -1, []uint64{tableID, schemaVersion, beginSnapshot, chunkSeq, endSnapshot}, 0)
}

// InlineArchivedDelete is an inline delete a flush ended at endSnapshot.
func InlineArchivedDelete(tableID, rowID, endSnapshot uint64) []byte {
	return build(shapeInfos[ShapeInlineArchivedDelete].header, -1, []uint64{tableID, rowID, endSnapshot}, 0)
}

// InlineLiveInsertPrefix is the prefix of live insert chunks with the given
// leading components (table_id, schema_version, begin_snapshot, chunk_seq).
func InlineLiveInsertPrefix(leading ...uint64) []byte {
	return shapePrefix("InlineLiveInsertPrefix", ShapeInlineLiveInsert, leading)
}

// InlineLiveDeletePrefix is the prefix of live inline deletes with the
// given leading components (table_id, row_id).
func InlineLiveDeletePrefix(leading ...uint64) []byte {
	return shapePrefix("InlineLiveDeletePrefix", ShapeInlineLiveDelete, leading)
}

// InlineArchivedInsertPrefix is the prefix of archived insert chunks with
// the given leading components (table_id, schema_version, begin_snapshot,
// chunk_seq, end_snapshot).
func InlineArchivedInsertPrefix(leading ...uint64) []byte {
	return shapePrefix("InlineArchivedInsertPrefix", ShapeInlineArchivedInsert, leading)
}

// InlineArchivedDeletePrefix is the prefix of archived inline deletes with
// the given leading components (table_id, row_id, end_snapshot).
func InlineArchivedDeletePrefix(leading ...uint64) []byte {
	return shapePrefix("InlineArchivedDeletePrefix", ShapeInlineArchivedDelete, leading)
}

func shapePrefix(fn string, s Shape, leading []uint64) []byte {
	n := len(shapeInfos[s].comps)
	if shapeInfos[s].end {
		n++
	}
	mustAtMost(fn, s.String(), n, leading)
	return build(shapeInfos[s].header, -1, leading, 0)
}

// --- index ---

// NameHash is the name directory's hash of a name: FNV-1a 64 over its
// bytes. It is wire format.
func NameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// NameDir is the name-directory key for name under parentID (the schema id
// for tables, views and macros; 0 for schemas) (NameDirValue).
func NameDir(kind NameKind, parentID uint64, name string) []byte {
	return NameDirHash(kind, parentID, NameHash(name))
}

// NameDirHash is NameDir for an already computed name hash.
func NameDirHash(kind NameKind, parentID, nameHash uint64) []byte {
	mustNameKind("NameDirHash", kind)
	return build(shapeInfos[ShapeNameDir].header, int(kind), []uint64{parentID, nameHash}, 0)
}

// NameDirPrefix is the prefix of kind's name-directory keys with the given
// leading components (parent_id, name_hash).
func NameDirPrefix(kind NameKind, leading ...uint64) []byte {
	mustNameKind("NameDirPrefix", kind)
	mustAtMost("NameDirPrefix", "index/name", 2, leading)
	return build(shapeInfos[ShapeNameDir].header, int(kind), leading, 0)
}

// DeleteTarget is the delete-file target lookup entry: deleteFileID
// targets dataFileID of tableID (DeleteTargetValue, empty).
func DeleteTarget(tableID, dataFileID, deleteFileID uint64) []byte {
	return build(shapeInfos[ShapeDeleteTarget].header, -1, []uint64{tableID, dataFileID, deleteFileID}, 0)
}

// DeleteTargetPrefix is the prefix of delete-target entries with the given
// leading components (table_id, data_file_id, delete_file_id).
func DeleteTargetPrefix(leading ...uint64) []byte {
	return shapePrefix("DeleteTargetPrefix", ShapeDeleteTarget, leading)
}

// --- prefixes and ranges ---

// SubspacePrefix is the one-byte prefix of every key in s.
func SubspacePrefix(s Subspace) []byte { return []byte{byte(s)} }

// PrefixEnd is the smallest key greater than every key starting with
// prefix: the prefix with its last non-0xFF byte incremented and the 0xFF
// bytes after it dropped. It is nil (no upper bound) when prefix is empty
// or all 0xFF.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := append([]byte(nil), prefix[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// PrefixRange is the half-open range [start, end) of keys starting with
// prefix; end is nil when unbounded. It fits the engine's Scan(start, end).
func PrefixRange(prefix []byte) (start, end []byte) {
	return append([]byte(nil), prefix...), PrefixEnd(prefix)
}
