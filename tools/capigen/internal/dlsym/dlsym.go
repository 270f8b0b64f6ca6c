//go:build cgo && (linux || darwin)

// Package dlsym looks up symbols in the global scope of the running process,
// as dlsym(RTLD_DEFAULT, name) does. Tests use it to check what a DuckDB host
// (a binary linking duckdb-go, which links with -rdynamic) exports.
package dlsym

/*
#cgo linux LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

static void *moraine_dlsym_default(const char *name) { return dlsym(RTLD_DEFAULT, name); }
*/
import "C"

import "unsafe"

// Lookup returns the address of the symbol name, or 0 if the process does not
// export it.
func Lookup(name string) uintptr {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uintptr(C.moraine_dlsym_default(cs))
}
