package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/oklog/ulid/v2"
)

var update = flag.Bool("update", false, "rewrite testdata golden files and fuzz seeds")

// golden is a manifest with every field set, built from fixed values.
func golden() *Manifest {
	id := func(ms uint64, b byte) ulid.ULID {
		var e [10]byte
		for i := range e {
			e[i] = b + byte(i)
		}
		u, err := ulid.New(ms, bytes.NewReader(e[:]))
		if err != nil {
			panic(err)
		}
		return u
	}
	at := time.UnixMicro(1_767_225_600_000_000).UTC() // 2026-01-01
	return &Manifest{
		Initialized:      true,
		WriterEpoch:      3,
		CompactorEpoch:   2,
		ReplayAfterWalID: 41,
		NextWalID:        45,
		LastL0Seq:        900,
		L0: []SST{
			{ID: id(1_767_225_600_500, 0x10), Size: 4096, FirstKey: []byte("a"), LastKey: []byte("m"), MinSeq: 801, MaxSeq: 900, Rows: 120},
			{ID: id(1_767_225_600_400, 0x20), Size: 2048, FirstKey: []byte("b"), LastKey: []byte("z"), MinSeq: 701, MaxSeq: 800, Rows: 60},
		},
		Runs: []Run{
			{ID: 7, SSTs: []SST{
				{ID: id(1_767_225_600_300, 0x30), Size: 8192, FirstKey: []byte(""), LastKey: []byte("k"), MinSeq: 1, MaxSeq: 700, Rows: 300},
				{ID: id(1_767_225_600_301, 0x40), Size: 8000, FirstKey: []byte("l"), LastKey: []byte("\xff"), MinSeq: 3, MaxSeq: 699, Rows: 280},
			}},
		},
		Checkpoints: []Checkpoint{
			{ID: uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), ManifestID: 12, Created: at, Expires: at.Add(10 * time.Minute), Name: "reader"},
			{ID: uuid.MustParse("6ba7b811-9dad-11d1-80b4-00c04fd430c8"), ManifestID: 9, Created: at},
		},
		WalStore:             "s3://wal-bucket/prefix",
		LastCompactedL0:      id(1_767_225_600_200, 0x50),
		RecentSnapshotMinSeq: 850,
		RunningCompactions:   []ulid.ULID{id(1_767_225_600_600, 0x60)},
	}
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

