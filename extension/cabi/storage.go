package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
	"unsafe"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/ducklake"
	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
	"github.com/moraine-go/moraine/extension/internal/storage"
)

// The storage extension's exports (cshim/moraine.h, "The storage
// extension"): transactions, table lists, scans and writes over
// extension/internal/storage, and the request counts of an attach.

// A moraine_txn handle holds a *storage.Txn, a moraine_scan one a
// *storage.Scan.

//export moraine_txn_begin
func moraine_txn_begin(catalog C.moraine_catalog, out *C.moraine_txn, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_txn_begin: out is NULL"))
	}
	*out = 0
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	tx, err := a.lake.Begin(context.Background())
	if err != nil {
		return setError(cerr, err)
	}
	*out = C.moraine_txn(newHandle(tx))
	return setError(cerr, nil)
}

//export moraine_txn_end
func moraine_txn_end(txn C.moraine_txn) {
	defer codes.Guard(func(error) {})
	releaseHandle[*storage.Txn](uint64(txn), "moraine_txn")
}

//export moraine_txn_tables
func moraine_txn_tables(txn C.moraine_txn, out **C.moraine_table_list, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_txn_tables: out is NULL"))
	}
	*out = nil
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	v, tables := tx.View(), tx.Tables()
	*out = (*C.moraine_table_list)(build(func(a *arena) unsafe.Pointer {
		return fillTableList(a, v.HasLake(), uint64(v.Head().SnapshotID), tables)
	}))
	return setError(cerr, nil)
}

func fillTableList(a *arena, hasLake bool, head uint64, tables []*ducklake.Table) unsafe.Pointer {
	var hdr C.moraine_table_list
	var def C.moraine_table_def
	var col C.moraine_column_def
	hp := a.alloc(unsafe.Sizeof(hdr), unsafe.Alignof(hdr))
	defs := a.alloc(unsafe.Sizeof(def)*uintptr(len(tables)), unsafe.Alignof(def))
	if hp != nil {
		h := (*C.moraine_table_list)(hp)
		h.has_lake = C.bool(hasLake)
		h.head_snapshot = C.uint64_t(head)
		h.table_count = C.uint64_t(len(tables))
		h.tables = (*C.moraine_table_def)(defs)
	}
	for i, t := range tables {
		name := a.str(t.Name)
		cols := a.alloc(unsafe.Sizeof(col)*uintptr(len(t.Columns)), unsafe.Alignof(col))
		if defs != nil {
			d := (*C.moraine_table_def)(unsafe.Add(defs, uintptr(i)*unsafe.Sizeof(def)))
			d.name = name
			d.column_count = C.uint64_t(len(t.Columns))
			d.columns = (*C.moraine_column_def)(cols)
			d.primary_key = C.int64_t(t.PrimaryKey)
		}
		for j, c := range t.Columns {
			cn, ct := a.str(c.Name), a.str(c.Type)
			if cols != nil {
				cd := (*C.moraine_column_def)(unsafe.Add(cols, uintptr(j)*unsafe.Sizeof(col)))
				cd.name, cd._type, cd.not_null = cn, ct, C.bool(c.NotNull)
			}
		}
	}
	return hp
}

//export moraine_table_list_free
func moraine_table_list_free(list *C.moraine_table_list) {
	defer codes.Guard(func(error) {})
	if list != nil {
		C.free(unsafe.Pointer(list))
	}
}

