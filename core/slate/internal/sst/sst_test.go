package sst

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

func TestSortedRoundTripMatchesReference(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts Options
		rows int
	}{
		{"one-row-blocks", Options{Kind: KindSorted, BlockSize: 1}, 300},
		{"tiny-blocks", Options{Kind: KindSorted, BlockSize: 64}, 1500},
		{"default-blocks", Options{Kind: KindSorted}, 3000},
		{"no-filter", Options{Kind: KindSorted, BlockSize: 256, BloomBitsPerKey: -1}, 800},
		{"filter-below-min-keys", Options{Kind: KindSorted, BlockSize: 256, MinFilterKeys: 1 << 20}, 800},
		{"sparse-filter", Options{Kind: KindSorted, BlockSize: 512, BloomBitsPerKey: 2}, 800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			rows := sortedRows(rng, tc.rows)
			data, info := build(t, tc.opts, rows)
			if info.Rows != len(rows) || info.Size != int64(len(data)) || info.Kind != KindSorted ||
				!bytes.Equal(info.FirstKey, rows[0].Key) || !bytes.Equal(info.LastKey, rows[len(rows)-1].Key) {
				t.Fatalf("Finish info = %+v", info)
			}
			wantFilter := tc.opts.BloomBitsPerKey >= 0 && tc.opts.MinFilterKeys < 1000
			if info.HasFilter != wantFilter {
				t.Fatalf("HasFilter = %v, want %v", info.HasFilter, wantFilter)
			}
			for name, tbl := range openBoth(t, data) {
				t.Run(name, func(t *testing.T) {
					got := tbl.Info()
					if fmt.Sprint(got) != fmt.Sprint(info) {
						t.Fatalf("Info() = %+v, Finish said %+v", got, info)
					}
					all, err := tbl.Rows(ctx)
					if err != nil {
						t.Fatal(err)
					}
					checkRows(t, "Rows", all, rows)
					checkRows(t, "Iter(nil)", collect(t, tbl.Iter(ctx, nil)), rows)
					for i := 0; i < 200; i++ {
						from := randKey(rng)
						if i%3 == 0 {
							from = rows[rng.IntN(len(rows))].Key
						}
						checkRows(t, fmt.Sprintf("Iter(%q)", from), collect(t, tbl.Iter(ctx, from)), refIter(rows, from))
					}
					for i := 0; i < 2000; i++ {
						key := randKey(rng)
						if i%2 == 0 {
							key = rows[rng.IntN(len(rows))].Key
						}
						maxSeq := uint64(rng.IntN(110))
						switch i % 7 {
						case 0:
							maxSeq = math.MaxUint64
						case 1:
							maxSeq = rng.Uint64()
						}
						got, ok, err := tbl.Get(ctx, key, maxSeq)
						if err != nil {
							t.Fatal(err)
						}
						want, wantOK := refGet(rows, key, maxSeq)
						if ok != wantOK || (ok && !sameRow(got, want)) {
							t.Fatalf("Get(%q, %d) = %s %v, want %s %v", key, maxSeq, got, ok, want, wantOK)
						}
					}
				})
			}
		})
	}
}

