package keys

import (
	"errors"
	"fmt"
)

// ErrCorrupt marks bytes that are not a valid key. Decode's errors wrap it.
var ErrCorrupt = errors.New("key: corrupt")

// ErrInvalid marks a well-formed request the layout cannot satisfy: a Key
// value that does not describe a key, or a key with no history form.
var ErrInvalid = errors.New("key: invalid")

// Subspace is a key's first byte.
type Subspace byte

// The subspaces. Values are wire format.
const (
	SubspaceSys           Subspace = 0x02
	SubspaceSnapshot      Subspace = 0x03
	SubspaceCurrent       Subspace = 0x04
	SubspaceHistory       Subspace = 0x05
	SubspaceInline        Subspace = 0x06
	SubspaceIndex         Subspace = 0x07
	SubspaceSchemaVersion Subspace = 0x08
	SubspaceChangelog     Subspace = 0x09
)

var subspaceNames = map[Subspace]string{
	SubspaceSys:           "sys",
	SubspaceSnapshot:      "snapshot",
	SubspaceCurrent:       "current",
	SubspaceHistory:       "history",
	SubspaceInline:        "inline",
	SubspaceIndex:         "index",
	SubspaceSchemaVersion: "schema_version",
	SubspaceChangelog:     "changelog",
}

func (s Subspace) String() string {
	if n, ok := subspaceNames[s]; ok {
		return n
	}
	return fmt.Sprintf("subspace(0x%02x)", byte(s))
}

// Second-level discriminants. Values are wire format.
const (
	sysFormat            = 0x02
	sysHead              = 0x03
	sysMigration         = 0x04
	sysMaintenanceStatus = 0x05

	currentEntity = 0x02
	currentGcFile = 0x03

	inlineLive     = 0x03
	inlineArchived = 0x04
	inlineInsert   = 0x02
	inlineDelete   = 0x03

	indexNameDir      = 0x04
	indexDeleteTarget = 0x05
)

// Kind is an entity kind: the byte after current/entity and after history.
type Kind byte

// The entity kinds. Values are wire format.
const (
	KindSchema           Kind = 0x02
	KindTable            Kind = 0x03
	KindView             Kind = 0x04
	KindColumn           Kind = 0x05
	KindPartition        Kind = 0x06
	KindDataFile         Kind = 0x07
	KindDeleteFile       Kind = 0x08
	KindFileColumnStats  Kind = 0x09
	KindTableStats       Kind = 0x0a
	KindTableColumnStats Kind = 0x0b
	KindTag              Kind = 0x0c
	KindOption           Kind = 0x0d
	KindSort             Kind = 0x0e
	KindMacro            Kind = 0x0f
	KindMapping          Kind = 0x10
	KindInlinedTable     Kind = 0x11
	// KindInlinedDeleteTable and KindInlinedFileDelete are DuckLake 1.0's
	// deletion inlining (format 13).
	KindInlinedDeleteTable Kind = 0x12
	KindInlinedFileDelete  Kind = 0x13
	// KindFileVariantStats is DuckLake 1.0's statistics of a data file's
	// VARIANT column (format 13).
	KindFileVariantStats Kind = 0x14
)

type kindInfo struct {
	name      string
	comps     []string
	versioned bool
}

var kindInfos = map[Kind]kindInfo{
	KindSchema:             {"schema", []string{"schema_id"}, true},
	KindTable:              {"table", []string{"table_id"}, true},
	KindView:               {"view", []string{"view_id"}, true},
	KindColumn:             {"column", []string{"table_id", "column_id"}, true},
	KindPartition:          {"partition", []string{"table_id", "partition_id"}, true},
	KindDataFile:           {"data_file", []string{"table_id", "data_file_id"}, true},
	KindDeleteFile:         {"delete_file", []string{"table_id", "delete_file_id"}, true},
	KindFileColumnStats:    {"file_column_stats", []string{"table_id", "data_file_id", "column_id"}, false},
	KindTableStats:         {"table_stats", []string{"table_id"}, false},
	KindTableColumnStats:   {"table_column_stats", []string{"table_id", "column_id"}, false},
	KindTag:                {"tag", []string{"object_id"}, false},
	KindOption:             {"option", []string{"scope_kind", "scope_id"}, false},
	KindSort:               {"sort", []string{"table_id", "sort_id"}, true},
	KindMacro:              {"macro", []string{"macro_id"}, true},
	KindMapping:            {"mapping", []string{"table_id", "mapping_id"}, false},
	KindInlinedTable:       {"inlined_table", []string{"table_id", "schema_version"}, false},
	KindInlinedDeleteTable: {"inlined_delete_table", []string{"table_id"}, false},
	KindInlinedFileDelete:  {"inlined_file_delete", []string{"table_id", "data_file_id", "row_id"}, false},
	KindFileVariantStats:   {"file_variant_stats", []string{"table_id", "data_file_id", "column_id"}, false},
}

// Kinds returns every entity kind in byte order.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kindInfos))
	for k := KindSchema; k <= KindFileVariantStats; k++ {
		out = append(out, k)
	}
	return out
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { _, ok := kindInfos[k]; return ok }

// Versioned reports whether versions of k move to history when they end.
// Unversioned kinds are overwritten in place and never appear in history.
func (k Kind) Versioned() bool { return kindInfos[k].versioned }

// Arity is the number of u64 components of k's current key (0 for an
// unknown kind).
func (k Kind) Arity() int { return len(kindInfos[k].comps) }

// Components names k's components in key order (for tools and messages).
func (k Kind) Components() []string { return append([]string(nil), kindInfos[k].comps...) }

