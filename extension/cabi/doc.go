// Package cabi is the C ABI of moraine's DuckDB extensions, declared in
// cshim/moraine.h and exported with cgo. A program that links it (the
// extension's main, or the main a commit log's glue build generates: see
// extension/main.go) exports moraine_*; it holds no catalog logic.
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
//	../internal/storage  the storage extension's lakes and transactions (pure Go)
//	../internal/sqlfn    the SQL functions themselves (pure Go)
//	../internal/codes    the pinned error codes
//
// Rules at the boundary: C gets opaque handles (runtime/cgo.Handle values),
// never Go pointers; C memory handed to Go is read during the call and
// copied; memory handed to C is allocated with C.malloc (C.calloc when Go
// stores pointers into it: a write barrier reads the old value) and freed
// by the documented moraine_*_free function; every export defers codes.Guard
// first, which recovers a panic into MORAINE_INTERNAL (checked by
// internal/codes' tests). Whether the build is a commit-log one is the
// process's registry's answer (core.CommitLogRegistered), not this
// package's.
package cabi
