package sst

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// Info describes a table; it is also what a manifest would record about one.
type Info struct {
	Kind Kind
	Rows int
	// FirstKey and LastKey are the smallest and greatest keys in the table
	// (for sorted tables, the first and last rows' keys).
	FirstKey, LastKey []byte
	MinSeq, MaxSeq    uint64
	Blocks            int
	Size              int64 // encoded size in bytes
	HasFilter         bool
}

func (in Info) clone() Info {
	in.FirstKey = append([]byte{}, in.FirstKey...)
	in.LastKey = append([]byte{}, in.LastKey...)
	return in
}

// RangeReader reads length bytes at off of one stored table. It must return
// exactly length bytes (fewer is reported as corruption) in a slice the
// Table may keep: the reader must not reuse it. A Table used from several
// goroutines calls it concurrently.
type RangeReader func(ctx context.Context, off, length int64) ([]byte, error)

// Table is an open table. It is immutable and safe for concurrent use.
type Table struct {
	rr     RangeReader // nil for OpenBytes
	info   Info
	index  []indexEntry
	filter []byte // bit array; nil: no filter
	probes int

	// cache holds the table's bytes [cacheOff, size), read while opening
	// (all of them for OpenBytes): the metadata and, when the first read
	// covered more, the last data blocks, which then need no read. It is
	// at most 64 KiB beyond the metadata.
	cache    []byte
	cacheOff int64
}

type indexEntry struct {
	off, length int64
	rows        int
	firstSeq    uint64
	lastSeq     uint64
	key         []byte // sorted: the block's last key; WAL: empty
}

// Open opens a table of the given size through rr. It reads the table's
// last 64 KiB (or all of it, if smaller) and, only when the index, filter and
// info start before that, one more range for the rest of them.
func Open(ctx context.Context, rr RangeReader, size int64) (*Table, error) {
	if rr == nil {
		return nil, invalidf("Open: nil RangeReader")
	}
	if size < footerSize {
		return nil, corruptf("table is %d bytes, smaller than the %d-byte footer", size, footerSize)
	}
	tailOff := size - min(size, tailReadSize)
	tail, err := readRange(ctx, rr, tailOff, size-tailOff, place{name: "tail"})
	if err != nil {
		return nil, err
	}
	f, err := parseFooter(tail[len(tail)-footerSize:], size)
	if err != nil {
		return nil, err
	}
	if f.index.off < tailOff {
		head, err := readRange(ctx, rr, f.index.off, tailOff-f.index.off, place{name: "metadata"})
		if err != nil {
			return nil, err
		}
		buf := make([]byte, 0, size-f.index.off)
		tail = append(append(buf, head...), tail...)
		tailOff = f.index.off
	}
	return newTable(rr, size, tail, tailOff, f)
}

// OpenBytes opens a table held in memory. The Table reads data (without
// copying it): the caller must not modify it while the Table is in use.
func OpenBytes(data []byte) (*Table, error) {
	size := int64(len(data))
	if size < footerSize {
		return nil, corruptf("table is %d bytes, smaller than the %d-byte footer", size, footerSize)
	}
	f, err := parseFooter(data[size-footerSize:], size)
	if err != nil {
		return nil, err
	}
	return newTable(nil, size, data, 0, f)
}

// readRange reads [off, off+length) through rr and checks the length.
func readRange(ctx context.Context, rr RangeReader, off, length int64, what place) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sst: read %s at offset %d: %w", what, off, err)
	}
	b, err := rr(ctx, off, length)
	if err != nil {
		return nil, fmt.Errorf("sst: read %s at offset %d: %w", what, off, err)
	}
	if int64(len(b)) != length {
		return nil, corruptf("%s at offset %d: read %d bytes, want %d (object shorter than its size?)", what, off, len(b), length)
	}
	return b, nil
}

