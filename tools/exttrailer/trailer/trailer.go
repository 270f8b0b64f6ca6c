// Package trailer encodes and parses the metadata trailer DuckDB reads from the
// end of a loadable extension file (a shared library with 512 bytes appended).
//
// # Layout
//
// DuckDB reads the last Size (512) bytes of the file:
//
//	offset   0  field 8   32 bytes  (unused, NUL)
//	offset  32  field 7   32 bytes  (unused, NUL)
//	offset  64  field 6   32 bytes  (unused, NUL)
//	offset  96  field 5   32 bytes  ABI type: "C_STRUCT", "CPP" or "C_STRUCT_UNSTABLE"
//	offset 128  field 4   32 bytes  extension version
//	offset 160  field 3   32 bytes  C API version (ABI C_STRUCT, e.g. "v1.2.0"),
//	                                DuckDB version (ABI CPP and C_STRUCT_UNSTABLE)
//	offset 192  field 2   32 bytes  platform, e.g. "linux_amd64"
//	offset 224  field 1   32 bytes  magic "4"
//	offset 256  signature 256 bytes (all zero: unsigned)
//
// Each field is its text followed by NUL padding to 32 bytes; a field of exactly
// 32 bytes has no NUL. The fields are numbered as DuckDB's own tooling numbers
// them and written last to first, so field 1 (the magic) sits right before the
// signature.
//
// Files written by DuckDB's tooling carry the 22 bytes of Prefix just before the
// 512 bytes (a WebAssembly custom section header named "duckdb_signature", so
// the same trailer works on wasm builds). DuckDB ignores them on native
// platforms; Append writes them, Parse does not need them.
//
// These constants are a file format shared with DuckDB: never change them.
package trailer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

const (
	// Size is the number of bytes DuckDB reads from the end of the file.
	Size = 512
	// FieldSize is the size of each of the eight metadata fields.
	FieldSize = 32
	// NumFields is the number of metadata fields.
	NumFields = 8
	// SignatureSize is the size of the signature that follows the fields.
	SignatureSize = 256
	// Magic is the content of field 1 that marks a metadata trailer.
	Magic = "4"
)

// Prefix is the optional 22-byte header written before the 512 bytes:
// a WebAssembly custom section (id 0, LEB128 length 531) named
// "duckdb_signature" (16 bytes) whose payload is 512 bytes (LEB128 80 04).
var Prefix = []byte("\x00\x93\x04\x10duckdb_signature\x80\x04")

// ABI types DuckDB knows (field 5).
const (
	ABICStruct         = "C_STRUCT"
	ABICPP             = "CPP"
	ABICStructUnstable = "C_STRUCT_UNSTABLE"
)

// Errors returned by Parse, Encode and Validate. Parse errors match
// ErrNoTrailer when the magic field is absent and ErrCorrupt when the magic is
// present but a field is malformed.
var (
	ErrNoTrailer = errors.New("no DuckDB extension metadata trailer")
	ErrCorrupt   = errors.New("corrupt DuckDB extension metadata trailer")
	ErrInvalid   = errors.New("invalid DuckDB extension metadata")
)

// Metadata is the content of a trailer.
type Metadata struct {
	// Platform (field 2), e.g. "linux_amd64", "osx_arm64".
	Platform string
	// Version (field 3): for ABI C_STRUCT the oldest C API version the
	// extension needs (e.g. "v1.2.0"); for CPP and C_STRUCT_UNSTABLE the
	// exact DuckDB version it was built against (e.g. "v1.5.6").
	Version string
	// ExtensionVersion (field 4), free text.
	ExtensionVersion string
	// ABI (field 5): ABICStruct, ABICPP or ABICStructUnstable. Files written
	// before DuckDB 1.2 leave it empty (meaning CPP).
	ABI string
	// Unused holds fields 6, 7 and 8 (in that order). They are empty in every
	// file we write; Parse keeps them so that Encode(Parse(b)) gives back b.
	Unused [3]string
	// Signature is the 256-byte RSA signature; all zero for unsigned files.
	Signature [SignatureSize]byte
}

// Signed reports whether the signature bytes are not all zero.
func (m *Metadata) Signed() bool {
	return m.Signature != [SignatureSize]byte{}
}

// fields returns the eight fields in DuckDB's numbering (index 0 = field 1).
func (m *Metadata) fields() [NumFields]string {
	return [NumFields]string{Magic, m.Platform, m.Version, m.ExtensionVersion, m.ABI,
		m.Unused[0], m.Unused[1], m.Unused[2]}
}

// checkField reports whether s can be stored in a field: at most FieldSize
// bytes of printable ASCII (0x20..0x7e).
func checkField(s string) error {
	if len(s) > FieldSize {
		return fmt.Errorf("%q is %d bytes, longer than %d", s, len(s), FieldSize)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%q has byte 0x%02x at offset %d (only printable ASCII is allowed)", s, c, i)
		}
	}
	return nil
}

