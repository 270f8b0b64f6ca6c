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
// p99 commit latency over all writers, statements refused (DuckLake gave
// up after its retries), and DuckLake retries per acknowledged commit:
// the commits moraine refused as conflicts (moraine_info's conflicts: a
// slot lost to another process, or a head that moved during the
// transaction), each one a retry, and the CPU each acknowledged commit cost
// the machine (every process, a server's included: /proc/stat over the
// run). Two more rows run 8 processes with DuckLake's retry wait at 10 ms
// instead of its default 100 ms. The anchor: the same 1, 2, 4 and 8
// processes on DuckLake's catalog in PostgreSQL (a private server the
// benchmark starts, internal/testutil/pgtest, default durability; v1.4.4,
// the release ../shared's postgres_scanner is built for; DuckLake's
// retries there are not counted: "—"). The last sub-benchmark prints the
// table.
//
// MORAINE_BENCH_BASELINE_COMMITLOG=<a moraine_commitlog.duckdb_extension>
// (a build of another commit, its file named so) adds a baseline row after
// each commit-log row, run with that build, so a change is measured
// against its predecessor in one run.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/internal/testutil/pgtest"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

type logBenchResult struct {
	perSec   float64
	p50, p99 time.Duration
	refused  int
	lost     float64       // commits refused as conflicts (DuckLake retries) per acknowledged commit; -1: not counted
	cpu      time.Duration // the machine's CPU per acknowledged commit
}

var (
	logBenchResults    = map[string]*logBenchResult{}
	logBenchSummarized bool
)

