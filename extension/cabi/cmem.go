package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/moraine-go/moraine/ducklake"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
)

// arena lays out one C allocation. A first pass with base == nil only
// measures; the second writes into memory from C.calloc. Everything a
// moraine_table or the function list points to lives in its one
// allocation, so one free releases it.
type arena struct {
	base unsafe.Pointer
	off  uintptr
	size uintptr
}

// alloc reserves n bytes aligned to align and returns their address (nil
// while measuring).
func (a *arena) alloc(n, align uintptr) unsafe.Pointer {
	a.off = (a.off + align - 1) &^ (align - 1)
	p := a.off
	a.off += n
	if a.base == nil {
		return nil
	}
	if a.off > a.size {
		panic(fmt.Sprintf("arena overflow: %d > %d", a.off, a.size))
	}
	return unsafe.Add(a.base, p)
}

// str copies s with a terminating NUL.
func (a *arena) str(s string) *C.char {
	p := a.alloc(uintptr(len(s))+1, 1)
	if p == nil {
		return nil
	}
	b := unsafe.Slice((*byte)(p), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return (*C.char)(p)
}

// bytes copies b (no terminator; an empty non-nil slice gets a valid
// address).
func (a *arena) bytes(b []byte) *C.char {
	n := len(b)
	p := a.alloc(uintptr(max(n, 1)), 1)
	if p == nil {
		return nil
	}
	copy(unsafe.Slice((*byte)(p), n), b)
	return (*C.char)(p)
}

// build runs fill twice: measuring, then writing into a fresh zeroed C
// block, which it returns. Zeroed, not just allocated: fill stores
// pointers into the block, and Go's write barrier reads the value each
// store replaces; in uninitialized malloc memory that value is garbage,
// and garbage that falls inside the Go heap's address range crashes the
// garbage collector ("found bad pointer in Go heap"), as DuckLake's
// concurrent tests did about once in sixty runs under load.
func build(fill func(a *arena) unsafe.Pointer) unsafe.Pointer {
	m := &arena{}
	fill(m)
	size := max(m.off, 1)
	a := &arena{base: C.calloc(1, C.size_t(size)), size: size}
	if a.base == nil {
		panic("out of memory")
	}
	return fill(a)
}

// tableToC writes t into one C allocation (free with moraine_table_free).
func tableToC(t *sqlfn.Table) *C.moraine_table {
	return (*C.moraine_table)(build(func(a *arena) unsafe.Pointer {
		return fillTable(a, t)
	}))
}

func fillTable(a *arena, t *sqlfn.Table) unsafe.Pointer {
	var hdr C.moraine_table
	var col C.moraine_column
	tp := a.alloc(unsafe.Sizeof(hdr), unsafe.Alignof(hdr))
	cols := a.alloc(unsafe.Sizeof(col)*uintptr(len(t.Columns)), unsafe.Alignof(col))
	nrows := len(t.Rows)
	if tp != nil {
		h := (*C.moraine_table)(tp)
		h.column_count = C.uint64_t(len(t.Columns))
		h.row_count = C.uint64_t(nrows)
		h.columns = (*C.moraine_column)(cols)
	}
	for ci, c := range t.Columns {
		name := a.str(c.Name)
		nulls := a.alloc(uintptr(max(nrows, 1)), 1)
		var elem uintptr
		switch c.Type {
		case sqlfn.TypeBoolean:
			elem = 1
		case sqlfn.TypeVarchar, sqlfn.TypeBlob, sqlfn.TypeDuckDB:
			elem = unsafe.Sizeof(C.moraine_string{})
		default:
			elem = 8
		}
		data := a.alloc(elem*uintptr(max(nrows, 1)), 8)
		if cols != nil {
			cc := (*C.moraine_column)(unsafe.Add(cols, uintptr(ci)*unsafe.Sizeof(col)))
			cc.name = name
			cc._type = C.int32_t(c.Type)
			cc.nulls = (*C.uint8_t)(nulls)
			cc.data = data
		}
		for r, row := range t.Rows {
			cell := row[ci]
			if nulls != nil {
				n := byte(0)
				if cell == nil {
					n = 1
				}
				*(*byte)(unsafe.Add(nulls, r)) = n
			}
			if cell == nil {
				continue
			}
			switch c.Type {
			case sqlfn.TypeVarchar, sqlfn.TypeBlob, sqlfn.TypeDuckDB:
				var b []byte
				switch v := cell.(type) {
				case string:
					b = []byte(v)
				case ducklake.Encoded:
					b = v
				default:
					b = cell.([]byte)
				}
				p := a.bytes(b)
				if data != nil {
					s := (*C.moraine_string)(unsafe.Add(data, uintptr(r)*elem))
					s.data = p
					s.size = C.uint64_t(len(b))
				}
			default:
				if data == nil {
					continue
				}
				p := unsafe.Add(data, uintptr(r)*elem)
				switch v := cell.(type) {
				case bool:
					*(*C.bool)(p) = C.bool(v)
				case int64:
					*(*C.int64_t)(p) = C.int64_t(v)
				case uint64:
					*(*C.uint64_t)(p) = C.uint64_t(v)
				case float64:
					*(*C.double)(p) = C.double(v)
				case time.Time:
					*(*C.int64_t)(p) = C.int64_t(v.UnixMicro())
				}
			}
		}
	}
	return tp
}

// functionsToC writes the function list into one C allocation that lives
// as long as the process.
func functionsToC(fns []*sqlfn.Function) *C.moraine_function {
	return (*C.moraine_function)(build(func(a *arena) unsafe.Pointer {
		var f C.moraine_function
		var p C.moraine_param
		base := a.alloc(unsafe.Sizeof(f)*uintptr(len(fns)), unsafe.Alignof(f))
		params := func(ps []sqlfn.Param) unsafe.Pointer {
			arr := a.alloc(unsafe.Sizeof(p)*uintptr(max(len(ps), 1)), unsafe.Alignof(p))
			for i, x := range ps {
				name := a.str(x.Name)
				if arr != nil {
					cp := (*C.moraine_param)(unsafe.Add(arr, uintptr(i)*unsafe.Sizeof(p)))
					cp.name = name
					cp._type = C.int32_t(x.Type)
				}
			}
			return arr
		}
		for i, fn := range fns {
			name := a.str(fn.Name)
			doc := a.str(fn.Doc)
			pos := params(fn.Params)
			named := params(fn.Named)
			if base != nil {
				cf := (*C.moraine_function)(unsafe.Add(base, uintptr(i)*unsafe.Sizeof(f)))
				cf.name = name
				cf.description = doc
				cf.param_count = C.uint64_t(len(fn.Params))
				cf.params = (*C.moraine_param)(pos)
				cf.named_count = C.uint64_t(len(fn.Named))
				cf.named = (*C.moraine_param)(named)
			}
		}
		return base
	}))
}

// duckdbTypeNames names DuckDB's type ids (duckdb_type) for messages.
var duckdbTypeNames = map[int32]string{
	1: "BOOLEAN", 2: "TINYINT", 3: "SMALLINT", 4: "INTEGER", 5: "BIGINT", 6: "UTINYINT", 7: "USMALLINT",
	8: "UINTEGER", 9: "UBIGINT", 10: "FLOAT", 11: "DOUBLE", 12: "TIMESTAMP", 13: "DATE", 14: "TIME",
	15: "INTERVAL", 16: "HUGEINT", 17: "VARCHAR", 18: "BLOB", 19: "DECIMAL", 20: "TIMESTAMP_S",
	21: "TIMESTAMP_MS", 22: "TIMESTAMP_NS", 23: "ENUM", 24: "LIST", 25: "STRUCT", 26: "MAP", 27: "UUID",
	28: "UNION", 29: "BIT", 30: "TIME WITH TIME ZONE", 31: "TIMESTAMP WITH TIME ZONE", 32: "UHUGEINT",
	33: "ARRAY", 34: "ANY", 35: "BIGNUM", 36: "NULL", 37: "STRING_LITERAL", 38: "INTEGER_LITERAL",
}

const (
	duckdbStringLiteral  = 37
	duckdbIntegerLiteral = 38
)

// cView is a value's bytes (str, len) in C memory, not copied: nil for a
// NULL str or a zero len. Valid during the call only.
func cView(v *C.moraine_value) []byte {
	if v.str == nil || v.len == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(v.str)), int(v.len))
}

