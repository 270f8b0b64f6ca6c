package core_test

// Commit-log benchmarks of ARCHITECTURE.md §10 beyond throughput (which is
// commitlog_bench_test.go): reader freshness, requests per uncontended
// commit, and the single-writer path beside the commit-log path in one
// run. Every number is benchmark output; nothing here asserts a timing.
//
//	go test -run '^$' -bench 'CommitLogFreshness' -benchtime 60x ./core/
//	go test -run '^$' -bench 'CommitLogUncontended|WriterVsCommitLog' -benchtime 600x ./core/

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// benchLogOpts is logOpts without the INFO lines (adoption) in the output.
func benchLogOpts(extra ...func(*core.CatalogOptions)) core.CatalogOptions {
	return logOpts(append([]func(*core.CatalogOptions){func(o *core.CatalogOptions) { o.Logger = quietLogger }}, extra...)...)
}

var quietLogger = slog.New(slog.DiscardHandler)

func memoryBenchStore() benchStore {
	return benchStore{"memory", func(*testing.B) objstore.Store { return objstore.NewMemory(0) }}
}

// percentile returns the p-th percentile (0 < p < 1) of sorted, in ms.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*p), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

func meanMs(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return float64(sum.Microseconds()) / 1000 / float64(len(d))
}

// benchTable opens nothing: it creates table "t" through c and returns it.
func benchTable(b *testing.B, c *core.Catalog) core.TableID {
	b.Helper()
	var id core.TableID
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		main, _ := tx.View().SchemaByName("main")
		var err error
		id, err = tx.CreateTable(main.ID, "t", []core.ColumnDef{{Name: "a", Type: "int64"}})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return id
}

// BenchmarkCommitLogFreshness measures commit-to-visible lag: the time
// from a committer's Commit returning to an observer's read showing that
// commit. The observer reads every 100µs until it does. Observers:
//
//   - reader: a tailing reader (CommitLogTail, ReaderPollInterval = poll),
//     read with Snapshot;
//   - peer-snapshot: another committer (CommitLogPollInterval = poll), read
//     with Snapshot, which lists the log on every call;
//   - peer-head: the same peer read with Head, which is served what its
//     reader's poll brought.
//
// Before each commit the committer sleeps a random fraction of the poll,
// so commits land at a random phase of the observer's poll. Folds are off.
func BenchmarkCommitLogFreshness(b *testing.B) {
	stores := []benchStore{memoryBenchStore(), benchStores()[0]}
	for _, st := range stores {
		for _, poll := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
			for _, obs := range []string{"reader", "peer-snapshot", "peer-head"} {
				b.Run(fmt.Sprintf("%s/poll=%v/%s", st.name, poll, obs), func(b *testing.B) {
					store := st.open(b)
					c, err := core.Open(bg, store, benchLogOpts(func(o *core.CatalogOptions) { o.CommitLogPollInterval = time.Second }))
					if err != nil {
						b.Fatal(err)
					}
					defer c.Close(bg)
					tb := benchTable(b, c)
					var o *core.Catalog
					if obs == "reader" {
						o, err = core.OpenReadOnly(bg, store, benchLogOpts(func(o *core.CatalogOptions) {
							o.CommitLogTail = true
							o.ReaderPollInterval = poll
							o.FollowLatest = true
						}))
					} else {
						o, err = core.Open(bg, store, benchLogOpts(func(o *core.CatalogOptions) { o.CommitLogPollInterval = poll }))
					}
					if err != nil {
						b.Fatal(err)
					}
					defer o.Close(bg)
					seen := func() core.SnapshotID {
						if obs == "peer-head" {
							h, err := o.Head(bg)
							if err != nil {
								b.Fatal(err)
							}
							return h.SnapshotID
						}
						s, err := o.View(bg)
						if err != nil {
							b.Fatal(err)
						}
						return s.ID()
					}
					lags := make([]time.Duration, 0, b.N)
					reads := 0
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						time.Sleep(rand.N(poll))
						id, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("%d.parquet", i)))
						if err != nil {
							b.Fatal(err)
						}
						t0 := time.Now()
						for {
							reads++
							if seen() >= id {
								break
							}
							if time.Since(t0) > 10*time.Second {
								b.Fatalf("commit %d not visible after 10s", id)
							}
							time.Sleep(100 * time.Microsecond)
						}
						lags = append(lags, time.Since(t0))
					}
					b.StopTimer()
					slices.Sort(lags)
					b.ReportMetric(float64(poll.Microseconds())/1000, "poll-ms")
					b.ReportMetric(percentile(lags, 0.50), "p50-lag-ms")
					b.ReportMetric(percentile(lags, 0.99), "p99-lag-ms")
					b.ReportMetric(float64(reads)/float64(b.N), "reads/commit")
				})
			}
		}
	}
}

