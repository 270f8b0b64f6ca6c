package capi

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Statements are a query's statements, parsed, to be prepared one by one.
type Statements struct {
	conn *Conn
	ext  *C.duckdb_extracted_statements
	n    int
}

// Statements parses sql into its statements: nil and a nil error when it
// holds none, DuckDB's parser error when it does not parse.
func (c *Conn) Statements(sql string) (*Statements, error) {
	csql := C.CString(sql)
	defer C.free(unsafe.Pointer(csql))
	var n C.int64_t
	var cerr *C.char
	ext := C.capi_extract(c.conn, csql, &n, &cerr)
	if ext == nil {
		if cerr == nil {
			return nil, nil
		}
		return nil, errors.New(takeString(cerr))
	}
	return &Statements{conn: c, ext: ext, n: int(n)}, nil
}

// Len is how many statements there are.
func (s *Statements) Len() int { return s.n }

// Close frees the statements.
func (s *Statements) Close() { C.capi_extracted_free(s.ext) }

// Prepared is one prepared statement.
type Prepared struct{ p *C.duckdb_prepared_statement }

// Prepare prepares statement i (binding it: a binder or catalog error is
// returned here).
func (s *Statements) Prepare(i int) (*Prepared, error) {
	var cerr *C.char
	p := C.capi_prepare_extracted(s.conn.conn, s.ext, C.int64_t(i), &cerr)
	if p == nil {
		return nil, errors.New(takeString(cerr))
	}
	return &Prepared{p: p}, nil
}

// IsSelect reports whether the statement is a query (DuckDB's SELECT
// statement type: SELECT, FROM, VALUES, WITH, PIVOT, ...).
func (p *Prepared) IsSelect() bool {
	return C.capi_prepared_type(p.p) == C.DUCKDB_STATEMENT_TYPE_SELECT
}

// Columns returns the names and DuckDB type names of the statement's
// result columns (DECIMAL without its width and scale).
func (p *Prepared) Columns() (names, types []string) {
	n := int(C.capi_prepared_columns(p.p))
	for i := range n {
		names = append(names, takeString(C.capi_prepared_column_name(p.p, C.int64_t(i))))
		types = append(types, typeName(C.capi_prepared_column_type(p.p, C.int64_t(i))))
	}
	return names, types
}

// Execute runs the statement.
func (p *Prepared) Execute() (*Result, error) {
	var cerr *C.char
	res := C.capi_execute(p.p, &cerr)
	if res == nil {
		return nil, errors.New(takeString(cerr))
	}
	return &Result{res: res}, nil
}

// Close frees the statement.
func (p *Prepared) Close() { C.capi_prepared_free(p.p) }

// Result is a materialized result.
type Result struct{ res *C.duckdb_result }

// Run runs sql (every statement in it) with duckdb_query, as DuckDB's
// Connection::Query runs a script, and returns the last statement's result.
func (c *Conn) Run(sql string) (*Result, error) {
	csql := C.CString(sql)
	defer C.free(unsafe.Pointer(csql))
	var cerr *C.char
	res := C.capi_query(c.conn, csql, &cerr)
	if res == nil {
		return nil, errors.New(takeString(cerr))
	}
	return &Result{res: res}, nil
}

// Close frees the result.
func (r *Result) Close() { C.capi_result_free(r.res) }

// Rows is the number of rows.
func (r *Result) Rows() int { return int(C.capi_rows(r.res)) }

// Columns returns the result's column names and DuckDB type names.
func (r *Result) Columns() (names, types []string) {
	n := int(C.capi_columns(r.res))
	for i := range n {
		names = append(names, C.GoString(C.capi_column_name(r.res, C.int64_t(i))))
		t := C.capi_column_type(r.res, C.int64_t(i))
		name := typeName(t)
		if t == C.DUCKDB_TYPE_DECIMAL {
			var w, s C.int
			C.capi_column_decimal(r.res, C.int64_t(i), &w, &s)
			name = fmt.Sprintf("DECIMAL(%d,%d)", w, s)
		}
		types = append(types, name)
	}
	return names, types
}

// IsNull reports whether a value is NULL.
func (r *Result) IsNull(col, row int) bool {
	return bool(C.capi_is_null(r.res, C.int64_t(col), C.int64_t(row)))
}

// Text is a value cast to VARCHAR by DuckDB (not for nested types, which
// the C API's value functions do not serve: ok is false for them).
func (r *Result) Text(col, row int) (s string, ok bool) {
	var n C.int64_t
	p := C.capi_varchar(r.res, C.int64_t(col), C.int64_t(row), &n)
	if p == nil {
		return "", false
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoStringN(p, C.int(n)), true
}

// Bool is a BOOLEAN value.
func (r *Result) Bool(col, row int) bool {
	return bool(C.capi_bool(r.res, C.int64_t(col), C.int64_t(row)))
}

// typeName is DuckDB's name of a type id.
func typeName(t C.int) string {
	if name, ok := typeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("TYPE(%d)", int(t))
}

var typeNames = map[C.int]string{
	C.DUCKDB_TYPE_BOOLEAN: "BOOLEAN", C.DUCKDB_TYPE_TINYINT: "TINYINT", C.DUCKDB_TYPE_SMALLINT: "SMALLINT",
	C.DUCKDB_TYPE_INTEGER: "INTEGER", C.DUCKDB_TYPE_BIGINT: "BIGINT", C.DUCKDB_TYPE_UTINYINT: "UTINYINT",
	C.DUCKDB_TYPE_USMALLINT: "USMALLINT", C.DUCKDB_TYPE_UINTEGER: "UINTEGER", C.DUCKDB_TYPE_UBIGINT: "UBIGINT",
	C.DUCKDB_TYPE_FLOAT: "FLOAT", C.DUCKDB_TYPE_DOUBLE: "DOUBLE", C.DUCKDB_TYPE_TIMESTAMP: "TIMESTAMP",
	C.DUCKDB_TYPE_DATE: "DATE", C.DUCKDB_TYPE_TIME: "TIME", C.DUCKDB_TYPE_INTERVAL: "INTERVAL",
	C.DUCKDB_TYPE_HUGEINT: "HUGEINT", C.DUCKDB_TYPE_UHUGEINT: "UHUGEINT", C.DUCKDB_TYPE_VARCHAR: "VARCHAR",
	C.DUCKDB_TYPE_BLOB: "BLOB", C.DUCKDB_TYPE_DECIMAL: "DECIMAL", C.DUCKDB_TYPE_TIMESTAMP_S: "TIMESTAMP_S",
	C.DUCKDB_TYPE_TIMESTAMP_MS: "TIMESTAMP_MS", C.DUCKDB_TYPE_TIMESTAMP_NS: "TIMESTAMP_NS", C.DUCKDB_TYPE_ENUM: "ENUM",
	C.DUCKDB_TYPE_LIST: "LIST", C.DUCKDB_TYPE_STRUCT: "STRUCT", C.DUCKDB_TYPE_MAP: "MAP", C.DUCKDB_TYPE_ARRAY: "ARRAY",
	C.DUCKDB_TYPE_UUID: "UUID", C.DUCKDB_TYPE_UNION: "UNION", C.DUCKDB_TYPE_BIT: "BIT",
	C.DUCKDB_TYPE_TIME_TZ: "TIME WITH TIME ZONE", C.DUCKDB_TYPE_TIMESTAMP_TZ: "TIMESTAMP WITH TIME ZONE",
}
