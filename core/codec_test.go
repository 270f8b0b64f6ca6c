package core

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/moraine-go/moraine/core/internal/catalogpb"
	"github.com/moraine-go/moraine/core/internal/frame"
)

// ---- random model values -------------------------------------------------

type gen struct{ r *rand.Rand }

func (g gen) u64() uint64 {
	switch g.r.IntN(5) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return uint64(g.r.IntN(300))
	}
	return g.r.Uint64()
}

func (g gen) str() string {
	alphabets := []string{"abc_xyz", "日本語éü", "\"',:/\\ \t\n", "\x00\x7f"}
	n := g.r.IntN(12)
	if n == 0 {
		return ""
	}
	runes := []rune(alphabets[g.r.IntN(len(alphabets))] + alphabets[g.r.IntN(len(alphabets))])
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteRune(runes[g.r.IntN(len(runes))])
	}
	return sb.String()
}

func (g gen) bool() bool { return g.r.IntN(2) == 0 }

// The optionals are nil a third of the time and point to the zero value
// another sixth, so nil-vs-zero mistakes show.
func (g gen) optStr() *string {
	switch g.r.IntN(6) {
	case 0, 1:
		return nil
	case 2:
		s := ""
		return &s
	}
	s := g.str()
	return &s
}

func optNum[T ~uint64](g gen) *T {
	switch g.r.IntN(6) {
	case 0, 1:
		return nil
	case 2:
		var z T
		return &z
	}
	v := T(g.u64())
	return &v
}

func (g gen) optBool() *bool {
	if g.r.IntN(3) == 0 {
		return nil
	}
	b := g.bool()
	return &b
}

// time returns an arbitrary instant, sometimes with sub-microsecond
// precision or a non-UTC location (normalized by normTime).
func (g gen) time() time.Time {
	us := g.r.Int64N(1<<52) - 1<<51
	if g.r.IntN(8) == 0 {
		us = 0
	}
	t := time.UnixMicro(us)
	if g.bool() {
		t = t.Add(time.Duration(g.r.IntN(1000)))
	}
	if g.bool() {
		t = t.In(time.FixedZone("x", 3600*(g.r.IntN(25)-12)))
	}
	return t
}

func (g gen) uuid() uuid.UUID {
	var u uuid.UUID
	if g.r.IntN(5) != 0 {
		for i := range u {
			u[i] = byte(g.r.Uint32())
		}
	}
	return u
}

func (g gen) versioned() Versioned {
	return Versioned{Begin: SnapshotID(g.u64()), End: optNum[SnapshotID](g)}
}

// n is a slice length: 0 often, sometimes a non-nil empty slice is asked
// for by the callers (normalized to nil).
func (g gen) n() int { return []int{0, 0, 1, 2, 5}[g.r.IntN(5)] }

