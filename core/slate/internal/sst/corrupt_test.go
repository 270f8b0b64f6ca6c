package sst

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// smallTables are the tables the corruption tests mutate: several blocks,
// a filter, versions across blocks, a WAL table.
func smallTables(t testing.TB) map[string]struct {
	kind Kind
	rows []base.Row
	data []byte
} {
	rng := rand.New(rand.NewPCG(7, 7))
	out := map[string]struct {
		kind Kind
		rows []base.Row
		data []byte
	}{}
	sorted := sortedRows(rng, 40)
	data, _ := build(t, Options{Kind: KindSorted, BlockSize: 96}, sorted)
	out["sorted"] = struct {
		kind Kind
		rows []base.Row
		data []byte
	}{KindSorted, sorted, data}
	wal := walRows(rng, 8)
	data, _ = build(t, Options{Kind: KindWAL, BlockSize: 96}, wal)
	out["wal"] = struct {
		kind Kind
		rows []base.Row
		data []byte
	}{KindWAL, wal, data}
	return out
}

// readAll exercises every read path of tbl. It returns the first error, and
// fails the test if a read succeeds with wrong data.
func readAll(t *testing.T, tbl *Table, kind Kind, rows []base.Row) error {
	t.Helper()
	ctx := context.Background()
	if kind == KindSorted {
		for _, r := range rows {
			for _, maxSeq := range []uint64{r.Seq, math.MaxUint64} {
				got, ok, err := tbl.Get(ctx, r.Key, maxSeq)
				if err != nil {
					return err
				}
				want, wantOK := refGet(rows, r.Key, maxSeq)
				if ok != wantOK || (ok && !sameRow(got, want)) {
					t.Fatalf("Get(%q, %d) = %s %v on a damaged table, want %s %v", r.Key, maxSeq, got, ok, want, wantOK)
				}
			}
		}
		for _, r := range rows[len(rows)/2:] {
			it := tbl.Iter(ctx, r.Key)
			var got []base.Row
			for x, ok := it.Next(); ok; x, ok = it.Next() {
				got = append(got, x)
			}
			if err := it.Err(); err != nil {
				return err
			}
			checkRows(t, "Iter on a damaged table", got, refIter(rows, r.Key))
			break
		}
	}
	got, err := tbl.Rows(ctx)
	if err != nil {
		return err
	}
	checkRows(t, "Rows on a damaged table", got, rows)
	return nil
}

// openAndRead opens data both ways and reads everything, returning the
// errors met.
func openAndRead(t *testing.T, data []byte, size int64, kind Kind, rows []base.Row) []error {
	t.Helper()
	var errs []error
	if int64(len(data)) == size {
		if tbl, err := OpenBytes(data); err != nil {
			errs = append(errs, err)
		} else if err := readAll(t, tbl, kind, rows); err != nil {
			errs = append(errs, err)
		}
	}
	rr := &bytesReader{data: data}
	if tbl, err := Open(context.Background(), rr.read, size); err != nil {
		errs = append(errs, err)
	} else if err := readAll(t, tbl, kind, rows); err != nil {
		errs = append(errs, err)
	}
	return errs
}

func TestEveryFlippedByteIsDetected(t *testing.T) {
	for name, tc := range smallTables(t) {
		t.Run(name, func(t *testing.T) {
			t.Logf("%d-byte table", len(tc.data))
			for i := range tc.data {
				for _, mask := range []byte{0x01, 0x80, 0xff} {
					bad := append([]byte(nil), tc.data...)
					bad[i] ^= mask
					errs := openAndRead(t, bad, int64(len(bad)), tc.kind, tc.rows)
					if len(errs) != 2 {
						t.Fatalf("byte %d ^ %#02x: undetected (%d of 2 paths failed)", i, mask, len(errs))
					}
					for _, err := range errs {
						if !errors.Is(err, ErrCorrupt) {
							t.Fatalf("byte %d ^ %#02x: %v, want ErrCorrupt", i, mask, err)
						}
					}
				}
			}
		})
	}
}

func TestEveryTruncationIsDetected(t *testing.T) {
	for name, tc := range smallTables(t) {
		t.Run(name, func(t *testing.T) {
			for n := 0; n < len(tc.data); n++ {
				// The object is cut short: either the size says so too, or
				// the stated size is the full one and reads come back short.
				for _, size := range []int64{int64(n), int64(len(tc.data))} {
					errs := openAndRead(t, tc.data[:n], size, tc.kind, tc.rows)
					if len(errs) == 0 {
						t.Fatalf("truncation to %d bytes (size %d) undetected", n, size)
					}
					for _, err := range errs {
						if !errors.Is(err, ErrCorrupt) {
							t.Fatalf("truncation to %d bytes: %v, want ErrCorrupt", n, err)
						}
					}
				}
			}
		})
	}
}

func TestRandomGarbageIsRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	tables := smallTables(t)
	for i := 0; i < 2000; i++ {
		tc := tables[[]string{"sorted", "wal"}[i%2]]
		bad := append([]byte(nil), tc.data...)
		// Overwrite a random span with random bytes.
		off := rng.IntN(len(bad))
		for j := off; j < min(len(bad), off+1+rng.IntN(16)); j++ {
			bad[j] = byte(rng.IntN(256))
		}
		for _, err := range openAndRead(t, bad, int64(len(bad)), tc.kind, tc.rows) {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v, want ErrCorrupt", err)
			}
		}
	}
}

// rewriteFooter changes a footer field and recomputes its checksum, to
// test the checks behind the checksum.
func rewriteFooter(data []byte, edit func(f []byte)) []byte {
	out := append([]byte(nil), data...)
	f := out[len(out)-footerSize:]
	edit(f)
	binary.LittleEndian.PutUint32(f[48:52], footerCRC(f))
	return out
}

func TestFooterChecks(t *testing.T) {
	data := smallTables(t)["sorted"].data
	for _, tc := range []struct {
		name string
		data []byte
		also error
		msg  string
	}{
		{"newer-version", rewriteFooter(data, func(f []byte) { binary.LittleEndian.PutUint32(f[52:], 2) }), ErrUnsupportedVersion, "format version 2"},
		{"bad-magic", rewriteFooter(data, func(f []byte) { f[60] = 'X' }), nil, "bad magic"},
		{"not-a-table", []byte(strings.Repeat("hello, world\n", 10)), nil, "bad magic"},
		{"too-small", []byte("tiny"), nil, "smaller than the 64-byte footer"},
		{"index-out-of-range", rewriteFooter(data, func(f []byte) { binary.LittleEndian.PutUint64(f[8:], 1<<40) }), nil, "out of range"},
		{"gap-before-info", rewriteFooter(data, func(f []byte) { binary.LittleEndian.PutUint64(f[32:], binary.LittleEndian.Uint64(f[32:])+1) }), nil, "section 2"},
		{"filter-handle-moved", rewriteFooter(data, func(f []byte) { binary.LittleEndian.PutUint64(f[16:], binary.LittleEndian.Uint64(f[16:])-1) }), nil, "filter"},
		{"filter-swapped-with-index", rewriteFooter(data, func(f []byte) {
			var tmp [16]byte
			copy(tmp[:], f[0:16])
			copy(f[0:16], f[16:32])
			copy(f[16:32], tmp[:])
		}), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenBytes(tc.data)
			if !errors.Is(err, ErrCorrupt) || (tc.also != nil && !errors.Is(err, tc.also)) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("OpenBytes: %v", err)
			}
			t.Log(err)
		})
	}
}

// assemble writes a table from raw parts, sealing every frame properly, so
// tests can check what lies behind the checksums (a buggy writer's output).
func assemble(info Info, blocks [][]byte, entries []indexEntry) []byte {
	var b []byte
	var f footer
	for i, p := range blocks {
		off := len(b)
		b = appendTrailer(append(b, p...), off, frameData)
		entries[i].off, entries[i].length = int64(off), int64(len(b)-off)
	}
	off := len(b)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(e.off))
		b = binary.AppendUvarint(b, uint64(e.length))
		b = binary.AppendUvarint(b, uint64(e.rows))
		b = binary.AppendUvarint(b, e.firstSeq)
		b = binary.AppendUvarint(b, e.lastSeq)
		b = binary.AppendUvarint(b, uint64(len(e.key)))
		b = append(b, e.key...)
	}
	b = appendTrailer(b, off, frameIndex)
	f.index = handle{int64(off), int64(len(b) - off)}
	off = len(b)
	b = appendTrailer(appendInfo(b, info), off, frameInfo)
	f.info = handle{int64(off), int64(len(b) - off)}
	return appendFooter(b, f)
}

