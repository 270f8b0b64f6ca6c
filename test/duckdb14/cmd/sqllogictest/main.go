// Command sqllogictest-v1.4.4 runs sqllogictest files against DuckDB v1.4.4
// linked through duckdb-go (the engine of test/duckdb14/engine), with the
// moraine extension and DuckLake: package slt says how.
//
//	sqllogictest-v1.4.4 [--host official] [--extension PATH] [--ducklake PATH] [--env NAME=VALUE]... [--timeout SECONDS] PATH...
//
// --host official (it must come first) runs the same files in DuckDB's
// official libduckdb.so instead: it hands the rest of the command line to
// build/sqllogictest-official-v1.4.4 beside this command (make
// official-v1.4.4), which opens that library with RTLD_LOCAL. It cannot run
// in this process, where duckdb-go's DuckDB, its symbols exported, would
// stand in front of the library's own.
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
			fmt.Fprintf(os.Stderr, "sqllogictest-v1.4.4: --host %q: want duckdb-go (the default) or official\n", os.Args[2])
			os.Exit(2)
		}
	}
	slt.Main("sqllogictest-v1.4.4", engine.New)
}

// official replaces this process with sqllogictest-official-v1.4.4.
func official() {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sqllogictest-v1.4.4: %v\n", err)
		os.Exit(2)
	}
	bin := filepath.Join(filepath.Dir(exe), "sqllogictest-official-v1.4.4")
	args := append([]string{bin}, os.Args[3:]...)
	err = syscall.Exec(bin, args, os.Environ())
	fmt.Fprintf(os.Stderr, "sqllogictest-v1.4.4: --host official: running %s: %v (make official-v1.4.4 builds it)\n", bin, err)
	os.Exit(2)
}