func TestGetFindsVersionsSpanningBlocks(t *testing.T) {
	ctx := context.Background()
	var rows []base.Row
	rows = append(rows, base.Row{Key: []byte("a"), Value: []byte("x"), Kind: base.KindPut, Seq: 5})
	for seq := uint64(200); seq >= 10; seq -= 10 { // even seqs only: odd maxSeqs fall between
		r := base.Row{Key: []byte("hot"), Value: []byte(fmt.Sprintf("v%03d", seq)), Kind: base.KindPut, Seq: seq}
		if seq%30 == 0 {
			r = base.Row{Key: []byte("hot"), Kind: base.KindDelete, Seq: seq}
		}
		rows = append(rows, r)
	}
	rows = append(rows, base.Row{Key: []byte("z"), Value: []byte("y"), Kind: base.KindPut, Seq: 1})
	data, info := build(t, Options{Kind: KindSorted, BlockSize: 40}, rows)
	if info.Blocks < 5 {
		t.Fatalf("only %d blocks; the test needs versions across several", info.Blocks)
	}
	for name, tbl := range openBoth(t, data) {
		for maxSeq := uint64(0); maxSeq <= 210; maxSeq++ {
			got, ok, err := tbl.Get(ctx, []byte("hot"), maxSeq)
			if err != nil {
				t.Fatal(err)
			}
			want, wantOK := refGet(rows, []byte("hot"), maxSeq)
			if ok != wantOK || (ok && !sameRow(got, want)) {
				t.Fatalf("%s: Get(hot, %d) = %s %v, want %s %v", name, maxSeq, got, ok, want, wantOK)
			}
		}
		for _, k := range []string{"", "b", "hos", "hotter", "zz"} {
			if r, ok, err := tbl.Get(ctx, []byte(k), math.MaxUint64); err != nil || ok {
				t.Fatalf("%s: Get(%q) = %s %v %v, want absent", name, k, r, ok, err)
			}
		}
	}
}

func TestWALRoundTripKeepsAppendOrder(t *testing.T) {
	ctx := context.Background()
	for _, bs := range []int{1, 64, 0} {
		t.Run(fmt.Sprintf("block-size-%d", bs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(bs)))
			rows := walRows(rng, 300)
			data, info := build(t, Options{Kind: KindWAL, BlockSize: bs}, rows)
			if info.HasFilter || info.Kind != KindWAL || info.Rows != len(rows) ||
				info.MinSeq != rows[0].Seq || info.MaxSeq != rows[len(rows)-1].Seq {
				t.Fatalf("info = %+v", info)
			}
			for _, r := range rows {
				if bytes.Compare(r.Key, info.FirstKey) < 0 || bytes.Compare(r.Key, info.LastKey) > 0 {
					t.Fatalf("key %q outside info range [%q, %q]", r.Key, info.FirstKey, info.LastKey)
				}
			}
			for name, tbl := range openBoth(t, data) {
				got, err := tbl.Rows(ctx)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, name+" Rows", got, rows)
				checkRows(t, name+" Iter(nil)", collect(t, tbl.Iter(ctx, nil)), rows)
				if _, _, err := tbl.Get(ctx, rows[0].Key, math.MaxUint64); !errors.Is(err, ErrInvalid) {
					t.Fatalf("Get on a WAL table: %v, want ErrInvalid", err)
				}
				it := tbl.Iter(ctx, []byte("k"))
				if _, ok := it.Next(); ok || !errors.Is(it.Err(), ErrInvalid) {
					t.Fatalf("Iter from a key on a WAL table: %v, want ErrInvalid", it.Err())
				}
				if !tbl.MayContain([]byte("anything")) {
					t.Fatal("MayContain without a filter must be true")
				}
			}
		})
	}
}

func TestEmptyTablesRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, k := range []Kind{KindSorted, KindWAL} {
		data, info := build(t, Options{Kind: k}, nil)
		if info.Rows != 0 || info.Blocks != 0 || info.HasFilter {
			t.Fatalf("%s: info %+v", k, info)
		}
		for name, tbl := range openBoth(t, data) {
			if rows, err := tbl.Rows(ctx); err != nil || len(rows) != 0 {
				t.Fatalf("%s %s: Rows = %v, %v", k, name, rows, err)
			}
			if k == KindSorted {
				if _, ok, err := tbl.Get(ctx, nil, math.MaxUint64); ok || err != nil {
					t.Fatalf("Get on empty table: %v %v", ok, err)
				}
			}
		}
	}
}

