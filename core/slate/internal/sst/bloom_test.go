package sst

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// The filter hash is persisted in every sorted table: these values must
// never change.
func TestKeyHashIsPinned(t *testing.T) {
	for _, tc := range []struct {
		key  string
		hash uint64
	}{
		{"", 0xefd01f60ba992926},
		{"a", 0x82a2a958a9bece5b},
		{"moraine", 0x78384fc1611104b3},
		{"sys/head", 0x31458b843b2daf6e},
		{"\x00\xff", 0xacb64f88d28b68b8},
	} {
		if got := keyHash([]byte(tc.key)); got != tc.hash {
			t.Errorf("keyHash(%q) = %#016x, pinned %#016x", tc.key, got, tc.hash)
		}
	}
	rng := rand.New(rand.NewPCG(6, 6))
	for i := 0; i < 1000; i++ {
		k := randKey(rng)
		h := fnv.New64a()
		h.Write(k)
		if got, want := fnv1a64(k), h.Sum64(); got != want {
			t.Fatalf("fnv1a64(%q) = %#x, hash/fnv says %#x", k, got, want)
		}
	}
}

func TestBloomHasNoFalseNegativesAndFewFalsePositives(t *testing.T) {
	for _, tc := range []struct {
		bitsPerKey int
		maxFP      float64
	}{
		{10, 0.05}, // ~0.8% expected
		{5, 0.15},  // ~9% expected
		{20, 0.01},
	} {
		t.Run(fmt.Sprintf("%d-bits-per-key", tc.bitsPerKey), func(t *testing.T) {
			const n = 10000
			var rows []base.Row
			for i := 0; i < n; i++ {
				rows = append(rows, base.Row{Key: []byte(fmt.Sprintf("present/%08d", i)), Kind: base.KindDelete, Seq: 1})
			}
			data, info := build(t, Options{Kind: KindSorted, BloomBitsPerKey: tc.bitsPerKey}, rows)
			if !info.HasFilter {
				t.Fatal("no filter")
			}
			tbl, err := OpenBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if !tbl.MayContain(r.Key) {
					t.Fatalf("false negative for %q", r.Key)
				}
			}
			fp := 0
			for i := 0; i < n; i++ {
				if tbl.MayContain([]byte(fmt.Sprintf("absent/%08d", i))) {
					fp++
				}
			}
			rate := float64(fp) / n
			t.Logf("false-positive rate %.3f%% (%d of %d), filter %d bytes", 100*rate, fp, n, len(tbl.filter))
			if rate > tc.maxFP {
				t.Fatalf("false-positive rate %.3f, want < %.3f", rate, tc.maxFP)
			}
		})
	}
}

func TestFilterCountsDistinctKeys(t *testing.T) {
	// 100 keys with 10 versions each: MinFilterKeys compares with 100, not
	// 1000, and the filter is sized for 100 keys.
	var rows []base.Row
	for i := 0; i < 100; i++ {
		for seq := uint64(10); seq > 0; seq-- {
			rows = append(rows, base.Row{Key: []byte(fmt.Sprintf("k%03d", i)), Value: []byte("v"), Kind: base.KindPut, Seq: seq})
		}
	}
	if _, info := build(t, Options{Kind: KindSorted, MinFilterKeys: 101}, rows); info.HasFilter {
		t.Fatal("filter built below MinFilterKeys distinct keys")
	}
	data, info := build(t, Options{Kind: KindSorted, MinFilterKeys: 100}, rows)
	if !info.HasFilter {
		t.Fatal("no filter at MinFilterKeys distinct keys")
	}
	tbl, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(tbl.filter), 100*DefaultBloomBitsPerKey/8; got != want {
		t.Fatalf("filter is %d bytes, want %d", got, want)
	}
}

func TestGetSkipsBlocksTheFilterRulesOut(t *testing.T) {
	ctx := context.Background()
	var rows []base.Row
	for i := 0; i < 20000; i++ {
		rows = append(rows, base.Row{Key: []byte(fmt.Sprintf("key/%08d", 2*i)), Value: []byte("some value"), Kind: base.KindPut, Seq: 7})
	}
	data, _ := build(t, Options{Kind: KindSorted}, rows)
	rr := &bytesReader{data: data}
	tbl, err := Open(ctx, rr.read, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rr.reads.Store(0)
	for i := 0; i < 1000; i++ {
		if _, ok, err := tbl.Get(ctx, []byte(fmt.Sprintf("key/%08d", 2*i+1)), 100); ok || err != nil {
			t.Fatalf("absent key found: %v %v", ok, err)
		}
	}
	if n := rr.reads.Load(); n > 30 {
		t.Fatalf("1000 absent Gets cost %d block reads; the filter should stop ~99%%", n)
	}
}