func newTable(rr RangeReader, size int64, cache []byte, cacheOff int64, f footer) (*Table, error) {
	t := &Table{rr: rr, cache: cache, cacheOff: cacheOff}
	section := func(h handle, typ byte, what string) ([]byte, error) {
		return checkFrame(cache[h.off-cacheOff:h.off-cacheOff+h.length], typ, place{name: what}, h.off)
	}
	p, err := section(f.info, frameInfo, "info")
	if err != nil {
		return nil, err
	}
	if t.info, err = parseInfo(p, f.info.off); err != nil {
		return nil, err
	}
	t.info.Size = size
	t.info.HasFilter = f.filter.length > 0
	if t.info.HasFilter && t.info.Kind != KindSorted {
		return nil, corruptf("footer: %s table has a filter", t.info.Kind)
	}

	if p, err = section(f.index, frameIndex, "index"); err != nil {
		return nil, err
	}
	if t.index, err = parseIndex(p, f.index.off); err != nil {
		return nil, err
	}
	if err := t.checkIndex(); err != nil {
		return nil, err
	}

	if t.info.HasFilter {
		if p, err = section(f.filter, frameFilter, "filter"); err != nil {
			return nil, err
		}
		if len(p) < 2 {
			return nil, corruptf("filter at offset %d: %d-byte payload, too short", f.filter.off, len(p))
		}
		if p[0] < 1 || p[0] > maxProbes {
			return nil, corruptf("filter at offset %d: %d probes, want 1..%d", f.filter.off, p[0], maxProbes)
		}
		t.probes, t.filter = int(p[0]), p[1:]
	}
	return t, nil
}

// decoder reads uvarints and byte strings from untrusted input, remembering
// the first failure.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes reads a uvarint length and that many bytes (aliasing the input).
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func parseInfo(p []byte, off int64) (Info, error) {
	var in Info
	if len(p) < 1 {
		return in, corruptf("info at offset %d: empty", off)
	}
	in.Kind = Kind(p[0])
	if !in.Kind.Valid() {
		return in, corruptf("info at offset %d: unknown table kind %d", off, p[0])
	}
	d := decoder{b: p[1:]}
	rows, blocks := d.uvarint(), d.uvarint()
	in.MinSeq, in.MaxSeq = d.uvarint(), d.uvarint()
	first, last := d.bytes(), d.bytes()
	if d.bad || len(d.b) != 0 {
		return in, corruptf("info at offset %d: malformed", off)
	}
	// Every row and block takes bytes: bound the counts by the frame's
	// offset (everything before the info) so they fit an int.
	if rows > uint64(off)/minRowSize || blocks > rows {
		return in, corruptf("info at offset %d: %d rows in %d blocks do not fit the table", off, rows, blocks)
	}
	in.Rows, in.Blocks = int(rows), int(blocks)
	in.FirstKey, in.LastKey = append([]byte{}, first...), append([]byte{}, last...)
	if in.Rows == 0 {
		if in.Blocks != 0 || in.MinSeq != 0 || in.MaxSeq != 0 || len(first) != 0 || len(last) != 0 {
			return in, corruptf("info at offset %d: empty table with non-empty bounds", off)
		}
	} else if in.Blocks == 0 || in.MinSeq > in.MaxSeq || bytes.Compare(first, last) > 0 {
		return in, corruptf("info at offset %d: inconsistent bounds", off)
	}
	return in, nil
}

func parseIndex(p []byte, off int64) ([]indexEntry, error) {
	d := decoder{b: p}
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b))/minEntrySize {
		return nil, corruptf("index at offset %d: bad block count", off)
	}
	entries := make([]indexEntry, n)
	var next uint64
	for i := range entries {
		bo, bl, rows := d.uvarint(), d.uvarint(), d.uvarint()
		first, last := d.uvarint(), d.uvarint()
		key := d.bytes()
		if d.bad {
			return nil, corruptf("index at offset %d: entry %d malformed", off, i)
		}
		if bo != next || bl > uint64(off)-bo || bl < trailerSize+minRowSize {
			return nil, corruptf("index at offset %d: block %d handle (%d, %d) out of place", off, i, bo, bl)
		}
		if rows == 0 || rows > (bl-trailerSize)/minRowSize {
			return nil, corruptf("index at offset %d: block %d: %d rows cannot fit %d bytes", off, i, rows, bl)
		}
		next = bo + bl
		entries[i] = indexEntry{off: int64(bo), length: int64(bl), rows: int(rows), firstSeq: first, lastSeq: last, key: key}
	}
	if len(d.b) != 0 {
		return nil, corruptf("index at offset %d: %d trailing bytes", off, len(d.b))
	}
	if next != uint64(off) {
		return nil, corruptf("index at offset %d: data blocks end at %d", off, next)
	}
	return entries, nil
}

