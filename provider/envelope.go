package provider

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/moraine-go/moraine/core"
)

// The three record kinds the log keeps, each framed the same way (see the
// package doc): a slot envelope, the base copy, and the truncation floor.
// Magic numbers, the version and every field number are wire format.
var (
	slotMagic  = [4]byte{'M', 'R', 'N', 'L'}
	baseMagic  = [4]byte{'M', 'R', 'N', 'B'}
	floorMagic = [4]byte{'M', 'R', 'N', 'F'}
)

// EnvelopeVersion is the framing version this package writes and the
// newest it reads.
const EnvelopeVersion = 1

// headerLen: magic (4), version (1), CRC32C of the payload (4).
const headerLen = 9

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Slot payload field numbers.
const (
	fTxnID       protowire.Number = 1
	fSlot        protowire.Number = 2
	fHead        protowire.Number = 3
	fChangesMade protowire.Number = 4
	fDeleted     protowire.Number = 5
	fWrites      protowire.Number = 6
	fBase        protowire.Number = 7
	fCommitter   protowire.Number = 8 // the offering open's id (contention policy); absent in older slots
)

// Nested message field numbers.
const (
	fHeadSnapshot protowire.Number = 1 // Head
	fHeadBatchSeq protowire.Number = 2

	fWriteKey    protowire.Number = 1 // Write
	fWriteValue  protowire.Number = 2
	fWriteDelete protowire.Number = 3

	fBaseWal    protowire.Number = 1 // Base (also the base copy's payload)
	fBaseSeq    protowire.Number = 2
	fBaseOrigin protowire.Number = 3
	fBaseTxnID  protowire.Number = 4 // base copy only: the stamp holding slot 0

	fFloorSlot protowire.Number = 1 // Floor
)

// uuidField decodes a 16-byte id field into dst.
func uuidField(what, name string, num protowire.Number, typ protowire.Type, bs []byte, dst *uuid.UUID) error {
	if typ != protowire.BytesType {
		return wrongType(what, num, typ)
	}
	if len(bs) != len(dst) {
		return corruptf("%s: %s is %d bytes, want 16", what, name, len(bs))
	}
	*dst = uuid.UUID(bs)
	return nil
}

// frame wraps payload with magic, version and checksum.
func frame(magic [4]byte, payload []byte) []byte {
	b := make([]byte, 0, headerLen+len(payload))
	b = append(b, magic[:]...)
	b = append(b, EnvelopeVersion)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// unframe checks magic, version and checksum and returns the payload.
func unframe(magic [4]byte, what string, data []byte) ([]byte, error) {
	if len(data) < headerLen {
		return nil, corruptf("%s: %d bytes is shorter than the %d-byte header", what, len(data), headerLen)
	}
	if [4]byte(data[:4]) != magic {
		return nil, corruptf("%s: bad magic %q (want %q)", what, data[:4], magic[:])
	}
	if v := data[4]; v == 0 || v > EnvelopeVersion {
		return nil, corruptf("%s: envelope version %d; this build reads up to %d (upgrade moraine)", what, v, EnvelopeVersion)
	}
	payload := data[headerLen:]
	if got, want := crc32.Checksum(payload, castagnoli), binary.BigEndian.Uint32(data[5:9]); got != want {
		return nil, corruptf("%s: checksum mismatch (stored %08x, computed %08x)", what, want, got)
	}
	return payload, nil
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
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

func appendBase(b []byte, base core.LogBase) []byte {
	b = appendVarintField(b, fBaseWal, base.WalBase)
	b = appendVarintField(b, fBaseSeq, base.SeqBase)
	return appendVarintField(b, fBaseOrigin, base.OriginBatchSeq)
}

// encodeSlot encodes a slot envelope. base is set for slot 0 only (the
// adoption stamp carries the base, so base and slot 0 land in one PUT).
func encodeSlot(batch core.LogBatch, base *core.LogBase) []byte {
	p := make([]byte, 0, 64+batchSize(batch))
	p = appendBytesField(p, fTxnID, batch.TxnID[:])
	p = appendVarintField(p, fSlot, batch.Slot)
	if batch.Head != (core.Head{}) {
		var h []byte
		h = appendVarintField(h, fHeadSnapshot, uint64(batch.Head.SnapshotID))
		h = appendVarintField(h, fHeadBatchSeq, batch.Head.BatchSeq)
		p = appendBytesField(p, fHead, h)
	}
	if batch.ChangesMade != "" {
		p = appendBytesField(p, fChangesMade, []byte(batch.ChangesMade))
	}
	if len(batch.DeletedDataFiles) > 0 {
		var packed []byte
		for _, id := range batch.DeletedDataFiles {
			packed = protowire.AppendVarint(packed, uint64(id))
		}
		p = appendBytesField(p, fDeleted, packed)
	}
	for _, w := range batch.Writes {
		var wb []byte
		wb = appendBytesField(wb, fWriteKey, w.Key)
		if w.Delete {
			wb = appendVarintField(wb, fWriteDelete, 1)
		} else {
			wb = appendBytesField(wb, fWriteValue, w.Value)
		}
		p = appendBytesField(p, fWrites, wb)
	}
	if base != nil {
		p = appendBytesField(p, fBase, appendBase(nil, *base))
	}
	if batch.Committer != uuid.Nil {
		p = appendBytesField(p, fCommitter, batch.Committer[:])
	}
	return frame(slotMagic, p)
}

func batchSize(b core.LogBatch) int {
	n := len(b.ChangesMade) + 10*len(b.DeletedDataFiles)
	for _, w := range b.Writes {
		n += len(w.Key) + len(w.Value) + 8
	}
	return n
}

// fields walks a protobuf-wire message, calling fn for every varint and
// length-delimited field; fields of other wire types are skipped, and fn
// ignores numbers it does not know (a newer writer's additions).
func fields(what string, b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return corruptf("%s: bad field tag", what)
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return corruptf("%s: bad varint in field %d", what, num)
			}
			b = b[n:]
			if err := fn(num, typ, v, nil); err != nil {
				return err
			}
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return corruptf("%s: bad length-delimited field %d", what, num)
			}
			b = b[n:]
			if err := fn(num, typ, 0, v); err != nil {
				return err
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return corruptf("%s: bad field %d of wire type %d", what, num, typ)
			}
			b = b[n:]
		}
	}
	return nil
}

