// Package sst is the engine's table file format: one container for the two
// kinds of table the engine keeps in object storage.
//
//   - Sorted tables (KindSorted): L0 and sorted-run SSTs under
//     compacted/<ULID>.sst. Rows are in base.Compare order (key ascending,
//     seq descending); a key may appear with several seqs; tombstones are
//     rows of base.KindDelete with no value. They carry a bloom filter.
//   - WAL tables (KindWAL): wal/<20-digit id>.sst. Rows are in append order:
//     seq never decreases, every row of one write batch shares one seq, keys
//     come in any order within a batch. They carry no filter.
//
// A Builder encodes a table into one byte slice (one PUT). A Table reads it
// back either from bytes (OpenBytes) or lazily through ranged reads (Open):
// opening costs one ranged read of the table's tail (two when the metadata
// is larger than the tail read), and then one ranged read per data block a
// Get or an Iterator touches. The tail read is 64 KiB: a table that small
// (most WAL tables) arrives whole with it, and data blocks that came with it
// are served from memory.
//
// # Table layout
//
// All integers are little-endian; "uvarint" is encoding/binary's unsigned
// varint. Every constant below is wire format: changing one needs a new
// format version.
//
//	offset 0                                                             size
//	+---------+---------+-----+-----------+-------+----------+------+--------+
//	| block 0 | block 1 | ... | block n-1 | index | [filter] | info | footer |
//	+---------+---------+-----+-----------+-------+----------+------+--------+
//	|<------------- data blocks --------->|<--- framed sections --->|<- 64 ->|
//
// Sections follow each other with no gaps, in exactly this order; the filter
// is absent from WAL tables and from sorted tables built without one.
//
// # Frames
//
// Every data block, the index, the filter and the info section is a frame:
//
//	+---------------------------+------+-----------------+
//	| payload                   | type | crc (4 bytes)   |
//	+---------------------------+------+-----------------+
//	type: 1 data block, 2 index, 3 filter, 4 info
//	crc:  CRC-32C (Castagnoli) of payload ++ type, little-endian
//
// A handle (offset, length) names a whole frame, so length = payload + 5.
// The type byte makes a handle that points at the wrong section fail its
// check even when that section's own checksum is intact.
//
// # Data blocks
//
// A data block's payload is a run of rows, nothing else:
//
//	+--------+----------+------+------+-----+---------------+-------+
//	| shared | unshared | vlen | kind | seq | key suffix    | value |
//	+--------+----------+------+------+-----+---------------+-------+
//	 uvarint  uvarint    uvarint 1 B   uvarint unshared B    vlen B
//
// The row's key is the first shared bytes of the previous row's key in the
// same block followed by the suffix; the first row of a block has shared = 0.
// kind is base.KindPut (1) or base.KindDelete (2); a tombstone has vlen = 0.
// The builder closes a block before a row that would take the frame past
// Options.BlockSize, and right after a row that reaches it, so a block is
// at most BlockSize bytes unless it holds one row larger than that. A row
// never spans blocks; a block holds at least one row.
//
// # Index
//
//	+-------+---------+---------+-----+
//	| count | entry 0 | ...     | ... |      count = number of data blocks
//	+-------+---------+---------+-----+
//
//	entry:
//	+--------+--------+------+-----------+----------+------+-----+
//	| offset | length | rows | first seq | last seq | klen | key |
//	+--------+--------+------+-----------+----------+------+-----+
//	 uvarint  uvarint  uvarint uvarint    uvarint   uvarint klen B
//
// offset and length are the block's handle (blocks are contiguous from
// offset 0); rows is its row count (at least 1); first and last seq are the
// seqs of its first and last rows. For sorted tables key is the block's last
// key, so (key, last seq) is the block's greatest row and a search for the
// first block whose greatest row is >= a target finds the only block that
// can hold the target (a key whose versions span blocks is found in one
// read). For WAL tables key is empty (klen = 0) and first seq lets a reader
// skip blocks by seq.
//
// # Filter
//
//	+---+----------------------------+
//	| k | bit array (m/8 bytes)      |        k: 1 byte, number of probes (1..30)
//	+---+----------------------------+
//
// A bloom filter over the table's distinct keys. h = fmix64(fnv1a64(key)),
// where fnv1a64 is 64-bit FNV-1a (offset basis 14695981039346656037, prime
// 1099511628211) and fmix64 is MurmurHash3's 64-bit finalizer. Probe i
// (0 <= i < k) sets bit (h + i*d) mod m, with d = h rotated left by 32 bits
// and the sums wrapping at 64 bits; bit j is bit (j mod 8) of byte j/8. The
// hash is persisted and must never change (see TestKeyHashIsPinned).
//
// # Info
//
//	+------+------+--------+---------+---------+-----+-----------+-----+----------+
//	| kind | rows | blocks | min seq | max seq | fkl | first key | lkl | last key |
//	+------+------+--------+---------+---------+-----+-----------+-----+----------+
//	  1 B   uvarint uvarint  uvarint   uvarint  uvarint            uvarint
//
// kind is KindSorted (1) or KindWAL (2). first and last key are the
// smallest and greatest keys in the table (for a sorted table, its first and
// last rows' keys). An empty table has rows = blocks = 0, zero seqs and
// empty keys.
//
// # Footer (64 bytes, at the very end)
//
//	 0  8  index offset
//	 8  8  index length
//	16  8  filter offset   (0 and length 0: no filter)
//	24  8  filter length
//	32  8  info offset
//	40  8  info length
//	48  4  CRC-32C of footer bytes [0,48) ++ [52,64)
//	52  4  format version (1)
//	56  8  magic "\x89MRNSST\n"
//
// A reader checks the magic, then the version (an unknown one is refused
// with ErrUnsupportedVersion, which also matches ErrCorrupt), then the CRC.
//
// # Errors and trust
//
// Readers trust nothing: every frame's checksum is verified whenever it is
// read, every length is checked against the bytes it claims before anything
// is allocated, and rows are checked against the index and info (order,
// counts, seq and key bounds). Anything wrong is an error matching
// ErrCorrupt that says what and where; decoding never panics. Builder misuse
// (rows out of order, bad kinds) is an error matching ErrInvalid.
//
// # Concurrency and ownership
//
// A Table is immutable once open and safe for concurrent use; its
// RangeReader must then be safe for concurrent calls too. An Iterator
// belongs to one goroutine. Rows returned by Get, Rows and an Iterator own
// their memory: nothing in this package writes to it again (rows of one
// block may share one allocation).
package sst
