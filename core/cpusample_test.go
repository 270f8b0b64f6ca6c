package core_test

// cpusample_test.go: the machine's CPU time over a benchmark row, for the
// contention benchmark's CPU metrics (how much of the machine a commit
// costs, and whether the row was CPU-bound).

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const userHZ = 100

// cpuTimes is the machine's CPU time so far, all cores, in USER_HZ ticks:
// busy (user, nice, system, irq, softirq), idle (idle, iowait) and steal
// (time the hypervisor gave to other guests).
type cpuTimes struct{ busy, idle, steal uint64 }

// readCPUTimes reads /proc/stat's first line; ok is false where there is
// none (not Linux) or it does not parse.
func readCPUTimes() (cpuTimes, bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	return parseCPULine(line)
}

// parseCPULine parses "cpu user nice system idle iowait irq softirq steal ...".
func parseCPULine(line string) (cpuTimes, bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		v[i] = n
	}
	return cpuTimes{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7]}, true
}

func (c cpuTimes) sub(o cpuTimes) cpuTimes {
	return cpuTimes{busy: c.busy - o.busy, idle: c.idle - o.idle, steal: c.steal - o.steal}
}

// cpuSample is the machine's CPU time at one moment.
type cpuSample struct {
	at time.Time
	t  cpuTimes
}

// cpuSampler samples the machine's CPU time every period until stopped,
// so the CPU spent over a window known only afterwards (a process's last
// commit) can be read off.
type cpuSampler struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples []cpuSample
}

func startCPUSampler(period time.Duration) *cpuSampler {
	s := &cpuSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				s.sample()
				return
			case <-tick.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	t, ok := readCPUTimes()
	if !ok {
		return
	}
	s.mu.Lock()
	s.samples = append(s.samples, cpuSample{at: time.Now(), t: t})
	s.mu.Unlock()
}

// Stop ends the sampling.
func (s *cpuSampler) Stop() {
	close(s.stop)
	<-s.done
}

// over returns the CPU time between the last samples at or before from
// and at or after to (the window's enclosing samples); ok is false when
// the samples do not enclose it.
func (s *cpuSampler) over(from, to time.Time) (cpuTimes, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, last := -1, -1
	for i, x := range s.samples {
		if !x.at.After(from) {
			first = i
		}
		if last < 0 && !x.at.Before(to) {
			last = i
		}
	}
	if first < 0 || last < 0 || last < first {
		return cpuTimes{}, false
	}
	return s.samples[last].t.sub(s.samples[first].t), true
}

func TestParseCPULine(t *testing.T) {
	got, ok := parseCPULine("cpu  2533664 7 777829 3620499 47290 11 23627 73600 0 0")
	if !ok {
		t.Fatal("a /proc/stat cpu line did not parse")
	}
	want := cpuTimes{busy: 2533664 + 7 + 777829 + 11 + 23627, idle: 3620499 + 47290, steal: 73600}
	if got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if _, ok := parseCPULine(bad); ok {
			t.Errorf("%q parsed; want refused", bad)
		}
	}
}

func TestCPUSamplerOverTakesTheEnclosingSamples(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &cpuSampler{samples: []cpuSample{
		{at(0), cpuTimes{busy: 10, idle: 10}},
		{at(10), cpuTimes{busy: 15, idle: 15}},
		{at(20), cpuTimes{busy: 30, idle: 16, steal: 1}},
		{at(30), cpuTimes{busy: 31, idle: 25, steal: 1}},
	}}
	// [12ms, 20ms] lies between the samples at 10 and 20.
	if got, ok := s.over(at(12), at(20)); !ok || got != (cpuTimes{busy: 15, idle: 1, steal: 1}) {
		t.Fatalf("over(12, 20) = %+v, %v; want the 10..20 difference", got, ok)
	}
	// [5ms, 21ms] takes 0..30.
	if got, ok := s.over(at(5), at(21)); !ok || got != (cpuTimes{busy: 21, idle: 15, steal: 1}) {
		t.Fatalf("over(5, 21) = %+v, %v; want the 0..30 difference", got, ok)
	}
	// A window past the last sample, or before the first, is not enclosed.
	if _, ok := s.over(at(5), at(31)); ok {
		t.Fatal("a window ending after the last sample was read off")
	}
	if _, ok := s.over(at(-1), at(5)); ok {
		t.Fatal("a window starting before the first sample was read off")
	}
}
