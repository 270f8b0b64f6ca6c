// Package frame is the envelope around every value moraine stores:
//
//	+--------+---------+------------------+
//	| "MRNE" | version | payload          |
//	| 4 B    | 1 B     | protobuf message |
//	+--------+---------+------------------+
//
// The only encoding version is 0. A reader refuses a newer version rather
// than guess; protobuf field evolution needs no version bump. These bytes
// are wire format, pinned by golden tests.
package frame

import (
	"errors"
	"fmt"
)

// Magic opens every stored value.
const Magic = "MRNE"

// Version is the encoding version written, and the newest one read.
const Version = 0

// HeaderLen is the length of magic + version.
const HeaderLen = len(Magic) + 1

// ErrCorrupt marks a value whose frame cannot be read. Unframe's errors
// wrap it.
var ErrCorrupt = errors.New("value: corrupt frame")

// AppendHeader appends the frame header to dst; append the payload after
// it.
func AppendHeader(dst []byte) []byte {
	return append(append(dst, Magic...), Version)
}

// Frame returns the stored form of payload.
func Frame(payload []byte) []byte {
	return append(AppendHeader(make([]byte, 0, HeaderLen+len(payload))), payload...)
}

// Unframe checks value's header and returns its payload (a subslice of
// value). A value shorter than the header, with another magic, or with a
// version above Version gives an error wrapping ErrCorrupt.
func Unframe(value []byte) ([]byte, error) {
	if len(value) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(value), HeaderLen)
	}
	if string(value[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q, want %q", ErrCorrupt, value[:len(Magic)], Magic)
	}
	if v := value[len(Magic)]; v > Version {
		return nil, fmt.Errorf("%w: encoding version %d is newer than %d (written by a newer moraine?)", ErrCorrupt, v, Version)
	}
	return value[HeaderLen:], nil
}
