package slate

import (
	"fmt"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/manifest"
	"github.com/oklog/ulid/v2"
)

// TestCompactionPickSizeTiered pins the size-tiered policy of
// Compactor.pick: when L0 holds enough tables, the oldest of them (at most
// MaxSources) are merged, then each next-newest sorted run joins while its
// size is at most IncludeSizeThreshold times the source just newer than it
// (the chosen L0 tables count as one source), L0 tables and runs together
// capped at MaxSources; the output is the bottom run exactly when every run
// joined. A full compaction takes everything there is.
func TestCompactionPickSizeTiered(t *testing.T) {
	type tc struct {
		name string
		opts CompactorOptions // before fill (zero: SlateDB's defaults 4, 8, 4.0)
		// inProcess: the writer's compactor, which also triggers at
		// Settings.L0MaxSSTs (l0Max) so backpressure never waits for nothing.
		inProcess bool
		l0Max     int
		all       bool
		l0        []int64   // L0 table sizes, newest first
		runs      [][]int64 // each run's SST sizes, runs newest first
		// want: nil plan, or how many of the oldest L0 tables and of the
		// newest runs are chosen, and whether the output is the bottom run.
		wantNil    bool
		wantL0     int
		wantRuns   int
		wantBottom bool
	}
	l0s := func(n int, size int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = size
		}
		return out
	}
	cases := []tc{
		{name: "L0 below MinSources: nothing due", l0: l0s(3, 100), runs: [][]int64{{10}}, wantNil: true},
		{name: "empty tree: nothing due", wantNil: true},
		{name: "runs alone never trigger", runs: [][]int64{{10}, {10}, {10}, {10}, {10}}, wantNil: true},
		{name: "MinSources L0 tables and no run: all of them, bottom", l0: l0s(4, 100), wantL0: 4, wantBottom: true},
		{name: "more L0 than MaxSources: the oldest MaxSources", l0: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, wantL0: 8, wantBottom: true},
		{name: "a run of at most threshold x the L0 group joins", l0: l0s(4, 100), runs: [][]int64{{1600}}, wantL0: 4, wantRuns: 1, wantBottom: true},
		{name: "a run just over the threshold stays", l0: l0s(4, 100), runs: [][]int64{{1601}}, wantL0: 4, wantBottom: false},
		{name: "a run's size is the sum of its SSTs (at the threshold)", l0: l0s(4, 100), runs: [][]int64{{800, 800}}, wantL0: 4, wantRuns: 1, wantBottom: true},
		{name: "a run's size is the sum of its SSTs (over the threshold)", l0: l0s(4, 100), runs: [][]int64{{800, 801}}, wantL0: 4, wantBottom: false},
		{name: "runs chain, each measured against the source just newer",
			l0: l0s(4, 100), runs: [][]int64{{1000}, {4000}, {16001}, {1}}, wantL0: 4, wantRuns: 2, wantBottom: false},
		{name: "a small run then a bigger one: the bigger one is measured against the small one",
			l0: l0s(4, 100), runs: [][]int64{{100}, {401}}, wantL0: 4, wantRuns: 1, wantBottom: false},
		{name: "every run joins: bottom", l0: l0s(4, 100), runs: [][]int64{{100}, {400}, {1600}}, wantL0: 4, wantRuns: 3, wantBottom: true},
		{name: "MaxSources caps L0 tables and runs together",
			opts: CompactorOptions{MaxSources: 5}, l0: l0s(4, 100), runs: [][]int64{{100}, {100}, {100}}, wantL0: 4, wantRuns: 1, wantBottom: false},
		{name: "L0 filling MaxSources leaves no room for a run",
			opts: CompactorOptions{MaxSources: 4}, l0: l0s(6, 100), runs: [][]int64{{1}}, wantL0: 4, wantBottom: false},
		{name: "MaxSources below 2 counts as 2",
			opts: CompactorOptions{MinSources: 2, MaxSources: 1}, l0: l0s(3, 100), runs: [][]int64{{1}}, wantL0: 2, wantBottom: false},
		{name: "empty L0 tables count as one byte",
			l0: l0s(4, 0), runs: [][]int64{{4}, {17}}, wantL0: 4, wantRuns: 1, wantBottom: false},
		{name: "custom threshold and MinSources",
			opts: CompactorOptions{MinSources: 2, IncludeSizeThreshold: 1.5}, l0: l0s(2, 100), runs: [][]int64{{300}, {451}},
			wantL0: 2, wantRuns: 1, wantBottom: false},
		{name: "in-process: L0MaxSSTs below MinSources triggers earlier",
			inProcess: true, l0Max: 3, l0: l0s(3, 100), runs: [][]int64{{10000}}, wantL0: 3, wantBottom: false},
		{name: "in-process: L0MaxSSTs above MinSources changes nothing",
			inProcess: true, l0Max: 10, l0: l0s(3, 100), wantNil: true},
		{name: "standalone: L0MaxSSTs is not its trigger", l0Max: 3, l0: l0s(3, 100), wantNil: true},
		{name: "all: every table and run, whatever the sizes",
			all: true, l0: l0s(1, 1), runs: [][]int64{{1 << 30}, {1 << 40}}, wantL0: 1, wantRuns: 2, wantBottom: true},
		{name: "all: more than MaxSources sources still all of them",
			all: true, l0: l0s(12, 1), wantL0: 12, wantBottom: true},
		{name: "all: a single run is nothing to do", all: true, runs: [][]int64{{5}}, wantNil: true},
		{name: "all: a single L0 table is nothing to do", all: true, l0: l0s(1, 5), wantNil: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			comp := &Compactor{opts: c.opts, settings: Settings{L0MaxSSTs: c.l0Max}}
			if c.inProcess {
				comp.db = &DB{} // pick only asks whether it runs in a writer
			}
			comp.opts.fill()
			comp.settings.fill()
			m := &manifest.Manifest{}
			n := byte(0)
			sst := func(size int64) manifest.SST {
				n++
				return manifest.SST{ID: ulid.ULID{0: n}, Size: size}
			}
			for _, size := range c.l0 {
				m.L0 = append(m.L0, sst(size))
			}
			for i, sizes := range c.runs {
				r := manifest.Run{ID: uint32(len(c.runs) - i)} // descending ids, newest first
				for _, size := range sizes {
					r.SSTs = append(r.SSTs, sst(size))
				}
				m.Runs = append(m.Runs, r)
			}
			p := comp.pick(m, c.all)
			if c.wantNil {
				if p != nil {
					t.Fatalf("picked %s, want nothing", describePlan(p))
				}
				return
			}
			if p == nil {
				t.Fatalf("picked nothing, want %d L0 tables and %d runs", c.wantL0, c.wantRuns)
			}
			// The L0 sources are the oldest tables, in manifest order; the
			// run sources the newest runs.
			wantL0 := m.L0[len(m.L0)-c.wantL0:]
			wantRuns := m.Runs[:c.wantRuns]
			if fmt.Sprint(pickSSTIDs(p.l0)) != fmt.Sprint(pickSSTIDs(wantL0)) || fmt.Sprint(pickRunIDs(p.runs)) != fmt.Sprint(pickRunIDs(wantRuns)) || p.bottom != c.wantBottom {
				t.Fatalf("picked %s\nwant L0 %v, runs %v, bottom %v", describePlan(p), pickSSTIDs(wantL0), pickRunIDs(wantRuns), c.wantBottom)
			}
		})
	}
}

func pickSSTIDs(ssts []manifest.SST) []byte {
	out := []byte{}
	for _, s := range ssts {
		out = append(out, s.ID[0])
	}
	return out
}

func pickRunIDs(runs []manifest.Run) []uint32 {
	out := []uint32{}
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func describePlan(p *plan) string {
	return fmt.Sprintf("L0 %v, runs %v, bottom %v", pickSSTIDs(p.l0), pickRunIDs(p.runs), p.bottom)
}