//export moraine_scan_open
func moraine_scan_open(txn C.moraine_txn, table C.moraine_cstr, columns C.moraine_u64_cptr, columnCount C.uint64_t,
	filters C.moraine_filter_cptr, filterCount C.uint64_t, out *C.moraine_scan, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil || table == nil {
		return setError(cerr, invalidf("moraine_scan_open: table and out must not be NULL"))
	}
	*out = 0
	if filterCount > maxColumns {
		return setError(cerr, invalidf("moraine_scan_open: %d filters is too many (at most %d)", uint64(filterCount), maxColumns))
	}
	if filterCount > 0 && filters == nil {
		return setError(cerr, invalidf("moraine_scan_open: NULL array with a non-zero count"))
	}
	cols, err := columnsFromC("moraine_scan_open", columns, columnCount, true)
	if err != nil {
		return setError(cerr, err)
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	var fs []storage.Filter
	if filterCount > 0 {
		for i, f := range unsafe.Slice((*C.moraine_filter)(unsafe.Pointer(filters)), int(filterCount)) {
			if uint64(f.column) > 1<<31 {
				return setError(cerr, invalidf("moraine_scan_open: filter %d names column %d, out of range", i, uint64(f.column)))
			}
			var v any
			if f.value != nil {
				x, err := valueFromC((*C.moraine_value)(unsafe.Pointer(f.value)), 0)
				if err != nil {
					return setError(cerr, err)
				}
				switch x.Type {
				case sqlfn.TypeBigint:
					v = x.Int
				case sqlfn.TypeUbigint:
					v = x.Uint
				case sqlfn.TypeVarchar:
					v = x.Str
				case sqlfn.TypeBoolean:
					v = x.Bool
				case sqlfn.TypeNull:
				default:
					continue // a hint we cannot use: the host filters anyway
				}
			}
			fs = append(fs, storage.Filter{Column: int(f.column), Op: storage.Op(f.op), Value: v})
		}
	}
	s, err := tx.Scan(goStr(table), cols, fs)
	if err != nil {
		return setError(cerr, err)
	}
	*out = C.moraine_scan(newHandle(s))
	return setError(cerr, nil)
}

//export moraine_scan_next
func moraine_scan_next(scan C.moraine_scan, maxRows C.uint64_t, out **C.moraine_table, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_scan_next: out is NULL"))
	}
	*out = nil
	s, err := lookupHandle[*storage.Scan](uint64(scan), "moraine_scan")
	if err != nil {
		return setError(cerr, err)
	}
	n := int(min(uint64(maxRows), maxScanRows))
	*out = tableToC(s.Next(n))
	return setError(cerr, nil)
}

//export moraine_scan_close
func moraine_scan_close(scan C.moraine_scan) {
	defer codes.Guard(func(error) {})
	releaseHandle[*storage.Scan](uint64(scan), "moraine_scan")
}

// Sanity limits on what the host claims (DuckLake's statements are far
// smaller): maxCells bounds the values (and rowids) one write call may
// carry, maxColumns the column indexes or filters of one call,
// maxScanRows the rows of one moraine_scan_next.
const (
	maxCells    = 1 << 30
	maxColumns  = 1 << 20
	maxScanRows = 1 << 20
)

// rowidsFromC copies count rowids out of C memory.
func rowidsFromC(what string, rowids C.moraine_i64_cptr, count C.uint64_t) ([]int64, error) {
	n := uint64(count)
	if n > maxCells {
		return nil, invalidf("%s: %d rowids is too many (at most %d)", what, n, maxCells)
	}
	if n > 0 && rowids == nil {
		return nil, invalidf("%s: rowids is NULL with a count of %d", what, n)
	}
	ids := make([]int64, n)
	if n > 0 {
		for i, id := range unsafe.Slice((*C.int64_t)(unsafe.Pointer(rowids)), int(n)) {
			ids[i] = int64(id)
		}
	}
	return ids, nil
}

// columnsFromC copies count column indexes out of C memory;
// MORAINE_COLUMN_ROWID reads as storage.Rowid where rowid allows it.
func columnsFromC(what string, columns C.moraine_u64_cptr, count C.uint64_t, rowid bool) ([]int, error) {
	n := uint64(count)
	if n > maxColumns {
		return nil, invalidf("%s: %d columns is too many (at most %d)", what, n, maxColumns)
	}
	if n > 0 && columns == nil {
		return nil, invalidf("%s: columns is NULL with a count of %d", what, n)
	}
	cols := make([]int, n)
	if n > 0 {
		for i, c := range unsafe.Slice((*C.uint64_t)(unsafe.Pointer(columns)), int(n)) {
			switch {
			case rowid && uint64(c) == C.MORAINE_COLUMN_ROWID:
				cols[i] = storage.Rowid
			case uint64(c) > 1<<31:
				return nil, invalidf("%s: column %d is out of range", what, uint64(c))
			default:
				cols[i] = int(c)
			}
		}
	}
	return cols, nil
}

