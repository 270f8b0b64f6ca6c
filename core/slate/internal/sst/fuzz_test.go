package sst

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// FuzzOpen feeds arbitrary bytes to the reader: it must never panic, must
// report every failure as ErrCorrupt, and whatever it does return must keep
// the table kind's ordering promises.
func FuzzOpen(f *testing.F) {
	for _, g := range goldenTables() {
		data, _ := build(f, g.opts, g.rows)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkArbitraryTable(t, data)
		// Random bytes rarely get past the checksums; reseal them so the
		// fuzzer also explores the decoding behind them.
		if resealed := reseal(data); resealed != nil {
			checkArbitraryTable(t, resealed)
		}
	})
}

// reseal recomputes, best effort, every checksum of a would-be table: the
// data blocks its index names, the sections its footer names, the footer.
// It fixes the magic and version too. nil if data is too short.
func reseal(data []byte) []byte {
	if len(data) < footerSize {
		return nil
	}
	b := append([]byte(nil), data...)
	f := b[len(b)-footerSize:]
	fix := func(off, length uint64) {
		if off > uint64(len(b)) || length > uint64(len(b))-off || length < trailerSize {
			return
		}
		fr := b[off : off+length]
		n := len(fr) - 4
		binary.LittleEndian.PutUint32(fr[n:], crc32.Checksum(fr[:n], crcTable))
	}
	handle := func(i int) (uint64, uint64) {
		return binary.LittleEndian.Uint64(f[16*i:]), binary.LittleEndian.Uint64(f[16*i+8:])
	}
	if io, il := handle(0); io <= uint64(len(b)) && il <= uint64(len(b))-io && il >= trailerSize {
		d := decoder{b: b[io : io+il-trailerSize]}
		n := d.uvarint()
		for k := uint64(0); k < n && !d.bad && k < 1<<16; k++ {
			bo, bl := d.uvarint(), d.uvarint()
			d.uvarint()
			d.uvarint()
			d.uvarint()
			d.bytes()
			if !d.bad {
				fix(bo, bl)
			}
		}
	}
	for i := 0; i < 3; i++ {
		fix(handle(i))
	}
	binary.LittleEndian.PutUint32(f[52:56], FormatVersion)
	copy(f[56:], magic)
	binary.LittleEndian.PutUint32(f[48:52], footerCRC(f))
	return b
}

// checkArbitraryTable reads data every way there is: no panics, only the
// package's errors, and whatever comes back keeps the kind's promises.
func checkArbitraryTable(t *testing.T, data []byte) {
	ctx := context.Background()
	check := func(err error) {
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error outside the package's sentinels: %v", err)
		}
	}
	tbl, err := OpenBytes(data)
	check(err)
	rr := &bytesReader{data: data}
	tbl2, err2 := Open(ctx, rr.read, int64(len(data)))
	check(err2)
	if (err == nil) != (err2 == nil) {
		t.Fatalf("OpenBytes: %v, Open: %v", err, err2)
	}
	if err != nil {
		return
	}
	info := tbl.Info()
	rows, err := tbl.Rows(ctx)
	check(err)
	rows2, err2 := tbl2.Rows(ctx)
	if (err == nil) != (err2 == nil) {
		t.Fatalf("Rows: %v vs %v", err, err2)
	}
	if err == nil {
		checkRows(t, "Rows via Open", rows2, rows)
		if len(rows) != info.Rows {
			t.Fatalf("%d rows, info says %d", len(rows), info.Rows)
		}
		for i, r := range rows {
			if !r.Kind.Valid() || r.Seq < info.MinSeq || r.Seq > info.MaxSeq ||
				bytes.Compare(r.Key, info.FirstKey) < 0 || bytes.Compare(r.Key, info.LastKey) > 0 {
				t.Fatalf("row %d %s outside info %+v", i, r, info)
			}
			if i == 0 {
				continue
			}
			p := rows[i-1]
			if info.Kind == KindSorted && base.Compare(p, r) >= 0 || info.Kind == KindWAL && p.Seq > r.Seq {
				t.Fatalf("%s table: row %d %s after %s", info.Kind, i, r, p)
			}
		}
	}
	if info.Kind != KindSorted {
		return
	}
	probe := [][]byte{nil, info.FirstKey, info.LastKey, append(append([]byte{}, info.FirstKey...), 0)}
	for i, r := range rows {
		if i%7 == 0 {
			probe = append(probe, r.Key)
		}
	}
	for _, k := range probe {
		_, _, err := tbl.Get(ctx, k, math.MaxUint64)
		check(err)
		_, _, err = tbl.Get(ctx, k, 0)
		check(err)
		it := tbl.Iter(ctx, k)
		for n := 0; n < 3; n++ {
			if _, ok := it.Next(); !ok {
				break
			}
		}
		check(it.Err())
	}
}