// cString copies a value's bytes into a string ("" for none).
func cString(v *C.moraine_value) string { return string(cView(v)) }

// cBytes copies a value's bytes into a new slice (empty, not nil, for
// none).
func cBytes(v *C.moraine_value) []byte { return append([]byte{}, cView(v)...) }

// valueFromC copies one argument (and its children) out of C memory.
func valueFromC(v *C.moraine_value, depth int) (sqlfn.Value, error) {
	if depth > 64 {
		return sqlfn.Value{}, invalidf("an argument is nested more than 64 levels deep")
	}
	out := sqlfn.Value{Type: sqlfn.Type(v._type)}
	switch out.Type {
	case sqlfn.TypeNull, sqlfn.TypeAbsent:
	case sqlfn.TypeBoolean:
		out.Bool = bool(v.boolean)
	case sqlfn.TypeBigint:
		out.Int = int64(v.bigint)
	case sqlfn.TypeUbigint:
		out.Uint = uint64(v.ubigint)
	case sqlfn.TypeDouble:
		out.Double = float64(v.dbl)
	case sqlfn.TypeVarchar:
		out.Str = cString(v)
	case sqlfn.TypeBlob, sqlfn.TypeDuckDB:
		out.Bytes = cBytes(v)
	case sqlfn.TypeTimestampTZ:
		out.Int = int64(v.bigint)
	case sqlfn.TypeOther:
		out.Str = cString(v)
		out.TypeName = duckdbTypeNames[int32(v.duckdb_type)]
		switch int32(v.duckdb_type) {
		case duckdbStringLiteral:
			out = sqlfn.Value{Type: sqlfn.TypeVarchar, Str: out.Str}
		case duckdbIntegerLiteral:
			if n, err := strconv.ParseInt(out.Str, 10, 64); err == nil {
				out = sqlfn.Value{Type: sqlfn.TypeBigint, Int: n}
			} else if u, err := strconv.ParseUint(out.Str, 10, 64); err == nil {
				out = sqlfn.Value{Type: sqlfn.TypeUbigint, Uint: u}
			}
		}
	case sqlfn.TypeList, sqlfn.TypeStruct:
		n := int(v.child_count)
		if n > 0 && v.children == nil {
			return sqlfn.Value{}, invalidf("a %s argument has %d children but no array", out.Type, n)
		}
		var children []C.moraine_value
		if n > 0 {
			children = unsafe.Slice(v.children, n)
		}
		var names []*C.char
		if out.Type == sqlfn.TypeStruct && n > 0 {
			if v.child_names == nil {
				return sqlfn.Value{}, invalidf("a STRUCT argument has no field names")
			}
			names = unsafe.Slice((**C.char)(unsafe.Pointer(v.child_names)), n)
		}
		for i := range children {
			c, err := valueFromC(&children[i], depth+1)
			if err != nil {
				return sqlfn.Value{}, err
			}
			out.Children = append(out.Children, c)
			if names != nil {
				name := ""
				if names[i] != nil {
					name = C.GoString(names[i])
				}
				out.Names = append(out.Names, name)
			}
		}
	default:
		return sqlfn.Value{}, invalidf("an argument has unknown type %d", int32(v._type))
	}
	return out, nil
}