// wrongType refuses a known field number carrying the wrong wire type.
func wrongType(what string, num protowire.Number, typ protowire.Type) error {
	return corruptf("%s: field %d has wire type %d", what, num, typ)
}

// decodeSlot decodes a slot envelope: the batch, and the base when the
// envelope carries one (slot 0). It never panics; every failure wraps
// ErrCorrupt.
func decodeSlot(data []byte) (core.LogBatch, *core.LogBase, error) {
	var (
		batch   core.LogBatch
		base    *core.LogBase
		sawTxn  bool
		what    = "slot envelope"
		payload []byte
		err     error
	)
	if payload, err = unframe(slotMagic, what, data); err != nil {
		return core.LogBatch{}, nil, err
	}
	err = fields(what, payload, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		switch num {
		case fTxnID:
			sawTxn = true
			return uuidField(what, "txn id", num, typ, bs, &batch.TxnID)
		case fCommitter:
			return uuidField(what, "committer id", num, typ, bs, &batch.Committer)
		case fSlot:
			if typ != protowire.VarintType {
				return wrongType(what, num, typ)
			}
			batch.Slot = v
		case fHead:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			return fields(what+" head", bs, func(num protowire.Number, typ protowire.Type, v uint64, _ []byte) error {
				switch num {
				case fHeadSnapshot:
					if typ != protowire.VarintType {
						return wrongType(what+" head", num, typ)
					}
					batch.Head.SnapshotID = core.SnapshotID(v)
				case fHeadBatchSeq:
					if typ != protowire.VarintType {
						return wrongType(what+" head", num, typ)
					}
					batch.Head.BatchSeq = v
				}
				return nil
			})
		case fChangesMade:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			batch.ChangesMade = string(bs)
		case fDeleted:
			switch typ {
			case protowire.VarintType: // unpacked encoding
				batch.DeletedDataFiles = append(batch.DeletedDataFiles, core.DataFileID(v))
			case protowire.BytesType: // packed
				for len(bs) > 0 {
					id, n := protowire.ConsumeVarint(bs)
					if n < 0 {
						return corruptf("%s: bad packed deleted data file id", what)
					}
					bs = bs[n:]
					batch.DeletedDataFiles = append(batch.DeletedDataFiles, core.DataFileID(id))
				}
			default:
				return wrongType(what, num, typ)
			}
		case fWrites:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			w, err := decodeWrite(bs)
			if err != nil {
				return err
			}
			batch.Writes = append(batch.Writes, w)
		case fBase:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			b, _, err := decodeBasePayload(what+" base", bs)
			if err != nil {
				return err
			}
			base = &b
		}
		return nil
	})
	if err != nil {
		return core.LogBatch{}, nil, err
	}
	if !sawTxn {
		return core.LogBatch{}, nil, corruptf("%s: no txn id", what)
	}
	return batch, base, nil
}

