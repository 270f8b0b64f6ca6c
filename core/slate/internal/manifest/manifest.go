// Package manifest defines the engine's manifest: the full, versioned state
// of one database (epochs, WAL replay point, the LSM tree, checkpoints),
// and its encoding.
//
// # Encoding
//
//	+--------+---------+----------------------------+-----------+
//	| "MRNM" | version | body (protobuf wire format) | CRC32C    |
//	| 4 B    | u16 BE  | fields below                | u32 BE    |
//	+--------+---------+----------------------------+-----------+
//
// The CRC32C (Castagnoli) covers magic, version and body. The body uses the
// protobuf wire format with the field numbers below, so fields can be added
// without a version bump: decoders skip numbers they do not know. Field
// numbers are wire format and must never be reused.
//
//	Manifest:  1 writer_epoch  2 compactor_epoch  3 replay_after_wal_id
//	           4 next_wal_id  5 last_l0_seq  6 l0 (SST, repeated, newest first)
//	           7 runs (Run, repeated, newest first)  8 checkpoints (repeated)
//	           9 wal_store  10 last_compacted_l0 (ULID bytes)
//	           11 recent_snapshot_min_seq  12 initialized
//	           13 running_compactions (ULID bytes, repeated)
//	SST:       1 id (ULID, 16 bytes)  2 size  3 first_key  4 last_key
//	           5 min_seq  6 max_seq  7 rows
//	Run:       1 id  2 ssts (SST, repeated, key order)
//	Checkpoint: 1 id (UUID, 16 bytes)  2 manifest_id  3 create_unix_micros
//	           4 expire_unix_micros (0: never)  5 name
package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// Version is the encoding version this package writes and the newest it
// reads.
const Version = 1

var magic = [4]byte{'M', 'R', 'N', 'M'}

// ErrCorrupt marks a manifest that cannot be decoded.
var ErrCorrupt = errors.New("manifest: corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SST describes one table file under compacted/.
type SST struct {
	ID       ulid.ULID
	Size     int64
	FirstKey []byte
	LastKey  []byte
	MinSeq   uint64
	MaxSeq   uint64
	Rows     int64
}

// Run is a sorted run: SSTs with non-overlapping key ranges, in key order.
type Run struct {
	ID   uint32
	SSTs []SST
}

// Checkpoint pins a manifest (and everything it references) against GC.
type Checkpoint struct {
	ID         uuid.UUID
	ManifestID uint64
	Created    time.Time
	Expires    time.Time // zero: never
	Name       string
}

// Expired reports whether the checkpoint's lifetime has passed at now.
func (c Checkpoint) Expired(now time.Time) bool { return !c.Expires.IsZero() && !now.Before(c.Expires) }

// Manifest is the database state as of one manifest id.
type Manifest struct {
	Initialized          bool
	WriterEpoch          uint64
	CompactorEpoch       uint64
	ReplayAfterWalID     uint64 // WAL ids <= this are fully reflected in L0/runs
	NextWalID            uint64 // next WAL id the writer will use, as last recorded
	LastL0Seq            uint64 // highest seq in L0/runs
	L0                   []SST  // newest first
	Runs                 []Run  // newest first
	Checkpoints          []Checkpoint
	WalStore             string    // identity of the WAL's object store; "" = the main store
	LastCompactedL0      ulid.ULID // newest L0 a compaction consumed; the writer never re-adds one at or below it
	RecentSnapshotMinSeq uint64    // the writer's oldest active snapshot/txn seq (compaction retention)
	// RunningCompactions names compactions in flight. Each id's ULID time is
	// the compaction's start; every output SST it writes has a ULID at or
	// after it, so GC keeps unreferenced SSTs that new (see the slate
	// package doc). A compactor adds its id before writing outputs and
	// removes it when it publishes; claiming the compactor epoch clears
	// them all (their owners are fenced).
	RunningCompactions []ulid.ULID
}

// New returns the state of a fresh database.
func New() *Manifest {
	return &Manifest{Initialized: true, NextWalID: 1}
}

// Clone returns a deep copy.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.L0 = slices.Clone(m.L0)
	c.Runs = make([]Run, len(m.Runs))
	for i, r := range m.Runs {
		c.Runs[i] = Run{ID: r.ID, SSTs: slices.Clone(r.SSTs)}
	}
	c.Checkpoints = slices.Clone(m.Checkpoints)
	c.RunningCompactions = slices.Clone(m.RunningCompactions)
	return &c
}

// Checkpoint returns the checkpoint with the given id.
func (m *Manifest) Checkpoint(id uuid.UUID) (Checkpoint, bool) {
	for _, c := range m.Checkpoints {
		if c.ID == id {
			return c, true
		}
	}
	return Checkpoint{}, false
}