func genSlice[T any](g gen, f func() T) []T {
	n := g.n()
	if n == 0 {
		if g.bool() {
			return []T{}
		}
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

func (g gen) tagEntries() []TagEntry {
	return genSlice(g, func() TagEntry { return TagEntry{Versioned: g.versioned(), Key: g.str(), Value: g.str()} })
}

func (g gen) snapshot() *Snapshot {
	return &Snapshot{
		ID: SnapshotID(g.u64()), Time: g.time(), SchemaVersion: g.u64(), NextCatalogID: g.u64(), NextFileID: g.u64(),
		ChangesMade: g.str(), Author: g.optStr(), CommitMessage: g.optStr(), CommitExtraInfo: g.optStr(),
		SchemaChangedTables: genSlice(g, func() TableID { return TableID(g.u64()) }),
		DeletedDataFiles:    genSlice(g, func() DataFileID { return DataFileID(g.u64()) }),
	}
}

func (g gen) schema() *Schema {
	return &Schema{ID: SchemaID(g.u64()), Versioned: g.versioned(), UUID: g.uuid(), Name: g.str(), Path: g.str(), PathIsRelative: g.bool()}
}

func (g gen) table() *Table {
	return &Table{ID: TableID(g.u64()), Versioned: g.versioned(), UUID: g.uuid(), SchemaID: SchemaID(g.u64()),
		Name: g.str(), Path: g.str(), PathIsRelative: g.bool()}
}

func (g gen) view() *View {
	return &View{ID: ViewID(g.u64()), Versioned: g.versioned(), UUID: g.uuid(), SchemaID: SchemaID(g.u64()),
		Name: g.str(), Dialect: g.str(), SQL: g.str(), ColumnAliases: g.str()}
}

func (g gen) column() *Column {
	return &Column{TableID: TableID(g.u64()), ID: ColumnID(g.u64()), Versioned: g.versioned(), Order: g.u64(),
		Name: g.str(), Type: g.str(), InitialDefault: g.optStr(), DefaultValue: g.optStr(), NullsAllowed: g.bool(),
		Parent: optNum[ColumnID](g), DefaultValueType: g.optStr(), DefaultValueDialect: g.optStr(), Tags: g.tagEntries()}
}

func (g gen) dataFile() *DataFile {
	return &DataFile{TableID: TableID(g.u64()), ID: DataFileID(g.u64()), Versioned: g.versioned(), FileOrder: optNum[uint64](g),
		Path: g.str(), PathIsRelative: g.bool(), Format: g.str(), RecordCount: g.u64(), FileSizeBytes: g.u64(),
		FooterSize: optNum[uint64](g), RowIDStart: optNum[uint64](g), PartitionID: optNum[PartitionID](g), EncryptionKey: g.optStr(),
		PartialFileInfo: g.optStr(), PartialMax: optNum[uint64](g), MappingID: optNum[MappingID](g),
		PartitionValues: genSlice(g, func() PartitionValue { return PartitionValue{KeyIndex: g.u64(), Value: g.str()} })}
}

func (g gen) deleteFile() *DeleteFile {
	return &DeleteFile{TableID: TableID(g.u64()), ID: DeleteFileID(g.u64()), Versioned: g.versioned(),
		DataFileID: DataFileID(g.u64()), Path: g.str(), PathIsRelative: g.bool(), Format: g.str(), DeleteCount: g.u64(),
		FileSizeBytes: g.u64(), FooterSize: optNum[uint64](g), EncryptionKey: g.optStr(), PartialMax: optNum[uint64](g)}
}

func (g gen) tableStats() *TableStats {
	return &TableStats{TableID: TableID(g.u64()), RecordCount: g.u64(), NextRowID: g.u64(), FileSizeBytes: g.u64()}
}

func (g gen) tableColumnStats() *TableColumnStats {
	return &TableColumnStats{TableID: TableID(g.u64()), ColumnID: ColumnID(g.u64()), ContainsNull: g.optBool(),
		ContainsNaN: g.optBool(), MinValue: g.optStr(), MaxValue: g.optStr(), ExtraStats: g.optStr()}
}

func (g gen) fileColumnStats() *FileColumnStats {
	return &FileColumnStats{TableID: TableID(g.u64()), DataFileID: DataFileID(g.u64()), ColumnID: ColumnID(g.u64()),
		ColumnSizeBytes: optNum[uint64](g), ValueCount: optNum[uint64](g), NullCount: optNum[uint64](g),
		MinValue: g.optStr(), MaxValue: g.optStr(), ContainsNaN: g.optBool(), ExtraStats: g.optStr()}
}

func (g gen) tags() *Tags { return &Tags{ObjectID: g.u64(), Entries: g.tagEntries()} }

func (g gen) options() *Options {
	o := &Options{Scope: OptionScope(g.r.IntN(256)), ScopeID: g.u64()}
	switch g.r.IntN(3) {
	case 0: // nil map
	case 1:
		o.Values = map[string]string{}
	default:
		o.Values = map[string]string{}
		for i := 0; i < 1+g.r.IntN(4); i++ {
			o.Values[g.str()] = g.str()
		}
	}
	return o
}

func (g gen) partition() *Partition {
	return &Partition{TableID: TableID(g.u64()), ID: PartitionID(g.u64()), Versioned: g.versioned(),
		Columns: genSlice(g, func() PartitionColumn {
			return PartitionColumn{KeyIndex: g.u64(), ColumnID: ColumnID(g.u64()), Transform: g.str()}
		})}
}

func (g gen) sort() *Sort {
	return &Sort{TableID: TableID(g.u64()), ID: SortID(g.u64()), Versioned: g.versioned(),
		Expressions: genSlice(g, func() SortExpression {
			return SortExpression{Index: g.u64(), Expression: g.str(), Dialect: g.str(), Direction: g.str(), NullOrder: g.str()}
		})}
}

func (g gen) macro() *Macro {
	return &Macro{ID: MacroID(g.u64()), Versioned: g.versioned(), SchemaID: SchemaID(g.u64()), Name: g.str(),
		Impls: genSlice(g, func() MacroImpl {
			return MacroImpl{ID: g.u64(), Dialect: g.str(), SQL: g.str(), Type: g.str(),
				Parameters: genSlice(g, func() MacroParameter {
					return MacroParameter{ColumnID: g.u64(), Name: g.str(), Type: g.str(), DefaultValue: g.optStr(), DefaultValueType: g.optStr()}
				})}
		})}
}

func (g gen) mapping() *Mapping {
	return &Mapping{TableID: TableID(g.u64()), ID: MappingID(g.u64()), Type: g.str(),
		Names: genSlice(g, func() NameMapping {
			return NameMapping{ColumnID: ColumnID(g.u64()), SourceName: g.str(), TargetFieldID: g.u64(),
				ParentColumn: optNum[ColumnID](g), IsPartition: g.bool()}
		})}
}

func (g gen) gcFile() *GcFile {
	return &GcFile{DataFileID: DataFileID(g.u64()), Path: g.str(), PathIsRelative: g.bool(), ScheduleStart: g.time()}
}

func (g gen) value() Value {
	switch g.r.IntN(8) {
	case 0:
		return Value{}
	case 1:
		v := int64(g.u64())
		return Value{Int: &v}
	case 2:
		v := g.u64()
		return Value{Uint: &v}
	case 3:
		v := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, g.r.NormFloat64()}[g.r.IntN(6)]
		return Value{Float: &v}
	case 4:
		v := g.bool()
		return Value{Bool: &v}
	case 5:
		v := g.str()
		return Value{String: &v}
	case 6:
		return Value{Bytes: []byte{}} // an empty blob is not NULL
	}
	b := make([]byte, g.r.IntN(6))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	if len(b) == 0 {
		b = []byte{0xff}
	}
	return Value{Bytes: b}
}

// inlineRows returns rows as stored: lifetimes are the keys', not the
// value's, so they are left zero.
func (g gen) inlineRows() []InlinedRow {
	return genSlice(g, func() InlinedRow {
		return InlinedRow{RowID: g.u64(), Versioned: Versioned{End: optNum[SnapshotID](g)}, Values: genSlice(g, g.value)}
	})
}

// ---- normalization: what a round trip is allowed to change -----------------

func normTime(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// normSlices sets every empty slice reachable from v (a pointer) to nil,
// except []byte values (a blob's emptiness is data).
func normSlices(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normSlices(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				normSlices(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			normSlices(v.Index(i))
		}
	}
}

func norm[T any](x *T) *T {
	c := *x
	normSlices(reflect.ValueOf(&c))
	return &c
}

// roundTrip checks decode(encode(x)) == norm(x) for n random x.
func roundTrip[T any](t *testing.T, name string, n int, gen func() *T, enc func(*T) []byte, dec func([]byte) (*T, error), fix func(*T)) {
	t.Helper()
	for i := 0; i < n; i++ {
		x := gen()
		b := enc(x)
		if !bytes.HasPrefix(b, []byte("MRNE\x00")) {
			t.Fatalf("%s: encoding %x lacks the frame", name, b)
		}
		y, err := dec(b)
		if err != nil {
			t.Fatalf("%s: decode(encode(%+v)): %v", name, x, err)
		}
		want := norm(x)
		if fix != nil {
			fix(want)
		}
		if !reflect.DeepEqual(y, want) {
			t.Fatalf("%s round trip:\n  in  %#v\n  out %#v", name, want, y)
		}
		// Deterministic: equal values, equal bytes.
		if b2 := enc(y); !bytes.Equal(b, b2) {
			t.Fatalf("%s: re-encoding differs:\n %x\n %x", name, b, b2)
		}
	}
}

const codecRounds = 3000

func TestCodecRoundTripModel(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(42, 1))}
	roundTrip(t, "snapshot", codecRounds, g.snapshot, encodeSnapshot, decodeSnapshot, func(s *Snapshot) { s.Time = normTime(s.Time) })
	roundTrip(t, "schema", codecRounds, g.schema, encodeSchema, decodeSchema, nil)
	roundTrip(t, "table", codecRounds, g.table, encodeTable, decodeTable, nil)
	roundTrip(t, "view", codecRounds, g.view, encodeView, decodeView, nil)
	roundTrip(t, "column", codecRounds, g.column, encodeColumn, decodeColumn, nil)
	roundTrip(t, "data file", codecRounds, g.dataFile, encodeDataFile, decodeDataFile, nil)
	roundTrip(t, "delete file", codecRounds, g.deleteFile, encodeDeleteFile, decodeDeleteFile, nil)
	roundTrip(t, "table stats", codecRounds, g.tableStats, encodeTableStats, decodeTableStats, nil)
	roundTrip(t, "table column stats", codecRounds, g.tableColumnStats, encodeTableColumnStats, decodeTableColumnStats, nil)
	roundTrip(t, "file column stats", codecRounds, g.fileColumnStats, encodeFileColumnStats, decodeFileColumnStats, nil)
	roundTrip(t, "tags", codecRounds, g.tags, encodeTags, decodeTags, nil)
	roundTrip(t, "options", codecRounds, g.options, encodeOptions, decodeOptions, func(o *Options) {
		if o.Values == nil {
			o.Values = map[string]string{} // decodes non-nil
		}
	})
	roundTrip(t, "partition", codecRounds, g.partition, encodePartition, decodePartition, nil)
	roundTrip(t, "sort", codecRounds, g.sort, encodeSort, decodeSort, nil)
	roundTrip(t, "macro", codecRounds, g.macro, encodeMacro, decodeMacro, nil)
	roundTrip(t, "mapping", codecRounds, g.mapping, encodeMapping, decodeMapping, nil)
	roundTrip(t, "gc file", codecRounds, g.gcFile, encodeGcFile, decodeGcFile, func(f *GcFile) { f.ScheduleStart = normTime(f.ScheduleStart) })
}