// rowsFromC copies a moraine_rows into Go cells (see cellFromC).
func rowsFromC(what string, rows C.moraine_rows_cptr) ([][]any, error) {
	if rows == nil {
		return nil, invalidf("%s: rows is NULL", what)
	}
	nc, nr := uint64(rows.column_count), uint64(rows.row_count)
	if nc > maxCells || nr > maxCells || nc*nr > maxCells {
		return nil, invalidf("%s: %d rows of %d columns is too many values", what, nr, nc)
	}
	if nc*nr > 0 && rows.cells == nil {
		return nil, invalidf("%s: rows->cells is NULL with %d rows of %d columns", what, nr, nc)
	}
	var cells []C.moraine_value
	if nc*nr > 0 {
		cells = unsafe.Slice((*C.moraine_value)(unsafe.Pointer(rows.cells)), int(nc*nr))
	}
	out := make([][]any, nr)
	for r := range out {
		row := make([]any, nc)
		for c := range row {
			v, err := cellFromC(&cells[uint64(r)*nc+uint64(c)])
			if err != nil {
				return nil, invalidf("%s: row %d, column %d: %v", what, r, c, err)
			}
			row[c] = v
		}
		out[r] = row
	}
	return out, nil
}

// cellFromC copies one written value: NULL -> nil, BOOLEAN -> bool, BIGINT
// -> int64, UBIGINT -> uint64, DOUBLE -> float64, VARCHAR -> string, BLOB
// -> []byte, TIMESTAMP_TZ (microseconds) -> time.Time in UTC, DUCKDB ->
// ducklake.Encoded.
func cellFromC(v *C.moraine_value) (any, error) {
	if v.len > maxCells {
		return nil, invalidf("a value of %d bytes is too long", uint64(v.len))
	}
	switch sqlfn.Type(v._type) {
	case sqlfn.TypeNull:
		return nil, nil
	case sqlfn.TypeBoolean:
		return bool(v.boolean), nil
	case sqlfn.TypeBigint:
		return int64(v.bigint), nil
	case sqlfn.TypeUbigint:
		return uint64(v.ubigint), nil
	case sqlfn.TypeDouble:
		return float64(v.dbl), nil
	case sqlfn.TypeVarchar:
		return cString(v), nil
	case sqlfn.TypeBlob:
		return cBytes(v), nil
	case sqlfn.TypeTimestampTZ:
		return time.UnixMicro(int64(v.bigint)).UTC(), nil
	case sqlfn.TypeDuckDB:
		return ducklake.Encoded(cBytes(v)), nil
	}
	return nil, invalidf("a value of type %s is not a cell (give NULL, BOOLEAN, BIGINT, UBIGINT, DOUBLE, VARCHAR, BLOB, TIMESTAMP_TZ or DUCKDB)", sqlfn.Type(v._type))
}

// writeTxn resolves a write's transaction handle and table name.
func writeTxn(what string, txn C.moraine_txn, table C.moraine_cstr) (*storage.Txn, string, error) {
	if table == nil {
		return nil, "", invalidf("%s: table is NULL", what)
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return nil, "", err
	}
	return tx, goStr(table), nil
}

//export moraine_txn_insert
func moraine_txn_insert(txn C.moraine_txn, table C.moraine_cstr, rows C.moraine_rows_cptr, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	tx, name, err := writeTxn("moraine_txn_insert", txn, table)
	if err != nil {
		return setError(cerr, err)
	}
	cells, err := rowsFromC("moraine_txn_insert", rows)
	if err != nil {
		return setError(cerr, err)
	}
	return setError(cerr, tx.Insert(name, cells))
}