// fuzzRows derives a valid row sequence for kind from arbitrary bytes: each
// row takes a header of three bytes (flags, key length, value length) and
// then its key and value bytes.
func fuzzRows(data []byte, kind Kind) []base.Row {
	var rows []base.Row
	var seq uint64
	for len(data) >= 3 {
		flags, klen, vlen := data[0], int(data[1]%16), int(data[2]%64)
		data = data[3:]
		klen = min(klen, len(data))
		key := data[:klen]
		data = data[klen:]
		vlen = min(vlen, len(data))
		r := base.Row{Key: key, Value: data[:vlen], Kind: base.KindPut}
		data = data[vlen:]
		if flags&1 != 0 {
			r.Kind, r.Value = base.KindDelete, nil
		}
		if kind == KindWAL {
			seq += uint64(flags >> 6) // same seq (batch) or the next ones
			r.Seq = seq
		} else {
			r.Seq = uint64(flags >> 1)
			if flags>>1 == 127 {
				r.Seq = math.MaxUint64
			}
		}
		rows = append(rows, r)
	}
	if kind == KindSorted {
		sort.SliceStable(rows, func(i, j int) bool { return base.Compare(rows[i], rows[j]) < 0 })
	}
	// Drop repeated (key, seq) pairs: the builder refuses them.
	seen := map[string]bool{}
	out := rows[:0]
	for _, r := range rows {
		id := fmt.Sprintf("%d/%q", r.Seq, r.Key)
		if !seen[id] {
			seen[id] = true
			out = append(out, r)
		}
	}
	return out
}

// FuzzRoundTrip builds a table from rows derived from the input and checks
// that every read path returns them.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x00\x03\x02abcxy\x02\x03\x00abd\x05\x01\x01a"), uint16(16), false, int8(10))
	f.Add([]byte("\x40\x01\x01ab\x00\x01\x01cd\x41\x01\x00a"), uint16(0), true, int8(0))
	f.Fuzz(func(t *testing.T, data []byte, blockSize uint16, wal bool, bloomBits int8) {
		ctx := context.Background()
		kind := KindSorted
		if wal {
			kind = KindWAL
		}
		rows := fuzzRows(data, kind)
		opts := Options{Kind: kind, BlockSize: int(blockSize % 2048), BloomBitsPerKey: int(bloomBits % 32)}
		encoded, info := build(t, opts, rows)
		if info.Rows != len(rows) || info.Size != int64(len(encoded)) {
			t.Fatalf("info %+v for %d rows, %d bytes", info, len(rows), len(encoded))
		}
		for name, tbl := range openBoth(t, encoded) {
			got, err := tbl.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, name+" Rows", got, rows)
			if kind != KindSorted {
				continue
			}
			keys := [][]byte{nil, {0xff}}
			for _, r := range rows {
				keys = append(keys, r.Key, append(append([]byte{}, r.Key...), 0))
			}
			for _, k := range keys {
				for _, maxSeq := range []uint64{0, 1, 31, 63, 126, math.MaxUint64} {
					got, ok, err := tbl.Get(ctx, k, maxSeq)
					if err != nil {
						t.Fatal(err)
					}
					want, wantOK := refGet(rows, k, maxSeq)
					if ok != wantOK || (ok && !sameRow(got, want)) {
						t.Fatalf("%s Get(%q, %d) = %s %v, want %s %v", name, k, maxSeq, got, ok, want, wantOK)
					}
				}
				checkRows(t, fmt.Sprintf("%s Iter(%q)", name, k), collect(t, tbl.Iter(ctx, k)), refIter(rows, k))
			}
		}
	})
}

// TestFuzzSeedsAreCurrent checks the committed seed corpus against what the
// generator produces (the golden tables and a few random ones for FuzzOpen,
// random row streams for FuzzRoundTrip); -update rewrites it.
func TestFuzzSeedsAreCurrent(t *testing.T) {
	write := func(fuzzName, seedName string, args ...string) {
		dir := filepath.Join("testdata", "fuzz", fuzzName)
		body := "go test fuzz v1\n"
		for _, a := range args {
			body += a + "\n"
		}
		path := filepath.Join(dir, seedName)
		if !*update {
			have, err := os.ReadFile(path)
			if err != nil || string(have) != body {
				t.Errorf("seed %s is missing or stale (run go test -run TestFuzzSeedsAreCurrent -update): %v", path, err)
			}
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range goldenTables() {
		data, _ := build(t, g.opts, g.rows)
		write("FuzzOpen", "golden-"+g.name, fmt.Sprintf("[]byte(%q)", data))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	sorted, _ := build(t, Options{Kind: KindSorted, BlockSize: 64}, sortedRows(rng, 30))
	write("FuzzOpen", "sorted-30-rows", fmt.Sprintf("[]byte(%q)", sorted))
	wal, _ := build(t, Options{Kind: KindWAL, BlockSize: 64}, walRows(rng, 6))
	write("FuzzOpen", "wal-6-batches", fmt.Sprintf("[]byte(%q)", wal))
	empty, _ := build(t, Options{Kind: KindSorted}, nil)
	write("FuzzOpen", "empty-sorted", fmt.Sprintf("[]byte(%q)", empty))
	for i := 0; i < 4; i++ {
		b := make([]byte, 40+rng.IntN(200))
		for j := range b {
			b[j] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				b[j] = "abc\x00"[rng.IntN(4)]
			}
		}
		write("FuzzRoundTrip", fmt.Sprintf("random-%d", i), fmt.Sprintf("[]byte(%q)", b),
			fmt.Sprintf("uint16(%d)", []int{0, 1, 32, 200}[i]), fmt.Sprintf("bool(%v)", i%2 == 1), fmt.Sprintf("int8(%d)", []int{10, 0, -1, 3}[i]))
	}
}
