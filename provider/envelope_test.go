package provider

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/slate"
)

var update = flag.Bool("update", false, "rewrite testdata golden files and fuzz seeds")

// goldenBatch is a slot envelope with every field set, from fixed values.
func goldenBatch() (core.LogBatch, *core.LogBase) {
	return core.LogBatch{
		TxnID:            uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
		Slot:             0,
		Head:             core.Head{SnapshotID: 41, BatchSeq: 977},
		ChangesMade:      `created_table:"main"."t",inserted_into_table:7`,
		DeletedDataFiles: []core.DataFileID{3, 300, 70000},
		Writes: []core.LogWrite{
			{Key: []byte("sys/format"), Value: []byte{0x08, 0x0b}},
			{Key: []byte("t/7/x"), Value: []byte{}},
			{Key: []byte("t/7/y"), Delete: true},
		},
	}, &core.LogBase{WalBase: 1<<20 + 12, SeqBase: 1<<32 + 901, OriginBatchSeq: 976}
}

func hexLines(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i += 16 {
		fmt.Fprintf(&out, "%04x  %s\n", i, hex.EncodeToString(b[i:min(i+16, len(b))]))
	}
	return out.String()
}

func unhexLines(t *testing.T, s string) []byte {
	var data []byte
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(f[1])
		if err != nil {
			t.Fatalf("bad golden line %q: %v", line, err)
		}
		data = append(data, b...)
	}
	return data
}

// TestGoldenEnvelope pins the bytes of a slot envelope, the base copy and
// the floor: a change of bytes needs a new EnvelopeVersion (or only new
// field numbers, which old readers skip).
func TestGoldenEnvelope(t *testing.T) {
	b, base := goldenBatch()
	files := map[string][]byte{
		"envelope.golden": encodeSlot(b, base),
		"base.golden":     encodeBaseCopy(*base, b.TxnID),
		"floor.golden":    encodeFloor(123456),
	}
	for name, data := range files {
		path := filepath.Join("testdata", name)
		got := fmt.Sprintf("# Golden %s (envelope version %d). Regenerate: go test -run TestGoldenEnvelope -update\n%s", strings.TrimSuffix(name, ".golden"), EnvelopeVersion, hexLines(data))
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got != string(want) {
			t.Fatalf("%s: encoding changed:\n--- got\n%s--- want\n%s", name, got, want)
		}
		raw := unhexLines(t, string(want))
		switch name {
		case "envelope.golden":
			db, dbase, err := decodeSlot(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(db, b) || !reflect.DeepEqual(dbase, base) {
				t.Fatalf("golden envelope decodes to\n%+v %+v\nwant\n%+v %+v", db, dbase, b, base)
			}
		case "base.golden":
			gb, txn, err := decodeBaseCopy(raw)
			if err != nil || gb != *base || txn != b.TxnID {
				t.Fatalf("golden base: %+v %s %v", gb, txn, err)
			}
		case "floor.golden":
			if f, err := decodeFloor(raw); err != nil || f != 123456 {
				t.Fatalf("golden floor: %d %v", f, err)
			}
		}
	}
}

// randomBatch draws an envelope the way a normalizing decoder returns it
// (nil empty slices, a non-nil value for every put, no value for deletes).
func randomBatch(r *rand.Rand) (core.LogBatch, *core.LogBase) {
	var b core.LogBatch
	for i := range b.TxnID {
		b.TxnID[i] = byte(r.IntN(256))
	}
	if b.TxnID == uuid.Nil {
		b.TxnID[0] = 1
	}
	b.Slot = r.Uint64N(1 << uint(r.IntN(64)))
	if r.IntN(3) > 0 {
		b.Head = core.Head{SnapshotID: core.SnapshotID(r.Uint64()), BatchSeq: r.Uint64()}
	}
	if r.IntN(2) == 0 {
		s := make([]byte, r.IntN(40))
		for i := range s {
			s[i] = byte(' ' + r.IntN(90))
		}
		b.ChangesMade = string(s)
	}
	for i := r.IntN(4); i > 0; i-- {
		b.DeletedDataFiles = append(b.DeletedDataFiles, core.DataFileID(r.Uint64N(1<<uint(r.IntN(64)))))
	}
	for i := r.IntN(6); i > 0; i-- {
		w := core.LogWrite{Key: make([]byte, r.IntN(12))}
		for j := range w.Key {
			w.Key[j] = byte(r.IntN(256))
		}
		if r.IntN(4) == 0 {
			w.Delete = true
		} else {
			w.Value = make([]byte, r.IntN(30))
			for j := range w.Value {
				w.Value[j] = byte(r.IntN(256))
			}
		}
		b.Writes = append(b.Writes, w)
	}
	if r.IntN(2) == 0 {
		for i := range b.Committer {
			b.Committer[i] = byte(r.IntN(256))
		}
	}
	var base *core.LogBase
	if r.IntN(2) == 0 {
		base = &core.LogBase{WalBase: 1 + r.Uint64N(1<<40), SeqBase: 1 + r.Uint64N(1<<40), OriginBatchSeq: r.Uint64()}
	}
	return b, base
}

// TestEnvelopeRoundTrip: Decode(Encode(x)) == x for random envelopes, and
// Encode is deterministic.
func TestEnvelopeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 7))
	for i := 0; i < 5000; i++ {
		b, base := randomBatch(r)
		data := encodeSlot(b, base)
		db, dbase, err := decodeSlot(data)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(db, b) || !reflect.DeepEqual(dbase, base) {
			t.Fatalf("case %d: round trip\n got %+v %+v\nwant %+v %+v", i, db, dbase, b, base)
		}
		if !bytes.Equal(encodeSlot(db, dbase), data) {
			t.Fatalf("case %d: re-encoding differs", i)
		}
	}
}

