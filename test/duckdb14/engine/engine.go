// Package engine is the sqllogictest engine of DuckDB v1.4.4: databases
// opened through DuckDB's C++ API (engine.cpp, compiled by cgo against
// DuckDB v1.4.4's headers from `make duckdb-source`), in the same process
// as the static DuckDB v1.4.4 libraries duckdb-go v2.5.5 links, and
// configured and rendered exactly as DuckDB's own sqllogictest runner at
// v1.4.4 does:
//
//   - databases open with the runner's DBConfig: no extension autoloading or
//     autoinstalling, statically linked extensions not loaded until a
//     require (core_functions always is), unsigned extensions allowed,
//     checkpoint_wal_size 0, abort_on_wal_failure;
//   - each value renders as TestResultHelper::SQLLogicTestConvertValue:
//     NULL, BOOLEAN as 1 or 0, anything else Value::CastAs(context,
//     VARCHAR) (so TIME 24:00:00, JSON text, MAP with any keys, unnamed
//     STRUCTs, TIMESTAMPTZ, DECIMAL, nested lists and blobs print as DuckDB
//     prints them), (empty) for the empty string, NUL as \0;
//   - ValuesEqual is CompareValues' numeric rule: both texts TryCastAs the
//     column type, then Value::ValuesAreEqual;
//   - require <name> loads a statically linked extension
//     (ExtensionHelper::LoadExtension); restart carries the database options
//     and the main connection's session settings and search path over.
//
// The headers' directory defaults to build/duckdb-v1.4.4/src/include of
// the repository (the #cgo line below); CGO_CXXFLAGS can add another.
package engine

