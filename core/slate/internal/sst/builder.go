package sst

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// Options configure a Builder.
type Options struct {
	// Kind is KindSorted or KindWAL (required: the zero value is invalid).
	Kind Kind
	// BlockSize is the target size of a data block frame in bytes
	// (0: DefaultBlockSize). A row larger than a block gets a block of its own.
	BlockSize int
	// BloomBitsPerKey sizes a sorted table's filter (0: DefaultBloomBitsPerKey;
	// negative: no filter). WAL tables never have one.
	BloomBitsPerKey int
	// MinFilterKeys: a sorted table gets a filter only when it has at least
	// this many distinct keys (and at least one). 0: always.
	MinFilterKeys int
}

// Builder encodes one table. Add rows in the order the kind requires, then
// call Finish. A Builder is not safe for concurrent use.
type Builder struct {
	opts Options
	err  error // sticky: bad options
	done bool

	buf       []byte // the table so far: finished blocks
	blockOff  int    // offset in buf where the current block's payload starts
	blockRows int
	blockSeq  uint64 // first seq of the current block
	index     []byte // encoded index entries
	blocks    int

	rows     int
	lastKey  []byte // previous row's key (a copy)
	lastSeq  uint64
	smallest []byte
	largest  []byte
	minSeq   uint64
	maxSeq   uint64

	hashes []uint64            // sorted: hash of each distinct key
	batch  map[string]struct{} // WAL: keys already added at lastSeq
}

// NewBuilder returns a Builder for opts. Invalid options are reported by the
// first Add or Finish.
func NewBuilder(opts Options) *Builder {
	b := &Builder{opts: opts}
	if opts.BlockSize == 0 {
		b.opts.BlockSize = DefaultBlockSize
	}
	if opts.BloomBitsPerKey == 0 {
		b.opts.BloomBitsPerKey = DefaultBloomBitsPerKey
	}
	switch {
	case !opts.Kind.Valid():
		b.err = invalidf("invalid table kind %d", uint8(opts.Kind))
	case opts.BlockSize < 0:
		b.err = invalidf("negative block size %d", opts.BlockSize)
	case opts.MinFilterKeys < 0:
		b.err = invalidf("negative MinFilterKeys %d", opts.MinFilterKeys)
	}
	if opts.Kind == KindWAL {
		b.batch = make(map[string]struct{})
	}
	return b
}

// Len returns the number of rows added so far.
func (b *Builder) Len() int { return b.rows }