// reframe recomputes the checksum after a payload edit.
func reframe(data []byte) []byte {
	out := bytes.Clone(data)
	binary.BigEndian.PutUint32(out[5:9], crc32.Checksum(out[headerLen:], castagnoli))
	return out
}

func TestEnvelopeSkipsUnknownFields(t *testing.T) {
	b, base := goldenBatch()
	data := encodeSlot(b, base)
	// A newer writer's fields: 99 (bytes), 100 (varint), 101 (fixed64),
	// 102 (fixed32), and inside a write, field 9.
	ext := append(bytes.Clone(data), 0x9a, 0x06, 0x03, 'n', 'e', 'w', 0xa0, 0x06, 0x05, 0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 0xb5, 0x06, 1, 2, 3, 4)
	w := []byte{0x0a, 0x01, 'k', 0x12, 0x00, 0x48, 0x07} // key "k", value "", field 9 = 7
	ext = append(ext, 0x32, byte(len(w)))
	ext = append(ext, w...)
	d, dbase, err := decodeSlot(reframe(ext))
	if err != nil {
		t.Fatalf("unknown fields: %v", err)
	}
	want := b
	want.Writes = append(append([]core.LogWrite{}, b.Writes...), core.LogWrite{Key: []byte("k"), Value: []byte{}})
	if !reflect.DeepEqual(d, want) || !reflect.DeepEqual(dbase, base) {
		t.Fatalf("unknown fields changed the decoded envelope:\n got %+v\nwant %+v", d, want)
	}
	// Unpacked deleted-file ids (a writer may use either encoding).
	unpacked := append(bytes.Clone(data), 0x28, 0x05)
	d, _, err = decodeSlot(reframe(unpacked))
	if err != nil || !reflect.DeepEqual(d.DeletedDataFiles, append(append([]core.DataFileID{}, b.DeletedDataFiles...), 5)) {
		t.Fatalf("unpacked ids: %v %v", d.DeletedDataFiles, err)
	}
}

func TestEnvelopeRejectsCorruption(t *testing.T) {
	b, base := goldenBatch()
	data := encodeSlot(b, base)
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		if _, _, err := decodeSlot(bad); !errors.Is(err, ErrCorrupt) || !errors.Is(err, slate.ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, _, err := decodeSlot(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	for name, payload := range map[string][]byte{
		"no txn id":            {0x10, 0x01},
		"short txn id":         {0x0a, 0x02, 1, 2},
		"txn id as varint":     {0x08, 0x01},
		"put without value":    append(append(txnField(), 0x32, 0x03), 0x0a, 0x01, 'k'),
		"delete with a value":  append(append(txnField(), 0x32, 0x07), 0x0a, 0x01, 'k', 0x12, 0x00, 0x18, 0x01),
		"write without key":    append(append(txnField(), 0x32, 0x02), 0x12, 0x00),
		"base with WAL base 0": append(append(txnField(), 0x3a, 0x02), 0x10, 0x01),
		"bad packed id":        append(append(txnField(), 0x2a, 0x01), 0x80),
		"slot as bytes":        append(txnField(), 0x12, 0x00),
		"bad tag":              append(txnField(), 0x00),
	} {
		if _, _, err := decodeSlot(frame(slotMagic, payload)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// Wrong record kinds and a future version.
	if _, _, err := decodeSlot(encodeFloor(3)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("floor decoded as a slot: %v", err)
	}
	future := bytes.Clone(data)
	future[4] = EnvelopeVersion + 1
	if _, _, err := decodeSlot(future); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("future version: %v", err)
	}
	if _, _, err := decodeBaseCopy(encodeSlot(b, base)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("slot decoded as a base copy: %v", err)
	}
	if _, err := decodeFloor(append(encodeFloor(9), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("floor with a trailing byte: %v", err)
	}
}

func txnField() []byte {
	return append([]byte{0x0a, 0x10}, bytes.Repeat([]byte{7}, 16)...)
}

func checkDecodeEnvelope(t *testing.T, data []byte) {
	b, base, err := decodeSlot(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decode error is not ErrCorrupt: %v", err)
		}
	} else {
		enc := encodeSlot(b, base)
		b2, base2, err := decodeSlot(enc)
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v", err)
		}
		if !bytes.Equal(encodeSlot(b2, base2), enc) {
			t.Fatal("Decode(Encode(x)) does not round-trip")
		}
		_ = rowsOf(b, 1)
	}
	if _, _, err := decodeBaseCopy(data); err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("base copy decode error is not ErrCorrupt: %v", err)
	}
	if _, err := decodeFloor(data); err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("floor decode error is not ErrCorrupt: %v", err)
	}
}