//export moraine_txn_delete
func moraine_txn_delete(txn C.moraine_txn, table C.moraine_cstr, rowids C.moraine_i64_cptr, count C.uint64_t,
	deleted *C.uint64_t, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if deleted != nil {
		*deleted = 0
	}
	tx, name, err := writeTxn("moraine_txn_delete", txn, table)
	if err != nil {
		return setError(cerr, err)
	}
	ids, err := rowidsFromC("moraine_txn_delete", rowids, count)
	if err != nil {
		return setError(cerr, err)
	}
	n, err := tx.Delete(name, ids)
	if err != nil {
		return setError(cerr, err)
	}
	if deleted != nil {
		*deleted = C.uint64_t(n)
	}
	return setError(cerr, nil)
}

//export moraine_txn_update
func moraine_txn_update(txn C.moraine_txn, table C.moraine_cstr, rowids C.moraine_i64_cptr, columns C.moraine_u64_cptr,
	columnCount C.uint64_t, rows C.moraine_rows_cptr, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	tx, name, err := writeTxn("moraine_txn_update", txn, table)
	if err != nil {
		return setError(cerr, err)
	}
	values, err := rowsFromC("moraine_txn_update", rows)
	if err != nil {
		return setError(cerr, err)
	}
	if uint64(rows.column_count) != uint64(columnCount) {
		return setError(cerr, invalidf("moraine_txn_update: rows of %d values for %d columns", uint64(rows.column_count), uint64(columnCount)))
	}
	ids, err := rowidsFromC("moraine_txn_update", rowids, C.uint64_t(len(values)))
	if err != nil {
		return setError(cerr, err)
	}
	cols, err := columnsFromC("moraine_txn_update", columns, columnCount, false)
	if err != nil {
		return setError(cerr, err)
	}
	return setError(cerr, tx.Update(name, ids, cols, values))
}