// Check verifies the manifest's internal invariants: L0 tables and sorted
// runs partition seqs from newest to oldest (each L0 is older than the one
// before it, every run is older than every L0 and than the run before it),
// runs have strictly descending ids and non-overlapping SSTs in key order.
func (m *Manifest) Check() error {
	for i := 1; i < len(m.L0); i++ {
		if m.L0[i].MaxSeq >= m.L0[i-1].MinSeq {
			return fmt.Errorf("manifest: L0 %d (seqs %d..%d) is not older than L0 %d (seqs %d..%d)",
				i, m.L0[i].MinSeq, m.L0[i].MaxSeq, i-1, m.L0[i-1].MinSeq, m.L0[i-1].MaxSeq)
		}
	}
	// newer: the lowest seq of everything newer than the source checked next.
	newer, have := uint64(0), false
	if n := len(m.L0); n > 0 {
		newer, have = m.L0[n-1].MinSeq, true
	}
	for i, r := range m.Runs {
		if i > 0 && r.ID >= m.Runs[i-1].ID {
			return fmt.Errorf("manifest: run ids not descending (%d after %d)", r.ID, m.Runs[i-1].ID)
		}
		if len(r.SSTs) == 0 {
			return fmt.Errorf("manifest: run %d has no SSTs", r.ID)
		}
		lo, hi := r.SSTs[0].MinSeq, r.SSTs[0].MaxSeq
		for j, s := range r.SSTs {
			if j > 0 && string(r.SSTs[j-1].LastKey) >= string(s.FirstKey) {
				return fmt.Errorf("manifest: run %d SSTs %d and %d overlap", r.ID, j-1, j)
			}
			lo, hi = min(lo, s.MinSeq), max(hi, s.MaxSeq)
		}
		if have && hi >= newer {
			return fmt.Errorf("manifest: run %d (seqs %d..%d) is not older than the tables before it (from seq %d)", r.ID, lo, hi, newer)
		}
		newer, have = lo, true
	}
	if m.NextWalID == 0 {
		return fmt.Errorf("manifest: next_wal_id is 0")
	}
	return nil
}

func appendSST(b []byte, s SST) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, s.ID[:])
	b = appendUint(b, 2, uint64(s.Size))
	b = appendBytesField(b, 3, s.FirstKey)
	b = appendBytesField(b, 4, s.LastKey)
	b = appendUint(b, 5, s.MinSeq)
	b = appendUint(b, 6, s.MaxSeq)
	b = appendUint(b, 7, uint64(s.Rows))
	return b
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendMessage(b []byte, num protowire.Number, body []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

// Encode serializes m.
func Encode(m *Manifest) []byte {
	b := make([]byte, 0, 256)
	b = append(b, magic[:]...)
	b = binary.BigEndian.AppendUint16(b, Version)
	if m.Initialized {
		b = appendUint(b, 12, 1)
	}
	b = appendUint(b, 1, m.WriterEpoch)
	b = appendUint(b, 2, m.CompactorEpoch)
	b = appendUint(b, 3, m.ReplayAfterWalID)
	b = appendUint(b, 4, m.NextWalID)
	b = appendUint(b, 5, m.LastL0Seq)
	for _, s := range m.L0 {
		b = appendMessage(b, 6, appendSST(nil, s))
	}
	for _, r := range m.Runs {
		var rb []byte
		rb = appendUint(rb, 1, uint64(r.ID))
		for _, s := range r.SSTs {
			rb = appendMessage(rb, 2, appendSST(nil, s))
		}
		b = appendMessage(b, 7, rb)
	}
	for _, c := range m.Checkpoints {
		var cb []byte
		cb = appendBytesField(cb, 1, c.ID[:])
		cb = appendUint(cb, 2, c.ManifestID)
		if !c.Created.IsZero() {
			cb = appendUint(cb, 3, uint64(c.Created.UnixMicro()))
		}
		if !c.Expires.IsZero() {
			cb = appendUint(cb, 4, uint64(c.Expires.UnixMicro()))
		}
		if c.Name != "" {
			cb = appendBytesField(cb, 5, []byte(c.Name))
		}
		b = appendMessage(b, 8, cb)
	}
	if m.WalStore != "" {
		b = appendBytesField(b, 9, []byte(m.WalStore))
	}
	if m.LastCompactedL0 != (ulid.ULID{}) {
		b = appendBytesField(b, 10, m.LastCompactedL0[:])
	}
	b = appendUint(b, 11, m.RecentSnapshotMinSeq)
	for _, id := range m.RunningCompactions {
		b = appendBytesField(b, 13, id[:])
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// fields walks a protobuf-wire body, calling fn for every field; unknown
// fields are the caller's to ignore.
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return corrupt("bad field tag")
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return corrupt("bad varint in field %d", num)
			}
			b = b[n:]
			if err := fn(num, typ, v, nil); err != nil {
				return err
			}
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return corrupt("bad length-delimited field %d", num)
			}
			b = b[n:]
			if err := fn(num, typ, 0, v); err != nil {
				return err
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return corrupt("bad field %d of wire type %d", num, typ)
			}
			b = b[n:]
		}
	}
	return nil
}

