package core

// codec.go converts the model (model.go) and the catalog's own records to
// and from stored values: a frame (core/internal/frame: "MRNE" + version 0)
// around a protobuf message of proto/moraine/store/v1/store.proto
// (core/internal/catalogpb).
//
// encodeX never fails on a well-formed model value. Its one precondition:
// every string is valid UTF-8 (proto3 strings are), which the transaction
// verbs must ensure (InvalidArgument) before staging; a violation panics
// rather than store a truncated value. decodeX returns a Corruption *Error
// for a bad frame or bad protobuf, naming what it decoded.
//
// Conventions: optional protobuf fields are the model's pointers, so nil
// and a pointer to zero survive a round trip distinctly. Repeated fields
// decode to nil when empty (protobuf cannot tell nil from empty), except
// Options.Values, which always decodes to a non-nil map. Times are stored
// as microseconds since the Unix epoch and decode in UTC. UUIDs are their
// 16 bytes.

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/moraine-go/moraine/core/internal/catalogpb"
	"github.com/moraine-go/moraine/core/internal/frame"
)

// formatRecord is sys/format.
type formatRecord struct {
	Format        uint64
	WriterVersion string
	// Origin is the commit-log batch origin of a log-resident catalog
	// (formats 11+); nil when the catalog is not log-resident.
	Origin *uint64
	// AdoptionPending marks a stamp an adoption wrote into the store before
	// racing the log's first slot (cleared when slot 0 is folded).
	AdoptionPending bool
}

// headRecord is sys/head: the head stamp.
type headRecord struct {
	SnapshotID SnapshotID
	BatchSeq   uint64
	// Claim is set on a claim slot's stamp (claim.go).
	Claim *slotClaim
}

// migrationRecord is sys/migration: an in-progress format migration.
type migrationRecord struct {
	From   uint64
	To     uint64
	Cursor []byte // where the unit resumes; nil: at its start
	Unit   string // e.g. "9->11"
}

// nameDirEntry is one {name, id} of a name-directory value.
type nameDirEntry struct {
	Name string
	ID   uint64
}

// maintenanceStatus is sys/maintenance_status: the latest passes.
type maintenanceStatus struct {
	Passes []maintenancePass
}

type maintenancePass struct {
	StartedAt time.Time
	Trigger   string
	Steps     []maintenanceStep
}

type maintenanceStep struct {
	Step   string
	Status string
	Detail string
}

// --- framing and protobuf ---

var marshalOpts = proto.MarshalOptions{Deterministic: true}

// marshalValue frames m's deterministic encoding (map order fixed, so
// equal values are equal bytes).
func marshalValue(what string, m proto.Message) []byte {
	b := frame.AppendHeader(make([]byte, 0, frame.HeaderLen+marshalOpts.Size(m)))
	b, err := marshalOpts.MarshalAppend(b, m)
	if err != nil {
		// Only invalid UTF-8 in a string field gets here: a caller bug.
		panic(fmt.Sprintf("core: encoding %s value: %v (strings must be valid UTF-8)", what, err))
	}
	return b
}

// unmarshalValue unframes b and decodes its payload into m.
func unmarshalValue(what string, b []byte, m proto.Message) error {
	payload, err := frame.Unframe(b)
	if err != nil {
		return wrapf(Corruption, err, "decoding %s value", what)
	}
	if err := proto.Unmarshal(payload, m); err != nil {
		return wrapf(Corruption, err, "decoding %s value: bad protobuf", what)
	}
	return nil
}

// --- small conversions ---

func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func optU64[T ~uint64](p *T) *uint64 {
	if p == nil {
		return nil
	}
	v := uint64(*p)
	return &v
}

func optAs[T ~uint64](p *uint64) *T {
	if p == nil {
		return nil
	}
	v := T(*p)
	return &v
}

func u64s[T ~uint64](s []T) []uint64 {
	if len(s) == 0 {
		return nil
	}
	out := make([]uint64, len(s))
	for i, v := range s {
		out[i] = uint64(v)
	}
	return out
}

func fromU64s[T ~uint64](s []uint64) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

func decodeUUID(what string, b []byte) (uuid.UUID, error) {
	u, err := uuid.FromBytes(b)
	if err != nil {
		return uuid.UUID{}, wrapf(Corruption, err, "decoding %s value: uuid of %d bytes", what, len(b))
	}
	return u, nil
}

func versioned(begin uint64, end *uint64) Versioned {
	return Versioned{Begin: SnapshotID(begin), End: optAs[SnapshotID](end)}
}

func tagEntriesToPB(es []TagEntry) []*catalogpb.TagEntry {
	if len(es) == 0 {
		return nil
	}
	out := make([]*catalogpb.TagEntry, len(es))
	for i, e := range es {
		out[i] = &catalogpb.TagEntry{Key: e.Key, Value: e.Value, BeginSnapshot: uint64(e.Begin), EndSnapshot: optU64(e.End)}
	}
	return out
}

func tagEntriesFromPB(es []*catalogpb.TagEntry) []TagEntry {
	if len(es) == 0 {
		return nil
	}
	out := make([]TagEntry, len(es))
	for i, e := range es {
		out[i] = TagEntry{Versioned: versioned(e.GetBeginSnapshot(), e.EndSnapshot), Key: e.GetKey(), Value: e.GetValue()}
	}
	return out
}

