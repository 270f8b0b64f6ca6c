package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"context"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
)

// Several lakes in one store (cshim/moraine.h): the named lakes of an
// attach's store, each opened as a moraine_catalog handle of its own.

//export moraine_catalog_lakes
func moraine_catalog_lakes(catalog C.moraine_catalog, fresh C.bool, out **C.moraine_table, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_catalog_lakes: out is NULL"))
	}
	*out = nil
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	names, err := a.Lakes(context.Background(), bool(fresh))
	if err != nil {
		return setError(cerr, err)
	}
	t := &sqlfn.Table{Columns: []sqlfn.Column{{Name: "name", Type: sqlfn.TypeVarchar}}}
	for _, n := range names {
		t.Rows = append(t.Rows, []any{n})
	}
	*out = tableToC(t)
	return setError(cerr, nil)
}

//export moraine_catalog_find_lake
func moraine_catalog_find_lake(catalog C.moraine_catalog, name C.moraine_cstr, found *C.bool, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if name == nil || found == nil {
		return setError(cerr, invalidf("moraine_catalog_find_lake: name or found is NULL"))
	}
	*found = false
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	_, ok, err := a.FindLake(context.Background(), goStr(name))
	if err != nil {
		return setError(cerr, err)
	}
	*found = C.bool(ok)
	return setError(cerr, nil)
}

//export moraine_catalog_open_lake
func moraine_catalog_open_lake(catalog C.moraine_catalog, name C.moraine_cstr, create C.bool, out *C.moraine_catalog, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if name == nil || out == nil {
		return setError(cerr, invalidf("moraine_catalog_open_lake: name or out is NULL"))
	}
	*out = 0
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	n := goStr(name)
	l, err := acquire(lakeKey(a.key, n), func() (*attach.Attached, error) {
		return a.OpenLake(context.Background(), n, bool(create))
	})
	if err != nil {
		return setError(cerr, err)
	}
	*out = C.moraine_catalog(newHandle(l))
	return setError(cerr, nil)
}

//export moraine_catalog_publish_lake
func moraine_catalog_publish_lake(lake C.moraine_catalog, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	a, err := lookupHandle[attachedCatalog](uint64(lake), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	return setError(cerr, a.PublishLake(context.Background()))
}
