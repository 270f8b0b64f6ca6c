package sst

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

func benchRows(n int) []base.Row {
	rows := make([]base.Row, n)
	for i := range rows {
		rows[i] = base.Row{
			Key:   []byte(fmt.Sprintf("catalog/table/%08d/column/%04d", i/16, i%16)),
			Value: make([]byte, 100),
			Kind:  base.KindPut,
			Seq:   uint64(1000 + i),
		}
	}
	return rows
}

func BenchmarkBuild(b *testing.B) {
	rows := benchRows(100000)
	b.ReportAllocs()
	var size int
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(Options{Kind: KindSorted})
		for _, r := range rows {
			if err := bl.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		data, _, err := bl.Finish()
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.SetBytes(int64(size))
}

func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	rows := benchRows(100000)
	data, _ := build(b, Options{Kind: KindSorted}, rows)
	tbl, err := OpenBytes(data)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rows[rng.IntN(len(rows))]
		if _, ok, err := tbl.Get(ctx, r.Key, math.MaxUint64); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkIter(b *testing.B) {
	ctx := context.Background()
	rows := benchRows(100000)
	data, _ := build(b, Options{Kind: KindSorted}, rows)
	tbl, err := OpenBytes(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := tbl.Iter(ctx, nil)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "rows/s")
}