// FuzzDecodeEnvelope: the decoders never panic, fail only with ErrCorrupt,
// and what they accept round-trips. Each input is also tried with a fresh
// header (magic, version, checksum), so the fuzzer reaches the payload
// decoder.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeEnvelope(t, data)
		for _, m := range [][4]byte{slotMagic, baseMagic, floorMagic} {
			checkDecodeEnvelope(t, frame(m, data))
		}
	})
}

func fuzzSeeds() map[string][]byte {
	b, base := goldenBatch()
	g := encodeSlot(b, base)
	b.Slot, b.Writes = 9, b.Writes[:1]
	return map[string][]byte{
		"golden":         g,
		"golden-payload": g[headerLen:], // reframed by the target
		"plain-slot":     encodeSlot(b, nil),
		"empty-slot":     encodeSlot(core.LogBatch{TxnID: b.TxnID, Slot: 1}, nil),
		"base-copy":      encodeBaseCopy(*base, b.TxnID),
		"floor":          encodeFloor(77),
		"nested-garbage": frame(slotMagic, append(txnField(), 0x32, 0x05, 0x0a, 0x03, 1, 2, 3)),
		"with-committer": encodeSlot(core.LogBatch{TxnID: b.TxnID, Slot: 2, Committer: uuid.UUID{7: 1, 15: 2}}, nil),
	}
}

// TestFuzzSeedsAreCurrent checks the committed seed corpus against what
// this generator produces; -update rewrites it.
func TestFuzzSeedsAreCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeEnvelope")
	for name, data := range fuzzSeeds() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		path := filepath.Join(dir, name)
		if !*update {
			if have, err := os.ReadFile(path); err != nil || string(have) != body {
				t.Errorf("seed %s is missing or stale (run go test -run TestFuzzSeedsAreCurrent -update): %v", path, err)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRowsOf(t *testing.T) {
	b := core.LogBatch{Writes: []core.LogWrite{
		{Key: []byte("b"), Value: []byte("1")},
		{Key: []byte("a"), Delete: true},
		{Key: []byte("b"), Value: []byte("2")},
		{Key: []byte("c")},
	}}
	rows := rowsOf(b, 42)
	want := []slate.Row{
		{Key: []byte("a"), Kind: slate.RowDelete, Seq: 42},
		{Key: []byte("b"), Value: []byte("2"), Kind: slate.RowPut, Seq: 42},
		{Key: []byte("c"), Value: []byte{}, Kind: slate.RowPut, Seq: 42},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %+v, want %+v", rows, want)
	}
}

// The committer id (field 8, the contention policy's) is 16 bytes when
// present; an envelope without it (every slot written before it) decodes
// with a zero id.
func TestEnvelopeCommitterID(t *testing.T) {
	b, _ := goldenBatch()
	if got, _, err := decodeSlot(encodeSlot(b, nil)); err != nil || got.Committer != uuid.Nil {
		t.Fatalf("a slot without a committer id: %v, %v", got.Committer, err)
	}
	b.Committer = uuid.UUID{0: 9, 15: 9}
	if got, _, err := decodeSlot(encodeSlot(b, nil)); err != nil || got.Committer != b.Committer {
		t.Fatalf("committer id round trip: %v, %v", got.Committer, err)
	}
	bad := frame(slotMagic, append(txnField(), byte(fCommitter<<3|2), 3, 1, 2, 3))
	if _, _, err := decodeSlot(bad); err == nil || !strings.Contains(err.Error(), "committer id is 3 bytes") {
		t.Fatalf("a 3-byte committer id: %v, want corruption naming it", err)
	}
}
