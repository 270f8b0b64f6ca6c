package codes

import (
	"errors"
	"fmt"
	"testing"

	"github.com/moraine-go/moraine/core"
)

// The wire values are pinned (reference-moraine §6.4).
func TestPinnedValues(t *testing.T) {
	want := map[Code]int32{OK: 0, NotFound: 1, AlreadyExists: 2, Constraint: 3, CommitConflict: 4, Corruption: 5, Store: 6,
		InvalidArgument: 7, Internal: 8, Interrupted: 9, RetryExhausted: 10, Fenced: 11, Migration: 12, SnapshotExpired: 13,
		Unsupported: 14, OpenRaced: 15, OutcomeUnknown: 16}
	for c, v := range want {
		if int32(c) != v {
			t.Errorf("%s = %d, want %d", c, int32(c), v)
		}
		if c.String() == "UNKNOWN" {
			t.Errorf("code %d has no name", v)
		}
	}
	if Code(17).String() != "UNKNOWN" || Code(-1).String() != "UNKNOWN" {
		t.Error("out-of-range codes have names")
	}
}

func TestOf(t *testing.T) {
	for k := core.Internal; k <= core.OutcomeUnknown; k++ {
		if _, ok := fromKind[k]; !ok {
			t.Errorf("core kind %v has no code", k)
		}
	}
	cases := []struct {
		err  error
		want Code
	}{
		{nil, OK},
		{errors.New("foreign"), Internal},
		{&core.Error{Kind: core.NotFound, Msg: "x"}, NotFound},
		{fmt.Errorf("wrapped: %w", &core.Error{Kind: core.Migration, Msg: "x"}), Migration},
		{&core.Error{Kind: core.Configuration, Msg: "x"}, Store},
		{&core.Error{Kind: core.OutcomeUnknown, Msg: "x"}, OutcomeUnknown},
		{&core.Error{Kind: core.Kind(999), Msg: "x"}, Store},
	}
	for _, c := range cases {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if m := Message(errors.New("a\x00b")); m != "a\uFFFDb" {
		t.Errorf("Message = %q", m)
	}
}