//export moraine_txn_create_table
func moraine_txn_create_table(txn C.moraine_txn, def C.moraine_table_def_cptr, ifNotExists C.bool, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if def == nil || def.name == nil {
		return setError(cerr, invalidf("moraine_txn_create_table: def and def->name must not be NULL"))
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	n := uint64(def.column_count)
	if n > maxColumns || (n > 0 && def.columns == nil) {
		return setError(cerr, invalidf("moraine_txn_create_table: %d columns at %p", n, def.columns))
	}
	t := &ducklake.Table{Name: goStr(def.name), PrimaryKey: int(def.primary_key)}
	if def.primary_key < -1 || int64(def.primary_key) >= int64(n) {
		return setError(cerr, invalidf("moraine_txn_create_table: primary_key %d is not a column (there are %d) nor -1", int64(def.primary_key), n))
	}
	if n > 0 {
		for i, c := range unsafe.Slice((*C.moraine_column_def)(unsafe.Pointer(def.columns)), int(n)) {
			if c.name == nil || c._type == nil {
				return setError(cerr, invalidf("moraine_txn_create_table: column %d has a NULL name or type", i))
			}
			t.Columns = append(t.Columns, ducklake.Column{Name: goStr(c.name), Type: goStr(c._type), NotNull: bool(c.not_null)})
		}
	}
	_, err = tx.CreateTable(t, bool(ifNotExists))
	return setError(cerr, err)
}

//export moraine_txn_drop_table
func moraine_txn_drop_table(txn C.moraine_txn, name C.moraine_cstr, ifExists C.bool, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if name == nil {
		return setError(cerr, invalidf("moraine_txn_drop_table: name must not be NULL"))
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	_, err = tx.DropTable(goStr(name), bool(ifExists))
	return setError(cerr, err)
}

//export moraine_txn_add_column
func moraine_txn_add_column(txn C.moraine_txn, table C.moraine_cstr, column C.moraine_column_def_cptr, defaultValue C.moraine_cstr,
	ifNotExists C.bool, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if table == nil || column == nil || column.name == nil || column._type == nil {
		return setError(cerr, invalidf("moraine_txn_add_column: table, column, its name and its type must not be NULL"))
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	var def *string
	if defaultValue != nil {
		s := goStr(defaultValue)
		def = &s
	}
	col := ducklake.Column{Name: goStr(column.name), Type: goStr(column._type), NotNull: bool(column.not_null)}
	_, err = tx.AddColumn(goStr(table), col, def, bool(ifNotExists))
	return setError(cerr, err)
}

//export moraine_txn_drop_column
func moraine_txn_drop_column(txn C.moraine_txn, table C.moraine_cstr, column C.moraine_cstr, ifExists C.bool, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if table == nil || column == nil {
		return setError(cerr, invalidf("moraine_txn_drop_column: table and column must not be NULL"))
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	_, err = tx.DropColumn(goStr(table), goStr(column), bool(ifExists))
	return setError(cerr, err)
}

//export moraine_txn_commit
func moraine_txn_commit(txn C.moraine_txn, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	return setError(cerr, tx.Commit(context.Background()))
}

//export moraine_catalog_requests
func moraine_catalog_requests(catalog C.moraine_catalog, out **C.moraine_table, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_catalog_requests: out is NULL"))
	}
	*out = nil
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	*out = tableToC(requestsTable(a.Requests, a.WalRequests))
	return setError(cerr, nil)
}

// requestsTable lists request counts by store and kind.
func requestsTable(lake, wal *objstore.CountingStore) *sqlfn.Table {
	t := &sqlfn.Table{Columns: []sqlfn.Column{{Name: "store", Type: sqlfn.TypeVarchar}, {Name: "op", Type: sqlfn.TypeVarchar}, {Name: "requests", Type: sqlfn.TypeBigint}}}
	for _, s := range []struct {
		name string
		c    *objstore.CountingStore
	}{{"lake", lake}, {"wal", wal}} {
		if s.c == nil {
			continue
		}
		counts := s.c.Snapshot()
		for op := objstore.OpGet; op <= objstore.OpDelete; op++ {
			t.Rows = append(t.Rows, []any{s.name, op.String(), counts.Of(op)})
		}
	}
	return t
}

//export moraine_runtime_info
func moraine_runtime_info(out *C.moraine_runtime, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_runtime_info: out is NULL"))
	}
	const catalogs, transactions, scans = 0, 1, 2
	var n [3]uint64
	countHandles(n[:], func(v any) int {
		switch v.(type) {
		case attachedCatalog:
			return catalogs
		case *storage.Txn:
			return transactions
		case *storage.Scan:
			return scans
		}
		return -1
	})
	*out = C.moraine_runtime{
		catalogs:     C.uint64_t(n[catalogs]),
		transactions: C.uint64_t(n[transactions]),
		scans:        C.uint64_t(n[scans]),
		goroutines:   C.uint64_t(liveGoroutines()),
	}
	return setError(cerr, nil)
}

// liveGoroutines counts the Go runtime's goroutines but the idle ones the
// runtime keeps for C threads that called into Go and returned (a DuckDB
// worker thread that ran a scan): parked in a syscall with no frame but
// runtime.goexit, they stay as long as the thread does, and how many there
// are depends on which of DuckDB's threads ran the queries.
func liveGoroutines() int {
	records := make([]runtime.StackRecord, runtime.NumGoroutine()+16)
	n, ok := runtime.GoroutineProfile(records)
	if !ok {
		return runtime.NumGoroutine()
	}
	live := 0
	for _, r := range records[:n] {
		if st := r.Stack(); len(st) == 1 {
			if f := runtime.FuncForPC(st[0]); f != nil && f.Name() == "runtime.goexit" {
				continue
			}
		}
		live++
	}
	return live
}

// A core catalog is what a storage.Lake serves.
var _ storage.Catalog = (*core.Catalog)(nil)

//export moraine_set_ducklake_version
func moraine_set_ducklake_version(version C.moraine_cstr, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if version == nil {
		return setError(cerr, invalidf("moraine_set_ducklake_version: version is NULL"))
	}
	if err := storage.SetDuckLakeVersion(goStr(version)); err != nil {
		return setError(cerr, invalidf("moraine_set_ducklake_version: %v", err))
	}
	return setError(cerr, nil)
}
