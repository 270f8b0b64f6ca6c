package keys

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: Decode never panics, fails only with ErrCorrupt, and what it
// accepts re-encodes to the same bytes (the encoding is canonical). The
// committed corpus is under testdata/fuzz/FuzzDecode; the golden vectors
// are added as seeds too.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 30s ./core/keys
func FuzzDecode(f *testing.F) {
	for _, g := range goldenKeys {
		f.Add(g.key)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(%x): error %v does not wrap ErrCorrupt", data, err)
			}
			if Describe(data) == "" {
				t.Fatal("empty Describe")
			}
			return
		}
		enc, err := k.Encode()
		if err != nil {
			t.Fatalf("Decode(%x) = %+v, which does not encode: %v", data, k, err)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("Decode(%x) = %v re-encodes to %x", data, k, enc)
		}
		if k.String() == "" {
			t.Fatalf("empty String for %x", data)
		}
		// The history conversions are inverses where they apply.
		if h, err := ToHistory(data, 77); err == nil {
			c, end, err := ToCurrent(h)
			if err != nil || end != 77 || !bytes.Equal(c, data) {
				t.Fatalf("ToCurrent(ToHistory(%x)) = %x, %d, %v", data, c, end, err)
			}
		} else if !errors.Is(err, ErrInvalid) {
			t.Fatalf("ToHistory(%x) of a valid key: %v", data, err)
		}
		if c, end, err := ToCurrent(data); err == nil {
			h, err := ToHistory(c, end)
			if err != nil || !bytes.Equal(h, data) {
				t.Fatalf("ToHistory(ToCurrent(%x)) = %x, %v", data, h, err)
			}
		}
	})
}