func TestRowsOwnTheirMemory(t *testing.T) {
	ctx := context.Background()
	rows := []base.Row{
		{Key: []byte("a"), Value: []byte("1"), Kind: base.KindPut, Seq: 2},
		{Key: []byte("ab"), Value: []byte("2"), Kind: base.KindPut, Seq: 1},
		{Key: []byte("abc"), Kind: base.KindDelete, Seq: 1},
	}
	data, _ := build(t, Options{Kind: KindSorted}, rows)
	orig := append([]byte(nil), data...)
	tbl, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := tbl.Get(ctx, []byte("ab"), 9)
	// Appending to or overwriting returned rows must not touch the table
	// or neighbouring rows.
	for i := range got {
		got[i].Key = append(got[i].Key, 'X')
		for j := range got[i].Value {
			got[i].Value[j] = 'Z'
		}
	}
	g.Key[0], g.Value[0] = 'Q', 'Q'
	if !bytes.Equal(data, orig) {
		t.Fatal("writing to returned rows changed the table's bytes")
	}
	again, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "Rows after scribbling", again, rows)
	if got[1].Key[0] != 'a' || string(got[0].Key) != "aX" {
		t.Fatalf("rows alias each other: %q %q", got[0].Key, got[1].Key)
	}
	if got[0].Value == nil || got[2].Value != nil {
		t.Fatal("Value must be nil exactly for tombstones")
	}
}

func TestBuilderRefusesBadRows(t *testing.T) {
	put := func(k string, seq uint64) base.Row {
		return base.Row{Key: []byte(k), Value: []byte("v"), Kind: base.KindPut, Seq: seq}
	}
	for _, tc := range []struct {
		name string
		opts Options
		rows []base.Row // the last one must be refused
	}{
		{"sorted-key-descending", Options{Kind: KindSorted}, []base.Row{put("b", 1), put("a", 1)}},
		{"sorted-seq-ascending", Options{Kind: KindSorted}, []base.Row{put("a", 1), put("a", 2)}},
		{"sorted-duplicate", Options{Kind: KindSorted}, []base.Row{put("a", 1), put("a", 1)}},
		{"wal-seq-backwards", Options{Kind: KindWAL}, []base.Row{put("a", 2), put("b", 1)}},
		{"wal-duplicate-in-batch", Options{Kind: KindWAL}, []base.Row{put("b", 2), put("a", 2), put("b", 2)}},
		{"invalid-table-kind", Options{Kind: 0}, []base.Row{put("a", 1)}},
		{"unknown-table-kind", Options{Kind: 9}, []base.Row{put("a", 1)}},
		{"negative-block-size", Options{Kind: KindSorted, BlockSize: -1}, []base.Row{put("a", 1)}},
		{"invalid-row-kind", Options{Kind: KindSorted}, []base.Row{{Key: []byte("a"), Kind: 0, Seq: 1}}},
		{"unknown-row-kind", Options{Kind: KindWAL}, []base.Row{{Key: []byte("a"), Kind: 3, Seq: 1}}},
		{"tombstone-with-value", Options{Kind: KindSorted}, []base.Row{{Key: []byte("a"), Value: []byte("v"), Kind: base.KindDelete, Seq: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuilder(tc.opts)
			n := len(tc.rows) - 1
			for _, r := range tc.rows[:n] {
				if err := b.Add(r); err != nil {
					t.Fatalf("Add(%s): %v", r, err)
				}
			}
			err := b.Add(tc.rows[n])
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Add(%s) = %v, want ErrInvalid", tc.rows[n], err)
			}
			if b.Len() != n {
				t.Fatalf("Len = %d after a refused row, want %d", b.Len(), n)
			}
			t.Logf("%v", err)
			if tc.opts.Kind.Valid() && tc.opts.BlockSize >= 0 {
				// The refused row left no trace: the table still reads back.
				data, _, err := b.Finish()
				if err != nil {
					t.Fatal(err)
				}
				tbl, err := OpenBytes(data)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tbl.Rows(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, "rows", got, tc.rows[:n])
			}
		})
	}
}

