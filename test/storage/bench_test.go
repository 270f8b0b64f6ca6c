package storage

// BenchmarkDuckLake: DuckLake with its catalog in moraine (local and S3
// stores) beside DuckLake on its own DuckDB-file catalog and on PostgreSQL
// (a private server the benchmark starts: internal/testutil/pgtest; v1.4.4
// only, the release ../shared's postgres_scanner is built for), in one run, one
// DuckDB v1.4.4 process per configuration (the shell: every statement
// crosses a pipe, the same for all):
//
//	go test -run '^$' -bench DuckLake -benchtime 300x ./test/storage/
//
// Per configuration: small INSERT commits/s with the rows inlined in the
// catalog and with each insert written to Parquet, p50/p99 commit latency,
// the time of a read-only query on an unchanged lake less the round trip of
// SELECT 42 (what is left is DuckLake's metadata work: latest snapshot,
// catalog load, plus a scan of one inlined row), and
// on moraine the object-store requests each commit made (the counting store
// behind the attach), and the CPU each inlined commit cost the machine (every
// process, the PostgreSQL server's included: /proc/stat over the commits).
// The last sub-benchmark prints the table with the ratios to the DuckDB-file
// catalog.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/internal/testutil/cpustat"
	"github.com/moraine-go/moraine/internal/testutil/pgtest"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

type benchResult struct {
	inlinedPerSec, parquetPerSec float64
	p50, p99                     time.Duration
	readOnly                     time.Duration
	puts, gets, lists            float64       // per inlined commit
	cpu                          time.Duration // machine CPU per inlined commit
}

// machineCPU is the CPU time every process of the machine has used so far
// (/proc/stat: user, nice, system, irq, softirq).
func machineCPU(tb testing.TB) time.Duration {
	t, ok := cpustat.Read()
	if !ok {
		tb.Fatal("no /proc/stat: the CPU per commit cannot be read")
	}
	return t.BusyTime()
}

// benchShell is the host the benchmarks run DuckDB in: the duckdb-go
// shell, or DuckDB's official libduckdb.so with MORAINE_BENCH_HOST=official.
func benchShell() string {
	if os.Getenv("MORAINE_BENCH_HOST") == "official" {
		return officialShell()
	}
	return shell()
}

var (
	benchResults = map[string]*benchResult{}
	summarized   bool
)

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// requests sums the attach's requests of the given kinds.
func requests(d *duck, kinds ...string) int64 {
	var total int64
	for _, k := range kinds {
		v := d.value("", "SELECT coalesce(sum(requests), 0) FROM moraine_requests('__ducklake_metadata_lake') WHERE op = '"+k+"'")
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
	}
	return total
}

