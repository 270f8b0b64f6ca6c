package sst

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
)

// Kind says which of the two table kinds a table is. The values are wire
// format.
type Kind uint8

const (
	// KindSorted tables hold rows in base.Compare order, with a filter.
	KindSorted Kind = 1
	// KindWAL tables hold rows in append (seq) order, without a filter.
	KindWAL Kind = 2
)

func (k Kind) String() string {
	switch k {
	case KindSorted:
		return "sorted"
	case KindWAL:
		return "wal"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// Valid reports whether k is a known table kind.
func (k Kind) Valid() bool { return k == KindSorted || k == KindWAL }

// FormatVersion is the table format this package writes and the only one it
// reads.
const FormatVersion uint32 = 1

// Defaults for Options.
const (
	DefaultBlockSize       = 4096
	DefaultBloomBitsPerKey = 10
)

// Wire constants (see the package doc).
const (
	magic       = "\x89MRNSST\n"
	footerSize  = 64
	trailerSize = 5 // type byte + crc32c

	frameData   byte = 1
	frameIndex  byte = 2
	frameFilter byte = 3
	frameInfo   byte = 4

	maxProbes = 30
)

// minRowSize is the smallest encoded row: four one-byte uvarints and the
// kind byte. It bounds row counts read from untrusted input.
const minRowSize = 5

// minEntrySize is the smallest encoded index entry (six one-byte uvarints).
const minEntrySize = 6

// tailReadSize is how much of a table's end Open reads first. Tables up to
// this size (most WAL tables) are read whole in one request, and their data
// blocks are then served from memory.
const tailReadSize = 64 << 10

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Sentinel errors; test with errors.Is.
var (
	// ErrCorrupt: the bytes are not a valid table (checksum mismatch,
	// truncation, bad lengths or varints, rows out of order, ...).
	ErrCorrupt = errors.New("sst: corrupt table")
	// ErrUnsupportedVersion: the footer names a format version this build
	// cannot read. Such errors match ErrCorrupt as well.
	ErrUnsupportedVersion = errors.New("sst: unsupported format version")
	// ErrInvalid: the caller misused the API (rows out of order, bad kind or
	// options, a Get on a WAL table, ...).
	ErrInvalid = errors.New("sst: invalid argument")
)

// tableError carries a message and the sentinels it matches.
type tableError struct {
	msg  string
	kind error // ErrCorrupt or ErrInvalid
	also error // optional second sentinel
}

func (e *tableError) Error() string { return "sst: " + e.msg }

func (e *tableError) Is(target error) bool {
	return target == e.kind || (e.also != nil && target == e.also)
}

func corruptf(format string, args ...any) error {
	return &tableError{msg: fmt.Sprintf(format, args...), kind: ErrCorrupt}
}

func invalidf(format string, args ...any) error {
	return &tableError{msg: fmt.Sprintf(format, args...), kind: ErrInvalid}
}

// appendTrailer turns dst[payloadStart:] into a frame by appending the type
// byte and the checksum.
func appendTrailer(dst []byte, payloadStart int, typ byte) []byte {
	dst = append(dst, typ)
	crc := crc32.Checksum(dst[payloadStart:], crcTable)
	return binary.LittleEndian.AppendUint32(dst, crc)
}

// place names a section in error messages: a named section ("index") or,
// with no name, data block n. (Formatting happens only on errors.)
type place struct {
	name  string
	block int
}

func (p place) String() string {
	if p.name != "" {
		return p.name
	}
	return fmt.Sprintf("block %d", p.block)
}

// checkFrame verifies a frame's type and checksum and returns its payload.
func checkFrame(frame []byte, typ byte, what place, off int64) ([]byte, error) {
	if len(frame) < trailerSize {
		return nil, corruptf("%s at offset %d: %d bytes, shorter than a frame trailer", what, off, len(frame))
	}
	n := len(frame) - 4
	want := binary.LittleEndian.Uint32(frame[n:])
	if got := crc32.Checksum(frame[:n], crcTable); got != want {
		return nil, corruptf("%s at offset %d: checksum mismatch (stored %#08x, computed %#08x)", what, off, want, got)
	}
	if frame[n-1] != typ {
		return nil, corruptf("%s at offset %d: frame type %d, want %d", what, off, frame[n-1], typ)
	}
	return frame[:n-1], nil
}

// handle locates a frame in the table.
type handle struct {
	off, length int64
}

type footer struct {
	index, filter, info handle
}

func appendFooter(dst []byte, f footer) []byte {
	start := len(dst)
	for _, h := range []handle{f.index, f.filter, f.info} {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(h.off))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(h.length))
	}
	dst = append(dst, 0, 0, 0, 0) // crc, filled below
	dst = binary.LittleEndian.AppendUint32(dst, FormatVersion)
	dst = append(dst, magic...)
	b := dst[start:]
	binary.LittleEndian.PutUint32(b[48:52], footerCRC(b))
	return dst
}

