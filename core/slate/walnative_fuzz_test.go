package slate

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

var updateSeeds = flag.Bool("update", false, "rewrite testdata fuzz seeds")

// rowsFromBytes turns fuzz input into WAL batches: each batch is a seq step
// and a few rows whose keys and values are cut from the input.
func rowsFromBytes(data []byte) []base.Row {
	var rows []base.Row
	seq := uint64(1)
	for len(data) >= 3 {
		ctl, klen, vlen := data[0], int(data[1]%16), int(data[2]%32)
		data = data[3:]
		if ctl&1 == 1 {
			seq += uint64(ctl >> 1)
		}
		k := data[:min(klen, len(data))]
		data = data[len(k):]
		v := data[:min(vlen, len(data))]
		data = data[len(v):]
		r := base.Row{Key: append([]byte(nil), k...), Seq: seq, Kind: base.KindPut, Value: append([]byte{}, v...)}
		if ctl&2 == 2 {
			r.Kind, r.Value = base.KindDelete, nil
		}
		rows = append(rows, r)
	}
	// A batch never repeats a key: keep the last row per (seq, key).
	seen := map[string]int{}
	var out []base.Row
	for _, r := range rows {
		id := fmt.Sprint(r.Seq, "/", string(r.Key))
		if i, ok := seen[id]; ok {
			out[i] = r
			continue
		}
		seen[id] = len(out)
		out = append(out, r)
	}
	return out
}

// FuzzDecodeWalFile: decoding arbitrary bytes as a WAL file never panics
// and fails only with ErrCorrupt; what it accepts is in WAL order; and any
// row stream encoded as a WAL file decodes back to itself.
func FuzzDecodeWalFile(f *testing.F) {
	for _, seed := range walSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := decodeWalFile(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
		} else {
			for i, r := range rows {
				if !r.Kind.Valid() || (i > 0 && r.Seq < rows[i-1].Seq) {
					t.Fatalf("decoded rows out of WAL order at %d: %v", i, rows)
				}
			}
		}
		in := rowsFromBytes(data)
		enc, err := encodeWalFile(in, 64)
		if err != nil {
			t.Fatalf("encoding %d rows: %v", len(in), err)
		}
		out, err := decodeWalFile(enc)
		if err != nil {
			t.Fatalf("decoding an encoded WAL file: %v", err)
		}
		if fmt.Sprint(out) != fmt.Sprint(in) {
			t.Fatalf("round trip:\n got %v\nwant %v", out, in)
		}
	})
}

func walSeeds() [][]byte {
	file := func(rows ...base.Row) []byte {
		b, err := encodeWalFile(rows, 32)
		if err != nil {
			panic(err)
		}
		return b
	}
	put := func(k, v string, seq uint64) base.Row {
		return base.Row{Key: []byte(k), Value: []byte(v), Kind: base.KindPut, Seq: seq}
	}
	return [][]byte{
		file(put("b", "1", 10), base.Row{Key: []byte("a"), Kind: base.KindDelete, Seq: 10}, put("c", "three", 11), put("a", "4", 12)),
		file(),
		{},
		[]byte("\x03\x02\x05ab1234\x05\x01\x00z\x02\x03\x01kv"),
	}
}

// TestWalFuzzSeedsAreCurrent checks the committed seed corpus against
// walSeeds; -update rewrites it.
func TestWalFuzzSeedsAreCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeWalFile")
	for i, seed := range walSeeds() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed)
		path := filepath.Join(dir, fmt.Sprintf("seed-%d", i))
		if !*updateSeeds {
			if have, err := os.ReadFile(path); err != nil || string(have) != body {
				t.Errorf("seed %s is missing or stale (run go test -run TestWalFuzzSeedsAreCurrent -update): %v", path, err)
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
