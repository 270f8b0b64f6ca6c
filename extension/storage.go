package main

/*
#cgo CFLAGS: -I${SRCDIR}/../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/ducklake"
	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
	"github.com/moraine-go/moraine/extension/internal/storage"
)

// The storage extension's exports (cshim/moraine.h, "The storage
// extension"): transactions, table lists and scans over
// extension/internal/storage, and the request counts of an attach.

// scanHandle is what a moraine_scan handle holds.
type scanHandle struct{ *storage.Scan }

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
	if _, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn"); err == nil {
		deleteHandle(uint64(txn))
	}
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
	v := tx.View()
	*out = (*C.moraine_table_list)(build(func(a *arena) unsafe.Pointer {
		return fillTableList(a, v.HasLake(), uint64(v.Head().SnapshotID), v.Tables())
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
	if (columnCount > 0 && columns == nil) || (filterCount > 0 && filters == nil) {
		return setError(cerr, invalidf("moraine_scan_open: NULL array with a non-zero count"))
	}
	tx, err := lookupHandle[*storage.Txn](uint64(txn), "moraine_txn")
	if err != nil {
		return setError(cerr, err)
	}
	var cols []int
	if columnCount > 0 {
		for _, c := range unsafe.Slice((*C.uint64_t)(unsafe.Pointer(columns)), int(columnCount)) {
			if uint64(c) == C.MORAINE_COLUMN_ROWID {
				cols = append(cols, storage.Rowid)
			} else if uint64(c) > 1<<31 {
				return setError(cerr, invalidf("moraine_scan_open: column %d is out of range", uint64(c)))
			} else {
				cols = append(cols, int(c))
			}
		}
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
	*out = C.moraine_scan(newHandle(scanHandle{s}))
	return setError(cerr, nil)
}

//export moraine_scan_next
func moraine_scan_next(scan C.moraine_scan, maxRows C.uint64_t, out **C.moraine_table, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_scan_next: out is NULL"))
	}
	*out = nil
	s, err := lookupHandle[scanHandle](uint64(scan), "moraine_scan")
	if err != nil {
		return setError(cerr, err)
	}
	n := int(min(uint64(maxRows), 1<<20))
	*out = tableToC(s.Next(n))
	return setError(cerr, nil)
}

//export moraine_scan_close
func moraine_scan_close(scan C.moraine_scan) {
	defer codes.Guard(func(error) {})
	if _, err := lookupHandle[scanHandle](uint64(scan), "moraine_scan"); err == nil {
		deleteHandle(uint64(scan))
	}
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
	is := func(match func(any) bool) C.uint64_t { return C.uint64_t(countHandles(match)) }
	*out = C.moraine_runtime{
		catalogs:     is(func(v any) bool { _, ok := v.(attachedCatalog); return ok }),
		transactions: is(func(v any) bool { _, ok := v.(*storage.Txn); return ok }),
		scans:        is(func(v any) bool { _, ok := v.(scanHandle); return ok }),
		goroutines:   C.uint64_t(runtime.NumGoroutine()),
	}
	return setError(cerr, nil)
}

// A core catalog is what a storage.Lake serves.
var _ storage.Catalog = (*core.Catalog)(nil)
