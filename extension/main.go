// Command extension is the Go half of moraine's DuckDB extensions: the C
// ABI of package cabi, built with -buildmode=c-archive (`make extension`;
// see extension/README.md) and linked twice: with the C shim (cshim/, the
// entry point moraine_init_c_api) into the C_STRUCT build's libmoraine.so,
// and alone into libmoraine_go.so, which the storage extension
// (cshim/storage) carries inside its file and loads at LOAD.
//
// This main registers no commit log: it is the single-writer build. A
// commit-log build is the same ABI with a glue package linked in, whose
// init registers a provider (core.RegisterCommitLog): CMake's
// MORAINE_GO_GLUE generates that main (cmake/glue_main.cmake), and the
// in-tree commit-log build, moraine_commitlog, is built exactly that way
// from provider/glue.
package main

import _ "github.com/moraine-go/moraine/extension/cabi"

func main() {}
