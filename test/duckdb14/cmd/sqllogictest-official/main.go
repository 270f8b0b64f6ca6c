// Command sqllogictest-official-<version> runs sqllogictest files, as
// build/sqllogictest-<version> does (package slt), in DuckDB's official
// libduckdb.so of that release opened with RTLD_LOCAL (package capiengine): an extension
// that leaves DuckDB's symbols to its host fails here as it does in Python
// or Node. sqllogictest-v1.4.4 --host official runs it. No DuckDB is linked
// into this command.
//
//	sqllogictest-official-v1.4.4 [--extension PATH] [--ducklake PATH] [--env NAME=VALUE]... [--timeout SECONDS] PATH...
package main

import (
	"github.com/moraine-go/moraine/test/duckdb14/capiengine"
	"github.com/moraine-go/moraine/test/duckdb14/slt"
)

func main() { slt.Main("sqllogictest-official-"+slt.Version, capiengine.New) }