// --- sys records ---

func encodeFormat(f *formatRecord) []byte {
	return marshalValue("format", &catalogpb.FormatValue{
		FormatVersion: f.Format, WriterVersion: f.WriterVersion, CommitLogBatchOrigin: f.Origin,
		CommitLogAdoptionPending: f.AdoptionPending,
	})
}

func decodeFormat(b []byte) (*formatRecord, error) {
	var m catalogpb.FormatValue
	if err := unmarshalValue("format", b, &m); err != nil {
		return nil, err
	}
	return &formatRecord{Format: m.GetFormatVersion(), WriterVersion: m.GetWriterVersion(), Origin: m.CommitLogBatchOrigin,
		AdoptionPending: m.GetCommitLogAdoptionPending()}, nil
}

func encodeHead(h *headRecord) []byte {
	m := &catalogpb.HeadValue{SnapshotId: uint64(h.SnapshotID), BatchSeq: h.BatchSeq}
	if c := h.Claim; c != nil {
		m.Claim = &catalogpb.HeadClaim{Committer: c.Committer[:], HoldMs: uint64(c.Hold / time.Millisecond)}
	}
	return marshalValue("head", m)
}

func decodeHead(b []byte) (*headRecord, error) {
	var m catalogpb.HeadValue
	if err := unmarshalValue("head", b, &m); err != nil {
		return nil, err
	}
	h := &headRecord{SnapshotID: SnapshotID(m.GetSnapshotId()), BatchSeq: m.GetBatchSeq()}
	// A claim is advisory (claim.go): one this build cannot read is no
	// claim, never an unreadable head.
	if c := m.GetClaim(); c != nil {
		if id, err := uuid.FromBytes(c.GetCommitter()); err == nil && id != uuid.Nil {
			h.Claim = &slotClaim{Committer: id, Hold: time.Duration(min(c.GetHoldMs(), uint64(maxClaimHold/time.Millisecond))) * time.Millisecond}
		}
	}
	return h, nil
}

func encodeMigration(r *migrationRecord) []byte {
	return marshalValue("migration", &catalogpb.MigrationValue{FromFormat: r.From, ToFormat: r.To, Cursor: r.Cursor, Unit: r.Unit})
}

func decodeMigration(b []byte) (*migrationRecord, error) {
	var m catalogpb.MigrationValue
	if err := unmarshalValue("migration", b, &m); err != nil {
		return nil, err
	}
	r := &migrationRecord{From: m.GetFromFormat(), To: m.GetToFormat(), Unit: m.GetUnit()}
	if len(m.Cursor) > 0 {
		r.Cursor = m.Cursor
	}
	return r, nil
}

func encodeMaintenanceStatus(s *maintenanceStatus) []byte {
	m := &catalogpb.MaintenanceStatusValue{}
	for _, p := range s.Passes {
		pp := &catalogpb.MaintenancePass{StartedAtMicros: toMicros(p.StartedAt), Trigger: p.Trigger}
		for _, st := range p.Steps {
			pp.Steps = append(pp.Steps, &catalogpb.MaintenanceStep{Step: st.Step, Status: st.Status, Detail: st.Detail})
		}
		m.Passes = append(m.Passes, pp)
	}
	return marshalValue("maintenance status", m)
}

func decodeMaintenanceStatus(b []byte) (*maintenanceStatus, error) {
	var m catalogpb.MaintenanceStatusValue
	if err := unmarshalValue("maintenance status", b, &m); err != nil {
		return nil, err
	}
	s := &maintenanceStatus{}
	for _, p := range m.GetPasses() {
		mp := maintenancePass{StartedAt: fromMicros(p.GetStartedAtMicros()), Trigger: p.GetTrigger()}
		for _, st := range p.GetSteps() {
			mp.Steps = append(mp.Steps, maintenanceStep{Step: st.GetStep(), Status: st.GetStatus(), Detail: st.GetDetail()})
		}
		s.Passes = append(s.Passes, mp)
	}
	return s, nil
}

// --- snapshots, schema versions, changelog ---

func encodeSnapshot(s *Snapshot) []byte {
	return marshalValue("snapshot", &catalogpb.SnapshotValue{
		SnapshotId:            uint64(s.ID),
		SnapshotTimeMicros:    toMicros(s.Time),
		SchemaVersion:         s.SchemaVersion,
		NextCatalogId:         s.NextCatalogID,
		NextFileId:            s.NextFileID,
		ChangesMade:           s.ChangesMade,
		Author:                s.Author,
		CommitMessage:         s.CommitMessage,
		CommitExtraInfo:       s.CommitExtraInfo,
		SchemaChangedTableIds: u64s(s.SchemaChangedTables),
		DeletedDataFileIds:    u64s(s.DeletedDataFiles),
	})
}

