package slt

import (
	"bytes"
	"strings"
	"testing"
)

// A child's output keeps its first and its last lines: a crash's reason
// is at the top of a long goroutine dump.
func TestOutputBufferKeepsHeadAndTail(t *testing.T) {
	var b outputBuffer
	b.Write([]byte("fatal error: concurrent map writes\n"))
	filler := bytes.Repeat([]byte("goroutine 7 [running]:\n"), 10_000)
	b.Write(filler)
	b.Write([]byte("the last line\n"))
	got := string(b.Bytes())
	if !strings.HasPrefix(got, "fatal error: concurrent map writes\n") || !strings.HasSuffix(got, "the last line\n") {
		t.Fatalf("kept %d bytes: head %q, tail %q", len(got), got[:40], got[len(got)-20:])
	}
	if !strings.Contains(got, "bytes of output left out") || b.Len() > outputHead+outputTail {
		t.Fatalf("kept %d bytes of %d without saying what was left out", b.Len(), 35+len(filler)+14)
	}
}
