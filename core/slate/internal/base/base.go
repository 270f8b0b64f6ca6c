// Package base holds the engine's smallest shared vocabulary: rows, their
// kinds and the ordering rules every layer (memtable, SSTs, WAL, iterators)
// agrees on. It imports nothing from the engine.
package base

import (
	"bytes"
	"fmt"
)

// Kind says what a row does to its key. The values are wire format: they
// are written into WAL and SST files and must never change.
type Kind uint8

const (
	// KindPut sets the key to Value.
	KindPut Kind = 1
	// KindDelete is a tombstone: the key has no value at this seq.
	KindDelete Kind = 2
)

func (k Kind) String() string {
	switch k {
	case KindPut:
		return "put"
	case KindDelete:
		return "delete"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == KindPut || k == KindDelete }

// Row is one versioned key: every row of one write batch shares one Seq.
// Value is nil for tombstones.
type Row struct {
	Key   []byte
	Value []byte
	Kind  Kind
	Seq   uint64
}

// IsTombstone reports whether the row deletes its key.
func (r Row) IsTombstone() bool { return r.Kind == KindDelete }

// Clone returns a deep copy (rows handed across layers must not alias
// buffers the producer reuses).
func (r Row) Clone() Row {
	c := r
	c.Key = append([]byte(nil), r.Key...)
	if r.Value != nil {
		c.Value = append([]byte(nil), r.Value...)
	}
	return c
}

// Size estimates the row's encoded size, for memtable and buffer budgets.
func (r Row) Size() int { return len(r.Key) + len(r.Value) + 16 }

func (r Row) String() string {
	if r.Kind == KindDelete {
		return fmt.Sprintf("%q@%d:del", r.Key, r.Seq)
	}
	return fmt.Sprintf("%q@%d=%q", r.Key, r.Seq, r.Value)
}

// Compare orders rows the way sorted tables store them: key ascending, then
// seq descending (newest version of a key first).
func Compare(a, b Row) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	switch {
	case a.Seq > b.Seq:
		return -1
	case a.Seq < b.Seq:
		return 1
	}
	return 0
}
