// Command sqllogictest-<version> (build/sqllogictest-v1.4.4, -v1.4.5, ...:
// one per DuckDB release, slt.Version) runs sqllogictest files against that
// DuckDB linked through duckdb-go (the engine of test/duckdb14/engine),
// with the moraine extension and DuckLake: package slt says how.
//
//	sqllogictest-v1.4.4 [--host official] [--extension PATH] [--ducklake PATH] [--env NAME=VALUE]... [--timeout SECONDS] PATH...
//
// --host official (it must come first) runs the same files in DuckDB's
// official libduckdb.so of the same release instead: it hands the rest of
// the command line to build/sqllogictest-official-<version> beside this
// command (make official-<version>), which opens that library with
// RTLD_LOCAL. It cannot run in this process, where duckdb-go's DuckDB, its
// symbols exported, would stand in front of the library's own.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/moraine-go/moraine/test/duckdb14/engine"
	"github.com/moraine-go/moraine/test/duckdb14/slt"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "--host" {
		switch os.Args[2] {
		case "official":
			official()
		case "duckdb-go":
			os.Args = append(os.Args[:1], os.Args[3:]...)
		default:
			fmt.Fprintf(os.Stderr, "%s: --host %q: want duckdb-go (the default) or official\n", name(), os.Args[2])
			os.Exit(2)
		}
	}
	slt.Main(name(), engine.New)
}

func name() string { return "sqllogictest-" + slt.Version }

// official replaces this process with sqllogictest-official-v1.4.4.
func official() {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name(), err)
		os.Exit(2)
	}
	bin := filepath.Join(filepath.Dir(exe), "sqllogictest-official-"+slt.Version)
	args := append([]string{bin}, os.Args[3:]...)
	err = syscall.Exec(bin, args, os.Environ())
	fmt.Fprintf(os.Stderr, "%s: --host official: running %s: %v (make official-%s builds it)\n", name(), bin, err, slt.Version)
	os.Exit(2)
}
