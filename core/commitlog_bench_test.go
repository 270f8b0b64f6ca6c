package core_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/cpustat"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

// BenchmarkConditionalPut is the store's raw create-if-absent PUT rate
// (one writer), the floor a commit-log commit cannot beat.
func BenchmarkConditionalPut(b *testing.B) {
	for _, st := range benchStores() {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			payload := make([]byte, 512)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.PutIfAbsent(bg, fmt.Sprintf("bench/%020d", i), payload); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
		})
	}
}

// BenchmarkRequestCost is what one request of each kind a commit-log
// commit makes costs the machine: CPU µs per request summed over every
// process (this client and, on S3, the server on the same machine), read
// from /proc/stat over the row. A contended commit's cost is about the sum
// of its requests' (BenchmarkCommitLogContention's requests per commit),
// which bounds its rate on a machine whose cores it keeps busy.
//
//	go test -run '^$' -bench RequestCost -benchtime 2000x ./core/
func BenchmarkRequestCost(b *testing.B) {
	for _, st := range benchStores() {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			slot := make([]byte, 600) // about a contention benchmark slot
			const present = 64
			fresh := 0 // put-if-absent's next key, across b.Run's rounds
			for i := 0; i < present; i++ {
				if _, err := s.PutIfAbsent(bg, fmt.Sprintf("log/%020d", i), slot); err != nil {
					b.Fatal(err)
				}
			}
			ops := []struct {
				name string
				do   func(i int) error
			}{
				{"get-present", func(i int) error {
					_, _, err := s.Get(bg, fmt.Sprintf("log/%020d", i%present))
					return err
				}},
				{"get-absent", func(i int) error {
					_, _, err := s.Get(bg, fmt.Sprintf("log/%020d", present+i))
					if errors.Is(err, objstore.ErrNotFound) {
						return nil
					}
					return fmt.Errorf("an absent slot read: %v", err)
				}},
				{"list-4-after", func(int) error {
					got, _, err := s.ListPage(bg, "log/", fmt.Sprintf("log/%020d", present-5))
					if err == nil && len(got) != 4 {
						err = fmt.Errorf("listed %d keys, want 4", len(got))
					}
					return err
				}},
				{"put-if-absent", func(int) error {
					fresh++
					_, err := s.PutIfAbsent(bg, fmt.Sprintf("new/%020d", fresh), slot)
					return err
				}},
			}
			for _, op := range ops {
				b.Run(op.name, func(b *testing.B) {
					before, ok := cpustat.Read()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := op.do(i); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					after, _ := cpustat.Read()
					if ok {
						d := after.Sub(before)
						b.ReportMetric(float64(d.Busy)*1e6/cpustat.UserHZ/float64(b.N), "cpu-µs/req")
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
				})
			}
		})
	}
}

type benchStore struct {
	name string
	open func(b *testing.B) objstore.Store
}

func benchStores() []benchStore {
	return []benchStore{
		{"local", func(b *testing.B) objstore.Store {
			s, err := objstore.NewLocal(b.TempDir(), 0)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"s3", func(b *testing.B) objstore.Store { s, _ := s3test.NewStore(b); return s }},
	}
}

// BenchmarkColdOpenOverUnfoldedSlots opens a tailing reader over a log with
// N unfolded slots and, alternating with it in the same loop, over a twin
// store holding the same commits folded (no unfolded slot). It reports the
// time and requests of the unfolded open, and per slot: ms/slot is the
// unfolded open's time over the folded one's, divided by N; gets/slot is
// the unfolded open's GETs divided by N (target: one GET per slot, bounded
// by the fold cadence); extra-gets/slot is the GETs over the folded open's.
//
//	go test -run '^$' -bench ColdOpen -benchtime 10x ./core/
func BenchmarkColdOpenOverUnfoldedSlots(b *testing.B) {
	stores := append([]benchStore{{"memory", func(*testing.B) objstore.Store { return objstore.NewMemory(0) }}}, benchStores()...)
	for _, st := range stores {
		for _, slots := range []int{16, 64, 256} {
			b.Run(fmt.Sprintf("%s/slots=%d", st.name, slots), func(b *testing.B) {
				setup := func(fold bool) (*objstore.CountingStore, core.TableID) {
					store := st.open(b)
					c, err := core.Open(bg, store, benchLogOpts())
					if err != nil {
						b.Fatal(err)
					}
					var tb core.TableID
					if _, err := c.Commit(bg, func(tx *core.Transaction) error {
						main, _ := tx.View().SchemaByName("main")
						tb, err = tx.CreateTable(main.ID, "t", []core.ColumnDef{{Name: "a", Type: "int64"}})
						return err
					}); err != nil {
						b.Fatal(err)
					}
					if _, err := c.FoldSprint(bg); err != nil {
						b.Fatal(err)
					}
					for i := 0; i < slots; i++ {
						if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("%d.parquet", i))); err != nil {
							b.Fatal(err)
						}
					}
					if fold {
						if _, err := c.FoldSprint(bg); err != nil {
							b.Fatal(err)
						}
					}
					if n, err := c.UnfoldedSlots(bg); err != nil || (fold && n != 0) || (!fold && n != uint64(slots)) {
						b.Fatalf("unfolded slots %d (%v), fold %v", n, err, fold)
					}
					c.Close(bg)
					return objstore.WithCounting(store), tb
				}
				unfolded, tb := setup(false)
				folded, tbf := setup(true)
				open := func(s *objstore.CountingStore, tb core.TableID) time.Duration {
					t0 := time.Now()
					r, err := core.OpenReadOnly(bg, s, benchLogOpts(func(o *core.CatalogOptions) { o.CommitLogTail = true; o.FollowLatest = true }))
					if err != nil {
						b.Fatal(err)
					}
					snap, err := r.View(bg)
					if err != nil || len(snap.DataFiles(tb)) != slots {
						b.Fatalf("cold reader sees %v files (%v)", len(snap.DataFiles(tb)), err)
					}
					d := time.Since(t0)
					r.Close(bg)
					return d
				}
				var tu, tf time.Duration
				bu, bf := unfolded.Snapshot(), folded.Snapshot()
				var du, df objstore.Counts
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tu += open(unfolded, tb)
					du = unfolded.Snapshot().Sub(bu)
					tf += open(folded, tbf)
					df = folded.Snapshot().Sub(bf)
				}
				b.StopTimer()
				n, per := float64(b.N), float64(slots)
				msU := float64(tu.Microseconds()) / 1000 / n
				msF := float64(tf.Microseconds()) / 1000 / n
				b.ReportMetric(msU, "ms/open")
				b.ReportMetric(msF, "folded-ms/open")
				b.ReportMetric((msU-msF)/per, "ms/slot")
				b.ReportMetric(float64(du.Reads())/n, "gets/open")
				b.ReportMetric(float64(du.Reads())/n/per, "gets/slot")
				b.ReportMetric(float64(du.Reads()-df.Reads())/n/per, "extra-gets/slot")
				b.ReportMetric(float64(du.Of(objstore.OpList))/n, "lists/open")
			})
		}
	}
}