func TestBuilderAcceptsEdgeRows(t *testing.T) {
	// WAL: a key may repeat across batches; sorted: empty key, empty value,
	// seq 0 and MaxUint64; tombstone with an empty non-nil value.
	ctx := context.Background()
	wal := []base.Row{
		{Key: []byte("a"), Value: []byte("1"), Kind: base.KindPut, Seq: 1},
		{Key: []byte("a"), Value: []byte("2"), Kind: base.KindPut, Seq: 2},
		{Key: []byte(""), Kind: base.KindDelete, Seq: 2},
	}
	sorted := []base.Row{
		{Key: []byte{}, Value: []byte{}, Kind: base.KindPut, Seq: math.MaxUint64},
		{Key: []byte{}, Kind: base.KindDelete, Seq: 0},
		{Key: []byte{0}, Value: []byte{}, Kind: base.KindDelete, Seq: 3},
		{Key: []byte{0xff, 0xff}, Value: bytes.Repeat([]byte("big"), 5000), Kind: base.KindPut, Seq: 3},
	}
	for _, tc := range []struct {
		kind Kind
		rows []base.Row
	}{{KindWAL, wal}, {KindSorted, sorted}} {
		data, _ := build(t, Options{Kind: tc.kind, BlockSize: 128}, tc.rows)
		tbl, err := OpenBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tbl.Rows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]base.Row, len(tc.rows))
		for i, r := range tc.rows {
			want[i] = r
			if r.Kind == base.KindDelete {
				want[i].Value = nil
			}
		}
		checkRows(t, tc.kind.String(), got, want)
	}
}

func TestBuilderUseAfterFinish(t *testing.T) {
	b := NewBuilder(Options{Kind: KindSorted})
	if _, _, err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(base.Row{Key: []byte("a"), Kind: base.KindPut}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add after Finish: %v", err)
	}
	if _, _, err := b.Finish(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("second Finish: %v", err)
	}
}

func TestBlocksRespectBlockSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rows := sortedRows(rng, 2000)
	for _, bs := range []int{64, 512, 4096} {
		data, info := build(t, Options{Kind: KindSorted, BlockSize: bs}, rows)
		tbl, err := OpenBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range tbl.index {
			if e.length > int64(bs) && e.rows != 1 {
				t.Fatalf("bs %d: block %d is %d bytes with %d rows", bs, i, e.length, e.rows)
			}
		}
		if avg := float64(info.Size) / float64(info.Blocks); bs >= 512 && avg < float64(bs)/2 {
			t.Fatalf("bs %d: blocks average %.0f bytes", bs, avg)
		}
	}
}

func TestEstimatedSizeTracksFinish(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	rows := sortedRows(rng, 5000)
	b := NewBuilder(Options{Kind: KindSorted})
	for i, r := range rows {
		if err := b.Add(r); err != nil {
			t.Fatal(err)
		}
		if i == len(rows)/2 && b.EstimatedSize() <= 0 {
			t.Fatal("no estimate")
		}
	}
	est := b.EstimatedSize()
	data, _, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if est < len(data) || float64(est) > 1.05*float64(len(data)) {
		t.Fatalf("EstimatedSize %d for a %d-byte table", est, len(data))
	}
}

func TestRangeReaderErrorsPassThrough(t *testing.T) {
	ctx := context.Background()
	data, _ := build(t, Options{Kind: KindSorted, BlockSize: 64}, sortedRows(rand.New(rand.NewPCG(5, 5)), 2000))
	boom := errors.New("boom")
	fail := false
	rr := func(ctx context.Context, off, length int64) ([]byte, error) {
		if fail {
			return nil, boom
		}
		return data[off : off+length], nil
	}
	if _, err := Open(ctx, func(context.Context, int64, int64) ([]byte, error) { return nil, boom }, int64(len(data))); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open with a failing reader: %v", err)
	}
	tbl, err := Open(ctx, rr, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := tbl.Rows(ctx); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("Rows with a failing reader: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	fail = false
	if _, _, err := tbl.Get(cctx, []byte("k/00/0"), math.MaxUint64); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a cancelled context: %v", err)
	}
	// A size larger than the object: reads come back short.
	if _, err := Open(ctx, (&bytesReader{data: data}).read, int64(len(data))+10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open with a short read: %v", err)
	}
}
