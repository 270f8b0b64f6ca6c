package keys

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// The golden vectors pin the wire format. They are written out by hand
// (not computed by this package); a failure here means the encoding
// changed, which needs a format migration, not a new vector.

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad golden hex %q: %v", s, err)
	}
	return b
}

// Frequent 8-byte components.
const (
	u0   = "0000000000000000"
	u1   = "0000000000000001"
	u3   = "0000000000000003"
	u7   = "0000000000000007"
	u11  = "000000000000000b"
	u12  = "000000000000000c"
	u15  = "000000000000000f"
	u42  = "000000000000002a"
	u256 = "0000000000000100"
	uMax = "ffffffffffffffff"
)

var goldenKeys = []struct {
	key  []byte
	hex  string
	text string
}{
	// sys
	{Format(), "02 02", "sys/format"},
	{Head(), "02 03", "sys/head"},
	{Migration(), "02 04", "sys/migration"},
	{MaintenanceStatus(), "02 05", "sys/maintenance_status"},

	// snapshot
	{Snapshot(0), "03 " + u0, "snapshot/0"},
	{Snapshot(42), "03 " + u42, "snapshot/42"},
	{Snapshot(1<<64 - 1), "03 " + uMax, "snapshot/18446744073709551615"},

	// current entities, every kind
	{CurrentSchema(0), "04 02 02 " + u0, "current/schema/0"},
	{CurrentTable(7), "04 02 03 " + u7, "current/table/7"},
	{CurrentView(0x0102030405060708), "04 02 04 0102030405060708", "current/view/72623859790382856"},
	{CurrentColumn(7, 3), "04 02 05 " + u7 + u3, "current/column/7/3"},
	{CurrentPartition(7, 11), "04 02 06 " + u7 + u11, "current/partition/7/11"},
	{CurrentDataFile(7, 256), "04 02 07 " + u7 + u256, "current/data_file/7/256"},
	{CurrentDeleteFile(7, 12), "04 02 08 " + u7 + u12, "current/delete_file/7/12"},
	{CurrentFileColumnStats(7, 256, 3), "04 02 09 " + u7 + u256 + u3, "current/file_column_stats/7/256/3"},
	{CurrentTableStats(7), "04 02 0a " + u7, "current/table_stats/7"},
	{CurrentTableColumnStats(7, 3), "04 02 0b " + u7 + u3, "current/table_column_stats/7/3"},
	{CurrentTag(42), "04 02 0c " + u42, "current/tag/42"},
	{CurrentOption(0, 0), "04 02 0d " + u0 + u0, "current/option/0/0"},
	{CurrentOption(2, 7), "04 02 0d 0000000000000002" + u7, "current/option/2/7"},
	{CurrentSort(7, 15), "04 02 0e " + u7 + u15, "current/sort/7/15"},
	{CurrentMacro(11), "04 02 0f " + u11, "current/macro/11"},
	{CurrentMapping(7, 42), "04 02 10 " + u7 + u42, "current/mapping/7/42"},
	{CurrentInlinedTable(7, 3), "04 02 11 " + u7 + u3, "current/inlined_table/7/3"},
	{CurrentInlinedDeleteTable(7), "04 02 12 " + u7, "current/inlined_delete_table/7"},
	{CurrentInlinedFileDelete(7, 3, 7), "04 02 13 " + u7 + u3 + u7, "current/inlined_file_delete/7/3/7"},
	{CurrentFileVariantStats(7, 3, 7), "04 02 14 " + u7 + u3 + u7, "current/file_variant_stats/7/3/7"},
	{Current(KindColumn, 7, 3), "04 02 05 " + u7 + u3, "current/column/7/3"},

	// current gc files
	{GcFile(256), "04 03 " + u256, "current/gc_file/256"},

	// history, every versioned kind
	{History(KindSchema, 1, 0), "05 02 " + u0 + u1, "history/schema/0/end=1"},
	{History(KindTable, 12, 7), "05 03 " + u7 + u12, "history/table/7/end=12"},
	{History(KindView, 12, 42), "05 04 " + u42 + u12, "history/view/42/end=12"},
	{History(KindColumn, 12, 7, 3), "05 05 " + u7 + u3 + u12, "history/column/7/3/end=12"},
	{History(KindPartition, 12, 7, 11), "05 06 " + u7 + u11 + u12, "history/partition/7/11/end=12"},
	{History(KindDataFile, 12, 7, 256), "05 07 " + u7 + u256 + u12, "history/data_file/7/256/end=12"},
	{History(KindDeleteFile, uMaxV, 7, 12), "05 08 " + u7 + u12 + uMax, "history/delete_file/7/12/end=18446744073709551615"},
	{History(KindSort, 12, 7, 15), "05 0e " + u7 + u15 + u12, "history/sort/7/15/end=12"},
	{History(KindMacro, 12, 11), "05 0f " + u11 + u12, "history/macro/11/end=12"},

	// inline
	{InlineLiveInsert(7, 3, 11, 0), "06 03 02 " + u7 + u3 + u11 + u0, "inline/live/insert/7/3/11/0"},
	{InlineLiveDelete(7, 42), "06 03 03 " + u7 + u42, "inline/live/delete/7/42"},
	{InlineArchivedInsert(7, 3, 11, 0, 15), "06 04 02 " + u7 + u3 + u11 + u0 + u15, "inline/archived/insert/7/3/11/0/end=15"},
	{InlineArchivedDelete(7, 42, 15), "06 04 03 " + u7 + u42 + u15, "inline/archived/delete/7/42/end=15"},

	// index: name directory (FNV-1a 64: "" = cbf29ce484222325,
	// "a" = af63dc4c8601ec8c, "foobar" = 85944171f73967e8) and delete targets
	{NameDir(NameSchema, 0, "main"), "07 04 02 " + u0 + "1f5962a2ce9803c8", "index/name/schema/0/0x1f5962a2ce9803c8"},
	{NameDir(NameTable, 1, "a"), "07 04 03 " + u1 + "af63dc4c8601ec8c", "index/name/table/1/0xaf63dc4c8601ec8c"},
	{NameDir(NameView, 1, "foobar"), "07 04 04 " + u1 + "85944171f73967e8", "index/name/view/1/0x85944171f73967e8"},
	{NameDir(NameMacro, 1, ""), "07 04 05 " + u1 + "cbf29ce484222325", "index/name/macro/1/0xcbf29ce484222325"},
	{NameDirHash(NameTable, 7, 0x0102030405060708), "07 04 03 " + u7 + "0102030405060708", "index/name/table/7/0x0102030405060708"},
	{DeleteTarget(7, 256, 12), "07 05 " + u7 + u256 + u12, "index/delete_target/7/256/12"},

	// schema versions, changelog
	{SchemaVersion(7, 11), "08 " + u7 + u11, "schema_version/7/11"},
	{Changelog(42), "09 " + u42, "changelog/42"},
}

