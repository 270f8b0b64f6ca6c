package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
)

// instance is what a moraine_instance handle holds: the lakes of one DuckDB
// database and a reference count (the shim holds one per registered
// function; DuckDB drops them when it destroys the database).
type instance struct {
	in   *sqlfn.Instance
	refs atomic.Int64
}

// bound is what a moraine_bound handle holds.
type bound struct {
	fn *sqlfn.Function
	b  *sqlfn.Bound
}

var (
	functionsOnce sync.Once
	functionsC    *C.moraine_function
)

// fnError prefixes an error with the function's name; codes.Of still
// finds the core error (and its kind) inside.
func fnError(fn *sqlfn.Function, err error) error {
	if err == nil {
		return nil
	}
	return &prefixed{prefix: fn.Name, err: err}
}

type prefixed struct {
	prefix string
	err    error
}

func (p *prefixed) Error() string { return p.prefix + ": " + p.err.Error() }
func (p *prefixed) Unwrap() error { return p.err }

//export moraine_functions
func moraine_functions(count *C.uint64_t) (fns C.moraine_function_cptr) {
	defer codes.Guard(func(error) {
		fns = nil
		if count != nil {
			*count = 0
		}
	})
	functionsOnce.Do(func() { functionsC = functionsToC(sqlfn.Functions()) })
	if count != nil {
		*count = C.uint64_t(len(sqlfn.Functions()))
	}
	return C.moraine_function_cptr(functionsC)
}

//export moraine_instance_new
func moraine_instance_new() (h C.moraine_instance) {
	defer codes.Guard(func(error) { h = 0 })
	in := &instance{in: sqlfn.NewInstance()}
	in.refs.Store(1)
	return C.moraine_instance(newHandle(in))
}

//export moraine_instance_retain
func moraine_instance_retain(h C.moraine_instance) {
	defer codes.Guard(func(error) {})
	if in, err := lookupHandle[*instance](uint64(h), "moraine_instance"); err == nil {
		in.refs.Add(1)
	}
}

//export moraine_instance_release
func moraine_instance_release(h C.moraine_instance) {
	defer codes.Guard(func(error) {})
	in, err := lookupHandle[*instance](uint64(h), "moraine_instance")
	if err != nil {
		return
	}
	if in.refs.Add(-1) == 0 && deleteHandle(uint64(h)) {
		in.in.Close(context.Background())
	}
}

//export moraine_bind
func moraine_bind(h C.moraine_instance, function C.uint64_t, args C.moraine_value_cptr, argCount C.uint64_t,
	named C.moraine_value_cptr, namedCount C.uint64_t, out *C.moraine_bound, columns **C.moraine_table,
	cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil || columns == nil {
		return setError(cerr, invalidf("moraine_bind: out and columns must not be NULL"))
	}
	*out, *columns = 0, nil
	in, err := lookupHandle[*instance](uint64(h), "moraine_instance")
	if err != nil {
		return setError(cerr, err)
	}
	fns := sqlfn.Functions()
	if uint64(function) >= uint64(len(fns)) {
		return setError(cerr, invalidf("moraine_bind: no function number %d (there are %d)", uint64(function), len(fns)))
	}
	fn := fns[function]
	if int(namedCount) != len(fn.Named) {
		return setError(cerr, invalidf("moraine_bind: %s has %d named parameters, got %d values", fn.Name, len(fn.Named), uint64(namedCount)))
	}
	if (argCount > 0 && args == nil) || (namedCount > 0 && named == nil) {
		return setError(cerr, invalidf("moraine_bind: NULL argument array"))
	}
	var pos []sqlfn.Value
	if argCount > 0 {
		for _, v := range unsafe.Slice((*C.moraine_value)(unsafe.Pointer(args)), int(argCount)) {
			x, err := valueFromC(&v, 0)
			if err != nil {
				return setError(cerr, fnError(fn, err))
			}
			pos = append(pos, x)
		}
	}
	nm := map[string]sqlfn.Value{}
	if namedCount > 0 {
		for i, v := range unsafe.Slice((*C.moraine_value)(unsafe.Pointer(named)), int(namedCount)) {
			x, err := valueFromC(&v, 0)
			if err != nil {
				return setError(cerr, fnError(fn, err))
			}
			if x.Type != sqlfn.TypeAbsent {
				nm[fn.Named[i].Name] = x
			}
		}
	}
	b, err := fn.Bind(context.Background(), in.in, pos, nm)
	if err != nil {
		return setError(cerr, fnError(fn, err))
	}
	*columns = tableToC(&sqlfn.Table{Columns: b.Columns})
	*out = C.moraine_bound(newHandle(&bound{fn: fn, b: b}))
	return setError(cerr, nil)
}

//export moraine_execute
func moraine_execute(h C.moraine_bound, out **C.moraine_table, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_execute: out is NULL"))
	}
	*out = nil
	b, err := lookupHandle[*bound](uint64(h), "moraine_bound")
	if err != nil {
		return setError(cerr, err)
	}
	t, err := b.b.Execute(context.Background())
	if err != nil {
		return setError(cerr, fnError(b.fn, err))
	}
	*out = tableToC(t)
	return setError(cerr, nil)
}

//export moraine_bound_free
func moraine_bound_free(h C.moraine_bound) {
	defer codes.Guard(func(error) {})
	releaseHandle[*bound](uint64(h), "moraine_bound")
}

//export moraine_table_free
func moraine_table_free(t *C.moraine_table) {
	defer codes.Guard(func(error) {})
	if t != nil {
		C.free(unsafe.Pointer(t))
	}
}