// Add appends a row. Sorted tables need rows strictly increasing by
// base.Compare; WAL tables need seqs that never decrease and no (key, seq)
// twice. Tombstones carry no value. A refused row leaves the Builder as it
// was. Add copies what it keeps: the caller may reuse r's slices.
func (b *Builder) Add(r base.Row) error {
	if b.err != nil {
		return b.err
	}
	if b.done {
		return invalidf("Add after Finish")
	}
	if !r.Kind.Valid() {
		return invalidf("row %d %s: invalid row kind %d", b.rows, rowDesc(r), uint8(r.Kind))
	}
	if r.Kind == base.KindDelete && len(r.Value) != 0 {
		return invalidf("row %d %s: tombstone with a %d-byte value", b.rows, rowDesc(r), len(r.Value))
	}
	newKey := b.rows == 0
	if b.rows > 0 {
		switch b.opts.Kind {
		case KindSorted:
			switch c := compareRow(b.lastKey, b.lastSeq, r.Key, r.Seq); {
			case c == 0:
				return invalidf("row %d %s: duplicate (key, seq)", b.rows, rowDesc(r))
			case c > 0:
				return invalidf("row %d %s: out of order after %s (want key ascending, seq descending)", b.rows, rowDesc(r), keyDesc(b.lastKey, b.lastSeq))
			}
			newKey = !bytes.Equal(b.lastKey, r.Key)
		case KindWAL:
			if r.Seq < b.lastSeq {
				return invalidf("row %d %s: seq goes back from %d", b.rows, rowDesc(r), b.lastSeq)
			}
			if r.Seq == b.lastSeq {
				if _, dup := b.batch[string(r.Key)]; dup {
					return invalidf("row %d %s: duplicate (key, seq)", b.rows, rowDesc(r))
				}
			} else {
				clear(b.batch)
			}
		}
	}

	shared := 0
	if b.blockRows > 0 {
		shared = commonPrefix(b.lastKey, r.Key)
		if len(b.buf)-b.blockOff+encodedRowSize(shared, r)+trailerSize > b.opts.BlockSize {
			b.finishBlock()
			shared = 0
		}
	}
	if b.blockRows == 0 {
		b.blockSeq = r.Seq
	}
	b.buf = appendRow(b.buf, shared, r)
	b.blockRows++

	switch b.opts.Kind {
	case KindSorted:
		if newKey {
			b.hashes = append(b.hashes, keyHash(r.Key))
		}
		if b.rows == 0 {
			b.smallest = append([]byte{}, r.Key...)
		}
	case KindWAL:
		b.batch[string(r.Key)] = struct{}{}
		if b.rows == 0 || bytes.Compare(r.Key, b.smallest) < 0 {
			b.smallest = append(b.smallest[:0], r.Key...)
		}
		if b.rows == 0 || bytes.Compare(r.Key, b.largest) > 0 {
			b.largest = append(b.largest[:0], r.Key...)
		}
	}
	if b.rows == 0 || r.Seq < b.minSeq {
		b.minSeq = r.Seq
	}
	if b.rows == 0 || r.Seq > b.maxSeq {
		b.maxSeq = r.Seq
	}
	b.lastKey = append(b.lastKey[:0], r.Key...)
	b.lastSeq = r.Seq
	b.rows++

	if len(b.buf)-b.blockOff+trailerSize >= b.opts.BlockSize {
		b.finishBlock()
	}
	return nil
}

// finishBlock frames the current block and records its index entry.
func (b *Builder) finishBlock() {
	if b.blockRows == 0 {
		return
	}
	b.buf = appendTrailer(b.buf, b.blockOff, frameData)
	e := b.index
	e = binary.AppendUvarint(e, uint64(b.blockOff))
	e = binary.AppendUvarint(e, uint64(len(b.buf)-b.blockOff))
	e = binary.AppendUvarint(e, uint64(b.blockRows))
	e = binary.AppendUvarint(e, b.blockSeq)
	e = binary.AppendUvarint(e, b.lastSeq)
	if b.opts.Kind == KindSorted {
		e = binary.AppendUvarint(e, uint64(len(b.lastKey)))
		e = append(e, b.lastKey...)
	} else {
		e = binary.AppendUvarint(e, 0)
	}
	b.index = e
	b.blocks++
	b.blockOff = len(b.buf)
	b.blockRows = 0
}

// filterBits returns the filter's bit-array length in bytes (0: no filter).
func (b *Builder) filterBytes() int {
	n := len(b.hashes)
	if b.opts.Kind != KindSorted || b.opts.BloomBitsPerKey < 0 || n == 0 || n < b.opts.MinFilterKeys {
		return 0
	}
	nbits := max(n*b.opts.BloomBitsPerKey, 64)
	return (nbits + 7) / 8
}

// EstimatedSize returns about how many bytes Finish would return now.
func (b *Builder) EstimatedSize() int {
	n := len(b.buf) + len(b.index) + 2*binary.MaxVarintLen64
	if b.blockRows > 0 {
		n += trailerSize + 5*binary.MaxVarintLen64 + len(b.lastKey)
	}
	if fb := b.filterBytes(); fb > 0 {
		n += 1 + fb + trailerSize
	}
	n += 1 + 6*binary.MaxVarintLen64 + len(b.smallest) + len(b.largest) + trailerSize
	return n + footerSize
}