// benchLogWriters runs writers processes of N commits each on a fresh lake
// whose DuckLake catalog is metadata (moraine:<uri> or postgres:<conn>).
func benchLogWriters(b *testing.B, ext, metadata, data string, writers int, env []string, settings ...string) *logBenchResult {
	onMoraine := strings.HasPrefix(metadata, "moraine:")
	start := func() *duck {
		d := startDuckOn(b, benchShell(), ext, env...)
		if strings.HasPrefix(metadata, "postgres:") {
			d.ok("", "LOAD "+sqlString(filepath.Join(repoRoot(), "..", "shared", "postgres", "v1.4.4", "postgres_scanner.duckdb_extension")))
		}
		d.ok("", "LOAD "+sqlString(ducklakeExtension()))
		for _, s := range settings {
			d.ok("", s)
		}
		d.ok("", "ATTACH "+sqlString("ducklake:"+metadata)+" AS lake (DATA_PATH "+sqlString(data)+", DATA_INLINING_ROW_LIMIT 1000)")
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
	conflicts := func(d *duck) int64 {
		if !onMoraine {
			return 0
		}
		n, _ := strconv.ParseInt(d.value("", "SELECT conflicts FROM moraine_info('__ducklake_metadata_lake')"), 10, 64)
		return n
	}
	before := make([]int64, writers)
	for i, d := range ducks {
		before[i] = conflicts(d)
	}
	lat := make([][]time.Duration, writers)
	refused := make([]int, writers)
	var wg sync.WaitGroup
	cpu0 := machineCPU(b)
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
	cpu := machineCPU(b) - cpu0
	r := &logBenchResult{}
	var all []time.Duration
	var lost int64
	for w, d := range ducks {
		all = append(all, lat[w]...)
		r.refused += refused[w]
		lost += conflicts(d) - before[w]
	}
	acked := len(all)
	if acked == 0 {
		b.Fatalf("%d writers: no commit was acknowledged", writers)
	}
	r.perSec = float64(acked) / wall.Seconds()
	r.p50, r.p99 = percentile(all, 0.50), percentile(all, 0.99)
	r.lost = float64(lost) / float64(acked)
	if !onMoraine {
		r.lost = -1
	}
	r.cpu = cpu / time.Duration(acked)
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
	b.ReportMetric(r.lost, "retries/commit")
	b.ReportMetric(float64(r.cpu.Microseconds()), "cpu-µs/commit")
	return r
}

func BenchmarkDuckLakeCommitLog(b *testing.B) {
	loc := s3test.NewLocation(b)
	s3env := []string{"AWS_ACCESS_KEY_ID=" + loc.Server.AccessKey, "AWS_SECRET_ACCESS_KEY=" + loc.Server.SecretKey,
		"AWS_REGION=" + loc.Server.Region, "AWS_ENDPOINT_URL=" + loc.Server.Endpoint}
	runs := 0
	type config struct {
		name     string
		ext      string
		writers  int
		s3       bool
		settings []string
		pg       bool // DuckLake's catalog in PostgreSQL
	}
	configs := []config{{"single-writer-local-1", extension(), 1, false, nil, false}, {"single-writer-s3-1", extension(), 1, true, nil, false}}
	var pg *pgtest.Server
	if version == "v1.4.4" {
		for _, n := range []int{1, 2, 4, 8} {
			configs = append(configs, config{fmt.Sprintf("postgres-%d", n), extension(), n, false, nil, true})
		}
	}
	baseline := os.Getenv("MORAINE_BENCH_BASELINE_COMMITLOG")
	// add adds a commit-log row, and its baseline row when asked for.
	add := func(c config) {
		configs = append(configs, c)
		if baseline != "" {
			c.name, c.ext = strings.Replace(c.name, "commit-log", "baseline", 1), baseline
			configs = append(configs, c)
		}
	}
	for _, s3 := range []bool{false, true} {
		for _, n := range []int{1, 2, 4, 8} {
			where := "local"
			if s3 {
				where = "s3"
			}
			add(config{fmt.Sprintf("commit-log-%s-%d", where, n), commitLogExtension(), n, s3, nil, false})
		}
	}
	// DuckLake's own retry pacing: it sleeps retry_wait_ms (100) times
	// 1.5^attempt, times 0.5–1, before each retry.
	for _, s3 := range []bool{false, true} {
		where := map[bool]string{false: "local", true: "s3"}[s3]
		add(config{"commit-log-" + where + "-wait10-8", commitLogExtension(), 8, s3, []string{"SET ducklake_retry_wait_ms = 10"}, false})
	}
	for _, c := range configs {
		b.Run(c.name, func(sub *testing.B) {
			dir := sub.TempDir()
			metadata, env := "moraine:"+filepath.Join(dir, "lake"), []string(nil)
			switch {
			case c.s3:
				runs++
				metadata, env = fmt.Sprintf("moraine:S3://%s/%s/bench%d", loc.Bucket, loc.Prefix, runs), s3env
			case c.pg:
				if pg == nil {
					pg = pgtest.Start(b) // the whole benchmark's: it serves every run
				}
				runs++
				metadata = "postgres:" + pg.CreateDB(sub, fmt.Sprintf("bench%d", runs))
			}
			logBenchResults[c.name] = benchLogWriters(sub, c.ext, metadata, filepath.Join(dir, "data")+"/", c.writers, env, c.settings...)
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
		fmt.Fprintf(&sb, "\n| build | store | DuckDB processes | DuckLake retry wait | commits/s | vs 1 process | p50 | p99 | CPU per commit | refused | DuckLake retries per commit |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range configs {
			r := logBenchResults[c.name]
			if r == nil {
				continue
			}
			build, store := "commit log", "local"
			switch {
			case c.pg:
				build, store = "DuckLake on PostgreSQL", "PostgreSQL 15, 127.0.0.1"
			case c.ext == extension():
				build = "single writer"
			case c.ext == baseline:
				build = "commit log, baseline"
			}
			if c.s3 {
				store = "S3"
			}
			wait, one := "100 ms", logBenchResults[strings.TrimSuffix(c.name, strconv.Itoa(c.writers))+"1"]
			if len(c.settings) > 0 {
				wait, one = "10 ms", logBenchResults[strings.TrimSuffix(c.name, "wait10-8")+"1"]
			}
			retries := "—"
			if r.lost >= 0 {
				retries = fmt.Sprintf("%.2f", r.lost)
			}
			fmt.Fprintf(&sb, "| %s | %s | %d | %s | %.0f | %.2f× | %v | %v | %v | %d | %s |\n", build, store, c.writers, wait, r.perSec,
				r.perSec/one.perSec, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.cpu.Round(100*time.Microsecond), r.refused, retries)
		}
		// Printed, not logged: the testing package cuts a benchmark's log
		// after a few lines.
		fmt.Print(sb.String())
	})
}
