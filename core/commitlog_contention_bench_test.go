package core_test

// The contention benchmark (issue 13): commits through the in-tree commit
// log by 1, 2, 4, 8 and 16 writers that commit in tight loops, as separate
// catalog handles in this process and as separate OS processes, on the
// local store and on S3 (versitygw, which the harness starts). Per writer
// count it prints aggregate commits/s and its ratio (x1) to the 1-writer
// rate of the same store and mode, measured right before and right after
// the row (their mean; both are printed), p50/p99/max commit latency and
// p99/p50, the time between consecutive slots split into runs (the same
// committer's) and hand-overs, lost slot races per commit, object-store
// requests per commit (conditional PUTs, GETs, LISTs) and commits that
// failed.
//
//	go test -run '^$' -bench 'CommitLogContention' -benchtime 800x ./core/
//
// Every number is benchmark output; nothing here asserts a timing.

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/cpustat"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

// raceCounts counts slot offers and lost races, and records every won
// slot.
type raceCounts struct {
	offers, lost atomic.Int64
	mu           sync.Mutex
	wins         []slotWin
}

// slotWin is a won slot: when the offer returned, and whose it was.
type slotWin struct {
	slot uint64
	at   int64 // Unix ns (processes on one host share the clock)
	by   uuid.UUID
}

func (rc *raceCounts) won(b core.LogBatch) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.wins = append(rc.wins, slotWin{slot: b.Slot, at: time.Now().UnixNano(), by: b.Committer})
}

// handOvers splits the time between consecutive slots into runs (the
// same committer landed both) and hand-overs (the next slot is another
// committer's): a hand-over costs the next committer a look at the slot
// before its own, while a run does not.
func handOvers(wins []slotWin) (runs, hands []time.Duration) {
	wins = slices.Clone(wins)
	slices.SortFunc(wins, func(a, b slotWin) int { return cmp.Compare(a.slot, b.slot) })
	for i := 1; i < len(wins); i++ {
		a, b := wins[i-1], wins[i]
		if b.slot != a.slot+1 {
			continue
		}
		d := time.Duration(b.at - a.at)
		if a.by == b.by {
			runs = append(runs, d)
		} else {
			hands = append(hands, d)
		}
	}
	slices.Sort(runs)
	slices.Sort(hands)
	return runs, hands
}

// countingLog wraps a commit-log provider and counts the slot races its
// committers offer and lose.
type countingLog struct {
	core.CommitLogProvider
	rc *raceCounts
}

func (p *countingLog) Session() core.CommitLogProvider {
	s := p.CommitLogProvider.Session()
	if s == nil {
		s = p.CommitLogProvider
	}
	return &countingLog{CommitLogProvider: s, rc: p.rc}
}

func (p *countingLog) Committer(logStore objstore.Store, path string) core.Committer {
	c := p.CommitLogProvider.Committer(logStore, path)
	if c == nil {
		return nil
	}
	return &countingCommitter{Committer: c, p: p}
}

type countingCommitter struct {
	core.Committer
	p *countingLog
}

// Probe forwards to the wrapped committer's (the contention policy looks
// before offering when the committer can); a probe that finds slots landed
// is a race lost without a PUT.
func (c *countingCommitter) Probe(ctx context.Context, slot uint64) ([]core.LogBatch, error) {
	p, ok := c.Committer.(core.SlotProber)
	if !ok {
		return nil, nil
	}
	landed, err := p.Probe(ctx, slot)
	if len(landed) > 0 {
		c.p.rc.lost.Add(1)
	}
	return landed, err
}

func (c *countingCommitter) Offer(ctx context.Context, b core.LogBatch) (core.OfferResult, error) {
	res, err := c.Committer.Offer(ctx, b)
	c.p.rc.offers.Add(1)
	switch {
	case err == nil && res.Won:
		c.p.rc.won(b)
	case err == nil:
		c.p.rc.lost.Add(1)
	}
	return res, err
}

// contentionOpts are every contention writer's options: a fold every 64
// slots (as in production), a poll that does not run during the loop.
func contentionOpts(rc *raceCounts) core.CatalogOptions {
	return benchLogOpts(func(o *core.CatalogOptions) {
		o.CommitLog = &countingLog{CommitLogProvider: o.CommitLog, rc: rc}
		o.CommitLogFoldSlots = 64
		o.CommitLogPollInterval = time.Second
	})
}