func footerCRC(b []byte) uint32 {
	return crc32.Update(crc32.Checksum(b[:48], crcTable), crcTable, b[52:footerSize])
}

// parseFooter decodes and validates the footer of a table of the given size:
// the sections must tile [index offset, size-footerSize) in order.
func parseFooter(b []byte, size int64) (footer, error) {
	var f footer
	if !bytes.Equal(b[56:64], []byte(magic)) {
		return f, corruptf("footer at offset %d: bad magic %q (not a table?)", size-footerSize, b[56:64])
	}
	if v := binary.LittleEndian.Uint32(b[52:56]); v != FormatVersion {
		return f, &tableError{
			msg:  fmt.Sprintf("footer at offset %d: format version %d, this build reads %d", size-footerSize, v, FormatVersion),
			kind: ErrCorrupt, also: ErrUnsupportedVersion,
		}
	}
	if want, got := binary.LittleEndian.Uint32(b[48:52]), footerCRC(b); want != got {
		return f, corruptf("footer at offset %d: checksum mismatch (stored %#08x, computed %#08x)", size-footerSize, want, got)
	}
	metaEnd := uint64(size - footerSize)
	var hs [3]handle
	for i := range hs {
		off := binary.LittleEndian.Uint64(b[16*i:])
		length := binary.LittleEndian.Uint64(b[16*i+8:])
		if off > metaEnd || length > metaEnd-off {
			return f, corruptf("footer: section %d handle (%d, %d) out of range (metadata ends at %d)", i, off, length, metaEnd)
		}
		hs[i] = handle{int64(off), int64(length)}
	}
	f.index, f.filter, f.info = hs[0], hs[1], hs[2]
	next := f.index.off + f.index.length
	if f.filter.length == 0 {
		if f.filter.off != 0 {
			return f, corruptf("footer: empty filter handle has offset %d", f.filter.off)
		}
	} else {
		if f.filter.off != next {
			return f, corruptf("footer: filter at offset %d, want %d (right after the index)", f.filter.off, next)
		}
		next += f.filter.length
	}
	if f.info.off != next {
		return f, corruptf("footer: info at offset %d, want %d", f.info.off, next)
	}
	if f.info.off+f.info.length != int64(metaEnd) {
		return f, corruptf("footer: info ends at %d, want %d (the footer)", f.info.off+f.info.length, metaEnd)
	}
	if f.index.length < trailerSize || f.info.length < trailerSize || (f.filter.length != 0 && f.filter.length < trailerSize) {
		return f, corruptf("footer: section shorter than a frame trailer")
	}
	return f, nil
}

// keyHash is the filter's key hash: 64-bit FNV-1a, then MurmurHash3's fmix64
// so that every output bit depends on every input bit. Persisted: never
// change it.
func keyHash(key []byte) uint64 { return fmix64(fnv1a64(key)) }

func fnv1a64(key []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// bloomSet sets the k probe bits of hash h.
func bloomSet(bitArr []byte, k int, h uint64) {
	m := uint64(len(bitArr)) * 8
	d := bits.RotateLeft64(h, 32)
	for i := 0; i < k; i++ {
		p := h % m
		bitArr[p/8] |= 1 << (p % 8)
		h += d
	}
}

// bloomTest reports whether all k probe bits of hash h are set.
func bloomTest(bitArr []byte, k int, h uint64) bool {
	m := uint64(len(bitArr)) * 8
	d := bits.RotateLeft64(h, 32)
	for i := 0; i < k; i++ {
		p := h % m
		if bitArr[p/8]&(1<<(p%8)) == 0 {
			return false
		}
		h += d
	}
	return true
}

// bloomProbes is the number of probes for bitsPerKey (about ln 2 per bit).
func bloomProbes(bitsPerKey int) int {
	k := bitsPerKey * 69 / 100
	return min(max(k, 1), maxProbes)
}

// compareRow orders (key, seq) pairs like base.Compare: key ascending, seq
// descending.
func compareRow(ak []byte, aseq uint64, bk []byte, bseq uint64) int {
	if c := bytes.Compare(ak, bk); c != 0 {
		return c
	}
	switch {
	case aseq > bseq:
		return -1
	case aseq < bseq:
		return 1
	}
	return 0
}
