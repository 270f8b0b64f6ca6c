package sst

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// bytesReader serves ranged reads over data and counts them.
type bytesReader struct {
	data  []byte
	reads atomic.Int64
	bytes atomic.Int64
}

func (r *bytesReader) read(_ context.Context, off, length int64) ([]byte, error) {
	r.reads.Add(1)
	if off < 0 || length < 0 || off > int64(len(r.data)) {
		return nil, fmt.Errorf("bad range %d+%d of %d", off, length, len(r.data))
	}
	end := min(off+length, int64(len(r.data))) // short like an object store
	r.bytes.Add(end - off)
	return append([]byte(nil), r.data[off:end]...), nil
}

// randKey returns keys that share prefixes often, and sometimes are binary,
// empty or long.
func randKey(rng *rand.Rand) []byte {
	switch rng.IntN(10) {
	case 0:
		return []byte{}
	case 1:
		k := make([]byte, rng.IntN(8))
		for i := range k {
			k[i] = byte(rng.IntN(256))
		}
		return k
	case 2:
		return []byte(fmt.Sprintf("long/%0200d", rng.IntN(50)))
	default:
		return []byte(fmt.Sprintf("k/%02d/%d", rng.IntN(30), rng.IntN(20)))
	}
}

func randValue(rng *rand.Rand) []byte {
	switch rng.IntN(6) {
	case 0:
		return []byte{}
	case 1:
		return bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(300))
	default:
		v := make([]byte, rng.IntN(24))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		return v
	}
}

func randRow(rng *rand.Rand, key []byte, seq uint64) base.Row {
	if rng.IntN(5) == 0 {
		return base.Row{Key: key, Kind: base.KindDelete, Seq: seq}
	}
	return base.Row{Key: key, Value: randValue(rng), Kind: base.KindPut, Seq: seq}
}

// sortedRows returns n random rows in base.Compare order, unique by (key,
// seq), with many versions per key.
func sortedRows(rng *rand.Rand, n int) []base.Row {
	seen := map[string]bool{}
	var rows []base.Row
	for len(rows) < n {
		k := randKey(rng)
		seq := uint64(rng.IntN(100))
		if rng.IntN(10) == 0 {
			seq = rng.Uint64()
		}
		id := fmt.Sprintf("%q@%d", k, seq)
		if seen[id] {
			continue
		}
		seen[id] = true
		rows = append(rows, randRow(rng, k, seq))
	}
	sort.Slice(rows, func(i, j int) bool { return base.Compare(rows[i], rows[j]) < 0 })
	return rows
}

// walRows returns batches of rows: one seq per batch, non-decreasing seqs,
// keys in any order, unique within a batch.
func walRows(rng *rand.Rand, batches int) []base.Row {
	var rows []base.Row
	seq := uint64(rng.IntN(1000))
	for b := 0; b < batches; b++ {
		seq += uint64(1 + rng.IntN(3))
		seen := map[string]bool{}
		for i := rng.IntN(12); i >= 0; i-- {
			k := randKey(rng)
			if seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			rows = append(rows, randRow(rng, k, seq))
		}
	}
	return rows
}

func build(t testing.TB, opts Options, rows []base.Row) ([]byte, Info) {
	t.Helper()
	b := NewBuilder(opts)
	for _, r := range rows {
		if err := b.Add(r); err != nil {
			t.Fatalf("Add(%s): %v", r, err)
		}
	}
	data, info, err := b.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return data, info
}

// refGet is the reference Get: the newest row for key with Seq <= maxSeq.
func refGet(rows []base.Row, key []byte, maxSeq uint64) (base.Row, bool) {
	var best base.Row
	ok := false
	for _, r := range rows {
		if bytes.Equal(r.Key, key) && r.Seq <= maxSeq && (!ok || r.Seq > best.Seq) {
			best, ok = r, true
		}
	}
	return best, ok
}

// refIter is the reference Iter(from) over rows already in Compare order.
func refIter(rows []base.Row, from []byte) []base.Row {
	i := sort.Search(len(rows), func(i int) bool { return bytes.Compare(rows[i].Key, from) >= 0 })
	return rows[i:]
}

func sameRow(a, b base.Row) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Kind == b.Kind && a.Seq == b.Seq &&
		(a.Kind != base.KindDelete || a.Value == nil) && (b.Kind != base.KindDelete || b.Value == nil)
}

func checkRows(t testing.TB, what string, got, want []base.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !sameRow(got[i], want[i]) {
			t.Fatalf("%s: row %d = %s, want %s", what, i, got[i], want[i])
		}
	}
}

func collect(t testing.TB, it *Iterator) []base.Row {
	t.Helper()
	var rows []base.Row
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		rows = append(rows, r)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterate: %v", err)
	}
	return rows
}

// openBoth opens data from bytes and through a counting RangeReader.
func openBoth(t testing.TB, data []byte) map[string]*Table {
	t.Helper()
	a, err := OpenBytes(data)
	if err != nil {
		t.Fatalf("OpenBytes: %v", err)
	}
	rr := &bytesReader{data: data}
	b, err := Open(context.Background(), rr.read, int64(len(data)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return map[string]*Table{"bytes": a, "ranged": b}
}