func decodeWrite(bs []byte) (core.LogWrite, error) {
	const what = "slot envelope write"
	var (
		w                core.LogWrite
		sawKey, sawValue bool
	)
	err := fields(what, bs, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		switch num {
		case fWriteKey:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			w.Key = append([]byte{}, bs...)
			sawKey = true
		case fWriteValue:
			if typ != protowire.BytesType {
				return wrongType(what, num, typ)
			}
			w.Value = append([]byte{}, bs...)
			sawValue = true
		case fWriteDelete:
			if typ != protowire.VarintType {
				return wrongType(what, num, typ)
			}
			w.Delete = v != 0
		}
		return nil
	})
	if err != nil {
		return core.LogWrite{}, err
	}
	switch {
	case !sawKey:
		return core.LogWrite{}, corruptf("%s: no key", what)
	case w.Delete && sawValue:
		return core.LogWrite{}, corruptf("%s: a delete of %q carries a value", what, w.Key)
	case !w.Delete && !sawValue:
		return core.LogWrite{}, corruptf("%s: a put of %q carries no value", what, w.Key)
	}
	return w, nil
}

// decodeBasePayload decodes base fields (and the base copy's stamp txn id).
func decodeBasePayload(what string, bs []byte) (core.LogBase, uuid.UUID, error) {
	var (
		b   core.LogBase
		txn uuid.UUID
	)
	err := fields(what, bs, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		switch num {
		case fBaseWal, fBaseSeq, fBaseOrigin:
			if typ != protowire.VarintType {
				return wrongType(what, num, typ)
			}
			switch num {
			case fBaseWal:
				b.WalBase = v
			case fBaseSeq:
				b.SeqBase = v
			default:
				b.OriginBatchSeq = v
			}
		case fBaseTxnID:
			if typ != protowire.BytesType || len(bs) != len(txn) {
				return corruptf("%s: bad stamp txn id", what)
			}
			txn = uuid.UUID(bs)
		}
		return nil
	})
	if err != nil {
		return core.LogBase{}, uuid.UUID{}, err
	}
	if err := checkBase(b); err != nil {
		return core.LogBase{}, uuid.UUID{}, corruptf("%s: %v", what, err)
	}
	return b, txn, nil
}

// checkBase is what every base must satisfy: WAL ids and seqs start at 1,
// and the last slot's id and seq must not wrap.
func checkBase(b core.LogBase) error {
	switch {
	case b.WalBase == 0:
		return errorString("WAL base 0 (engine WAL ids start at 1)")
	case b.SeqBase == 0:
		return errorString("seq base 0 (engine seqs start at 1)")
	case b.WalBase > 1<<62 || b.SeqBase > 1<<62:
		return errorString("base leaves no room for slots")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// encodeBaseCopy encodes the base copy kept at log/base: slot 0's base and
// the txn id of the stamp it came from.
func encodeBaseCopy(b core.LogBase, stampTxn uuid.UUID) []byte {
	p := appendBase(nil, b)
	p = appendBytesField(p, fBaseTxnID, stampTxn[:])
	return frame(baseMagic, p)
}

func decodeBaseCopy(data []byte) (core.LogBase, uuid.UUID, error) {
	payload, err := unframe(baseMagic, "base copy", data)
	if err != nil {
		return core.LogBase{}, uuid.UUID{}, err
	}
	return decodeBasePayload("base copy", payload)
}

// encodeFloor encodes the truncation floor record kept at log/floor.
func encodeFloor(floor uint64) []byte {
	return frame(floorMagic, appendVarintField(nil, fFloorSlot, floor))
}

func decodeFloor(data []byte) (uint64, error) {
	payload, err := unframe(floorMagic, "floor", data)
	if err != nil {
		return 0, err
	}
	var floor uint64
	err = fields("floor", payload, func(num protowire.Number, typ protowire.Type, v uint64, _ []byte) error {
		if num == fFloorSlot {
			if typ != protowire.VarintType {
				return wrongType("floor", num, typ)
			}
			floor = v
		}
		return nil
	})
	return floor, err
}