func decodeSnapshot(b []byte) (*Snapshot, error) {
	var m catalogpb.SnapshotValue
	if err := unmarshalValue("snapshot", b, &m); err != nil {
		return nil, err
	}
	return &Snapshot{
		ID:                  SnapshotID(m.GetSnapshotId()),
		Time:                fromMicros(m.GetSnapshotTimeMicros()),
		SchemaVersion:       m.GetSchemaVersion(),
		NextCatalogID:       m.GetNextCatalogId(),
		NextFileID:          m.GetNextFileId(),
		ChangesMade:         m.GetChangesMade(),
		Author:              m.Author,
		CommitMessage:       m.CommitMessage,
		CommitExtraInfo:     m.CommitExtraInfo,
		SchemaChangedTables: fromU64s[TableID](m.GetSchemaChangedTableIds()),
		DeletedDataFiles:    fromU64s[DataFileID](m.GetDeletedDataFileIds()),
	}, nil
}

// encodeSchemaVersion is a schema_version value: the table and begin
// snapshot are the key's.
func encodeSchemaVersion(schemaVersion uint64) []byte {
	return marshalValue("schema version", &catalogpb.SchemaVersionValue{SchemaVersion: schemaVersion})
}

func decodeSchemaVersion(b []byte) (uint64, error) {
	var m catalogpb.SchemaVersionValue
	if err := unmarshalValue("schema version", b, &m); err != nil {
		return 0, err
	}
	return m.GetSchemaVersion(), nil
}

// encodeChangelog is a changelog value: the encoded current keys a
// snapshot's batch wrote.
func encodeChangelog(ks [][]byte) []byte {
	return marshalValue("changelog", &catalogpb.ChangelogValue{Keys: ks})
}

func decodeChangelog(b []byte) ([][]byte, error) {
	var m catalogpb.ChangelogValue
	if err := unmarshalValue("changelog", b, &m); err != nil {
		return nil, err
	}
	return m.GetKeys(), nil
}

// --- entities ---

func encodeSchema(s *Schema) []byte {
	return marshalValue("schema", &catalogpb.SchemaValue{
		SchemaId: uint64(s.ID), BeginSnapshot: uint64(s.Begin), EndSnapshot: optU64(s.End),
		Uuid: s.UUID[:], Name: s.Name, Path: s.Path, PathIsRelative: s.PathIsRelative,
	})
}

