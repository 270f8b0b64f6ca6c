// Command duckdb-official is build/duckdb-shell-v1.4.4's interface, modes
// and output (package shell) over DuckDB's official libduckdb.so, opened
// with dlopen(RTLD_LOCAL) as Python, Node and Java open theirs (package
// capi): an extension loads into it only if it brings every DuckDB symbol
// it uses. No DuckDB is linked into this command.
//
//	duckdb-official [--libduckdb PATH] [--database PATH] [--setting NAME=VALUE]... [--sql]
//
// --libduckdb defaults to the library `make official-v1.4.4` unpacked from
// npm (build/official/v1.4.4/libduckdb.so, set at build time), or
// MORAINE_LIBDUCKDB when set.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/moraine-go/moraine/test/duckdb14/capi"
	"github.com/moraine-go/moraine/test/duckdb14/shell"
)

// libduckdb is set with -ldflags "-X main.libduckdb=...".
var libduckdb string

func main() {
	if env := os.Getenv("MORAINE_LIBDUCKDB"); env != "" {
		libduckdb = env
	}
	flag.StringVar(&libduckdb, "libduckdb", libduckdb, "DuckDB's official libduckdb.so")
	shell.Main("duckdb-official", open)
}

func open(path string, settings map[string]string) (shell.DB, error) {
	if libduckdb == "" {
		return nil, fmt.Errorf("no libduckdb.so: pass --libduckdb or set MORAINE_LIBDUCKDB")
	}
	if _, err := capi.Load(libduckdb); err != nil {
		return nil, err
	}
	db, err := capi.Open(path, settings)
	if err != nil {
		return nil, err
	}
	return database{db}, nil
}

type database struct{ db *capi.DB }

func (d database) Close() error { d.db.Close(); return nil }

func (d database) Connect() (shell.Conn, error) {
	c, err := d.db.Connect()
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

type conn struct{ c *capi.Conn }

func (c conn) Close() error                                  { c.c.Close(); return nil }
func (c conn) Query(q string) ([]string, [][]*string, error) { return c.c.Query(q) }