// checkIndex checks the index against the info and itself.
func (t *Table) checkIndex() error {
	in := &t.info
	if len(t.index) != in.Blocks {
		return corruptf("index has %d blocks, info says %d", len(t.index), in.Blocks)
	}
	rows := 0
	for i, e := range t.index {
		rows += e.rows
		if e.firstSeq < in.MinSeq || e.firstSeq > in.MaxSeq || e.lastSeq < in.MinSeq || e.lastSeq > in.MaxSeq {
			return corruptf("index block %d: seqs [%d, %d] outside the table's [%d, %d]", i, e.firstSeq, e.lastSeq, in.MinSeq, in.MaxSeq)
		}
		switch in.Kind {
		case KindSorted:
			if i > 0 {
				p := t.index[i-1]
				if compareRow(p.key, p.lastSeq, e.key, e.lastSeq) >= 0 {
					return corruptf("index block %d: last row %s not after block %d's %s", i, keyDesc(e.key, e.lastSeq), i-1, keyDesc(p.key, p.lastSeq))
				}
			}
			if e.rows == 1 && e.firstSeq != e.lastSeq {
				return corruptf("index block %d: one row with two seqs", i)
			}
		case KindWAL:
			if len(e.key) != 0 {
				return corruptf("index block %d: WAL entry carries a key", i)
			}
			if e.firstSeq > e.lastSeq || (i > 0 && t.index[i-1].lastSeq > e.firstSeq) {
				return corruptf("index block %d: seqs go backwards", i)
			}
		}
	}
	if rows != in.Rows {
		return corruptf("index counts %d rows, info says %d", rows, in.Rows)
	}
	if n := len(t.index); n > 0 {
		switch in.Kind {
		case KindSorted:
			if !bytes.Equal(t.index[n-1].key, in.LastKey) {
				return corruptf("index: last key %s, info says %s", keyText(t.index[n-1].key), keyText(in.LastKey))
			}
			if bytes.Compare(t.index[0].key, in.FirstKey) < 0 {
				return corruptf("index: block 0 ends at %s, before the first key %s", keyText(t.index[0].key), keyText(in.FirstKey))
			}
		case KindWAL:
			if t.index[0].firstSeq != in.MinSeq || t.index[n-1].lastSeq != in.MaxSeq {
				return corruptf("index: seqs [%d, %d], info says [%d, %d]", t.index[0].firstSeq, t.index[n-1].lastSeq, in.MinSeq, in.MaxSeq)
			}
		}
	}
	return nil
}

// Info describes the table. The returned keys are the caller's.
func (t *Table) Info() Info { return t.info.clone() }

// MayContain reports whether the table may hold a row for key: false only
// when the filter rules it out. It is true for tables without a filter.
func (t *Table) MayContain(key []byte) bool {
	if t.filter == nil {
		return true
	}
	return bloomTest(t.filter, t.probes, keyHash(key))
}

// Get returns the newest version of key with Seq <= maxSeq in a sorted
// table (possibly a tombstone: the caller decides what it means). It reads
// at most one data block, and none when the filter or the key range rules
// the key out.
func (t *Table) Get(ctx context.Context, key []byte, maxSeq uint64) (base.Row, bool, error) {
	if t.info.Kind != KindSorted {
		return base.Row{}, false, invalidf("Get on a %s table", t.info.Kind)
	}
	if t.info.Rows == 0 || bytes.Compare(key, t.info.FirstKey) < 0 || bytes.Compare(key, t.info.LastKey) > 0 || !t.MayContain(key) {
		return base.Row{}, false, nil
	}
	// The first block whose greatest row is >= (key, maxSeq) is the only
	// one that can hold the first row >= (key, maxSeq).
	i := sort.Search(len(t.index), func(i int) bool {
		e := &t.index[i]
		return compareRow(e.key, e.lastSeq, key, maxSeq) >= 0
	})
	if i == len(t.index) {
		return base.Row{}, false, nil
	}
	payload, err := t.readBlock(ctx, i)
	if err != nil {
		return base.Row{}, false, err
	}
	var found base.Row
	var ok, decided bool
	err = t.walkBlock(i, payload, func(k, v []byte, kind base.Kind, seq uint64) {
		if decided || compareRow(k, seq, key, maxSeq) < 0 {
			return
		}
		decided = true
		if bytes.Equal(k, key) {
			found, ok = ownedRow(k, v, kind, seq), true
		}
	})
	if err != nil {
		return base.Row{}, false, err
	}
	return found, ok, nil
}