/*
#cgo CXXFLAGS: -std=c++17 -Wall -Wno-unused-parameter -I${SRCDIR}/../../../build/duckdb-v1.4.4/src/include
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"unsafe"

	// The static DuckDB v1.4.4 libraries engine.cpp links against
	// (duckdb-go-bindings v0.3.3, linked with -rdynamic so that extensions
	// loaded into the process find DuckDB's symbols).
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/moraine-go/moraine/internal/sqllogictest"
)

func init() {
	// DuckDB's runner relies on its CI machines' time zone (UTC); ICU reads
	// TZ when it first needs the default zone.
	if os.Getenv("TZ") == "" {
		os.Setenv("TZ", "UTC")
	}
}

// New returns the engine.
func New() sqllogictest.Engine { return engine{} }

type engine struct{}

var (
	_ sqllogictest.ExtensionLoader = (*db)(nil)
	_ sqllogictest.Restarter       = (*db)(nil)
)

type db struct {
	mu sync.Mutex
	p  *C.slt_db // nil once closed
}

type conn struct {
	mu sync.Mutex
	p  *C.slt_conn // nil once closed
}

// takeError converts and frees a C error; nil when it holds none.
func takeError(e *C.slt_error) error {
	if e.message == nil && e._type == nil {
		return nil
	}
	err := &sqllogictest.Error{Type: C.GoString(e._type), Message: C.GoString(e.message)}
	C.slt_error_free(e)
	return err
}

// recovered turns a panic in this package's Go code into an error.
func recovered(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("duckdb14 engine: panic: %v", r)
	}
}

// cStrings copies strings to C; free releases them.
func cStrings(ss []string) (p **C.char, free func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(ss):len(ss)]
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return &arr[0], func() {
		for _, c := range arr {
			C.free(unsafe.Pointer(c))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

func (engine) Open(ctx context.Context, cfg sqllogictest.Config) (_ sqllogictest.Database, err error) {
	defer recovered(&err)
	var names, values []string
	for k := range cfg.Settings {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		values = append(values, cfg.Settings[k])
	}
	cn, freeNames := cStrings(names)
	defer freeNames()
	cv, freeValues := cStrings(values)
	defer freeValues()
	cpath := C.CString(cfg.Path)
	defer C.free(unsafe.Pointer(cpath))
	readOnly := C.int(0)
	if cfg.ReadOnly {
		readOnly = 1
	}
	var e C.slt_error
	p := C.slt_open(cpath, readOnly, C.int(len(names)), cn, cv, &e)
	if p == nil {
		return nil, takeError(&e)
	}
	return &db{p: p}, nil
}

func (d *db) Connect(ctx context.Context) (_ sqllogictest.Conn, err error) {
	defer recovered(&err)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return nil, errors.New("duckdb14 engine: the database is closed")
	}
	var e C.slt_error
	p := C.slt_connect(d.p, &e)
	if p == nil {
		return nil, takeError(&e)
	}
	return &conn{p: p}, nil
}

func (d *db) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p != nil {
		C.slt_close(d.p)
		d.p = nil
	}
	return nil
}

func (d *db) LoadExtension(ctx context.Context, name string) (_ bool, err error) {
	defer recovered(&err)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return false, errors.New("duckdb14 engine: the database is closed")
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var e C.slt_error
	switch C.slt_load_extension(d.p, cname, &e) {
	case 1:
		return true, nil
	case 0:
		return false, nil
	}
	return false, takeError(&e)
}

// Restart reopens the database as DuckDB's runner restarts it. cfg is not
// used: the old database's options are (its path is the same).
func (d *db) Restart(ctx context.Context, main sqllogictest.Conn, cfg sqllogictest.Config) (_ sqllogictest.Database, _ sqllogictest.Conn, err error) {
	defer recovered(&err)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return nil, nil, errors.New("duckdb14 engine: the database is closed")
	}
	var mainP *C.slt_conn
	if c, ok := main.(*conn); ok && c != nil {
		c.mu.Lock()
		mainP, c.p = c.p, nil // slt_restart frees it
		c.mu.Unlock()
	} else if main != nil {
		main.Close()
	}
	var newMain *C.slt_conn
	var e C.slt_error
	p := C.slt_restart(d.p, mainP, &newMain, &e)
	d.p = nil // freed by slt_restart
	if p == nil {
		return nil, nil, takeError(&e)
	}
	nd := &db{p: p}
	var nc sqllogictest.Conn
	if newMain != nil {
		nc = &conn{p: newMain}
	}
	return nd, nc, nil
}

func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		C.slt_disconnect(c.p)
		c.p = nil
	}
	return nil
}

func (c *conn) Exec(ctx context.Context, sql string) error {
	_, err := c.Query(ctx, sql)
	return err
}

// Query runs sql; a cancelled context interrupts it.
func (c *conn) Query(ctx context.Context, sql string) (_ *sqllogictest.Result, err error) {
	defer recovered(&err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		return nil, errors.New("duckdb14 engine: the connection is closed")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	csql := C.CString(sql)
	defer C.free(unsafe.Pointer(csql))
	// Interrupt the query when the context ends; the watcher is gone
	// before the connection can be freed (c.mu is held until then).
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func(p *C.slt_conn) {
		defer wg.Done()
		select {
		case <-ctx.Done():
			C.slt_interrupt(p)
		case <-done:
		}
	}(c.p)
	var e C.slt_error
	res := C.slt_query(c.p, csql, &e)
	close(done)
	wg.Wait()
	if res == nil {
		return nil, takeError(&e)
	}
	defer C.slt_result_free(res)
	str := func(p *C.char, n C.size_t) string { return C.GoStringN(p, C.int(n)) }
	out := &sqllogictest.Result{}
	ncols := int64(C.slt_result_columns(res))
	var n C.size_t
	for i := int64(0); i < ncols; i++ {
		out.Columns = append(out.Columns, str(C.slt_result_name(res, C.int64_t(i), &n), n))
		out.Types = append(out.Types, str(C.slt_result_type(res, C.int64_t(i), &n), n))
	}
	nrows := int64(C.slt_result_rows(res))
	out.Rows = make([][]string, nrows)
	for r := int64(0); r < nrows; r++ {
		row := make([]string, ncols)
		for i := int64(0); i < ncols; i++ {
			row[i] = str(C.slt_result_value(res, C.int64_t(r), C.int64_t(i), &n), n)
		}
		out.Rows[r] = row
	}
	return out, nil
}

func (c *conn) ValuesEqual(typ, actual, expected string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		return false
	}
	ct, ca, ce := C.CString(typ), C.CString(actual), C.CString(expected)
	defer C.free(unsafe.Pointer(ct))
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(ce))
	return C.slt_values_equal(c.p, ct, ca, ce) == 1
}