// contentionResult is one writer's (or one process's) tally.
type contentionResult struct {
	lat          []time.Duration
	failed       int
	firstErr     string
	offers, lost int64
	wins         []slotWin
	counts       objstore.Counts
	// cpu is the whole machine's CPU time over the row (every writer, the
	// store's server, anything else running), when it could be read.
	cpu   cpustat.Times
	cpuOK bool
}

func (r *contentionResult) add(o contentionResult) {
	r.lat = append(r.lat, o.lat...)
	r.failed += o.failed
	if r.firstErr == "" {
		r.firstErr = o.firstErr
	}
	r.offers += o.offers
	r.lost += o.lost
	r.wins = append(r.wins, o.wins...)
	for i := range r.counts.Requests {
		r.counts.Requests[i] += o.counts.Requests[i]
	}
}

// contentionLoop commits n times into table tb through c, tallying
// latencies and failures.
func contentionLoop(c *core.Catalog, tb core.TableID, id string, n int) contentionResult {
	var r contentionResult
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("%s/%d.parquet", id, i))); err != nil {
			r.failed++
			if r.firstErr == "" {
				r.firstErr = err.Error()
			}
			continue
		}
		r.lat = append(r.lat, time.Since(t0))
	}
	return r
}

// contentionSetup creates one table per writer through a handle of its
// own and returns the table ids.
func contentionSetup(b *testing.B, store objstore.Store, writers int) []core.TableID {
	setup, err := core.Open(bg, store, contentionOpts(new(raceCounts)))
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close(bg)
	tables := createTables(b, setup, writers)
	return tables
}

func share(total, writers, w int) int {
	n := total / writers
	if w < total%writers {
		n++
	}
	return n
}

// contentionHandles runs the writers as catalog handles in this process.
func contentionHandles(b *testing.B, store objstore.Store, writers int) (contentionResult, window) {
	tables := contentionSetup(b, store, writers)
	counting := objstore.WithCounting(store)
	logs := new(raceCounts)
	cats := make([]*core.Catalog, writers)
	for i := range cats {
		c, err := core.Open(bg, counting, contentionOpts(logs))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(bg)
		cats[i] = c
	}
	before := counting.Snapshot()
	results := make([]contentionResult, writers)
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = contentionLoop(cats[w], tables[w], fmt.Sprintf("w%d", w), share(b.N, writers, w))
		}()
	}
	wg.Wait()
	end := time.Now()
	b.StopTimer()
	var all contentionResult
	for _, r := range results {
		all.add(r)
	}
	all.counts = counting.Snapshot().Sub(before)
	all.offers, all.lost = logs.offers.Load(), logs.lost.Load()
	all.wins = logs.wins
	return all, window{t0, end}
}

// reportCPU reports what the row cost the machine: CPU ms per commit
// (all cores, every process), the share of the machine's time that was
// busy (1: CPU-bound), the commits/s the machine would allow at this cost
// per commit were every core busy (commits/s over the busy share), and
// the share the hypervisor stole.
func reportCPU(b *testing.B, c cpustat.Times, commits, rate float64) {
	all := float64(c.Busy + c.Idle + c.Steal)
	if all == 0 {
		return
	}
	b.ReportMetric(float64(c.Busy)*1000/cpustat.UserHZ/commits, "cpu-ms/commit")
	busy := float64(c.Busy) / all
	b.ReportMetric(busy, "busy")
	b.ReportMetric(float64(c.Steal)/all, "steal")
	if busy > 0 {
		b.ReportMetric(rate/busy, "cpu-bound/s")
	}
}

// window is when a row's commits ran: from the start signal to the last
// writer's last commit.
type window struct{ from, to time.Time }

// Process variant: each writer is this test binary re-executed with role
// bench-writer. It opens its catalog, writes "ready", waits for the go
// file, commits, and prints its tally.
const (
	envBenchTable = "MORAINE_BENCH_TABLE"
	envBenchGo    = "MORAINE_BENCH_GO_FILE"
)

