package core_test

// cpusample_test.go: the machine's CPU time over a benchmark row, for the
// contention benchmark's CPU metrics (how much of the machine a commit
// costs, and whether the row was CPU-bound).

import (
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/internal/testutil/cpustat"
)

// cpuSample is the machine's CPU time at one moment.
type cpuSample struct {
	at time.Time
	t  cpustat.Times
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
	t, ok := cpustat.Read()
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
func (s *cpuSampler) over(from, to time.Time) (cpustat.Times, bool) {
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
		return cpustat.Times{}, false
	}
	return s.samples[last].t.Sub(s.samples[first].t), true
}

func TestCPUSamplerOverTakesTheEnclosingSamples(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &cpuSampler{samples: []cpuSample{
		{at(0), cpustat.Times{Busy: 10, Idle: 10}},
		{at(10), cpustat.Times{Busy: 15, Idle: 15}},
		{at(20), cpustat.Times{Busy: 30, Idle: 16, Steal: 1}},
		{at(30), cpustat.Times{Busy: 31, Idle: 25, Steal: 1}},
	}}
	// [12ms, 20ms] lies between the samples at 10 and 20.
	if got, ok := s.over(at(12), at(20)); !ok || got != (cpustat.Times{Busy: 15, Idle: 1, Steal: 1}) {
		t.Fatalf("over(12, 20) = %+v, %v; want the 10..20 difference", got, ok)
	}
	// [5ms, 21ms] takes 0..30.
	if got, ok := s.over(at(5), at(21)); !ok || got != (cpustat.Times{Busy: 21, Idle: 15, Steal: 1}) {
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
