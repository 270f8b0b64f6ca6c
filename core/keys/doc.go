// Package keys is the catalog's key layout: how every record moraine
// stores in its key-value engine is addressed. The bytes produced here are
// wire format. They are pinned by golden tests (golden_test.go); changing
// any of them is a format change and needs a migration, never an edit.
//
// # Layout
//
// The first byte of every key is its subspace. Every numeric component is a
// u64 written as 8 bytes big-endian, so byte order equals numeric order and a
// key's components sort lexicographically in declaration order. Keys never
// hold names or other strings, only ids (names live in values).
//
//	sys           02 | 02 format, 03 head, 04 migration marker, 05 maintenance status
//	snapshot      03 | snapshot_id
//	current       04 | 02 (entity) | kind | kind's components
//	              04 | 03 (gc file) | data_file_id
//	history       05 | kind | kind's components | end_snapshot
//	inline        06 | 03 (live)     | 02 (insert) | table_id schema_version begin_snapshot chunk_seq
//	              06 | 03 (live)     | 03 (delete) | table_id row_id
//	              06 | 04 (archived) | 02 (insert) | table_id schema_version begin_snapshot chunk_seq end_snapshot
//	              06 | 04 (archived) | 03 (delete) | table_id row_id end_snapshot
//	index         07 | 04 (name directory, format 11+) | name kind | parent_id name_hash
//	              07 | 05 (delete-file target, format 12+) | table_id data_file_id delete_file_id
//	schema ver.   08 | table_id begin_snapshot
//	changelog     09 | snapshot_id
//
// Entity kinds (the byte after current/02 and directly after history/05) and
// their components, in order:
//
//	02 schema             schema_id
//	03 table              table_id
//	04 view               view_id
//	05 column             table_id column_id
//	06 partition          table_id partition_id
//	07 data_file          table_id data_file_id
//	08 delete_file        table_id delete_file_id
//	09 file_column_stats  table_id data_file_id column_id
//	0a table_stats        table_id
//	0b table_column_stats table_id column_id
//	0c tag                object_id
//	0d option             scope_kind scope_id
//	0e sort               table_id sort_id
//	0f macro              macro_id
//	10 mapping            table_id mapping_id
//
// Versioned kinds (schema, table, view, column, partition, data_file,
// delete_file, sort, macro) move from current to history when a version
// ends: the current key is deleted and the history key (the same bytes with
// subspace 05, without the entity byte, plus end_snapshot) is written in the
// same batch; ToHistory and ToCurrent convert between the two. The other
// kinds are overwritten in place and never appear in history; Decode refuses
// a history key of such a kind.
//
// The name directory's kind byte is its own small enum (NameKind: 02
// schema, 03 table, 04 view, 05 macro); its parent is the schema id for
// tables, views and macros and 0 for schemas, and name_hash is the FNV-1a
// 64-bit hash of the name's bytes (NameHash). One value lists every
// {name, id} whose name hashes there, so collisions chain inside it.
//
// # Scans
//
// Every range read is ascending. The Prefix functions return the bytes all
// keys of one shape (optionally with leading components fixed) start with;
// PrefixEnd and PrefixRange turn a prefix into an exclusive upper bound.
//
// # Decoding
//
// Decode parses any key into a Key and refuses unknown discriminants, a
// wrong number of components and trailing bytes with an error wrapping
// ErrCorrupt. Key.Encode is its inverse and Key.String renders a key for
// tools ("current/table/7", "history/column/7/3/end=12").
package keys