// Frames whose checksums are right but whose contents contradict each
// other are refused too.
func TestConsistentlySealedNonsenseIsRefused(t *testing.T) {
	ctx := context.Background()
	put := func(k string, seq uint64) base.Row {
		return base.Row{Key: []byte(k), Value: []byte("v" + k), Kind: base.KindPut, Seq: seq}
	}
	a, b, c := put("a", 3), put("b", 2), put("c", 1)
	info := Info{Kind: KindSorted, Rows: 3, Blocks: 1, FirstKey: []byte("a"), LastKey: []byte("c"), MinSeq: 1, MaxSeq: 3}
	entry := func(rows int, first, last uint64, key string) []indexEntry {
		return []indexEntry{{rows: rows, firstSeq: first, lastSeq: last, key: []byte(key)}}
	}
	good := entry(3, 3, 1, "c")
	with := func(edit func(*Info)) Info {
		in := info
		edit(&in)
		return in
	}
	for _, tc := range []struct {
		name    string
		info    Info
		blocks  [][]byte
		entries []indexEntry
		atOpen  bool
	}{
		{"rows-swapped", info, [][]byte{concatRows(b, a, c)}, good, false},
		{"row-missing", info, [][]byte{concatRows(a, c)}, good, false},
		{"extra-row", info, [][]byte{concatRows(a, b, c, put("d", 1))}, good, false},
		{"seq-outside-info", info, [][]byte{concatRows(a, b, put("c", 9))}, good, false},
		{"bad-row-kind", info, [][]byte{concatRows(a, b, base.Row{Key: []byte("c"), Kind: 7, Seq: 1})}, good, false},
		{"trailing-garbage", info, [][]byte{append(concatRows(a, b, c), 0x80)}, good, false},
		{"shared-prefix-too-long", with(func(in *Info) { in.Rows = 2 }), [][]byte{append(concatRows(a), 5, 0, 0, 1, 2)}, entry(2, 3, 2, "c"), false},
		{"first-row-shares", info, [][]byte{append([]byte{1, 0, 0, 1, 3}, concatRows(b, c)...)}, good, false},
		{"last-key-not-index-key", info, [][]byte{concatRows(a, b, c)}, entry(3, 3, 1, "bz"), true},
		{"index-rows-not-info-rows", with(func(in *Info) { in.Rows = 4 }), [][]byte{concatRows(a, b, c)}, good, true},
		{"index-blocks-not-info-blocks", with(func(in *Info) { in.Blocks = 2 }), [][]byte{concatRows(a, b, c)}, good, true},
		{"first-key-after-last", with(func(in *Info) { in.FirstKey = []byte("d") }), [][]byte{concatRows(a, b, c)}, good, true},
		{"first-key-not-first-row", with(func(in *Info) { in.FirstKey = []byte("") }), [][]byte{concatRows(a, b, c)}, good, false},
		{"unknown-table-kind", with(func(in *Info) { in.Kind = 3 }), [][]byte{concatRows(a, b, c)}, good, true},
		{"wal-index-with-key", with(func(in *Info) { in.Kind = KindWAL; in.MinSeq = 1 }), [][]byte{concatRows(a, b, c)}, entry(3, 3, 1, "c"), true},
		{"wal-seqs-backwards", with(func(in *Info) { in.Kind = KindWAL }), [][]byte{concatRows(a, b, c)}, entry(3, 3, 1, ""), true},
		{"wal-rows-backwards", with(func(in *Info) { in.Kind = KindWAL }), [][]byte{concatRows(put("a", 1), put("b", 3), put("c", 2))}, entry(3, 1, 3, ""), false},
		{"empty-table-with-bounds", Info{Kind: KindSorted, FirstKey: []byte("a")}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := assemble(tc.info, tc.blocks, tc.entries)
			tbl, err := OpenBytes(data)
			if tc.atOpen {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("OpenBytes: %v, want ErrCorrupt", err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatalf("OpenBytes: %v", err)
			}
			_, err = tbl.Rows(ctx)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Rows: %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
	// The assembler itself is right: the consistent version reads back.
	tbl, err := OpenBytes(assemble(info, [][]byte{concatRows(a, b, c)}, entry(3, 3, 1, "c")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "assembled", got, []base.Row{a, b, c})
}

func concatRows(rows ...base.Row) []byte {
	var b []byte
	for _, r := range rows {
		b = appendRow(b, 0, r)
	}
	return b
}

func TestCorruptErrorsSayWhere(t *testing.T) {
	data := smallTables(t)["sorted"].data
	tbl, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	e := tbl.index[2]
	bad := append([]byte(nil), data...)
	bad[e.off+1] ^= 1
	tbl, err = OpenBytes(bad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Rows(context.Background())
	want := fmt.Sprintf("sst: block 2 at offset %d: checksum mismatch", e.off)
	if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q, want prefix %q", err, want)
	}
}