// BenchmarkCommitLogUncontendedRequests counts the object-store requests
// of one committer committing alone, b.N sequential commits (each
// registers one data file). Target: 1 conditional PUT, 0 GET, 0 LIST per
// commit (slot-gets: GETs of slot objects, a subset of gets). Cases:
//
//   - back-to-back/fold=off: commits one after another, no cadence fold,
//     CommitLogPollInterval 1s (the default);
//   - back-to-back/fold=64: the same with the default fold cadence (every
//     64 slots the committer that lands one folds);
//   - idle-gap/fold=off: a 25ms pause before each commit with
//     CommitLogPollInterval 10ms, so every commit follows an idle spell
//     longer than the poll.
func BenchmarkCommitLogUncontendedRequests(b *testing.B) {
	cases := []struct {
		name string
		fold int
		poll time.Duration
		gap  time.Duration
	}{
		{"back-to-back/fold=off", -1, time.Second, 0},
		{"back-to-back/fold=64", 64, time.Second, 0},
		{"idle-gap/fold=off", -1, 10 * time.Millisecond, 25 * time.Millisecond},
	}
	stores := append([]benchStore{memoryBenchStore()}, benchStores()...)
	for _, st := range stores {
		for _, cs := range cases {
			b.Run(st.name+"/"+cs.name, func(b *testing.B) {
				slotReads := &slotGets{Store: st.open(b)}
				counting := objstore.WithCounting(slotReads)
				c, err := core.Open(bg, counting, benchLogOpts(func(o *core.CatalogOptions) {
					o.CommitLogFoldSlots = cs.fold
					o.CommitLogPollInterval = cs.poll
				}))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close(bg)
				tb := benchTable(b, c)
				if _, err := c.Commit(bg, insertInto(tb, "warm.parquet")); err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, 0, b.N)
				before, slotsBefore := counting.Snapshot(), slotReads.n.Load()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if cs.gap > 0 {
						time.Sleep(cs.gap)
					}
					t0 := time.Now()
					if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("%d.parquet", i))); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				d := counting.Snapshot().Sub(before)
				n := float64(b.N)
				slices.Sort(lat)
				b.ReportMetric(percentile(lat, 0.50), "p50-ms")
				b.ReportMetric(float64(d.Of(objstore.OpPutIfAbsent))/n, "cputs/commit")
				b.ReportMetric(float64(d.Writes()-d.Of(objstore.OpPutIfAbsent))/n, "other-writes/commit")
				b.ReportMetric(float64(d.Reads())/n, "gets/commit")
				b.ReportMetric(float64(slotReads.n.Load()-slotsBefore)/n, "slot-gets/commit")
				b.ReportMetric(float64(d.Of(objstore.OpList))/n, "lists/commit")
			})
		}
	}
}