func benchDuckLake(b *testing.B, ext, metadata string, moraine bool, env ...string) *benchResult {
	dir := b.TempDir()
	d := startDuckOn(b, benchShell(), ext, env...)
	if strings.HasPrefix(metadata, "postgres:") {
		d.ok("", "LOAD "+sqlString(filepath.Join(repoRoot(), "..", "shared", "postgres", "v1.4.4", "postgres_scanner.duckdb_extension")))
	}
	d.ok("", "LOAD "+sqlString(ducklakeExtension()))
	d.ok("", "ATTACH "+sqlString("ducklake:"+metadata)+" AS lake (DATA_PATH "+sqlString(filepath.Join(dir, "data")+"/")+", DATA_INLINING_ROW_LIMIT 1000)")
	d.ok("", "CREATE TABLE lake.inl (id BIGINT, v VARCHAR)")
	d.ok("", "CREATE TABLE lake.pq (id BIGINT, v VARCHAR)")
	d.ok("", "INSERT INTO lake.inl VALUES (0, 'warm')")
	r := &benchResult{}
	var before [3]int64
	if moraine {
		before = [3]int64{requests(d, "put", "put-if-absent", "put-if-match"), requests(d, "get", "get-range", "head"), requests(d, "list")}
	}
	lat := make([]time.Duration, 0, b.N)
	cpu := machineCPU(b)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		s := time.Now()
		d.ok("", fmt.Sprintf("INSERT INTO lake.inl VALUES (%d, 'row %d')", i+1, i))
		lat = append(lat, time.Since(s))
	}
	r.inlinedPerSec = float64(b.N) / time.Since(start).Seconds()
	r.cpu = (machineCPU(b) - cpu) / time.Duration(b.N)
	r.p50, r.p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if moraine {
		n := float64(b.N)
		r.puts = float64(requests(d, "put", "put-if-absent", "put-if-match")-before[0]) / n
		r.gets = float64(requests(d, "get", "get-range", "head")-before[1]) / n
		r.lists = float64(requests(d, "list")-before[2]) / n
	}
	// Parquet: inlining off for this table's inserts.
	d.ok("", "CALL lake.set_option('data_inlining_row_limit', 0, table_name => 'pq')")
	parquetN := max(b.N/4, 10)
	start = time.Now()
	for i := 0; i < parquetN; i++ {
		d.ok("", fmt.Sprintf("INSERT INTO lake.pq VALUES (%d, 'row %d')", i, i))
	}
	r.parquetPerSec = float64(parquetN) / time.Since(start).Seconds()
	// A read-only query on an unchanged lake.
	q := "SELECT v FROM lake.inl WHERE id = 1"
	d.ok("", q)
	start = time.Now()
	for i := 0; i < b.N; i++ {
		d.ok("", q)
	}
	r.readOnly = time.Since(start) / time.Duration(b.N)
	// The same round trip without DuckLake: what is left of the read-only
	// query is DuckLake's metadata work and the one-row scan.
	d.ok("", "SELECT 42")
	start = time.Now()
	for i := 0; i < b.N; i++ {
		d.ok("", "SELECT 42")
	}
	r.readOnly -= min(r.readOnly, time.Since(start)/time.Duration(b.N))
	b.ReportMetric(r.inlinedPerSec, "inlined-commits/s")
	b.ReportMetric(r.parquetPerSec, "parquet-commits/s")
	b.ReportMetric(float64(r.p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(r.p99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(r.readOnly.Microseconds()), "read-only-µs")
	b.ReportMetric(float64(r.cpu.Microseconds()), "cpu-µs/commit")
	if moraine {
		b.ReportMetric(r.puts, "PUT/commit")
		b.ReportMetric(r.gets, "GET/commit")
		b.ReportMetric(r.lists, "LIST/commit")
	}
	return r
}

// benchConfig is one row of BenchmarkDuckLake.
type benchConfig struct {
	name     string
	metadata func(b *testing.B) string // DuckLake's METADATA: a fresh one per call
	moraine  bool
	env      []string
	ext      string // the moraine extension file ("": this build's)
}

func BenchmarkDuckLake(b *testing.B) {
	loc := s3test.NewLocation(b)
	// Each run gets a fresh lake (the testing package runs a sub-benchmark
	// more than once); the PostgreSQL server starts with the first.
	runs := 0
	var pg *pgtest.Server
	configs := []benchConfig{
		{"duckdb-file", func(b *testing.B) string { return filepath.Join(b.TempDir(), "meta.ducklake") }, false, nil, ""},
		{"postgres", func(sub *testing.B) string {
			if pg == nil {
				pg = pgtest.Start(b) // the whole benchmark's: it serves every run
			}
			runs++
			return "postgres:" + pg.CreateDB(sub, fmt.Sprintf("bench%d", runs))
		}, false, nil, ""},
		{"moraine-local", func(b *testing.B) string { return "moraine:" + filepath.Join(b.TempDir(), "lake") }, true, nil, ""},
		{"moraine-s3", func(b *testing.B) string {
			runs++
			return fmt.Sprintf("moraine:S3://%s/%s/bench%d", loc.Bucket, loc.Prefix, runs)
		}, true, []string{
			"AWS_ACCESS_KEY_ID=" + loc.Server.AccessKey, "AWS_SECRET_ACCESS_KEY=" + loc.Server.SecretKey,
			"AWS_REGION=" + loc.Server.Region, "AWS_ENDPOINT_URL=" + loc.Server.Endpoint}, ""},
	}
	// MORAINE_BENCH_BASELINE=<another build's moraine.duckdb_extension> adds
	// a local row with that build, so that a change is measured against its
	// predecessor in one run.
	if baseline := os.Getenv("MORAINE_BENCH_BASELINE"); baseline != "" {
		i := slices.IndexFunc(configs, func(c benchConfig) bool { return c.name == "moraine-local" })
		local := benchConfig{"moraine-local-baseline", configs[i].metadata, true, nil, baseline}
		configs = slices.Insert(configs, i+1, local)
	}
	if version != "v1.4.4" {
		configs = slices.DeleteFunc(configs, func(c benchConfig) bool { return c.name == "postgres" })
	}
	for _, c := range configs {
		if c.ext == "" {
			c.ext = extension()
		}
		b.Run(c.name, func(b *testing.B) { benchResults[c.name] = benchDuckLake(b, c.ext, c.metadata(b), c.moraine, c.env...) })
	}
	b.Run("summary", func(b *testing.B) {
		base := benchResults["duckdb-file"]
		if base == nil {
			b.Skip("run with the other sub-benchmarks")
		}
		if summarized {
			return // the testing package runs a benchmark more than once
		}
		summarized = true
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n| catalog | inlined commits/s | ratio | Parquet commits/s | ratio | p50 | p99 | CPU per commit | read-only query | ratio | PUT / GET / LIST per commit |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range configs {
			r := benchResults[c.name]
			if r == nil {
				continue
			}
			reqs := "—"
			if c.moraine {
				reqs = fmt.Sprintf("%.2f / %.2f / %.2f", r.puts, r.gets, r.lists)
			}
			fmt.Fprintf(&sb, "| %s | %.0f | %.2f× | %.0f | %.2f× | %v | %v | %v | %v | %.2f× | %s |\n", c.name,
				r.inlinedPerSec, r.inlinedPerSec/base.inlinedPerSec, r.parquetPerSec, r.parquetPerSec/base.parquetPerSec,
				r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.cpu.Round(100*time.Microsecond), r.readOnly.Round(time.Microsecond),
				float64(r.readOnly)/float64(base.readOnly), reqs)
		}
		b.Log(sb.String())
	})
}