const uMaxV = 1<<64 - 1

func TestGoldenKeys(t *testing.T) {
	for _, g := range goldenKeys {
		want := unhex(t, g.hex)
		if !bytes.Equal(g.key, want) {
			t.Errorf("%s: encoded %x, golden %x", g.text, g.key, want)
			continue
		}
		k, err := Decode(want)
		if err != nil {
			t.Errorf("%s: Decode: %v", g.text, err)
			continue
		}
		if got := k.String(); got != g.text {
			t.Errorf("Decode(%x).String() = %q, want %q", want, got, g.text)
		}
		enc, err := k.Encode()
		if err != nil || !bytes.Equal(enc, want) {
			t.Errorf("%s: re-encode = %x, %v", g.text, enc, err)
		}
	}
}

func TestGoldenNameHash(t *testing.T) {
	for _, g := range []struct {
		name string
		hash uint64
	}{
		// Published FNV-1a 64 test vectors, and the default schema.
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
		{"main", 0x1f5962a2ce9803c8},
	} {
		if got := NameHash(g.name); got != g.hash {
			t.Errorf("NameHash(%q) = %#016x, want %#016x", g.name, got, g.hash)
		}
	}
	// Independent reimplementation of FNV-1a 64 over bytes (not runes).
	ref := func(s string) uint64 {
		h := uint64(14695981039346656037)
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		return h
	}
	for _, s := range []string{"Ünïcödé", "\xff\x00", "a much longer table name with spaces"} {
		if NameHash(s) != ref(s) {
			t.Errorf("NameHash(%q) disagrees with FNV-1a", s)
		}
	}
}

func TestGoldenPrefixes(t *testing.T) {
	for _, g := range []struct {
		name string
		got  []byte
		hex  string
	}{
		{"subspace sys", SubspacePrefix(SubspaceSys), "02"},
		{"subspace snapshot", SubspacePrefix(SubspaceSnapshot), "03"},
		{"subspace current", SubspacePrefix(SubspaceCurrent), "04"},
		{"subspace history", SubspacePrefix(SubspaceHistory), "05"},
		{"subspace inline", SubspacePrefix(SubspaceInline), "06"},
		{"subspace index", SubspacePrefix(SubspaceIndex), "07"},
		{"subspace schema_version", SubspacePrefix(SubspaceSchemaVersion), "08"},
		{"subspace changelog", SubspacePrefix(SubspaceChangelog), "09"},
		{"current entities", CurrentEntityPrefix(), "04 02"},
		{"current tables", CurrentPrefix(KindTable), "04 02 03"},
		{"current columns of 7", CurrentPrefix(KindColumn, 7), "04 02 05 " + u7},
		{"current file stats of 7/256", CurrentPrefix(KindFileColumnStats, 7, 256), "04 02 09 " + u7 + u256},
		{"gc files", GcFilePrefix(), "04 03"},
		{"history data files", HistoryPrefix(KindDataFile), "05 07"},
		{"history columns 7/3", HistoryPrefix(KindColumn, 7, 3), "05 05 " + u7 + u3},
		{"live inserts of 7", InlineLiveInsertPrefix(7), "06 03 02 " + u7},
		{"live inserts of 7 v3", InlineLiveInsertPrefix(7, 3), "06 03 02 " + u7 + u3},
		{"live deletes of 7", InlineLiveDeletePrefix(7), "06 03 03 " + u7},
		{"archived inserts", InlineArchivedInsertPrefix(), "06 04 02"},
		{"archived deletes of 7", InlineArchivedDeletePrefix(7), "06 04 03 " + u7},
		{"names of tables in 1", NameDirPrefix(NameTable, 1), "07 04 03 " + u1},
		{"delete targets of 7/256", DeleteTargetPrefix(7, 256), "07 05 " + u7 + u256},
		{"schema versions of 7", SchemaVersionPrefix(7), "08 " + u7},
	} {
		if want := unhex(t, g.hex); !bytes.Equal(g.got, want) {
			t.Errorf("%s: %x, golden %x", g.name, g.got, want)
		}
	}
}