func TestCodecRoundTripRecords(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(42, 2))}
	roundTrip(t, "format", codecRounds, func() *formatRecord {
		return &formatRecord{Format: g.u64(), WriterVersion: g.str(), Origin: optNum[uint64](g)}
	}, encodeFormat, decodeFormat, nil)
	roundTrip(t, "head", codecRounds, func() *headRecord {
		h := &headRecord{SnapshotID: SnapshotID(g.u64()), BatchSeq: g.u64()}
		if g.bool() {
			// Holds are whole milliseconds, at most maxClaimHold.
			id := g.uuid()
			if id == uuid.Nil {
				id[15] = 1 // a claim names a committer
			}
			h.Claim = &slotClaim{Committer: id, Hold: time.Duration(g.r.Int64N(int64(maxClaimHold/time.Millisecond)+1)) * time.Millisecond}
		}
		return h
	}, encodeHead, decodeHead, nil)
	roundTrip(t, "migration", codecRounds, func() *migrationRecord {
		r := &migrationRecord{From: g.u64(), To: g.u64(), Unit: g.str()}
		switch g.r.IntN(3) {
		case 0:
			r.Cursor = []byte{}
		case 1:
			r.Cursor = []byte(g.str() + "x")
		}
		return r
	}, encodeMigration, decodeMigration, func(r *migrationRecord) {
		if len(r.Cursor) == 0 {
			r.Cursor = nil // bytes: empty and absent are one
		}
	})
	roundTrip(t, "maintenance status", codecRounds, func() *maintenanceStatus {
		return &maintenanceStatus{Passes: genSlice(g, func() maintenancePass {
			return maintenancePass{StartedAt: g.time(), Trigger: g.str(), Steps: genSlice(g, func() maintenanceStep {
				return maintenanceStep{Step: g.str(), Status: g.str(), Detail: g.str()}
			})}
		})}
	}, encodeMaintenanceStatus, decodeMaintenanceStatus, func(s *maintenanceStatus) {
		for i := range s.Passes {
			s.Passes[i].StartedAt = normTime(s.Passes[i].StartedAt)
		}
	})

	type u64Box struct{ V uint64 }
	roundTrip(t, "schema version", codecRounds, func() *u64Box { return &u64Box{g.u64()} },
		func(b *u64Box) []byte { return encodeSchemaVersion(b.V) },
		func(v []byte) (*u64Box, error) { x, err := decodeSchemaVersion(v); return &u64Box{x}, err }, nil)
	type endBox struct{ V SnapshotID }
	roundTrip(t, "inline delete", codecRounds, func() *endBox { return &endBox{SnapshotID(g.u64())} },
		func(b *endBox) []byte { return encodeInlineDelete(b.V) },
		func(v []byte) (*endBox, error) { x, err := decodeInlineDelete(v); return &endBox{x}, err }, nil)
	roundTrip(t, "file variant stats", codecRounds, func() *FileVariantStats {
		return &FileVariantStats{TableID: TableID(g.u64()), DataFileID: DataFileID(g.u64()), ColumnID: ColumnID(g.u64()),
			Paths: genSlice(g, func() VariantPathStats {
				return VariantPathStats{VariantPath: g.str(), ShreddedType: g.optStr(), ColumnSizeBytes: optNum[uint64](g),
					ValueCount: optNum[uint64](g), NullCount: optNum[uint64](g), MinValue: g.optStr(), MaxValue: g.optStr(),
					ContainsNaN: g.optBool(), ExtraStats: g.optStr()}
			})}
	}, encodeFileVariantStats, decodeFileVariantStats, nil)
	roundTrip(t, "inlined delete table", codecRounds, func() *InlinedDeleteTable {
		return &InlinedDeleteTable{TableID: TableID(g.u64()), Name: g.str()}
	}, encodeInlinedDeleteTable, decodeInlinedDeleteTable, nil)
	roundTrip(t, "inlined file delete", codecRounds, func() *InlinedFileDelete {
		return &InlinedFileDelete{TableID: TableID(g.u64()), DataFileID: DataFileID(g.u64()), RowID: g.u64(), Begin: SnapshotID(g.u64())}
	}, encodeInlinedFileDelete, decodeInlinedFileDelete, nil)
	type keysBox struct{ V [][]byte }
	roundTrip(t, "changelog", codecRounds, func() *keysBox {
		return &keysBox{genSlice(g, func() []byte { return []byte(g.str() + "k") })}
	}, func(b *keysBox) []byte { return encodeChangelog(b.V) },
		func(v []byte) (*keysBox, error) { x, err := decodeChangelog(v); return &keysBox{x}, err }, nil)
	type dirBox struct{ V []nameDirEntry }
	roundTrip(t, "name directory", codecRounds, func() *dirBox {
		return &dirBox{genSlice(g, func() nameDirEntry { return nameDirEntry{Name: g.str(), ID: g.u64()} })}
	}, func(b *dirBox) []byte { return encodeNameDir(b.V) },
		func(v []byte) (*dirBox, error) { x, err := decodeNameDir(v); return &dirBox{x}, err }, nil)
	type rowsBox struct{ V []InlinedRow }
	roundTrip(t, "inline chunk", codecRounds, func() *rowsBox { return &rowsBox{g.inlineRows()} },
		func(b *rowsBox) []byte { return encodeInlineRows(b.V) },
		func(v []byte) (*rowsBox, error) { x, err := decodeInlineChunk(v); return &rowsBox{x}, err }, nil)

	if err := decodeDeleteTarget(encodeDeleteTarget()); err != nil {
		t.Fatalf("delete target: %v", err)
	}
	if got := encodeDeleteTarget(); !bytes.Equal(got, []byte("MRNE\x00")) {
		t.Fatalf("delete target value = %x, want the bare frame", got)
	}
}