// BenchmarkWriterVsCommitLog commits through the single-writer path (no
// provider) and through the commit-log path (a committer, default fold
// cadence and poll) at one writer, interleaved in one loop on two fresh
// stores of the same type, so machine noise hits both alike. Each commit
// registers one data file and returns once durable. Reports p50/p99 of
// both, commits/s (one over the mean latency) and the ratios. The same
// loop also times a raw create-if-absent PUT of 512 bytes on a third store
// of the type (cput-*: the physical floor of a commit-log commit).
func BenchmarkWriterVsCommitLog(b *testing.B) {
	stores := append([]benchStore{memoryBenchStore()}, benchStores()...)
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			sw, err := core.Open(bg, st.open(b), core.CatalogOptions{Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			defer sw.Close(bg)
			cl, err := core.Open(bg, st.open(b), benchLogOpts(func(o *core.CatalogOptions) {
				o.CommitLogFoldSlots = 0    // the default cadence (64)
				o.CommitLogPollInterval = 0 // the default (1s)
			}))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close(bg)
			raw := st.open(b)
			payload := make([]byte, 512)
			swT, clT := benchTable(b, sw), benchTable(b, cl)
			swLat := make([]time.Duration, 0, b.N)
			clLat := make([]time.Duration, 0, b.N)
			rawLat := make([]time.Duration, 0, b.N)
			put := func(i int) {
				t0 := time.Now()
				if _, err := raw.PutIfAbsent(bg, fmt.Sprintf("bench/%020d", i), payload); err != nil {
					b.Fatal(err)
				}
				rawLat = append(rawLat, time.Since(t0))
			}
			commit := func(c *core.Catalog, tb core.TableID, i int, into *[]time.Duration) {
				t0 := time.Now()
				if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("%d.parquet", i))); err != nil {
					b.Fatal(err)
				}
				*into = append(*into, time.Since(t0))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					commit(sw, swT, i, &swLat)
					commit(cl, clT, i, &clLat)
					put(i)
				} else {
					put(i)
					commit(cl, clT, i, &clLat)
					commit(sw, swT, i, &swLat)
				}
			}
			b.StopTimer()
			swMean, clMean, rawMean := meanMs(swLat), meanMs(clLat), meanMs(rawLat)
			slices.Sort(swLat)
			slices.Sort(clLat)
			slices.Sort(rawLat)
			sw50, sw99 := percentile(swLat, 0.50), percentile(swLat, 0.99)
			cl50, cl99 := percentile(clLat, 0.50), percentile(clLat, 0.99)
			b.ReportMetric(sw50, "writer-p50-ms")
			b.ReportMetric(sw99, "writer-p99-ms")
			b.ReportMetric(cl50, "log-p50-ms")
			b.ReportMetric(cl99, "log-p99-ms")
			b.ReportMetric(1000/swMean, "writer-commits/s")
			b.ReportMetric(1000/clMean, "log-commits/s")
			b.ReportMetric(cl50/sw50, "log/writer-p50")
			b.ReportMetric(cl99/sw99, "log/writer-p99")
			b.ReportMetric(swMean/clMean, "log/writer-throughput")
			b.ReportMetric(percentile(rawLat, 0.50), "cput-p50-ms")
			b.ReportMetric(1000/rawMean, "cputs/s")
			b.ReportMetric(rawMean/clMean, "log/cput-throughput")
		})
	}
}

// slotGets counts GETs of commit-log slot objects (keys "log/<20 digits>").
type slotGets struct {
	objstore.Store
	n atomic.Int64
}

func (s *slotGets) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	if name, ok := strings.CutPrefix(key, "log/"); ok && len(name) == 20 {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key)
}

// TestFoldReadsBackNoSlotItsSessionWon: a fold run by the committer that
// won the slots (FoldSprint here, the cadence fold alike) replays them from
// the session's copies, with no GET of a slot object. (Counts requests;
// no timing.)
func TestFoldReadsBackNoSlotItsSessionWon(t *testing.T) {
	store := &slotGets{Store: objstore.NewMemory(0)}
	c := openCommitter(t, store, logOpts())
	id := createTable(t, c, "t")
	for i := 0; i < 10; i++ {
		commit(t, c, insertInto(id, fmt.Sprintf("%d.parquet", i)))
	}
	before := store.n.Load()
	rep, err := c.FoldSprint(bg)
	if err != nil || rep.Applied < 10 {
		t.Fatalf("fold: %+v %v", rep, err)
	}
	if n := store.n.Load() - before; n != 0 {
		t.Fatalf("the fold read %d slot objects back; its session won them all", n)
	}
}