func runBenchWriter() int {
	store, err := childStore()
	if err != nil {
		return childFail("%v", err)
	}
	counting := objstore.WithCounting(store)
	logs := new(raceCounts)
	c, err := core.Open(bg, counting, contentionOpts(logs))
	if err != nil {
		return childFail("open: %v", err)
	}
	defer c.Close(bg)
	tb, _ := strconv.ParseInt(os.Getenv(envBenchTable), 10, 64)
	n, _ := strconv.Atoi(os.Getenv(envLogN))
	fmt.Println("ready")
	if err := waitForFile(os.Getenv(envBenchGo), 2*time.Minute); err != nil {
		return childFail("%v", err)
	}
	before := counting.Snapshot()
	r := contentionLoop(c, core.TableID(tb), os.Getenv(envLogID), n)
	d := counting.Snapshot().Sub(before)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintf(out, "done %d\n", time.Now().UnixNano())
	for _, l := range r.lat {
		fmt.Fprintf(out, "lat %d\n", l.Nanoseconds())
	}
	fmt.Fprintf(out, "failed %d %q\n", r.failed, r.firstErr)
	fmt.Fprintf(out, "races %d %d\n", logs.offers.Load(), logs.lost.Load())
	for _, w := range logs.wins {
		fmt.Fprintf(out, "win %d %d %s\n", w.slot, w.at, w.by)
	}
	for op, v := range d.Requests {
		fmt.Fprintf(out, "req %d %d\n", op, v)
	}
	return 0
}

// parseBenchWriter reads a bench-writer's output.
func parseBenchWriter(out string) (contentionResult, time.Time, error) {
	var r contentionResult
	var done time.Time
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "done":
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			done = time.Unix(0, ns)
		case "lat":
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			r.lat = append(r.lat, time.Duration(ns))
		case "failed":
			r.failed, _ = strconv.Atoi(f[1])
			if r.failed > 0 {
				r.firstErr, _ = strconv.Unquote(strings.Join(f[2:], " "))
			}
		case "races":
			r.offers, _ = strconv.ParseInt(f[1], 10, 64)
			r.lost, _ = strconv.ParseInt(f[2], 10, 64)
		case "win":
			if len(f) == 4 {
				slot, _ := strconv.ParseUint(f[1], 10, 64)
				at, _ := strconv.ParseInt(f[2], 10, 64)
				by, _ := uuid.Parse(f[3])
				r.wins = append(r.wins, slotWin{slot: slot, at: at, by: by})
			}
		case "req":
			op, _ := strconv.Atoi(f[1])
			v, _ := strconv.ParseInt(f[2], 10, 64)
			if op >= 0 && op < len(r.counts.Requests) {
				r.counts.Requests[op] = v
			}
		}
	}
	if done.IsZero() {
		return r, done, fmt.Errorf("no tally in the writer's output")
	}
	return r, done, nil
}

// contentionProcesses runs the writers as separate OS processes; the time
// runs from the go file to the last writer's last commit.
func contentionProcesses(b *testing.B, store objstore.Store, where string, env []string, writers int) (contentionResult, window) {
	tables := contentionSetup(b, store, writers)
	goFile := filepath.Join(b.TempDir(), "go")
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*strings.Builder, writers)
	read := make([]chan struct{}, writers)
	for i := range cmds {
		cmd, _ := childCmd(b, "bench-writer", where, append(slices.Clone(env),
			fmt.Sprintf("%s=p%d", envLogID, i), fmt.Sprintf("%s=%d", envLogN, share(b.N, writers, i)),
			fmt.Sprintf("%s=%d", envBenchTable, tables[i]), envBenchGo+"="+goFile)...)
		outs[i] = &strings.Builder{}
		cmd.Stdout = nil
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// Wait for "ready": every process has opened before the clock runs.
		rd := bufio.NewReader(pipe)
		if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			b.Fatalf("writer %d did not get ready: %q %v", i, line, err)
		}
		read[i] = make(chan struct{})
		go func() { defer close(read[i]); _, _ = rd.WriteTo(outs[i]) }()
		cmds[i] = cmd
	}
	b.ResetTimer()
	t0 := time.Now()
	if err := writeSyncFile(goFile, "go"); err != nil {
		b.Fatal(err)
	}
	var all contentionResult
	var last time.Time
	for i, cmd := range cmds {
		<-read[i] // the whole output, before Wait closes the pipe
		if err := cmd.Wait(); err != nil {
			b.Fatalf("writer %d: %v", i, err)
		}
		r, done, err := parseBenchWriter(outs[i].String())
		if err != nil {
			b.Fatalf("writer %d: %v", i, err)
		}
		all.add(r)
		if done.After(last) {
			last = done
		}
	}
	b.StopTimer()
	return all, window{t0, last}
}