func decodeSchema(b []byte) (*Schema, error) {
	var m catalogpb.SchemaValue
	if err := unmarshalValue("schema", b, &m); err != nil {
		return nil, err
	}
	u, err := decodeUUID("schema", m.GetUuid())
	if err != nil {
		return nil, err
	}
	return &Schema{
		ID: SchemaID(m.GetSchemaId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		UUID: u, Name: m.GetName(), Path: m.GetPath(), PathIsRelative: m.GetPathIsRelative(),
	}, nil
}

func encodeTable(t *Table) []byte {
	return marshalValue("table", &catalogpb.TableValue{
		TableId: uint64(t.ID), BeginSnapshot: uint64(t.Begin), EndSnapshot: optU64(t.End),
		Uuid: t.UUID[:], SchemaId: uint64(t.SchemaID), Name: t.Name, Path: t.Path, PathIsRelative: t.PathIsRelative,
	})
}

func decodeTable(b []byte) (*Table, error) {
	var m catalogpb.TableValue
	if err := unmarshalValue("table", b, &m); err != nil {
		return nil, err
	}
	u, err := decodeUUID("table", m.GetUuid())
	if err != nil {
		return nil, err
	}
	return &Table{
		ID: TableID(m.GetTableId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		UUID: u, SchemaID: SchemaID(m.GetSchemaId()), Name: m.GetName(), Path: m.GetPath(), PathIsRelative: m.GetPathIsRelative(),
	}, nil
}

func encodeView(v *View) []byte {
	return marshalValue("view", &catalogpb.ViewValue{
		ViewId: uint64(v.ID), BeginSnapshot: uint64(v.Begin), EndSnapshot: optU64(v.End),
		Uuid: v.UUID[:], SchemaId: uint64(v.SchemaID), Name: v.Name, Dialect: v.Dialect, Sql: v.SQL, ColumnAliases: v.ColumnAliases,
	})
}

func decodeView(b []byte) (*View, error) {
	var m catalogpb.ViewValue
	if err := unmarshalValue("view", b, &m); err != nil {
		return nil, err
	}
	u, err := decodeUUID("view", m.GetUuid())
	if err != nil {
		return nil, err
	}
	return &View{
		ID: ViewID(m.GetViewId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		UUID: u, SchemaID: SchemaID(m.GetSchemaId()), Name: m.GetName(), Dialect: m.GetDialect(), SQL: m.GetSql(), ColumnAliases: m.GetColumnAliases(),
	}, nil
}

func encodeColumn(c *Column) []byte {
	return marshalValue("column", &catalogpb.ColumnValue{
		TableId: uint64(c.TableID), ColumnId: uint64(c.ID), BeginSnapshot: uint64(c.Begin), EndSnapshot: optU64(c.End),
		ColumnOrder: c.Order, Name: c.Name, Type: c.Type,
		InitialDefault: c.InitialDefault, DefaultValue: c.DefaultValue, NullsAllowed: c.NullsAllowed,
		ParentColumn: optU64(c.Parent), DefaultValueType: c.DefaultValueType, DefaultValueDialect: c.DefaultValueDialect,
		Tags: tagEntriesToPB(c.Tags),
	})
}

func decodeColumn(b []byte) (*Column, error) {
	var m catalogpb.ColumnValue
	if err := unmarshalValue("column", b, &m); err != nil {
		return nil, err
	}
	return &Column{
		TableID: TableID(m.GetTableId()), ID: ColumnID(m.GetColumnId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		Order: m.GetColumnOrder(), Name: m.GetName(), Type: m.GetType(),
		InitialDefault: m.InitialDefault, DefaultValue: m.DefaultValue, NullsAllowed: m.GetNullsAllowed(),
		Parent: optAs[ColumnID](m.ParentColumn), DefaultValueType: m.DefaultValueType, DefaultValueDialect: m.DefaultValueDialect,
		Tags: tagEntriesFromPB(m.GetTags()),
	}, nil
}

func encodeDataFile(f *DataFile) []byte {
	m := &catalogpb.DataFileValue{
		TableId: uint64(f.TableID), DataFileId: uint64(f.ID), BeginSnapshot: uint64(f.Begin), EndSnapshot: optU64(f.End),
		FileOrder: valueOf(f.FileOrder), Path: f.Path, PathIsRelative: f.PathIsRelative, FileFormat: f.Format,
		RecordCount: f.RecordCount, FileSizeBytes: f.FileSizeBytes, FooterSize: valueOf(f.FooterSize), RowIdStart: valueOf(f.RowIDStart),
		PartitionId: optU64(f.PartitionID), EncryptionKey: f.EncryptionKey, PartialFileInfo: f.PartialFileInfo,
		MappingId: optU64(f.MappingID), FileOrderNull: f.FileOrder == nil, FooterSizeNull: f.FooterSize == nil, RowIdStartNull: f.RowIDStart == nil,
		PartialMax: optU64(f.PartialMax),
	}
	for _, pv := range f.PartitionValues {
		m.PartitionValues = append(m.PartitionValues, &catalogpb.FilePartitionValue{KeyIndex: pv.KeyIndex, Value: pv.Value})
	}
	return marshalValue("data file", m)
}

func decodeDataFile(b []byte) (*DataFile, error) {
	var m catalogpb.DataFileValue
	if err := unmarshalValue("data file", b, &m); err != nil {
		return nil, err
	}
	f := &DataFile{
		TableID: TableID(m.GetTableId()), ID: DataFileID(m.GetDataFileId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		FileOrder: nullable(m.GetFileOrder(), m.GetFileOrderNull()), Path: m.GetPath(), PathIsRelative: m.GetPathIsRelative(), Format: m.GetFileFormat(),
		RecordCount: m.GetRecordCount(), FileSizeBytes: m.GetFileSizeBytes(), FooterSize: nullable(m.GetFooterSize(), m.GetFooterSizeNull()),
		RowIDStart:  nullable(m.GetRowIdStart(), m.GetRowIdStartNull()),
		PartitionID: optAs[PartitionID](m.PartitionId), EncryptionKey: m.EncryptionKey, PartialFileInfo: m.PartialFileInfo,
		MappingID: optAs[MappingID](m.MappingId), PartialMax: optAs[uint64](m.PartialMax),
	}
	for _, pv := range m.GetPartitionValues() {
		f.PartitionValues = append(f.PartitionValues, PartitionValue{KeyIndex: pv.GetKeyIndex(), Value: pv.GetValue()})
	}
	return f, nil
}

func encodeDeleteFile(d *DeleteFile) []byte {
	return marshalValue("delete file", &catalogpb.DeleteFileValue{
		TableId: uint64(d.TableID), DeleteFileId: uint64(d.ID), BeginSnapshot: uint64(d.Begin), EndSnapshot: optU64(d.End),
		DataFileId: uint64(d.DataFileID), Path: d.Path, PathIsRelative: d.PathIsRelative, FileFormat: d.Format,
		DeleteCount: d.DeleteCount, FileSizeBytes: d.FileSizeBytes, FooterSize: valueOf(d.FooterSize), EncryptionKey: d.EncryptionKey,
		FooterSizeNull: d.FooterSize == nil, PartialMax: optU64(d.PartialMax),
	})
}

// valueOf and nullable carry a nullable number in a proto3 field and a
// "null" flag (a flag, not field presence, so that values written before the
// flag existed, 0 among them, read back as they were).
func valueOf(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func nullable(v uint64, null bool) *uint64 {
	if null {
		return nil
	}
	return &v
}

func decodeDeleteFile(b []byte) (*DeleteFile, error) {
	var m catalogpb.DeleteFileValue
	if err := unmarshalValue("delete file", b, &m); err != nil {
		return nil, err
	}
	return &DeleteFile{
		TableID: TableID(m.GetTableId()), ID: DeleteFileID(m.GetDeleteFileId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot),
		DataFileID: DataFileID(m.GetDataFileId()), Path: m.GetPath(), PathIsRelative: m.GetPathIsRelative(), Format: m.GetFileFormat(),
		DeleteCount: m.GetDeleteCount(), FileSizeBytes: m.GetFileSizeBytes(), FooterSize: nullable(m.GetFooterSize(), m.GetFooterSizeNull()), EncryptionKey: m.EncryptionKey,
		PartialMax: optAs[uint64](m.PartialMax),
	}, nil
}

func encodeTableStats(s *TableStats) []byte {
	return marshalValue("table stats", &catalogpb.TableStatsValue{
		TableId: uint64(s.TableID), RecordCount: s.RecordCount, NextRowId: s.NextRowID, FileSizeBytes: s.FileSizeBytes,
	})
}

func decodeTableStats(b []byte) (*TableStats, error) {
	var m catalogpb.TableStatsValue
	if err := unmarshalValue("table stats", b, &m); err != nil {
		return nil, err
	}
	return &TableStats{
		TableID: TableID(m.GetTableId()), RecordCount: m.GetRecordCount(), NextRowID: m.GetNextRowId(), FileSizeBytes: m.GetFileSizeBytes(),
	}, nil
}

func encodeTableColumnStats(s *TableColumnStats) []byte {
	return marshalValue("table column stats", &catalogpb.TableColumnStatsValue{
		TableId: uint64(s.TableID), ColumnId: uint64(s.ColumnID), ContainsNull: s.ContainsNull, ContainsNan: s.ContainsNaN,
		MinValue: s.MinValue, MaxValue: s.MaxValue, ExtraStats: s.ExtraStats,
	})
}

func decodeTableColumnStats(b []byte) (*TableColumnStats, error) {
	var m catalogpb.TableColumnStatsValue
	if err := unmarshalValue("table column stats", b, &m); err != nil {
		return nil, err
	}
	return &TableColumnStats{
		TableID: TableID(m.GetTableId()), ColumnID: ColumnID(m.GetColumnId()), ContainsNull: m.ContainsNull, ContainsNaN: m.ContainsNan,
		MinValue: m.MinValue, MaxValue: m.MaxValue, ExtraStats: m.ExtraStats,
	}, nil
}

func encodeFileColumnStats(s *FileColumnStats) []byte {
	return marshalValue("file column stats", &catalogpb.FileColumnStatsValue{
		TableId: uint64(s.TableID), DataFileId: uint64(s.DataFileID), ColumnId: uint64(s.ColumnID),
		ColumnSizeBytes: s.ColumnSizeBytes, ValueCount: s.ValueCount, NullCount: s.NullCount,
		MinValue: s.MinValue, MaxValue: s.MaxValue, ContainsNan: s.ContainsNaN, ExtraStats: s.ExtraStats,
	})
}

func decodeFileColumnStats(b []byte) (*FileColumnStats, error) {
	var m catalogpb.FileColumnStatsValue
	if err := unmarshalValue("file column stats", b, &m); err != nil {
		return nil, err
	}
	return &FileColumnStats{
		TableID: TableID(m.GetTableId()), DataFileID: DataFileID(m.GetDataFileId()), ColumnID: ColumnID(m.GetColumnId()),
		ColumnSizeBytes: m.ColumnSizeBytes, ValueCount: m.ValueCount, NullCount: m.NullCount,
		MinValue: m.MinValue, MaxValue: m.MaxValue, ContainsNaN: m.ContainsNan, ExtraStats: m.ExtraStats,
	}, nil
}

func encodeFileVariantStats(s *FileVariantStats) []byte {
	m := &catalogpb.FileVariantStatsValue{TableId: uint64(s.TableID), DataFileId: uint64(s.DataFileID), ColumnId: uint64(s.ColumnID)}
	for _, p := range s.Paths {
		m.Paths = append(m.Paths, &catalogpb.FileVariantStatsValue_Path{VariantPath: p.VariantPath, ShreddedType: p.ShreddedType,
			ColumnSizeBytes: p.ColumnSizeBytes, ValueCount: p.ValueCount, NullCount: p.NullCount,
			MinValue: p.MinValue, MaxValue: p.MaxValue, ContainsNan: p.ContainsNaN, ExtraStats: p.ExtraStats})
	}
	return marshalValue("file variant stats", m)
}

func decodeFileVariantStats(b []byte) (*FileVariantStats, error) {
	var m catalogpb.FileVariantStatsValue
	if err := unmarshalValue("file variant stats", b, &m); err != nil {
		return nil, err
	}
	s := &FileVariantStats{TableID: TableID(m.GetTableId()), DataFileID: DataFileID(m.GetDataFileId()), ColumnID: ColumnID(m.GetColumnId())}
	for _, p := range m.GetPaths() {
		s.Paths = append(s.Paths, VariantPathStats{VariantPath: p.GetVariantPath(), ShreddedType: p.ShreddedType,
			ColumnSizeBytes: p.ColumnSizeBytes, ValueCount: p.ValueCount, NullCount: p.NullCount,
			MinValue: p.MinValue, MaxValue: p.MaxValue, ContainsNaN: p.ContainsNan, ExtraStats: p.ExtraStats})
	}
	return s, nil
}

func encodeTags(t *Tags) []byte {
	return marshalValue("tags", &catalogpb.TagsValue{ObjectId: t.ObjectID, Entries: tagEntriesToPB(t.Entries)})
}

func decodeTags(b []byte) (*Tags, error) {
	var m catalogpb.TagsValue
	if err := unmarshalValue("tags", b, &m); err != nil {
		return nil, err
	}
	return &Tags{ObjectID: m.GetObjectId(), Entries: tagEntriesFromPB(m.GetEntries())}, nil
}

func encodeOptions(o *Options) []byte {
	return marshalValue("options", &catalogpb.OptionsValue{ScopeKind: uint64(o.Scope), ScopeId: o.ScopeID, Values: o.Values})
}

// decodeOptions always returns a non-nil Values map.
func decodeOptions(b []byte) (*Options, error) {
	var m catalogpb.OptionsValue
	if err := unmarshalValue("options", b, &m); err != nil {
		return nil, err
	}
	if m.GetScopeKind() > 0xff {
		return nil, errorf(Corruption, "decoding options value: scope kind %d out of range", m.GetScopeKind())
	}
	vals := m.GetValues()
	if vals == nil {
		vals = map[string]string{}
	}
	return &Options{Scope: OptionScope(m.GetScopeKind()), ScopeID: m.GetScopeId(), Values: vals}, nil
}

func encodePartition(p *Partition) []byte {
	m := &catalogpb.PartitionValue{
		TableId: uint64(p.TableID), PartitionId: uint64(p.ID), BeginSnapshot: uint64(p.Begin), EndSnapshot: optU64(p.End),
	}
	for _, c := range p.Columns {
		m.Columns = append(m.Columns, &catalogpb.PartitionColumn{KeyIndex: c.KeyIndex, ColumnId: uint64(c.ColumnID), Transform: c.Transform})
	}
	return marshalValue("partition", m)
}

func decodePartition(b []byte) (*Partition, error) {
	var m catalogpb.PartitionValue
	if err := unmarshalValue("partition", b, &m); err != nil {
		return nil, err
	}
	p := &Partition{TableID: TableID(m.GetTableId()), ID: PartitionID(m.GetPartitionId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot)}
	for _, c := range m.GetColumns() {
		p.Columns = append(p.Columns, PartitionColumn{KeyIndex: c.GetKeyIndex(), ColumnID: ColumnID(c.GetColumnId()), Transform: c.GetTransform()})
	}
	return p, nil
}

func encodeSort(s *Sort) []byte {
	m := &catalogpb.SortValue{
		TableId: uint64(s.TableID), SortId: uint64(s.ID), BeginSnapshot: uint64(s.Begin), EndSnapshot: optU64(s.End),
	}
	for _, e := range s.Expressions {
		m.Expressions = append(m.Expressions, &catalogpb.SortExpression{
			ExpressionIndex: e.Index, Expression: e.Expression, Dialect: e.Dialect, Direction: e.Direction, NullOrder: e.NullOrder,
		})
	}
	return marshalValue("sort", m)
}

func decodeSort(b []byte) (*Sort, error) {
	var m catalogpb.SortValue
	if err := unmarshalValue("sort", b, &m); err != nil {
		return nil, err
	}
	s := &Sort{TableID: TableID(m.GetTableId()), ID: SortID(m.GetSortId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot)}
	for _, e := range m.GetExpressions() {
		s.Expressions = append(s.Expressions, SortExpression{
			Index: e.GetExpressionIndex(), Expression: e.GetExpression(), Dialect: e.GetDialect(), Direction: e.GetDirection(), NullOrder: e.GetNullOrder(),
		})
	}
	return s, nil
}

func encodeMacro(x *Macro) []byte {
	m := &catalogpb.MacroValue{
		MacroId: uint64(x.ID), BeginSnapshot: uint64(x.Begin), EndSnapshot: optU64(x.End), SchemaId: uint64(x.SchemaID), Name: x.Name,
	}
	for _, im := range x.Impls {
		pi := &catalogpb.MacroImpl{ImplId: im.ID, Dialect: im.Dialect, Sql: im.SQL, Type: im.Type}
		for _, p := range im.Parameters {
			pi.Parameters = append(pi.Parameters, &catalogpb.MacroParameter{
				ColumnId: p.ColumnID, Name: p.Name, Type: p.Type, DefaultValue: p.DefaultValue, DefaultValueType: p.DefaultValueType,
			})
		}
		m.Impls = append(m.Impls, pi)
	}
	return marshalValue("macro", m)
}

func decodeMacro(b []byte) (*Macro, error) {
	var m catalogpb.MacroValue
	if err := unmarshalValue("macro", b, &m); err != nil {
		return nil, err
	}
	x := &Macro{ID: MacroID(m.GetMacroId()), Versioned: versioned(m.GetBeginSnapshot(), m.EndSnapshot), SchemaID: SchemaID(m.GetSchemaId()), Name: m.GetName()}
	for _, pi := range m.GetImpls() {
		im := MacroImpl{ID: pi.GetImplId(), Dialect: pi.GetDialect(), SQL: pi.GetSql(), Type: pi.GetType()}
		for _, p := range pi.GetParameters() {
			im.Parameters = append(im.Parameters, MacroParameter{
				ColumnID: p.GetColumnId(), Name: p.GetName(), Type: p.GetType(), DefaultValue: p.DefaultValue, DefaultValueType: p.DefaultValueType,
			})
		}
		x.Impls = append(x.Impls, im)
	}
	return x, nil
}

func encodeMapping(mp *Mapping) []byte {
	m := &catalogpb.MappingValue{TableId: uint64(mp.TableID), MappingId: uint64(mp.ID), Type: mp.Type}
	for _, n := range mp.Names {
		m.Names = append(m.Names, &catalogpb.NameMapping{
			ColumnId: uint64(n.ColumnID), SourceName: n.SourceName, TargetFieldId: n.TargetFieldID,
			ParentColumn: optU64(n.ParentColumn), IsPartition: n.IsPartition,
		})
	}
	return marshalValue("mapping", m)
}

func decodeMapping(b []byte) (*Mapping, error) {
	var m catalogpb.MappingValue
	if err := unmarshalValue("mapping", b, &m); err != nil {
		return nil, err
	}
	mp := &Mapping{TableID: TableID(m.GetTableId()), ID: MappingID(m.GetMappingId()), Type: m.GetType()}
	for _, n := range m.GetNames() {
		mp.Names = append(mp.Names, NameMapping{
			ColumnID: ColumnID(n.GetColumnId()), SourceName: n.GetSourceName(), TargetFieldID: n.GetTargetFieldId(),
			ParentColumn: optAs[ColumnID](n.ParentColumn), IsPartition: n.GetIsPartition(),
		})
	}
	return mp, nil
}

func encodeGcFile(g *GcFile) []byte {
	return marshalValue("gc file", &catalogpb.GcFileValue{
		DataFileId: uint64(g.DataFileID), Path: g.Path, PathIsRelative: g.PathIsRelative, ScheduleStartMicros: toMicros(g.ScheduleStart),
	})
}

func decodeGcFile(b []byte) (*GcFile, error) {
	var m catalogpb.GcFileValue
	if err := unmarshalValue("gc file", b, &m); err != nil {
		return nil, err
	}
	return &GcFile{
		DataFileID: DataFileID(m.GetDataFileId()), Path: m.GetPath(), PathIsRelative: m.GetPathIsRelative(),
		ScheduleStart: fromMicros(m.GetScheduleStartMicros()),
	}, nil
}

// --- indexes ---

func encodeNameDir(entries []nameDirEntry) []byte {
	m := &catalogpb.NameDirValue{}
	for _, e := range entries {
		m.Entries = append(m.Entries, &catalogpb.NameDirValue_Entry{Name: e.Name, Id: e.ID})
	}
	return marshalValue("name directory", m)
}

func decodeNameDir(b []byte) ([]nameDirEntry, error) {
	var m catalogpb.NameDirValue
	if err := unmarshalValue("name directory", b, &m); err != nil {
		return nil, err
	}
	var out []nameDirEntry
	for _, e := range m.GetEntries() {
		out = append(out, nameDirEntry{Name: e.GetName(), ID: e.GetId()})
	}
	return out, nil
}

// encodeDeleteTarget is the (empty) value of a delete-target entry.
func encodeDeleteTarget() []byte {
	return marshalValue("delete target", &catalogpb.DeleteTargetValue{})
}

func decodeDeleteTarget(b []byte) error {
	return unmarshalValue("delete target", b, &catalogpb.DeleteTargetValue{})
}

// --- inline ---

// encodeInlineChunk is the value of c's insert-chunk key.
func encodeInlineChunk(c *chunkState) []byte { return encodeInlineRows(c.rows) }

// encodeInlineRows stores each row's id, values and end when it has one.
// The begin snapshot (and a flush's end) are the chunk key's; a row
// without an end in the value takes the end of its inline-delete record,
// if any (see InlinedRow.endAt).
func encodeInlineRows(rows []InlinedRow) []byte {
	m := &catalogpb.InlineChunk{Rows: make([]*catalogpb.InlineRow, len(rows))}
	for i, r := range rows {
		pr := &catalogpb.InlineRow{RowId: r.RowID, Values: make([]*catalogpb.Cell, len(r.Values))}
		if r.End != nil {
			pr.EndSnapshot = ptrTo(uint64(*r.End))
		}
		for j, v := range r.Values {
			pr.Values[j] = cellToPB(v)
		}
		m.Rows[i] = pr
	}
	return marshalValue("inline chunk", m)
}

// decodeInlineChunk returns the chunk's rows with RowID, Values and the
// ends the value holds set; the caller sets their begins from the key and
// the other ends from the inline-delete records.
func decodeInlineChunk(b []byte) ([]InlinedRow, error) {
	var m catalogpb.InlineChunk
	if err := unmarshalValue("inline chunk", b, &m); err != nil {
		return nil, err
	}
	if len(m.GetRows()) == 0 {
		return nil, nil
	}
	out := make([]InlinedRow, len(m.GetRows()))
	for i, r := range m.GetRows() {
		out[i].RowID = r.GetRowId()
		if r.EndSnapshot != nil {
			out[i].End = ptrTo(SnapshotID(r.GetEndSnapshot()))
		}
		if len(r.GetValues()) == 0 {
			continue
		}
		out[i].Values = make([]Value, len(r.GetValues()))
		for j, c := range r.GetValues() {
			v, ok := cellFromPB(c)
			if !ok {
				return nil, errorf(Corruption, "decoding inline chunk value: row %d column %d: cell with no known value", r.GetRowId(), j)
			}
			out[i].Values[j] = v
		}
	}
	return out, nil
}

// cellToPB encodes a cell. A Value must have at most one field set; should
// several be, the first of Int, Uint, Float, Bool, String, Bytes wins.
func cellToPB(v Value) *catalogpb.Cell {
	switch {
	case v.Int != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_I64{I64: *v.Int}}
	case v.Uint != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_U64{U64: *v.Uint}}
	case v.Float != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_F64{F64: *v.Float}}
	case v.Bool != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_B{B: *v.Bool}}
	case v.String != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_S{S: *v.String}}
	case v.Bytes != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_Raw{Raw: v.Bytes}}
	case v.DuckDB != nil:
		return &catalogpb.Cell{Value: &catalogpb.Cell_Duckdb{Duckdb: v.DuckDB}}
	}
	return &catalogpb.Cell{Value: &catalogpb.Cell_IsNull{IsNull: true}}
}

