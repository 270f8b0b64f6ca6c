// Package capi runs SQL in a DuckDB shared library (DuckDB's official
// libduckdb.so) opened at run time with dlopen(RTLD_LOCAL), as Python, Node
// and Java open theirs: DuckDB's symbols never enter the process's global
// scope, so an extension loaded into it must bring every DuckDB symbol it
// uses. It goes through DuckDB's C API only (duckdb.h of the same release,
// from `make duckdb-source`); no DuckDB is linked into the process, and
// this package must never import one (duckdb-go would put a second DuckDB,
// with its symbols exported, in front of the library's).
//
// Values render as the duckdb-go shell renders them (package shell):
// NULL as nil, BOOLEAN true/false, integers in decimal, floating point as
// Go prints it (DECIMAL too, as a float64), TIMESTAMP/TIMESTAMPTZ/DATE as RFC 3339 in UTC, BLOB as its
// bytes, nested types refused, everything else as DuckDB casts it to
// VARCHAR.
package capi

/*
#cgo CFLAGS: -std=gnu11 -Wall -I${SRCDIR}/../../../build/duckdb-v1.4.4/src/include
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

var (
	loadOnce sync.Once
	loadErr  error
	loaded   string
)

// Load opens the library at path (once per process: a second path is
// refused) and returns its DuckDB version.
func Load(path string) (string, error) {
	loadOnce.Do(func() {
		cpath := C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
		var cerr *C.char
		if C.capi_load(cpath, &cerr) != 0 {
			loadErr = fmt.Errorf("loading %s: %s", path, takeString(cerr))
			return
		}
		loaded = path
	})
	if loadErr != nil {
		return "", loadErr
	}
	if loaded != path {
		return "", fmt.Errorf("capi: %s is loaded; cannot load %s as well", loaded, path)
	}
	return C.GoString(C.capi_version()), nil
}

func takeString(s *C.char) string {
	if s == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s)
}

// DB is an open database.
type DB struct{ db *C.duckdb_database }

// Open opens a database (path "" in memory) with settings applied at open.
func Open(path string, settings map[string]string) (*DB, error) {
	var names, values []*C.char
	for n, v := range settings {
		names = append(names, C.CString(n))
		values = append(values, C.CString(v))
	}
	defer func() {
		for i := range names {
			C.free(unsafe.Pointer(names[i]))
			C.free(unsafe.Pointer(values[i]))
		}
	}()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var pn, pv **C.char
	if len(names) > 0 {
		// C memory: cgo forbids passing Go memory holding Go pointers, and
		// these arrays hold C pointers only, but keep them in C all the same.
		size := C.size_t(len(names)) * C.size_t(unsafe.Sizeof(uintptr(0)))
		pn, pv = (**C.char)(C.malloc(size)), (**C.char)(C.malloc(size))
		defer C.free(unsafe.Pointer(pn))
		defer C.free(unsafe.Pointer(pv))
		copy(unsafe.Slice(pn, len(names)), names)
		copy(unsafe.Slice(pv, len(values)), values)
	}
	var cerr *C.char
	db := C.capi_open(cpath, C.int(len(names)), pn, pv, &cerr)
	if db == nil {
		return nil, errors.New(takeString(cerr))
	}
	return &DB{db: db}, nil
}

// Close closes the database (its connections must be closed first).
func (d *DB) Close() { C.capi_close(d.db) }

// Conn is one connection.
type Conn struct{ conn *C.duckdb_connection }

// Connect opens a connection.
func (d *DB) Connect() (*Conn, error) {
	var cerr *C.char
	c := C.capi_connect(d.db, &cerr)
	if c == nil {
		return nil, errors.New(takeString(cerr))
	}
	return &Conn{conn: c}, nil
}

// Close closes the connection.
func (c *Conn) Close() { C.capi_disconnect(c.conn) }

// Interrupt interrupts the query running on c; any goroutine may call it.
func (c *Conn) Interrupt() { C.capi_interrupt(c.conn) }

// Query runs sql and returns its columns and rows (nil for NULL), rendered
// as the duckdb-go shell renders them (see the package doc), or DuckDB's
// error.
func (c *Conn) Query(sql string) ([]string, [][]*string, error) {
	r, err := c.Run(sql)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	cols, _ := r.Columns()
	types := make([]C.int, len(cols))
	for i := range cols {
		types[i] = C.capi_column_type(r.res, C.int64_t(i))
		switch types[i] {
		case C.DUCKDB_TYPE_LIST, C.DUCKDB_TYPE_STRUCT, C.DUCKDB_TYPE_MAP, C.DUCKDB_TYPE_ARRAY, C.DUCKDB_TYPE_UNION:
			// The C API's value functions give nothing for nested types:
			// refuse them rather than print a wrong value.
			return nil, nil, fmt.Errorf("capi: column %q is a nested type, which this host cannot render; cast it to VARCHAR in the query", cols[i])
		}
	}
	rows := make([][]*string, 0, r.Rows())
	for row := range r.Rows() {
		vals := make([]*string, len(cols))
		for i := range vals {
			if !r.IsNull(i, row) {
				s := r.shellText(types[i], i, row)
				vals[i] = &s
			}
		}
		rows = append(rows, vals)
	}
	return cols, rows, nil
}

// shellText renders one value as the duckdb-go shell does.
func (r *Result) shellText(typ C.int, col, row int) string {
	res, c, w := r.res, C.int64_t(col), C.int64_t(row)
	switch typ {
	case C.DUCKDB_TYPE_BOOLEAN:
		return strconv.FormatBool(r.Bool(col, row))
	case C.DUCKDB_TYPE_TINYINT, C.DUCKDB_TYPE_SMALLINT, C.DUCKDB_TYPE_INTEGER, C.DUCKDB_TYPE_BIGINT:
		return strconv.FormatInt(int64(C.capi_int64(res, c, w)), 10)
	case C.DUCKDB_TYPE_UTINYINT, C.DUCKDB_TYPE_USMALLINT, C.DUCKDB_TYPE_UINTEGER, C.DUCKDB_TYPE_UBIGINT:
		return strconv.FormatUint(uint64(C.capi_uint64(res, c, w)), 10)
	case C.DUCKDB_TYPE_DOUBLE, C.DUCKDB_TYPE_DECIMAL:
		return fmt.Sprint(float64(C.capi_double(res, c, w)))
	case C.DUCKDB_TYPE_FLOAT:
		return fmt.Sprint(float32(C.capi_float(res, c, w)))
	case C.DUCKDB_TYPE_TIMESTAMP, C.DUCKDB_TYPE_TIMESTAMP_TZ:
		return time.UnixMicro(int64(C.capi_timestamp(res, c, w))).UTC().Format(time.RFC3339Nano)
	case C.DUCKDB_TYPE_DATE:
		return time.Unix(int64(C.capi_date(res, c, w))*86400, 0).UTC().Format(time.RFC3339Nano)
	case C.DUCKDB_TYPE_BLOB:
		var n C.int64_t
		p := C.capi_blob(res, c, w, &n)
		if p == nil { // an empty BLOB
			return ""
		}
		defer C.free(unsafe.Pointer(p))
		return C.GoStringN(p, C.int(n))
	}
	s, _ := r.Text(col, row)
	return s
}