// ownedRow copies a decoded row into one fresh allocation.
func ownedRow(k, v []byte, kind base.Kind, seq uint64) base.Row {
	buf := make([]byte, len(k)+len(v))
	n := copy(buf, k)
	copy(buf[n:], v)
	r := base.Row{Key: buf[:n:n], Kind: kind, Seq: seq}
	if kind == base.KindPut {
		r.Value = buf[n:]
	}
	return r
}

// readBlock returns data block i's payload, checksum verified.
func (t *Table) readBlock(ctx context.Context, i int) ([]byte, error) {
	e := &t.index[i]
	var frame []byte
	if e.off >= t.cacheOff {
		frame = t.cache[e.off-t.cacheOff : e.off-t.cacheOff+e.length]
	} else {
		var err error
		if frame, err = readRange(ctx, t.rr, e.off, e.length, place{block: i}); err != nil {
			return nil, err
		}
	}
	return checkFrame(frame, frameData, place{block: i}, e.off)
}

// walkBlock decodes every row of block i's payload, checks it against the
// index and info, and calls fn for each row in order. key is valid only
// during the call; value aliases payload. On a malformed block walkBlock
// returns an error, possibly after some calls.
func (t *Table) walkBlock(i int, payload []byte, fn func(key, value []byte, kind base.Kind, seq uint64)) error {
	e := &t.index[i]
	in := &t.info
	bad := func(row int, format string, args ...any) error {
		return corruptf("block %d at offset %d: row %d: %s", i, e.off, row, fmt.Sprintf(format, args...))
	}
	var key, spare []byte // the current key and a buffer for the next one
	var seq uint64
	d := decoder{b: payload}
	n := 0
	for ; len(d.b) > 0; n++ {
		shared, unshared, vlen := d.uvarint(), d.uvarint(), d.uvarint()
		if d.bad || len(d.b) == 0 {
			return bad(n, "truncated header")
		}
		kind := base.Kind(d.b[0])
		d.b = d.b[1:]
		rowSeq := d.uvarint()
		if d.bad {
			return bad(n, "bad seq")
		}
		if shared > uint64(len(key)) || (n == 0 && shared != 0) {
			return bad(n, "shares %d bytes of a %d-byte key", shared, len(key))
		}
		if unshared > uint64(len(d.b)) || vlen > uint64(len(d.b))-unshared {
			return bad(n, "key suffix %d + value %d bytes overrun the block", unshared, vlen)
		}
		if !kind.Valid() || (kind == base.KindDelete && vlen != 0) {
			return bad(n, "bad kind %d with a %d-byte value", uint8(kind), vlen)
		}
		prev, prevSeq := key, seq
		key = append(append(spare[:0], prev[:shared]...), d.b[:unshared]...)
		spare = prev
		value := d.b[unshared : unshared+vlen]
		d.b = d.b[unshared+vlen:]
		seq = rowSeq

		// Sorted tables' keys are bounded by the order checks below (the
		// first block starts at FirstKey, the last ends at LastKey).
		if seq < in.MinSeq || seq > in.MaxSeq ||
			in.Kind == KindWAL && (bytes.Compare(key, in.FirstKey) < 0 || bytes.Compare(key, in.LastKey) > 0) {
			return bad(n, "%s outside the table's bounds", keyDesc(key, seq))
		}
		switch in.Kind {
		case KindSorted:
			switch {
			case n > 0 && compareRow(prev, prevSeq, key, seq) >= 0:
				return bad(n, "%s not after %s", keyDesc(key, seq), keyDesc(prev, prevSeq))
			case n == 0 && i > 0 && compareRow(t.index[i-1].key, t.index[i-1].lastSeq, key, seq) >= 0:
				return bad(n, "%s not after the previous block", keyDesc(key, seq))
			case n == 0 && i == 0 && !bytes.Equal(key, in.FirstKey):
				return bad(n, "first key %s, info says %s", keyText(key), keyText(in.FirstKey))
			}
		case KindWAL:
			if n > 0 && seq < prevSeq {
				return bad(n, "seq %d after %d", seq, prevSeq)
			}
		}
		if n == 0 && seq != e.firstSeq {
			return bad(n, "seq %d, index says the block starts at %d", seq, e.firstSeq)
		}
		if n >= e.rows {
			return bad(n, "more rows than the index's %d", e.rows)
		}
		fn(key, value, kind, seq)
	}
	if n != e.rows {
		return corruptf("block %d at offset %d: %d rows, index says %d", i, e.off, n, e.rows)
	}
	if seq != e.lastSeq || (in.Kind == KindSorted && !bytes.Equal(key, e.key)) {
		return corruptf("block %d at offset %d: last row %s does not match the index", i, e.off, keyDesc(key, seq))
	}
	return nil
}

