package slate_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// Benchmarks. Run (see BENCHMARK.md for results):
//
//	go test -run '^$' -bench 'Get|Scan' ./core/slate/
//	go test -run '^$' -bench 'Write|ReaderLag' -benchtime 300x ./core/slate/
//
// They report throughput as custom metrics (keys/s, ops/s) and read
// amplification as ssts/get; comparisons are ratios within one run.

func benchStore(b *testing.B, kind string) objstore.Store {
	switch kind {
	case "memory":
		return objstore.NewMemory(0)
	case "local":
		s, err := objstore.NewLocal(b.TempDir(), 0)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	b.Fatalf("unknown store %q", kind)
	return nil
}

func benchOpen(b *testing.B, s objstore.Store, settings slate.Settings) *slate.DB {
	b.Helper()
	db, err := slate.Open(bg, s, "db", slate.WithSettings(settings),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MinSources: 2, RetainInputs: -1}),
		slate.WithGC(slate.GCOptions{Interval: -1}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close(bg) })
	return db
}

// BenchmarkWrite: durable batch writes (Write waits for the WAL). One
// writer with FlushContinuous (every write is its own WAL upload), and 16
// concurrent writers with FlushContinuous or the 100 ms interval (writers
// share uploads).
func BenchmarkWrite(b *testing.B) {
	for _, store := range []string{"memory", "local"} {
		for _, keys := range []int{1, 16, 256} {
			for _, mode := range []struct {
				name    string
				flush   time.Duration
				writers int
			}{{"continuous/1writer", slate.FlushContinuous, 1}, {"continuous/16writers", slate.FlushContinuous, 16}, {"100ms/16writers", 100 * time.Millisecond, 16}} {
				b.Run(fmt.Sprintf("%s/keys=%d/%s", store, keys, mode.name), func(b *testing.B) {
					db := benchOpen(b, benchStore(b, store), slate.Settings{FlushInterval: mode.flush, ManifestPollInterval: -1})
					val := make([]byte, 100)
					var n atomic.Int64
					b.ResetTimer()
					start := time.Now()
					if mode.writers == 1 {
						for i := 0; i < b.N; i++ {
							writeBench(b, db, int(n.Add(1)), keys, val)
						}
					} else {
						// RunParallel starts parallelism x GOMAXPROCS goroutines.
						b.SetParallelism(max(1, mode.writers/runtime.GOMAXPROCS(0)))
						b.RunParallel(func(pb *testing.PB) {
							for pb.Next() {
								writeBench(b, db, int(n.Add(1)), keys, val)
							}
						})
					}
					el := time.Since(start).Seconds()
					b.ReportMetric(float64(b.N)/el, "batches/s")
					b.ReportMetric(float64(b.N*keys)/el, "keys/s")
				})
			}
		}
	}
}

func writeBench(b *testing.B, db *slate.DB, i, keys int, val []byte) {
	wb := slate.NewWriteBatch()
	for k := 0; k < keys; k++ {
		wb.Put([]byte(fmt.Sprintf("k%08d-%03d", i, k)), val)
	}
	if _, err := db.Write(bg, wb, slate.WriteOptions{}); err != nil {
		b.Error(err)
	}
}