// Finish encodes the rest of the table and returns all of its bytes and its
// Info. The Builder cannot be used afterwards. An empty table is valid.
func (b *Builder) Finish() ([]byte, Info, error) {
	if b.err != nil {
		return nil, Info{}, b.err
	}
	if b.done {
		return nil, Info{}, invalidf("Finish called twice")
	}
	b.done = true
	b.finishBlock()
	if b.opts.Kind == KindSorted {
		b.largest = b.lastKey
	}

	var f footer
	start := len(b.buf)
	b.buf = binary.AppendUvarint(b.buf, uint64(b.blocks))
	b.buf = append(b.buf, b.index...)
	b.buf = appendTrailer(b.buf, start, frameIndex)
	f.index = handle{int64(start), int64(len(b.buf) - start)}

	if fb := b.filterBytes(); fb > 0 {
		k := bloomProbes(b.opts.BloomBitsPerKey)
		start = len(b.buf)
		b.buf = append(b.buf, byte(k))
		b.buf = append(b.buf, make([]byte, fb)...)
		arr := b.buf[start+1:]
		for _, h := range b.hashes {
			bloomSet(arr, k, h)
		}
		b.buf = appendTrailer(b.buf, start, frameFilter)
		f.filter = handle{int64(start), int64(len(b.buf) - start)}
	}

	info := Info{
		Kind:     b.opts.Kind,
		Rows:     b.rows,
		FirstKey: append([]byte{}, b.smallest...),
		LastKey:  append([]byte{}, b.largest...),
		MinSeq:   b.minSeq,
		MaxSeq:   b.maxSeq,
		Blocks:   b.blocks,
	}
	start = len(b.buf)
	b.buf = appendInfo(b.buf, info)
	b.buf = appendTrailer(b.buf, start, frameInfo)
	f.info = handle{int64(start), int64(len(b.buf) - start)}

	b.buf = appendFooter(b.buf, f)
	info.Size = int64(len(b.buf))
	info.HasFilter = f.filter.length > 0

	out := b.buf
	b.buf, b.index, b.hashes, b.batch = nil, nil, nil, nil
	return out, info, nil
}

func appendInfo(dst []byte, in Info) []byte {
	dst = append(dst, byte(in.Kind))
	dst = binary.AppendUvarint(dst, uint64(in.Rows))
	dst = binary.AppendUvarint(dst, uint64(in.Blocks))
	dst = binary.AppendUvarint(dst, in.MinSeq)
	dst = binary.AppendUvarint(dst, in.MaxSeq)
	dst = binary.AppendUvarint(dst, uint64(len(in.FirstKey)))
	dst = append(dst, in.FirstKey...)
	dst = binary.AppendUvarint(dst, uint64(len(in.LastKey)))
	dst = append(dst, in.LastKey...)
	return dst
}

// appendRow encodes r, sharing the first shared bytes of the previous key.
func appendRow(dst []byte, shared int, r base.Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(shared))
	dst = binary.AppendUvarint(dst, uint64(len(r.Key)-shared))
	dst = binary.AppendUvarint(dst, uint64(len(r.Value)))
	dst = append(dst, byte(r.Kind))
	dst = binary.AppendUvarint(dst, r.Seq)
	dst = append(dst, r.Key[shared:]...)
	return append(dst, r.Value...)
}

func encodedRowSize(shared int, r base.Row) int {
	return uvarintLen(uint64(shared)) + uvarintLen(uint64(len(r.Key)-shared)) +
		uvarintLen(uint64(len(r.Value))) + 1 + uvarintLen(r.Seq) +
		len(r.Key) - shared + len(r.Value)
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// rowDesc names a row in error messages without its value.
func rowDesc(r base.Row) string { return keyDesc(r.Key, r.Seq) }

// keyDesc prints key@seq for error messages.
func keyDesc(key []byte, seq uint64) string { return fmt.Sprintf("%s@%d", keyText(key), seq) }

// keyText quotes a key for error messages, eliding the middle of long ones.
func keyText(key []byte) string {
	if len(key) > 64 {
		return fmt.Sprintf("%q...%q(%d bytes)", key[:32], key[len(key)-16:], len(key))
	}
	return fmt.Sprintf("%q", key)
}