// TestGoldenManifest pins the encoding of one manifest: a change of bytes
// needs a new Version (or only new field numbers, which old readers skip).
func TestGoldenManifest(t *testing.T) {
	path := filepath.Join("testdata", "manifest.golden")
	data := Encode(golden())
	got := "# Golden manifest (encoding version 1). Regenerate: go test -run TestGoldenManifest -update\n" + hexLines(data)
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
		t.Fatalf("encoding changed:\n--- got\n%s--- want\n%s", got, want)
	}
	m, err := Decode(unhexLines(t, string(want)))
	if err != nil {
		t.Fatal(err)
	}
	g := golden()
	if m.Checkpoints[0].Created.UnixMicro() != g.Checkpoints[0].Created.UnixMicro() || m.Checkpoints[1].Expires.IsZero() != true {
		t.Fatalf("checkpoint times: %+v", m.Checkpoints)
	}
	if fmt.Sprint(m.L0, m.Runs, m.WalStore, m.LastCompactedL0, m.RunningCompactions, m.RecentSnapshotMinSeq, m.WriterEpoch, m.CompactorEpoch, m.ReplayAfterWalID, m.NextWalID, m.LastL0Seq, m.Initialized) !=
		fmt.Sprint(g.L0, g.Runs, g.WalStore, g.LastCompactedL0, g.RunningCompactions, g.RecentSnapshotMinSeq, g.WriterEpoch, g.CompactorEpoch, g.ReplayAfterWalID, g.NextWalID, g.LastL0Seq, g.Initialized) {
		t.Fatalf("decoded golden differs:\n got %+v\nwant %+v", m, g)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripAndUnknownFields(t *testing.T) {
	for _, m := range []*Manifest{New(), golden()} {
		data := Encode(m)
		d, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(Encode(d), data) {
			t.Fatalf("re-encoding differs")
		}
		// A newer writer's field (number 99) is skipped by this reader.
		body := bytes.Clone(data[:len(data)-4])
		body = append(body, 0x9a, 0x06, 0x03, 'n', 'e', 'w') // field 99, bytes, "new"
		ext := binary.BigEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
		d2, err := Decode(ext)
		if err != nil {
			t.Fatalf("unknown field: %v", err)
		}
		if !bytes.Equal(Encode(d2), data) {
			t.Fatalf("unknown field changed the decoded manifest")
		}
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	data := Encode(golden())
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, err := Decode(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

func TestCheckInvariants(t *testing.T) {
	if err := golden().Check(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(m *Manifest){
		"L0 out of order":        func(m *Manifest) { m.L0[0], m.L0[1] = m.L0[1], m.L0[0] },
		"run newer than L0":      func(m *Manifest) { m.Runs[0].SSTs[0].MaxSeq = 750 },
		"run ids not descending": func(m *Manifest) { m.Runs = append(m.Runs, Run{ID: 9, SSTs: m.Runs[0].SSTs}) },
		"run SSTs overlap":       func(m *Manifest) { m.Runs[0].SSTs[1].FirstKey = []byte("c") },
		"empty run":              func(m *Manifest) { m.Runs[0].SSTs = nil },
		"older run not older": func(m *Manifest) {
			m.Runs = append(m.Runs, Run{ID: 2, SSTs: []SST{{ID: ulid.Make(), MinSeq: 5, MaxSeq: 20}}})
		},
		"next wal id 0": func(m *Manifest) { m.NextWalID = 0 },
	} {
		m := golden()
		mutate(m)
		if err := m.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}

// reseal fixes the magic, version and checksum of arbitrary bytes, so the
// fuzzer explores the body decoder.
func reseal(data []byte) []byte {
	if len(data) < 10 {
		return nil
	}
	b := bytes.Clone(data)
	copy(b, magic[:])
	binary.BigEndian.PutUint16(b[4:], Version)
	body := b[:len(b)-4]
	return binary.BigEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

func checkDecode(t *testing.T, data []byte) {
	m, err := Decode(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decode error is not ErrCorrupt: %v", err)
		}
		return
	}
	enc := Encode(m)
	m2, err := Decode(enc)
	if err != nil {
		t.Fatalf("re-encoded manifest does not decode: %v", err)
	}
	if !bytes.Equal(Encode(m2), enc) {
		t.Fatal("Decode(Encode(m)) does not round-trip")
	}
	_ = m.Check() // must not panic
	_ = m.Clone()
}

// FuzzDecode: Decode never panics, fails only with ErrCorrupt, and what it
// accepts round-trips through Encode.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(New()))
	f.Add(Encode(golden()))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		if r := reseal(data); r != nil {
			checkDecode(t, r)
		}
	})
}

// TestFuzzSeedsAreCurrent checks the committed seed corpus against what
// this generator produces; -update rewrites it.
func TestFuzzSeedsAreCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	g := Encode(golden())
	for name, data := range map[string][]byte{
		"new":            Encode(New()),
		"golden":         g,
		"golden-body":    g[6 : len(g)-4], // resealed by the target
		"nested-garbage": append(append([]byte("MRNM\x00\x01"), 0x32, 0x05, 0x0a, 0x03, 1, 2, 3), 0, 0, 0, 0),
	} {
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

// TestBoundary: the GC boundary only moves up, Create refuses ids at or
// below it even when the object was free, and Refresh from an id GC passed
// lists for the real latest instead of trusting a probe.
func TestBoundary(t *testing.T) {
	ctx := context.Background()
	os := objstore.NewMemory(0)
	s := NewStore(os, "db")
	m := New()
	for id := uint64(1); id <= 6; id++ {
		if err := s.Create(ctx, id, m); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := s.AdvanceBoundary(ctx, 4); err != nil || b != 4 {
		t.Fatalf("advance: %d %v", b, err)
	}
	if b, err := s.AdvanceBoundary(ctx, 2); err != nil || b != 4 {
		t.Fatalf("advance backwards: %d %v, want 4", b, err)
	}
	for id := uint64(1); id <= 4; id++ {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// A stale process (fresh Store, no cached boundary) believes 2 is the
	// latest and writes 3: the PUT lands, but it is a conflict.
	stale := NewStore(os, "db")
	if err := stale.Create(ctx, 3, m); !errors.Is(err, ErrConflict) {
		t.Fatalf("create below the boundary: %v, want ErrConflict", err)
	}
	// Refresh from 2 must not stop at the stale 3 (nor at the missing 4).
	id, _, err := stale.Refresh(ctx, 2, m)
	if err != nil || id != 6 {
		t.Fatalf("refresh from a passed id: %d %v, want 6", id, err)
	}
	if id, _, err := stale.Latest(ctx); err != nil || id != 6 {
		t.Fatalf("latest: %d %v", id, err)
	}
	// Above the boundary, everything is as before.
	if err := stale.Create(ctx, 7, m); err != nil {
		t.Fatal(err)
	}
	if id, _, err := s.Refresh(ctx, 6, m); err != nil || id != 7 {
		t.Fatalf("refresh: %d %v", id, err)
	}
}