// readSetup loads n keys in random order and leaves them in the memtable,
// in 10 L0 tables (each spanning the whole key range), or (after
// CompactAll) in one sorted run of SSTs cut at 512 KiB (small enough to be
// read whole and kept, as L0 tables of this size are).
func readSetup(b *testing.B, where string, n int) *slate.DB {
	db, err := slate.Open(bg, objstore.NewMemory(0), "db",
		slate.WithSettings(slate.Settings{FlushInterval: slate.FlushManual, ManifestPollInterval: -1}),
		slate.WithCompactor(slate.CompactorOptions{PollInterval: -1, MaxSSTSize: 512 << 10, RetainInputs: -1}),
		slate.WithGC(slate.GCOptions{Interval: -1}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close(bg) })
	val := make([]byte, 100)
	perm := rand.New(rand.NewPCG(2, 2)).Perm(n)
	for i, k := range perm {
		wb := slate.NewWriteBatch()
		wb.Put([]byte(fmt.Sprintf("key%08d", k)), val)
		if _, err := db.Write(bg, wb, slate.WriteOptions{NoWait: true}); err != nil {
			b.Fatal(err)
		}
		if where != "memtable" && i%(n/10) == n/10-1 {
			if err := db.FlushMemtable(bg); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.Flush(bg); err != nil {
		b.Fatal(err)
	}
	if where == "compacted" {
		if _, err := db.CompactAll(bg); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// BenchmarkGet: random point reads of existing keys (gets/s), with the
// read amplification: ssts/get counts tables whose blocks a Get searched,
// filterprobes/get the tables whose bloom filter it consulted.
func BenchmarkGet(b *testing.B) {
	const n = 20000
	for _, where := range []string{"memtable", "l0", "compacted"} {
		b.Run(where, func(b *testing.B) {
			db := readSetup(b, where, n)
			rng := rand.New(rand.NewPCG(1, 1))
			for i := 0; i < n; i += 97 { // warm: every table opened once
				db.Get(bg, []byte(fmt.Sprintf("key%08d", i)))
			}
			before := db.ReadStats()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				k := fmt.Sprintf("key%08d", rng.IntN(n))
				if _, ok, err := db.Get(bg, []byte(k)); err != nil || !ok {
					b.Fatalf("Get(%s): %v %v", k, ok, err)
				}
			}
			el := time.Since(start).Seconds()
			st := db.ReadStats()
			b.ReportMetric(float64(b.N)/el, "gets/s")
			b.ReportMetric(float64(st.SSTsConsulted-before.SSTsConsulted)/float64(st.Gets-before.Gets), "ssts/get")
			b.ReportMetric(float64(st.SSTsConsulted+st.FilterSkips-before.SSTsConsulted-before.FilterSkips)/float64(st.Gets-before.Gets), "filterprobes/get")
		})
	}
}

// BenchmarkScan: full scans of n keys (keys/s).
func BenchmarkScan(b *testing.B) {
	const n = 20000
	for _, where := range []string{"memtable", "l0", "compacted"} {
		b.Run(where, func(b *testing.B) {
			db := readSetup(b, where, n)
			scanAllErr(db.Scan(bg, nil, nil)) // warm: every table opened once
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				it := db.Scan(bg, nil, nil)
				c := 0
				for it.Next() {
					c++
				}
				if err := it.Err(); err != nil || c != n {
					b.Fatalf("scan: %d keys, %v", c, err)
				}
				it.Close()
			}
			b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "keys/s")
		})
	}
}

// BenchmarkReaderLag: time from a durable Write returning to a polling
// Reader's WaitSeq returning, at a given reader poll interval (writer
// FlushContinuous, memory store; each write lands at a random phase of the
// poll). Reports p50 and p99 in milliseconds.
func BenchmarkReaderLag(b *testing.B) {
	for _, poll := range []time.Duration{10 * time.Millisecond, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("poll=%v", poll), func(b *testing.B) {
			s := objstore.NewMemory(0)
			db := benchOpen(b, s, slate.Settings{FlushInterval: slate.FlushContinuous, ManifestPollInterval: -1})
			r, err := slate.OpenReader(bg, s, "db", slate.ReaderOptions{PollInterval: poll, CheckpointLifetime: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(bg)
			var lags []time.Duration
			rng := rand.New(rand.NewPCG(3, 3))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Write at a random phase of the reader's poll.
				b.StopTimer()
				time.Sleep(time.Duration(rng.Int64N(int64(poll))))
				b.StartTimer()
				h, err := db.Write(bg, batchOf(fmt.Sprintf("k%d", i), "v"), slate.WriteOptions{})
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := r.WaitSeq(bg, h.Seq); err != nil {
					b.Fatal(err)
				}
				lags = append(lags, time.Since(t0))
			}
			slices.Sort(lags)
			ms := func(q float64) float64 {
				return float64(lags[min(len(lags)-1, int(q*float64(len(lags))))]) / float64(time.Millisecond)
			}
			b.ReportMetric(ms(0.5), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
		})
	}
}
