package frame

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestGoldenFrame(t *testing.T) {
	for _, c := range []struct{ payload, framed string }{
		{"", "4d524e4500"},
		{"0807", "4d524e45000807"},
		{"0a036d61696e", "4d524e45000a036d61696e"},
	} {
		p, _ := hex.DecodeString(c.payload)
		want, _ := hex.DecodeString(c.framed)
		if got := Frame(p); !bytes.Equal(got, want) {
			t.Errorf("Frame(%s) = %x, golden %s", c.payload, got, c.framed)
		}
		if got := AppendHeader(nil); !bytes.Equal(got, want[:HeaderLen]) {
			t.Errorf("AppendHeader = %x", got)
		}
		got, err := Unframe(want)
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("Unframe(%s) = %x, %v", c.framed, got, err)
		}
	}
}

func TestUnframeRejects(t *testing.T) {
	for _, c := range []struct{ hex, mention string }{
		{"", "0 bytes"},
		{"4d", "1 bytes"},
		{"4d524e45", "4 bytes"},
		{"4d524e4d00", "magic"}, // MRNM: the engine's manifest magic
		{"6d726e6500", "magic"}, // lower case
		{"00000000000807", "magic"},
		{"4d524e4501", "version 1"},
		{"4d524e45ff0807", "version 255"},
	} {
		b, _ := hex.DecodeString(c.hex)
		p, err := Unframe(b)
		if err == nil {
			t.Errorf("Unframe(%s) = %x, want an error", c.hex, p)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Unframe(%s) error %q: want ErrCorrupt mentioning %q", c.hex, err, c.mention)
		}
	}
}

func TestFrameDoesNotAlias(t *testing.T) {
	p := []byte{1, 2, 3}
	f := Frame(p)
	f[HeaderLen] = 9
	if p[0] != 1 {
		t.Fatal("Frame aliases its payload")
	}
}

// FuzzUnframe: Unframe never panics, fails only with ErrCorrupt, and a
// value it accepts is exactly a frame of the payload it returns (version 0
// is the only one accepted). Seeds under testdata/fuzz/FuzzUnframe.
//
//	go test -run '^$' -fuzz FuzzUnframe -fuzztime 30s ./core/internal/frame
func FuzzUnframe(f *testing.F) {
	f.Add([]byte("MRNE\x00"))
	f.Add([]byte("MRNE\x00\x08\x07"))
	f.Add([]byte("MRNE\x01"))
	f.Add([]byte("MRN"))
	f.Fuzz(func(t *testing.T, value []byte) {
		p, err := Unframe(value)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Unframe(%x): %v does not wrap ErrCorrupt", value, err)
			}
			return
		}
		if !bytes.Equal(Frame(p), value) {
			t.Fatalf("Unframe(%x) = %x, which frames differently", value, p)
		}
	})
}