// cellFromPB decodes a cell; ok is false for a cell with no value set (or
// one only a newer writer knows).
func cellFromPB(c *catalogpb.Cell) (v Value, ok bool) {
	switch x := c.GetValue().(type) {
	case *catalogpb.Cell_IsNull:
		return Value{}, true
	case *catalogpb.Cell_I64:
		return Value{Int: &x.I64}, true
	case *catalogpb.Cell_U64:
		return Value{Uint: &x.U64}, true
	case *catalogpb.Cell_F64:
		return Value{Float: &x.F64}, true
	case *catalogpb.Cell_B:
		return Value{Bool: &x.B}, true
	case *catalogpb.Cell_S:
		return Value{String: &x.S}, true
	case *catalogpb.Cell_Raw:
		if x.Raw == nil {
			x.Raw = []byte{} // an empty blob, not NULL
		}
		return Value{Bytes: x.Raw}, true
	case *catalogpb.Cell_Duckdb:
		if x.Duckdb == nil {
			x.Duckdb = []byte{}
		}
		return Value{DuckDB: x.Duckdb}, true
	}
	return Value{}, false
}

// encodeInlinedTable and decodeInlinedTable are InlinedTableValue.
func encodeInlinedTable(t *InlinedTable) []byte {
	m := &catalogpb.InlinedTableValue{TableId: uint64(t.TableID), SchemaVersion: t.SchemaVersion, TableName: t.Name, Listed: t.Listed}
	for _, c := range t.Columns {
		m.Columns = append(m.Columns, &catalogpb.InlinedTableValue_Column{Name: c.Name, Type: c.Type})
	}
	return marshalValue("inlined table", m)
}

