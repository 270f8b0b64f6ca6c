package core_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// BenchmarkCommit measures single-writer commits/s with 1 and 8 concurrent
// callers (group commit), and object-store requests per commit, on local
// and S3 (versitygw) stores. Each commit registers one data file.
//
//	go test -run '^$' -bench '^BenchmarkCommit$' -benchtime 200x ./core/
func BenchmarkCommit(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) objstore.Store
	}{
		{"local", func(b *testing.B) objstore.Store {
			s, err := objstore.NewLocal(b.TempDir(), 0)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"s3", func(b *testing.B) objstore.Store { s, _ := s3test.NewStore(b); return s }},
	}
	for _, st := range stores {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", st.name, writers), func(b *testing.B) {
				counting := objstore.WithCounting(st.open(b))
				c, err := core.Open(bg, counting, core.CatalogOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close(bg)
				tables := createTables(b, c, writers)
				before := counting.Snapshot()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N / writers
				extra := b.N % writers
				for w := 0; w < writers; w++ {
					n := per
					if w < extra {
						n++
					}
					wg.Add(1)
					go func(w, n int) {
						defer wg.Done()
						for i := 0; i < n; i++ {
							if _, err := c.Commit(bg, func(tx *core.Transaction) error {
								_, err := tx.RegisterDataFile(core.DataFileDef{TableID: tables[w], Path: fmt.Sprintf("w%d/%d.parquet", w, i), RecordCount: 1})
								return err
							}); err != nil {
								b.Error(err)
								return
							}
						}
					}(w, n)
				}
				wg.Wait()
				b.StopTimer()
				d := counting.Snapshot().Sub(before)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
				b.ReportMetric(float64(d.Total())/float64(b.N), "requests/commit")
				b.ReportMetric(float64(d.Writes())/float64(b.N), "writes/commit")
			})
		}
	}
}

// createTables creates tables t0..t<n-1> (one column a int64) in one
// commit through c.
func createTables(tb testing.TB, c *core.Catalog, n int) []core.TableID {
	tb.Helper()
	tables := make([]core.TableID, n)
	if _, err := c.Commit(bg, func(tx *core.Transaction) error {
		main, _ := tx.View().SchemaByName("main")
		for i := range tables {
			id, err := tx.CreateTable(main.ID, fmt.Sprintf("t%d", i), []core.ColumnDef{{Name: "a", Type: "int64"}})
			if err != nil {
				return err
			}
			tables[i] = id
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return tables
}