func TestCodecInlineChunk(t *testing.T) {
	i, u, f, b, s := int64(-3), uint64(4), math.NaN(), true, "x"
	rows := []InlinedRow{
		{RowID: 10, Versioned: Versioned{Begin: 7}, Values: []Value{{}, {Int: &i}, {Uint: &u}, {Float: &f}, {Bool: &b}, {String: &s}, {Bytes: []byte{}}, {Bytes: []byte{0}}}},
		{RowID: 11, Versioned: Versioned{Begin: 7, End: ptrTo(SnapshotID(9))}},
	}
	got, err := decodeInlineChunk(encodeInlineChunk(&chunkState{rows: rows}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RowID != 10 || got[1].RowID != 11 || got[1].Values != nil {
		t.Fatalf("rows = %+v", got)
	}
	if got[0].Begin != 0 || got[0].End != nil || got[1].End == nil || *got[1].End != 9 {
		t.Fatalf("a row's begin is the key's, its end the value's when it has one: %+v, %+v", got[0].Versioned, got[1].Versioned)
	}
	v := got[0].Values
	if !v[0].IsNull() || *v[1].Int != -3 || *v[2].Uint != 4 || !math.IsNaN(*v[3].Float) || !*v[4].Bool || *v[5].String != "x" {
		t.Fatalf("values = %+v", v)
	}
	if v[6].Bytes == nil || len(v[6].Bytes) != 0 || v[6].IsNull() {
		t.Fatalf("empty blob decoded as %#v, want non-nil empty", v[6])
	}
	if !bytes.Equal(v[7].Bytes, []byte{0}) {
		t.Fatalf("blob = %x", v[7].Bytes)
	}
}

func TestCodecTimesAreUTCMicros(t *testing.T) {
	in := time.Date(2024, 1, 2, 4, 4, 5, 123456789, time.FixedZone("CET", 3600))
	s, err := decodeSnapshot(encodeSnapshot(&Snapshot{Time: in}))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	if s.Time != want { // == also compares the location
		t.Fatalf("time = %v (%v), want %v", s.Time, s.Time.Location(), want)
	}
	z, err := decodeGcFile(encodeGcFile(&GcFile{}))
	if err != nil || z.ScheduleStart != (time.Time{}) {
		t.Fatalf("zero time = %v, %v", z.ScheduleStart, err)
	}
}

// ---- golden bytes ------------------------------------------------------------

// Written out by hand from the protobuf wire format and store.proto's field
// numbers; a failure means the stored format changed.
func TestCodecGolden(t *testing.T) {
	author, extra := "ann", ""
	snap := &Snapshot{
		ID: 7, Time: time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC), SchemaVersion: 3, NextCatalogID: 9, NextFileID: 4,
		ChangesMade: `created_table:"main"."t"`, Author: &author, CommitExtraInfo: &extra,
		SchemaChangedTables: []TableID{5, 300},
	}
	u := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	live := &Table{ID: 5, Versioned: Versioned{Begin: 2}, UUID: u, Name: "t", Path: "t/", PathIsRelative: true}
	zero := SnapshotID(0)
	nullText := "NULL"
	ended := &Table{ID: 5, Versioned: Versioned{Begin: 2, End: &zero}, UUID: u, SchemaID: 1, Name: "t", Path: "t/"}
	for _, c := range []struct {
		name string
		got  []byte
		hex  string
	}{
		{"snapshot", encodeSnapshot(snap), "" +
			"4d524e45" + "00" + // MRNE, version 0
			"0807" + // 1 snapshot_id 7
			"1080ebbe82dcbd8303" + // 2 snapshot_time_micros 1704164645123456
			"1803" + "2009" + "2804" + // 3 schema_version, 4 next_catalog_id, 5 next_file_id
			"3a18" + hex.EncodeToString([]byte(`created_table:"main"."t"`)) + // 7 changes_made
			"4203616e6e" + // 8 author "ann"
			"5200" + // 10 commit_extra_info "" (present; 9 commit_message absent)
			"5a0305ac02", // 11 schema_changed_table_ids packed [5, 300]
		},
		{"live table", encodeTable(live), "" +
			"4d524e4500" +
			"0805" + "1002" + // 1 table_id 5, 2 begin_snapshot 2 (3 end_snapshot absent)
			"2210" + "00112233445566778899aabbccddeeff" + // 4 uuid
			"320174" + "3a02742f" + "4001", // 6 name "t", 7 path "t/", 8 path_is_relative
		},
		{"macro", encodeMacro(&Macro{ID: 4, Versioned: Versioned{Begin: 15}, SchemaID: 1, Name: "m", Impls: []MacroImpl{{
			Dialect: "duckdb", SQL: "(a)", Type: "scalar", Parameters: []MacroParameter{{Name: "a", Type: "unknown", DefaultValue: &nullText}}}}}), "" +
			"4d524e4500" +
			"0804" + "100f" + "2001" + "2a016d" + // 1 macro_id 4, 2 begin_snapshot 15, 4 schema_id 1, 5 name "m"
			"3229" + // 6 impls: one of 41 bytes (impl_id 0 omitted)
			"1206" + hex.EncodeToString([]byte("duckdb")) + "1a03" + hex.EncodeToString([]byte("(a)")) + "2206" + hex.EncodeToString([]byte("scalar")) +
			"2a12" + // 5 parameters: one of 18 bytes (column_id 0 omitted)
			"120161" + "1a07" + hex.EncodeToString([]byte("unknown")) + "2204" + hex.EncodeToString([]byte("NULL")),
		},
		{"inline chunk row with its end", encodeInlineRows([]InlinedRow{{RowID: 3, Versioned: Versioned{End: ptrTo(SnapshotID(6))}}}), "" +
			"4d524e4500" +
			"0a04" + "0803" + "1806", // 1 rows: one of 4 bytes (1 row_id 3, 3 end_snapshot 6)
		},
		{"inlined file delete", encodeInlinedFileDelete(&InlinedFileDelete{TableID: 2, DataFileID: 5, RowID: 99, Begin: 8}), "" +
			"4d524e4500" +
			"0802" + "1005" + "1863" + "2008", // 1 table_id 2, 2 data_file_id 5, 3 row_id 99, 4 begin_snapshot 8
		},
		{"table ended at 0", encodeTable(ended), "" +
			"4d524e4500" +
			"0805" + "1002" + "1800" + // 3 end_snapshot 0: present, not absent
			"2210" + "00112233445566778899aabbccddeeff" +
			"2801" + "320174" + "3a02742f", // 5 schema_id 1; path_is_relative false omitted
		},
	} {
		want, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.got, want) {
			t.Errorf("%s:\n got    %x\n golden %x", c.name, c.got, want)
		}
	}
	if got, err := decodeSnapshot(encodeSnapshot(snap)); err != nil || !reflect.DeepEqual(got, snap) {
		t.Errorf("golden snapshot decodes to %+v, %v", got, err)
	}
	if got, err := decodeTable(encodeTable(ended)); err != nil || got.End == nil || *got.End != 0 {
		t.Errorf("ended table decodes to %+v, %v", got, err)
	}
}