func decodeULID(bs []byte, what string) (ulid.ULID, error) {
	var id ulid.ULID
	if len(bs) != len(id) {
		return id, corrupt("%s is %d bytes, want %d", what, len(bs), len(id))
	}
	copy(id[:], bs)
	return id, nil
}

func decodeSST(b []byte) (SST, error) {
	var s SST
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		var err error
		switch {
		case num == 1 && typ == protowire.BytesType:
			s.ID, err = decodeULID(bs, "sst id")
		case num == 2 && typ == protowire.VarintType:
			s.Size = int64(v)
		case num == 3 && typ == protowire.BytesType:
			s.FirstKey = slices.Clone(bs)
		case num == 4 && typ == protowire.BytesType:
			s.LastKey = slices.Clone(bs)
		case num == 5 && typ == protowire.VarintType:
			s.MinSeq = v
		case num == 6 && typ == protowire.VarintType:
			s.MaxSeq = v
		case num == 7 && typ == protowire.VarintType:
			s.Rows = int64(v)
		}
		return err
	})
	if err == nil && s.ID == (ulid.ULID{}) {
		err = corrupt("sst without id")
	}
	return s, err
}

// Decode parses an encoded manifest.
func Decode(data []byte) (*Manifest, error) {
	if len(data) < len(magic)+2+4 {
		return nil, corrupt("%d bytes is too short", len(data))
	}
	if [4]byte(data[:4]) != magic {
		return nil, corrupt("bad magic %q", data[:4])
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, corrupt("checksum mismatch")
	}
	if v := binary.BigEndian.Uint16(data[4:6]); v == 0 || v > Version {
		return nil, corrupt("encoding version %d; this build reads up to %d (upgrade moraine)", v, Version)
	}
	m := &Manifest{}
	err := fields(body[6:], func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		switch {
		case num == 12 && typ == protowire.VarintType:
			m.Initialized = v != 0
		case num == 1 && typ == protowire.VarintType:
			m.WriterEpoch = v
		case num == 2 && typ == protowire.VarintType:
			m.CompactorEpoch = v
		case num == 3 && typ == protowire.VarintType:
			m.ReplayAfterWalID = v
		case num == 4 && typ == protowire.VarintType:
			m.NextWalID = v
		case num == 5 && typ == protowire.VarintType:
			m.LastL0Seq = v
		case num == 6 && typ == protowire.BytesType:
			s, err := decodeSST(bs)
			if err != nil {
				return err
			}
			m.L0 = append(m.L0, s)
		case num == 7 && typ == protowire.BytesType:
			var r Run
			err := fields(bs, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
				switch {
				case num == 1 && typ == protowire.VarintType:
					if v > 1<<32-1 {
						return corrupt("run id %d out of range", v)
					}
					r.ID = uint32(v)
				case num == 2 && typ == protowire.BytesType:
					s, err := decodeSST(bs)
					if err != nil {
						return err
					}
					r.SSTs = append(r.SSTs, s)
				}
				return nil
			})
			if err != nil {
				return err
			}
			m.Runs = append(m.Runs, r)
		case num == 8 && typ == protowire.BytesType:
			var c Checkpoint
			err := fields(bs, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					if len(bs) != 16 {
						return corrupt("checkpoint id is %d bytes", len(bs))
					}
					copy(c.ID[:], bs)
				case num == 2 && typ == protowire.VarintType:
					c.ManifestID = v
				case num == 3 && typ == protowire.VarintType:
					c.Created = time.UnixMicro(int64(v))
				case num == 4 && typ == protowire.VarintType:
					c.Expires = time.UnixMicro(int64(v))
				case num == 5 && typ == protowire.BytesType:
					c.Name = string(bs)
				}
				return nil
			})
			if err != nil {
				return err
			}
			m.Checkpoints = append(m.Checkpoints, c)
		case num == 9 && typ == protowire.BytesType:
			m.WalStore = string(bs)
		case num == 10 && typ == protowire.BytesType:
			id, err := decodeULID(bs, "last compacted l0")
			if err != nil {
				return err
			}
			m.LastCompactedL0 = id
		case num == 11 && typ == protowire.VarintType:
			m.RecentSnapshotMinSeq = v
		case num == 13 && typ == protowire.BytesType:
			id, err := decodeULID(bs, "running compaction")
			if err != nil {
				return err
			}
			m.RunningCompactions = append(m.RunningCompactions, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}