func decodeInlinedTable(b []byte) (*InlinedTable, error) {
	var m catalogpb.InlinedTableValue
	if err := unmarshalValue("inlined table", b, &m); err != nil {
		return nil, err
	}
	t := &InlinedTable{TableID: TableID(m.GetTableId()), SchemaVersion: m.GetSchemaVersion(), Name: m.GetTableName(), Listed: m.GetListed()}
	for _, c := range m.GetColumns() {
		t.Columns = append(t.Columns, InlinedColumn{Name: c.GetName(), Type: c.GetType()})
	}
	return t, nil
}

// encodeInlinedDeleteTable and decodeInlinedDeleteTable are
// InlinedDeleteTableValue.
func encodeInlinedDeleteTable(t *InlinedDeleteTable) []byte {
	return marshalValue("inlined delete table", &catalogpb.InlinedDeleteTableValue{TableId: uint64(t.TableID), TableName: t.Name})
}

func decodeInlinedDeleteTable(b []byte) (*InlinedDeleteTable, error) {
	var m catalogpb.InlinedDeleteTableValue
	if err := unmarshalValue("inlined delete table", b, &m); err != nil {
		return nil, err
	}
	return &InlinedDeleteTable{TableID: TableID(m.GetTableId()), Name: m.GetTableName()}, nil
}

