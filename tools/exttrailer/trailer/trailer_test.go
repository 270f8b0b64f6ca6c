package trailer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func moraineMetadata() Metadata {
	return Metadata{Platform: "linux_amd64", Version: "v1.2.0", ExtensionVersion: "0.1.0", ABI: ABICStruct}
}

// TestEncodeLayout pins every byte of the trailer by offset, independently of
// the golden file.
func TestEncodeLayout(t *testing.T) {
	b, err := Encode(moraineMetadata())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != Size {
		t.Fatalf("len = %d, want %d", len(b), Size)
	}
	want := make([]byte, Size)
	copy(want[96:], "C_STRUCT")     // field 5
	copy(want[128:], "0.1.0")       // field 4
	copy(want[160:], "v1.2.0")      // field 3
	copy(want[192:], "linux_amd64") // field 2
	copy(want[224:], "4")           // field 1, the magic
	// 256..511: signature, zero.
	if !bytes.Equal(b, want) {
		t.Fatalf("layout differs:\n got %s\nwant %s", hex.Dump(b), hex.Dump(want))
	}
}

func TestEncodeGolden(t *testing.T) {
	b, err := Append([]byte("\x7fELF...library bytes..."), moraineMetadata())
	if err != nil {
		t.Fatal(err)
	}
	got := hex.Dump(b)
	path := filepath.Join("testdata", "c_struct_v1.2.0.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("golden mismatch (go test -update rewrites it):\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendPrefix(t *testing.T) {
	lib := []byte("library")
	b, err := Append(append([]byte(nil), lib...), moraineMetadata())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != len(lib)+22+Size {
		t.Fatalf("len = %d, want %d", len(b), len(lib)+22+Size)
	}
	if len(Prefix) != 22 {
		t.Fatalf("prefix is %d bytes, want 22", len(Prefix))
	}
	if !bytes.Equal(b[len(lib):len(lib)+22], Prefix) {
		t.Fatalf("prefix = %x", b[len(lib):len(lib)+22])
	}
	// The prefix is a wasm custom section: id 0, LEB128 size covering the
	// name length byte, the 16-byte name, the 2-byte payload length and the
	// payload.
	if size := int(Prefix[1]&0x7f) | int(Prefix[2])<<7; size != 1+16+2+Size {
		t.Fatalf("section size %d", size)
	}
	if payload := int(Prefix[20]&0x7f) | int(Prefix[21])<<7; payload != Size {
		t.Fatalf("payload size %d", payload)
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []Metadata{
		moraineMetadata(),
		{Platform: "osx_arm64", Version: "v1.5.6", ExtensionVersion: "abc", ABI: ABICPP},
		{Platform: strings.Repeat("p", 32), Version: strings.Repeat("v", 32), ExtensionVersion: strings.Repeat("e", 32), ABI: strings.Repeat("a", 32),
			Unused: [3]string{"x", "", strings.Repeat("z", 32)}},
		{}, // every field empty but the magic: still a trailer
	}
	cases[1].Signature[0], cases[1].Signature[255] = 1, 0xff
	for _, m := range cases {
		b, err := Append([]byte("lib"), m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(Append(%+v)): %v", m, err)
		}
		if got != m {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
		}
		if got.Signed() != (m.Signature != [SignatureSize]byte{}) {
			t.Fatalf("Signed() = %v", got.Signed())
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, m := range []Metadata{
		{Platform: strings.Repeat("p", 33)},
		{Version: "v1\x00"},
		{ExtensionVersion: "caf\xc3\xa9"},
		{ABI: "C_STRUCT\n"},
		{Unused: [3]string{"", "", strings.Repeat("u", 40)}},
	} {
		if _, err := Encode(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("Encode(%+v) = %v, want ErrInvalid", m, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good, err := Encode(moraineMetadata())
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrNoTrailer},
		{"short", good[1:], ErrNoTrailer},
		{"plain library", bytes.Repeat([]byte{0x7f, 'E', 'L', 'F'}, 200), ErrNoTrailer},
		{"magic 5", mutate(func(b []byte) { b[224] = '5' }), ErrNoTrailer},
		{"magic with junk", mutate(func(b []byte) { b[230] = 'x' }), ErrNoTrailer},
		{"shifted by one", append(append([]byte(nil), good...), 0), ErrNoTrailer},
		{"junk after terminator", mutate(func(b []byte) { b[192+20] = 'x' }), ErrCorrupt},
		{"control byte", mutate(func(b []byte) { b[192+1] = '\n' }), ErrCorrupt},
		{"high byte", mutate(func(b []byte) { b[128] = 0xff }), ErrCorrupt},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Parse = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := moraineMetadata()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(m *Metadata){
		"abi":       func(m *Metadata) { m.ABI = "C" },
		"empty abi": func(m *Metadata) { m.ABI = "" },
		"platform":  func(m *Metadata) { m.Platform = "" },
		"version":   func(m *Metadata) { m.Version = "1.2.0" },
		"version2":  func(m *Metadata) { m.Version = "v1.2" },
		"version3":  func(m *Metadata) { m.Version = "v1..2" },
		"unused":    func(m *Metadata) { m.Unused[1] = "x" },
		"long":      func(m *Metadata) { m.ExtensionVersion = strings.Repeat("1", 33) },
	}
	for name, f := range bad {
		m := moraineMetadata()
		f(&m)
		if err := m.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	b, err := Append(bytes.Repeat([]byte{1}, 4096), moraineMetadata())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "moraine.duckdb_extension")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(p)
	if err != nil || m != moraineMetadata() {
		t.Fatalf("ReadFile = %+v, %v", m, err)
	}
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(small); !errors.Is(err, ErrNoTrailer) {
		t.Fatalf("ReadFile(small) = %v, want ErrNoTrailer", err)
	}
}

// FuzzParse checks that Parse never panics, that every error is classified,
// and that whatever Parse accepts encodes back to the same 512 bytes. The seed
// corpus is in testdata/fuzz/FuzzParse plus the seeds added here.
func FuzzParse(f *testing.F) {
	good, err := Encode(moraineMetadata())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	withPrefix, _ := Append([]byte("\x7fELF"), moraineMetadata())
	f.Add(withPrefix)
	f.Add([]byte{})
	f.Add(good[:Size-1])
	f.Add(bytes.Repeat([]byte{0}, Size))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrNoTrailer) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		enc, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode(Parse(b)) failed: %v", err)
		}
		if !bytes.Equal(enc, b[len(b)-Size:]) {
			t.Fatalf("Encode(Parse(b)) differs from b's last %d bytes", Size)
		}
		_ = m.Validate() // must not panic either
	})
}
