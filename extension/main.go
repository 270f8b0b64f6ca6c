// Command extension is the Go half of both DuckDB extensions: the C ABI
// declared in cshim/moraine.h, exported with cgo. It is built with
// -buildmode=c-archive once and linked twice (`make extension`; see
// extension/README.md): with the C shim (cshim/, the entry point
// moraine_init_c_api) into the C_STRUCT build's libmoraine.so, and alone
// into libmoraine_go.so, which the storage extension (cshim/storage)
// carries inside its file and loads at LOAD.
//
// Layout:
//
//	abi.go        moraine_attach, moraine_attach_with_commit_log, moraine_detach,
//	              moraine_catalog_info, moraine_error_free
//	storage.go    the storage extension's part: transactions, table lists,
//	              scans, writes and commits (moraine_txn_*, moraine_scan_*)
//	bridge.go     the SQL function interface the C_STRUCT shim drives:
//	              moraine_functions, moraine_instance_*, moraine_bind, ...
//	cmem.go       results written into C memory, arguments read from it
//	handles.go    the opaque handles C holds
//	commitlog.go  the commit-log build (-tags commitlog): registers the
//	              in-tree commit log at load
//	internal/storage  the storage extension's lakes and transactions (pure Go)
//	internal/sqlfn    the SQL functions themselves (pure Go)
//	internal/codes    the pinned error codes
//
// Rules at the boundary: C gets opaque handles (runtime/cgo.Handle values),
// never Go pointers; C memory handed to Go is read during the call and
// copied; memory handed to C is allocated with C.malloc (C.calloc when Go
// stores pointers into it: a write barrier reads the old value) and freed
// by the documented moraine_*_free function; every export defers codes.Guard
// first, which recovers a panic into MORAINE_INTERNAL (checked by
// internal/codes' tests). No catalog logic lives here or in the shim.
package main

func main() {}

// commitLogBuild is true in the commit-log build (commitlog.go).
var commitLogBuild bool
