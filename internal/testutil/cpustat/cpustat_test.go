package cpustat

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	got, ok := Parse("cpu  2533664 7 777829 3620499 47290 11 23627 73600 0 0")
	if !ok {
		t.Fatal("a /proc/stat cpu line did not parse")
	}
	want := Times{Busy: 2533664 + 7 + 777829 + 11 + 23627, Idle: 3620499 + 47290, Steal: 73600}
	if got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("%q parsed; want refused", bad)
		}
	}
	if d := (Times{Busy: 150}).BusyTime(); d != 1500*time.Millisecond {
		t.Fatalf("150 ticks = %v, want 1.5s", d)
	}
}