// BenchmarkCommitLogContention: see the file comment.
func BenchmarkCommitLogContention(b *testing.B) {
	type place struct {
		name string
		open func(b *testing.B) (objstore.Store, string, []string)
	}
	places := []place{
		{"local", func(b *testing.B) (objstore.Store, string, []string) {
			dir := b.TempDir()
			s, err := objstore.NewLocal(dir, 0)
			if err != nil {
				b.Fatal(err)
			}
			return s, dir, nil
		}},
		{"s3", func(b *testing.B) (objstore.Store, string, []string) {
			s, loc := s3test.NewStore(b)
			return s, loc.URI, loc.Server.Env()
		}},
	}
	for _, pl := range places {
		for _, mode := range []string{"handles", "processes"} {
			for _, writers := range []int{1, 2, 4, 8, 16} {
				b.Run(fmt.Sprintf("%s/%s/writers=%d", pl.name, mode, writers), func(b *testing.B) {
					run := func(writers int) (contentionResult, float64) {
						store, where, env := pl.open(b)
						var r contentionResult
						var w window
						cpu := startCPUSampler(10 * time.Millisecond)
						if mode == "handles" {
							r, w = contentionHandles(b, store, writers)
						} else {
							r, w = contentionProcesses(b, store, where, env, writers)
						}
						cpu.Stop()
						r.cpu, r.cpuOK = cpu.over(w.from, w.to)
						return r, float64(len(r.lat)) / w.to.Sub(w.from).Seconds()
					}
					// The 1-writer rate this row is compared with is measured
					// right before and right after it, on fresh stores of the
					// same kind: this machine's speed drifts between rows.
					var before float64
					if writers > 1 {
						_, before = run(1)
					}
					r, rate := run(writers)
					one := rate
					if writers > 1 {
						_, after := run(1)
						one = (before + after) / 2
						b.ReportMetric(before, "1w-before/s")
						b.ReportMetric(after, "1w-after/s")
					}
					if r.failed > 0 {
						b.Errorf("%d of %d commits failed; the first: %s", r.failed, b.N, r.firstErr)
					}
					ok := float64(len(r.lat))
					slices.Sort(r.lat)
					b.ReportMetric(rate, "commits/s")
					if one > 0 {
						b.ReportMetric(rate/one, "x1")
					}
					p50, p99 := percentile(r.lat, 0.50), percentile(r.lat, 0.99)
					b.ReportMetric(p50, "p50-ms")
					b.ReportMetric(p99, "p99-ms")
					if len(r.lat) > 0 {
						b.ReportMetric(float64(r.lat[len(r.lat)-1].Microseconds())/1000, "max-ms")
					}
					if p50 > 0 {
						b.ReportMetric(p99/p50, "p99/p50")
					}
					b.ReportMetric(float64(r.lost)/ok, "lost/commit")
					runs, hands := handOvers(r.wins)
					b.ReportMetric(percentile(runs, 0.50), "run-p50-ms")
					b.ReportMetric(percentile(hands, 0.50), "handover-p50-ms")
					b.ReportMetric(meanMs(hands), "handover-mean-ms")
					b.ReportMetric(float64(len(hands))/ok, "handovers/commit")
					b.ReportMetric(float64(r.counts.Of(objstore.OpPutIfAbsent))/ok, "cputs/commit")
					b.ReportMetric(float64(r.counts.Reads())/ok, "gets/commit")
					b.ReportMetric(float64(r.counts.Of(objstore.OpList))/ok, "lists/commit")
					b.ReportMetric(float64(r.failed), "failed")
					if r.cpuOK && ok > 0 {
						reportCPU(b, r.cpu, ok, rate)
					}
				})
			}
		}
	}
}