// ---- corruption --------------------------------------------------------------

func isCorruption(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != Corruption || !errors.Is(err, Corruption) {
		t.Errorf("%s: error %v (%T) is not a Corruption *Error", what, err, err)
	}
}

func framed(payload ...byte) []byte { return frame.Frame(payload) }

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return frame.Frame(b)
}

func TestCodecCorruptInput(t *testing.T) {
	decoders := map[string]func([]byte) error{
		"format":             func(b []byte) error { _, err := decodeFormat(b); return err },
		"head":               func(b []byte) error { _, err := decodeHead(b); return err },
		"migration":          func(b []byte) error { _, err := decodeMigration(b); return err },
		"maintenance status": func(b []byte) error { _, err := decodeMaintenanceStatus(b); return err },
		"snapshot":           func(b []byte) error { _, err := decodeSnapshot(b); return err },
		"schema version":     func(b []byte) error { _, err := decodeSchemaVersion(b); return err },
		"changelog":          func(b []byte) error { _, err := decodeChangelog(b); return err },
		"schema":             func(b []byte) error { _, err := decodeSchema(b); return err },
		"table":              func(b []byte) error { _, err := decodeTable(b); return err },
		"view":               func(b []byte) error { _, err := decodeView(b); return err },
		"column":             func(b []byte) error { _, err := decodeColumn(b); return err },
		"data file":          func(b []byte) error { _, err := decodeDataFile(b); return err },
		"delete file":        func(b []byte) error { _, err := decodeDeleteFile(b); return err },
		"table stats":        func(b []byte) error { _, err := decodeTableStats(b); return err },
		"table column stats": func(b []byte) error { _, err := decodeTableColumnStats(b); return err },
		"file column stats":  func(b []byte) error { _, err := decodeFileColumnStats(b); return err },
		"tags":               func(b []byte) error { _, err := decodeTags(b); return err },
		"options":            func(b []byte) error { _, err := decodeOptions(b); return err },
		"partition":          func(b []byte) error { _, err := decodePartition(b); return err },
		"sort":               func(b []byte) error { _, err := decodeSort(b); return err },
		"macro":              func(b []byte) error { _, err := decodeMacro(b); return err },
		"mapping":            func(b []byte) error { _, err := decodeMapping(b); return err },
		"gc file":            func(b []byte) error { _, err := decodeGcFile(b); return err },
		"name directory":     func(b []byte) error { _, err := decodeNameDir(b); return err },
		"delete target":      decodeDeleteTarget,
		"inline chunk":       func(b []byte) error { _, err := decodeInlineChunk(b); return err },
		"inline delete":      func(b []byte) error { _, err := decodeInlineDelete(b); return err },
	}
	bad := map[string][]byte{
		"nil":                 nil,
		"short":               []byte("MRN"),
		"header only, no 0":   []byte("MRNE"),
		"bad magic":           []byte("MRNM\x00\x08\x01"),
		"future version":      []byte("MRNE\x01\x08\x01"),
		"truncated varint":    framed(0x08, 0x80),
		"truncated length":    framed(0x0a, 0x05, 'a'),
		"field number 0":      framed(0x00, 0x01),
		"end-group wire type": framed(0x0c),
		"wrong wire type 7":   framed(0x0f),
		"overlong varint":     framed(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
	}
	for name, dec := range decoders {
		for what, b := range bad {
			err := dec(b)
			isCorruption(t, name+" / "+what, err)
			if err != nil && !strings.Contains(err.Error(), name) {
				t.Errorf("%s / %s: error %q does not name what was decoded", name, what, err)
			}
		}
	}

	// Well-framed protobuf the model cannot hold.
	isCorruption(t, "table with a 3-byte uuid", func() error {
		_, err := decodeTable(mustMarshal(t, &catalogpb.TableValue{TableId: 1, Uuid: []byte{1, 2, 3}}))
		return err
	}())
	// A claim is advisory: one naming no committer is no claim, and the
	// head still reads.
	for what, committer := range map[string][]byte{"3 bytes": {1, 2, 3}, "the nil uuid": make([]byte, 16), "none": nil} {
		h, err := decodeHead(mustMarshal(t, &catalogpb.HeadValue{SnapshotId: 1, BatchSeq: 2, Claim: &catalogpb.HeadClaim{Committer: committer, HoldMs: 5}}))
		if err != nil || h.Claim != nil || h.SnapshotID != 1 || h.BatchSeq != 2 {
			t.Errorf("head with a claim naming %s = %+v, %v; want the head, no claim", what, h, err)
		}
	}
	// A hold above maxClaimHold (a stamp from elsewhere) is honoured only
	// up to it.
	id := uuid.New()
	h, err := decodeHead(mustMarshal(t, &catalogpb.HeadValue{SnapshotId: 3, Claim: &catalogpb.HeadClaim{Committer: id[:], HoldMs: 1 << 40}}))
	if err != nil || h.Claim == nil || h.Claim.Committer != id || h.Claim.Hold != maxClaimHold {
		t.Fatalf("a claim holding 2^40 ms decodes to %+v, %v; want the committer and a hold of %v", h, err, maxClaimHold)
	}
	isCorruption(t, "schema without a uuid", func() error {
		_, err := decodeSchema(mustMarshal(t, &catalogpb.SchemaValue{SchemaId: 1}))
		return err
	}())
	isCorruption(t, "view with a 17-byte uuid", func() error {
		_, err := decodeView(mustMarshal(t, &catalogpb.ViewValue{Uuid: make([]byte, 17)}))
		return err
	}())
	isCorruption(t, "options scope 256", func() error {
		_, err := decodeOptions(mustMarshal(t, &catalogpb.OptionsValue{ScopeKind: 256}))
		return err
	}())
	isCorruption(t, "inline cell without a value", func() error {
		_, err := decodeInlineChunk(mustMarshal(t, &catalogpb.InlineChunk{Rows: []*catalogpb.InlineRow{{RowId: 1, Values: []*catalogpb.Cell{{}}}}}))
		return err
	}())
	// A name with invalid UTF-8 (hand-built: proto.Marshal refuses it).
	isCorruption(t, "table name not UTF-8", func() error {
		_, err := decodeTable(framed(0x32, 0x02, 0xff, 0xfe))
		return err
	}())
}

func TestCodecEncodePanicsOnInvalidUTF8(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "table") || !strings.Contains(r.(string), "UTF-8") {
			t.Fatalf("recover() = %v, want a panic naming the table value and UTF-8", r)
		}
	}()
	encodeTable(&Table{Name: "\xff"})
}

