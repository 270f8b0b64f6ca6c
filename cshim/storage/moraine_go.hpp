//===----------------------------------------------------------------------===//
// moraine storage extension: the Go half, carried inside the extension
//
// The extension links DuckDB's static library (hidden), so it loads in
// hosts that keep DuckDB's symbols to themselves (Python, Node, Java: they
// dlopen libduckdb.so with RTLD_LOCAL). The Go core cannot be linked into
// the same object: Go's runtime uses initial-exec TLS, which would make the
// whole object need static TLS, and DuckDB's ~11 KB of thread-locals do not
// fit glibc's static-TLS surplus ("cannot allocate memory in static TLS
// block"). So the Go core is a shared library of its own (the Go c-archive
// linked into libmoraine_go.so, exporting only the moraine_* ABI of
// moraine.h), whose bytes ride in the extension file: INSTALL still copies
// one file.
//
// MoraineGoLoad, called by the entry point, writes those bytes to an
// anonymous file (memfd_create; a temporary file that is unlinked at once
// where memfd is refused), dlopens it with RTLD_LOCAL and looks up every
// moraine_* function the C++ files call. moraine_go.cpp defines those
// functions (hidden) as forwarders, so the C++ files call moraine.h as
// written. The library is loaded once per process and never unloaded (a Go
// runtime cannot be): every database that loads this extension file shares
// one Go runtime.
//===----------------------------------------------------------------------===//

#pragma once

namespace duckdb {

//! Loads the Go half once per process; later calls return at once. Throws
//! IOException (naming the step that failed) when it cannot be loaded; the
//! next call tries again.
void MoraineGoLoad();

} // namespace duckdb