var fieldNames = [NumFields]string{"magic", "platform", "version", "extension version", "ABI type",
	"field 6", "field 7", "field 8"}

// Encode returns the 512-byte trailer for m (without Prefix). It fails if a
// field does not fit in 32 bytes or holds bytes other than printable ASCII;
// it does not judge the values (see Validate).
func Encode(m Metadata) ([]byte, error) {
	out := make([]byte, Size)
	f := m.fields()
	for i, s := range f {
		if err := checkField(s); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, fieldNames[i], err)
		}
		// Field i+1 is written at slot NumFields-1-i: last to first.
		copy(out[(NumFields-1-i)*FieldSize:], s)
	}
	copy(out[NumFields*FieldSize:], m.Signature[:])
	return out, nil
}

// Append appends Prefix and the encoded trailer of m to dst.
func Append(dst []byte, m Metadata) ([]byte, error) {
	t, err := Encode(m)
	if err != nil {
		return dst, err
	}
	dst = append(dst, Prefix...)
	return append(dst, t...), nil
}

// Parse reads the trailer from the last Size bytes of b (a whole file, or just
// the trailer). It never panics: input that is not a well-formed trailer gives
// an error matching ErrNoTrailer or ErrCorrupt.
func Parse(b []byte) (Metadata, error) {
	if len(b) < Size {
		return Metadata{}, fmt.Errorf("%w: %d bytes, need at least %d", ErrNoTrailer, len(b), Size)
	}
	t := b[len(b)-Size:]
	var f [NumFields]string
	for i := range f {
		raw := t[(NumFields-1-i)*FieldSize : (NumFields-i)*FieldSize]
		s := raw
		if n := bytes.IndexByte(raw, 0); n >= 0 {
			s = raw[:n]
			if i > 0 && !allZero(raw[n:]) {
				return Metadata{}, fmt.Errorf("%w: %s: bytes after the NUL terminator are not NUL", ErrCorrupt, fieldNames[i])
			}
		}
		if i == 0 {
			if !bytes.Equal(raw, magicField) {
				return Metadata{}, fmt.Errorf("%w: magic field is %q, want %q", ErrNoTrailer, trimForError(raw), Magic)
			}
			continue
		}
		if err := checkField(string(s)); err != nil {
			return Metadata{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, fieldNames[i], err)
		}
		f[i] = string(s)
	}
	m := Metadata{
		Platform:         f[1],
		Version:          f[2],
		ExtensionVersion: f[3],
		ABI:              f[4],
		Unused:           [3]string{f[5], f[6], f[7]},
	}
	copy(m.Signature[:], t[NumFields*FieldSize:])
	return m, nil
}

var magicField = func() []byte {
	b := make([]byte, FieldSize)
	copy(b, Magic)
	return b
}()

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func trimForError(b []byte) []byte {
	return bytes.TrimRight(b, "\x00")
}

// Validate checks what DuckDB will check at LOAD time that does not depend on
// the running DuckDB: a known ABI type, a platform, a version in the right
// form for the ABI, and nothing in the unused fields.
func (m *Metadata) Validate() error {
	switch m.ABI {
	case ABICStruct, ABICPP, ABICStructUnstable:
	default:
		return fmt.Errorf("%w: ABI type %q (want %s, %s or %s)", ErrInvalid, m.ABI, ABICStruct, ABICPP, ABICStructUnstable)
	}
	if m.Platform == "" {
		return fmt.Errorf("%w: empty platform", ErrInvalid)
	}
	if !isVersion(m.Version) {
		return fmt.Errorf("%w: version %q is not of the form vMAJOR.MINOR.PATCH", ErrInvalid, m.Version)
	}
	if m.Unused != [3]string{} {
		return fmt.Errorf("%w: fields 6-8 must be empty, have %q", ErrInvalid, m.Unused)
	}
	for i, s := range m.fields() {
		if err := checkField(s); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, fieldNames[i], err)
		}
	}
	return nil
}

// isVersion reports whether s looks like "v1.2.0".
func isVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	parts := 0
	digits := 0
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && digits > 0:
			parts++
			digits = 0
		default:
			return false
		}
	}
	return parts == 2 && digits > 0
}

// ReadFile parses the trailer at the end of the file at path.
func ReadFile(path string) (Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metadata{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Metadata{}, err
	}
	if st.Size() < Size {
		return Metadata{}, fmt.Errorf("%s: %w: file is %d bytes", path, ErrNoTrailer, st.Size())
	}
	buf := make([]byte, Size)
	if _, err := f.ReadAt(buf, st.Size()-Size); err != nil && err != io.EOF {
		return Metadata{}, err
	}
	m, err := Parse(buf)
	if err != nil {
		return Metadata{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