func (k Kind) String() string {
	if i, ok := kindInfos[k]; ok {
		return i.name
	}
	return fmt.Sprintf("kind(0x%02x)", byte(k))
}

// NameKind is the kind byte of a name-directory key. It is its own enum:
// it does not share values with Kind (macro is 05 here, 0f there).
type NameKind byte

// The name-directory kinds. Values are wire format.
const (
	NameSchema NameKind = 0x02
	NameTable  NameKind = 0x03
	NameView   NameKind = 0x04
	NameMacro  NameKind = 0x05
)

var nameKindNames = map[NameKind]string{
	NameSchema: "schema",
	NameTable:  "table",
	NameView:   "view",
	NameMacro:  "macro",
}

// Valid reports whether n is a known name-directory kind.
func (n NameKind) Valid() bool { _, ok := nameKindNames[n]; return ok }

func (n NameKind) String() string {
	if s, ok := nameKindNames[n]; ok {
		return s
	}
	return fmt.Sprintf("name_kind(0x%02x)", byte(n))
}

// Shape identifies one key layout. Shape values are NOT wire format (the
// bytes are); they only name the layouts for Key.
type Shape uint8

// The key shapes.
const (
	ShapeInvalid              Shape = iota
	ShapeFormat                     // sys/format
	ShapeHead                       // sys/head
	ShapeMigration                  // sys/migration
	ShapeMaintenanceStatus          // sys/maintenance_status
	ShapeSnapshot                   // snapshot_id
	ShapeCurrent                    // current entity: Kind + the kind's components
	ShapeGcFile                     // current gc file: data_file_id
	ShapeHistory                    // Kind + the kind's components + End
	ShapeInlineLiveInsert           // table_id, schema_version, begin_snapshot, chunk_seq
	ShapeInlineLiveDelete           // table_id, row_id
	ShapeInlineArchivedInsert       // table_id, schema_version, begin_snapshot, chunk_seq + End
	ShapeInlineArchivedDelete       // table_id, row_id + End
	ShapeNameDir                    // NameKind + parent_id, name_hash
	ShapeDeleteTarget               // table_id, data_file_id, delete_file_id
	ShapeSchemaVersion              // table_id, begin_snapshot
	ShapeChangelog                  // snapshot_id
	numShapes
)

type shapeInfo struct {
	name   string
	sub    Subspace
	header []byte // bytes before the components; current/history/name dir append their kind byte
	comps  []string
	end    bool // an end_snapshot follows the components
}

var shapeInfos = [numShapes]shapeInfo{
	ShapeFormat:               {"sys/format", SubspaceSys, []byte{0x02, sysFormat}, nil, false},
	ShapeHead:                 {"sys/head", SubspaceSys, []byte{0x02, sysHead}, nil, false},
	ShapeMigration:            {"sys/migration", SubspaceSys, []byte{0x02, sysMigration}, nil, false},
	ShapeMaintenanceStatus:    {"sys/maintenance_status", SubspaceSys, []byte{0x02, sysMaintenanceStatus}, nil, false},
	ShapeSnapshot:             {"snapshot", SubspaceSnapshot, []byte{0x03}, []string{"snapshot_id"}, false},
	ShapeCurrent:              {"current", SubspaceCurrent, []byte{0x04, currentEntity}, nil, false},
	ShapeGcFile:               {"current/gc_file", SubspaceCurrent, []byte{0x04, currentGcFile}, []string{"data_file_id"}, false},
	ShapeHistory:              {"history", SubspaceHistory, []byte{0x05}, nil, true},
	ShapeInlineLiveInsert:     {"inline/live/insert", SubspaceInline, []byte{0x06, inlineLive, inlineInsert}, []string{"table_id", "schema_version", "begin_snapshot", "chunk_seq"}, false},
	ShapeInlineLiveDelete:     {"inline/live/delete", SubspaceInline, []byte{0x06, inlineLive, inlineDelete}, []string{"table_id", "row_id"}, false},
	ShapeInlineArchivedInsert: {"inline/archived/insert", SubspaceInline, []byte{0x06, inlineArchived, inlineInsert}, []string{"table_id", "schema_version", "begin_snapshot", "chunk_seq"}, true},
	ShapeInlineArchivedDelete: {"inline/archived/delete", SubspaceInline, []byte{0x06, inlineArchived, inlineDelete}, []string{"table_id", "row_id"}, true},
	ShapeNameDir:              {"index/name", SubspaceIndex, []byte{0x07, indexNameDir}, []string{"parent_id", "name_hash"}, false},
	ShapeDeleteTarget:         {"index/delete_target", SubspaceIndex, []byte{0x07, indexDeleteTarget}, []string{"table_id", "data_file_id", "delete_file_id"}, false},
	ShapeSchemaVersion:        {"schema_version", SubspaceSchemaVersion, []byte{0x08}, []string{"table_id", "begin_snapshot"}, false},
	ShapeChangelog:            {"changelog", SubspaceChangelog, []byte{0x09}, []string{"snapshot_id"}, false},
}

// Valid reports whether s names a key shape.
func (s Shape) Valid() bool { return s > ShapeInvalid && s < numShapes }

// Subspace is the subspace of keys of shape s.
func (s Shape) Subspace() Subspace {
	if !s.Valid() {
		return 0
	}
	return shapeInfos[s].sub
}

// HasEnd reports whether keys of shape s end with an end_snapshot.
func (s Shape) HasEnd() bool { return s.Valid() && shapeInfos[s].end }

func (s Shape) String() string {
	if !s.Valid() {
		return fmt.Sprintf("shape(%d)", uint8(s))
	}
	return shapeInfos[s].name
}