// encodeInlinedFileDelete and decodeInlinedFileDelete are
// InlinedFileDeleteValue.
func encodeInlinedFileDelete(d *InlinedFileDelete) []byte {
	return marshalValue("inlined file delete", &catalogpb.InlinedFileDeleteValue{TableId: uint64(d.TableID),
		DataFileId: uint64(d.DataFileID), RowId: d.RowID, BeginSnapshot: uint64(d.Begin)})
}

func decodeInlinedFileDelete(b []byte) (*InlinedFileDelete, error) {
	var m catalogpb.InlinedFileDeleteValue
	if err := unmarshalValue("inlined file delete", b, &m); err != nil {
		return nil, err
	}
	return &InlinedFileDelete{TableID: TableID(m.GetTableId()), DataFileID: DataFileID(m.GetDataFileId()),
		RowID: m.GetRowId(), Begin: SnapshotID(m.GetBeginSnapshot())}, nil
}

// encodeInlineDelete is an inline delete's value: the snapshot that
// deleted the row.
func encodeInlineDelete(end SnapshotID) []byte {
	return marshalValue("inline delete", &catalogpb.InlineDeleteValue{EndSnapshot: uint64(end)})
}

func decodeInlineDelete(b []byte) (SnapshotID, error) {
	var m catalogpb.InlineDeleteValue
	if err := unmarshalValue("inline delete", b, &m); err != nil {
		return 0, err
	}
	return SnapshotID(m.GetEndSnapshot()), nil
}
