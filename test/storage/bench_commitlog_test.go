package storage

// BenchmarkDuckLakeCommitLog: DuckLake small-INSERT commits with 1, 2, 4
// and 8 DuckDB v1.4.4 processes (each a separate OS process) on one
// commit-log lake (the moraine_commitlog build), on a local store and on
// S3 (versitygw), beside one process on the single-writer build, in one
// run:
//
//	go test -run '^$' -bench DuckLakeCommitLog -benchtime 100x ./test/storage/
//
// -benchtime Nx is the commits per writer. Every writer inserts one row
// per statement (one DuckLake commit, inlined in the catalog) into the
// same table, in a tight loop. Per configuration: aggregate commits/s
// (acknowledged commits over the wall time of the slowest writer), p50 and
// p99 commit latency over all writers, commits refused (DuckLake gave up
// after its retries), and lost slot races per commit: conditional PUTs of
// slots beyond one per acknowledged commit; each is a commit DuckLake
// retried (a retry can also be decided before its PUT, when the head moved
// during the transaction: those are not counted). The last sub-benchmark
// prints the table.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

type logBenchResult struct {
	perSec   float64
	p50, p99 time.Duration
	refused  int
	lost     float64 // lost slot races per acknowledged commit
}

var (
	logBenchResults    = map[string]*logBenchResult{}
	logBenchSummarized bool
)

// benchLogWriters runs writers processes of N commits each on a fresh lake.
func benchLogWriters(b *testing.B, ext, uri, data string, writers int, env []string) *logBenchResult {
	start := func() *duck {
		d := startDuckWith(b, ext, env...)
		d.ok("", "LOAD "+sqlString(ducklakeExtension()))
		d.ok("", "ATTACH "+sqlString("ducklake:moraine:"+uri)+" AS lake (DATA_PATH "+sqlString(data)+", DATA_INLINING_ROW_LIMIT 1000)")
		return d
	}
	setup := start()
	setup.ok("", "CREATE TABLE lake.t (id BIGINT, v VARCHAR)")
	setup.close()
	ducks := make([]*duck, writers)
	for i := range ducks {
		ducks[i] = start()
		ducks[i].ok("", "SELECT count(*) FROM lake.t")
	}
	puts := func(d *duck) int64 { return requests(d, "put-if-absent") }
	before := make([]int64, writers)
	for i, d := range ducks {
		before[i] = puts(d)
	}
	lat := make([][]time.Duration, writers)
	refused := make([]int, writers)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w, d := range ducks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < b.N; i++ {
				s := time.Now()
				r, err := d.try("", fmt.Sprintf("INSERT INTO lake.t VALUES (%d, 'row')", w*1_000_000+i))
				if err != nil {
					refused[w] += b.N - i
					return
				}
				if r.Error != "" {
					refused[w]++
					continue
				}
				lat[w] = append(lat[w], time.Since(s))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	r := &logBenchResult{}
	var all []time.Duration
	var put int64
	for w, d := range ducks {
		all = append(all, lat[w]...)
		r.refused += refused[w]
		put += puts(d) - before[w]
	}
	acked := len(all)
	if acked == 0 {
		b.Fatalf("%d writers: no commit was acknowledged", writers)
	}
	r.perSec = float64(acked) / wall.Seconds()
	r.p50, r.p99 = percentile(all, 0.50), percentile(all, 0.99)
	if ext == commitLogExtension() {
		r.lost = float64(put-int64(acked)) / float64(acked)
	}
	for _, d := range ducks {
		d.close()
	}
	check := start()
	if n := check.value("", "SELECT count(*) FROM lake.t"); n != strconv.Itoa(acked) {
		b.Fatalf("%d writers: the table holds %s rows, %d commits were acknowledged", writers, n, acked)
	}
	b.ReportMetric(r.perSec, "commits/s")
	b.ReportMetric(float64(r.p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(r.p99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(r.refused), "refused")
	b.ReportMetric(r.lost, "lost-races/commit")
	return r
}

func BenchmarkDuckLakeCommitLog(b *testing.B) {
	loc := s3test.NewLocation(b)
	s3env := []string{"AWS_ACCESS_KEY_ID=" + loc.Server.AccessKey, "AWS_SECRET_ACCESS_KEY=" + loc.Server.SecretKey,
		"AWS_REGION=" + loc.Server.Region, "AWS_ENDPOINT_URL=" + loc.Server.Endpoint}
	runs := 0
	type config struct {
		name    string
		ext     string
		writers int
		s3      bool
	}
	configs := []config{{"single-writer-local-1", extension(), 1, false}, {"single-writer-s3-1", extension(), 1, true}}
	for _, s3 := range []bool{false, true} {
		for _, n := range []int{1, 2, 4, 8} {
			where := "local"
			if s3 {
				where = "s3"
			}
			configs = append(configs, config{fmt.Sprintf("commit-log-%s-%d", where, n), commitLogExtension(), n, s3})
		}
	}
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			uri, env := filepath.Join(dir, "lake"), []string(nil)
			if c.s3 {
				runs++
				uri, env = fmt.Sprintf("S3://%s/%s/bench%d", loc.Bucket, loc.Prefix, runs), s3env
			}
			logBenchResults[c.name] = benchLogWriters(b, c.ext, uri, filepath.Join(dir, "data")+"/", c.writers, env)
		})
	}
	b.Run("summary", func(b *testing.B) {
		if logBenchResults[configs[0].name] == nil {
			b.Skip("run with the other sub-benchmarks")
		}
		if logBenchSummarized {
			return
		}
		logBenchSummarized = true
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n| build | store | DuckDB processes | commits/s | vs 1 process | p50 | p99 | refused | lost races per commit |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range configs {
			r := logBenchResults[c.name]
			if r == nil {
				continue
			}
			build, store := "commit log", "local"
			if c.ext == extension() {
				build = "single writer"
			}
			if c.s3 {
				store = "S3"
			}
			one := logBenchResults[strings.TrimSuffix(c.name, strconv.Itoa(c.writers))+"1"]
			fmt.Fprintf(&sb, "| %s | %s | %d | %.0f | %.2f× | %v | %v | %d | %.2f |\n", build, store, c.writers, r.perSec,
				r.perSec/one.perSec, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.refused, r.lost)
		}
		b.Log(sb.String())
	})
}