// Unknown fields (from a newer writer) are skipped, not refused.
func TestCodecSkipsUnknownFields(t *testing.T) {
	b := encodeHead(&headRecord{SnapshotID: 3, BatchSeq: 4})
	b = append(b, 0xf8, 0x3e, 0x01) // field 999, varint 1
	h, err := decodeHead(b)
	if err != nil || h.SnapshotID != 3 || h.BatchSeq != 4 {
		t.Fatalf("decodeHead with an unknown field = %+v, %v", h, err)
	}
}

// FuzzCodecDecode: no decoder panics on arbitrary bytes, every failure is
// a Corruption, and whatever decodes re-encodes to a value that decodes to
// the same thing.
//
//	go test -run '^$' -fuzz FuzzCodecDecode -fuzztime 30s ./core
func FuzzCodecDecode(f *testing.F) {
	g := gen{rand.New(rand.NewPCG(7, 7))}
	for i := 0; i < 4; i++ {
		f.Add(encodeSnapshot(g.snapshot()))
		f.Add(encodeColumn(g.column()))
		f.Add(encodeDataFile(g.dataFile()))
		f.Add(encodeOptions(g.options()))
		f.Add(encodeInlineRows(g.inlineRows()))
	}
	f.Add([]byte("MRNE\x00"))
	f.Add([]byte("MRNE\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzOne(t, b, decodeSnapshot, encodeSnapshot)
		fuzzOne(t, b, decodeSchema, encodeSchema)
		fuzzOne(t, b, decodeTable, encodeTable)
		fuzzOne(t, b, decodeView, encodeView)
		fuzzOne(t, b, decodeColumn, encodeColumn)
		fuzzOne(t, b, decodeDataFile, encodeDataFile)
		fuzzOne(t, b, decodeDeleteFile, encodeDeleteFile)
		fuzzOne(t, b, decodeTableStats, encodeTableStats)
		fuzzOne(t, b, decodeTableColumnStats, encodeTableColumnStats)
		fuzzOne(t, b, decodeFileColumnStats, encodeFileColumnStats)
		fuzzOne(t, b, decodeTags, encodeTags)
		fuzzOne(t, b, decodeOptions, encodeOptions)
		fuzzOne(t, b, decodePartition, encodePartition)
		fuzzOne(t, b, decodeSort, encodeSort)
		fuzzOne(t, b, decodeMacro, encodeMacro)
		fuzzOne(t, b, decodeMapping, encodeMapping)
		fuzzOne(t, b, decodeGcFile, encodeGcFile)
		fuzzOne(t, b, decodeFormat, encodeFormat)
		fuzzOne(t, b, decodeHead, encodeHead)
		fuzzOne(t, b, decodeMigration, encodeMigration)
		fuzzOne(t, b, decodeMaintenanceStatus, encodeMaintenanceStatus)
		fuzzOne(t, b, decodeInlinedDeleteTable, encodeInlinedDeleteTable)
		fuzzOne(t, b, decodeFileVariantStats, encodeFileVariantStats)
		fuzzOne(t, b, decodeInlinedFileDelete, encodeInlinedFileDelete)
		type rowsBox struct{ V []InlinedRow }
		fuzzOne(t, b, func(v []byte) (*rowsBox, error) { x, err := decodeInlineChunk(v); return &rowsBox{x}, err },
			func(r *rowsBox) []byte { return encodeInlineRows(r.V) })
		type dirBox struct{ V []nameDirEntry }
		fuzzOne(t, b, func(v []byte) (*dirBox, error) { x, err := decodeNameDir(v); return &dirBox{x}, err },
			func(d *dirBox) []byte { return encodeNameDir(d.V) })
	})
}

func fuzzOne[T any](t *testing.T, b []byte, dec func([]byte) (*T, error), enc func(*T) []byte) {
	x, err := dec(b)
	if err != nil {
		if KindOf(err) != Corruption {
			t.Fatalf("decoding %x: %v is not a Corruption", b, err)
		}
		return
	}
	y, err := dec(enc(x))
	if err != nil {
		t.Fatalf("re-decoding %T: %v", x, err)
	}
	// NaN cells are not DeepEqual to themselves; compare encodings then.
	if !reflect.DeepEqual(x, y) && !bytes.Equal(enc(x), enc(y)) {
		t.Fatalf("%T: decode(encode(decode(b))) differs:\n %#v\n %#v", x, x, y)
	}
}
