// Package cpustat reads the machine's CPU time from /proc/stat, for the
// benchmarks that report what a commit costs the whole machine (every
// process, servers included): core's contention benchmarks and the DuckLake
// benchmarks of test/storage.
package cpustat

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// UserHZ is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const UserHZ = 100

// Times is the machine's CPU time so far, all cores, in USER_HZ ticks:
// busy (user, nice, system, irq, softirq), idle (idle, iowait) and steal
// (time the hypervisor gave to other guests).
type Times struct{ Busy, Idle, Steal uint64 }

// Read reads /proc/stat's first line; ok is false where there is none (not
// Linux) or it does not parse.
func Read() (Times, bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Times{}, false
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	return Parse(line)
}

// Parse parses "cpu user nice system idle iowait irq softirq steal ...".
func Parse(line string) (Times, bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return Times{}, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return Times{}, false
		}
		v[i] = n
	}
	return Times{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, true
}

// Sub is t - o.
func (t Times) Sub(o Times) Times {
	return Times{Busy: t.Busy - o.Busy, Idle: t.Idle - o.Idle, Steal: t.Steal - o.Steal}
}

// BusyTime is the busy time as a duration.
func (t Times) BusyTime() time.Duration {
	return time.Duration(t.Busy) * (time.Second / UserHZ)
}
