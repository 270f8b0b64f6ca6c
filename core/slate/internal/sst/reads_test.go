package sst

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

func seqRows(n, valueLen int) []base.Row {
	rows := make([]base.Row, n)
	for i := range rows {
		rows[i] = base.Row{Key: []byte(fmt.Sprintf("key/%08d", i)), Value: make([]byte, valueLen), Kind: base.KindPut, Seq: uint64(i)}
	}
	return rows
}

func TestReadCountsSmallTable(t *testing.T) {
	ctx := context.Background()
	rows := seqRows(200, 20)
	data, _ := build(t, Options{Kind: KindSorted, BlockSize: 256}, rows)
	if len(data) > tailReadSize {
		t.Fatalf("table is %d bytes; the test wants one smaller than the tail read", len(data))
	}
	rr := &bytesReader{data: data}
	tbl, err := Open(ctx, rr.read, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := rr.reads.Load(); n != 1 {
		t.Fatalf("Open cost %d reads, want 1", n)
	}
	// The whole table came with the tail read: blocks are served from it.
	if _, ok, err := tbl.Get(ctx, rows[57].Key, math.MaxUint64); !ok || err != nil {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if _, err := tbl.Rows(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rr.reads.Load(); n != 1 {
		t.Fatalf("Open+Get+Rows of a small table cost %d reads, want 1", n)
	}
}

func TestReadCountsLargeTable(t *testing.T) {
	ctx := context.Background()
	rows := seqRows(20000, 40) // ~1.2 MB, metadata well under the tail read
	data, info := build(t, Options{Kind: KindSorted}, rows)
	rr := &bytesReader{data: data}
	tbl, err := Open(ctx, rr.read, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := rr.reads.Load(); n != 1 {
		t.Fatalf("Open cost %d reads, want 1", n)
	}
	uncached := 0
	for _, e := range tbl.index {
		if e.off < tbl.cacheOff {
			uncached++
		}
	}
	if uncached < info.Blocks/2 {
		t.Fatalf("%d of %d blocks uncached; the test wants most blocks to need a read", uncached, info.Blocks)
	}

	for _, i := range []int{0, 1, 5000, 12345, 19999} {
		before := rr.reads.Load()
		got, ok, err := tbl.Get(ctx, rows[i].Key, math.MaxUint64)
		if err != nil || !ok || got.Seq != rows[i].Seq {
			t.Fatalf("Get(%q) = %s %v %v", rows[i].Key, got, ok, err)
		}
		if n := rr.reads.Load() - before; n > 1 {
			t.Fatalf("Get(%q) cost %d reads, want at most 1", rows[i].Key, n)
		}
	}

	rr.reads.Store(0)
	rr.bytes.Store(0)
	if _, err := tbl.Rows(ctx); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, e := range tbl.index[:uncached] {
		want += e.length
	}
	if n, b := rr.reads.Load(), rr.bytes.Load(); n != int64(uncached) || b != want {
		t.Fatalf("Rows cost %d reads of %d bytes, want one per uncached block: %d reads of %d bytes", n, b, uncached, want)
	}

	// Iterating from the middle reads only the blocks from there on.
	rr.reads.Store(0)
	it := tbl.Iter(ctx, rows[10000].Key)
	for k := 0; k < 3; k++ {
		if _, ok := it.Next(); !ok {
			t.Fatal(it.Err())
		}
	}
	if n := rr.reads.Load(); n != 1 {
		t.Fatalf("Iter(from) + 3 rows cost %d reads, want 1", n)
	}
}

func TestReadCountsWhenMetadataExceedsTailRead(t *testing.T) {
	ctx := context.Background()
	rows := seqRows(12000, 1)
	data, info := build(t, Options{Kind: KindSorted, BlockSize: 1}, rows) // one block per row: a big index
	rr := &bytesReader{data: data}
	tbl, err := Open(ctx, rr.read, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := rr.reads.Load(); n != 2 {
		t.Fatalf("Open cost %d reads, want 2 (tail, then the rest of the metadata)", n)
	}
	if tbl.Info().Blocks != info.Blocks {
		t.Fatal("info mismatch")
	}
	got, err := tbl.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "Rows", got, rows)
}

func TestConcurrentReadersShareATable(t *testing.T) {
	ctx := context.Background()
	rows := seqRows(5000, 30)
	data, _ := build(t, Options{Kind: KindSorted, BlockSize: 512}, rows)
	rr := &bytesReader{data: data}
	tbl, err := Open(ctx, rr.read, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := g; i < len(rows); i += 97 {
				got, ok, err := tbl.Get(ctx, rows[i].Key, math.MaxUint64)
				if err != nil || !ok || !sameRow(got, rows[i]) {
					errs <- fmt.Errorf("Get(%q) = %s %v %v", rows[i].Key, got, ok, err)
					return
				}
			}
			it := tbl.Iter(ctx, rows[g*100].Key)
			n := 0
			for _, ok := it.Next(); ok; _, ok = it.Next() {
				n++
			}
			if it.Err() != nil || n != len(rows)-g*100 {
				errs <- fmt.Errorf("Iter: %d rows, %v", n, it.Err())
				return
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