// Iter returns an iterator over the table's rows in stored order, starting
// at the first row whose key is >= from (nil: the first row). WAL tables
// accept only from == nil. Data blocks are read lazily, one at a time.
func (t *Table) Iter(ctx context.Context, from []byte) *Iterator {
	it := &Iterator{t: t, ctx: ctx}
	if from != nil {
		if t.info.Kind != KindSorted {
			it.err = invalidf("Iter from a key on a %s table", t.info.Kind)
			return it
		}
		it.from = from
		it.block = sort.Search(len(t.index), func(i int) bool {
			return compareRow(t.index[i].key, t.index[i].lastSeq, from, math.MaxUint64) >= 0
		})
	}
	return it
}

// Rows returns every row in stored order (for a WAL table: replay order).
func (t *Table) Rows(ctx context.Context) ([]base.Row, error) {
	rows := make([]base.Row, 0, t.info.Rows)
	it := t.Iter(ctx, nil)
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		rows = append(rows, r)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// Iterator walks a table's rows. Use it from one goroutine:
//
//	it := t.Iter(ctx, nil)
//	for r, ok := it.Next(); ok; r, ok = it.Next() { ... }
//	if err := it.Err(); err != nil { ... }
type Iterator struct {
	t     *Table
	ctx   context.Context
	from  []byte
	block int // next block to load
	rows  []base.Row
	pos   int
	err   error
}

// Next returns the next row, or false at the end or on an error (see Err).
// The row owns its memory.
func (it *Iterator) Next() (base.Row, bool) {
	for it.pos >= len(it.rows) {
		if it.err != nil || it.block >= len(it.t.index) {
			return base.Row{}, false
		}
		it.load()
	}
	r := it.rows[it.pos]
	it.rows[it.pos] = base.Row{}
	it.pos++
	return r, true
}

// Err returns the error that ended the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// load decodes the next block into it.rows.
func (it *Iterator) load() {
	i := it.block
	it.block++
	it.rows, it.pos = it.rows[:0], 0
	payload, err := it.t.readBlock(it.ctx, i)
	if err != nil {
		it.err = err
		return
	}
	a := arena{buf: make([]byte, 0, len(payload))}
	err = it.t.walkBlock(i, payload, func(k, v []byte, kind base.Kind, seq uint64) {
		if it.from != nil && bytes.Compare(k, it.from) < 0 {
			return
		}
		r := base.Row{Key: a.copy(k), Kind: kind, Seq: seq}
		if kind == base.KindPut {
			r.Value = a.copy(v)
		}
		it.rows = append(it.rows, r)
	})
	if err != nil {
		it.rows, it.err = nil, err
	}
}

// arena hands out capped, non-nil copies carved from shared chunks.
type arena struct{ buf []byte }

func (a *arena) copy(b []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, max(len(b), 2*cap(a.buf)))
	}
	s := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[s:len(a.buf):len(a.buf)]
}
