// Package shell is the DuckDB process Go tests drive (build/duckdb-shell-*
// and build/duckdb-official-*): its command line, its two modes and its
// output, over any DuckDB that opens connections and runs SQL (a DB). The
// commands differ only in the DuckDB they run: duckdb-shell links DuckDB
// through duckdb-go (symbols exported to extensions), duckdb-official
// dlopens DuckDB's official libduckdb.so with RTLD_LOCAL (package capi).
//
//	<command> [--database PATH] [--setting NAME=VALUE]... [--sql [--echo]]
//
// With --sql it is a plain DuckDB for scripts, where no DuckDB CLI of that
// version is at hand: it reads a SQL script from stdin, runs its statements
// in order on one connection and prints each result as the DuckDB CLI's
// list mode does (a header line, then rows, values separated by "|"); at
// the first error it prints the error and the statement to stderr and
// exits 1. --echo prints each statement before its result (make demo).
//
// Without --sql it serves tests. The database opens with
// allow_unsigned_extensions and autoinstall_known_extensions=false (plus
// the settings given). Each request is one line of JSON:
//
//	{"conn": "a", "sql": "SELECT 1"}
//
// conn names a connection (created on first use; "" is the default one);
// each connection runs SET TimeZone='UTC' first. The response is one line:
//
//	{"columns": ["1"], "rows": [["1"]], "error": ""}
//
// with every value as text (NULL as null), or error set to DuckDB's
// message. End of input closes every connection and the database; the
// exit status is 0 then. "{"close": "a"}" closes one connection.
//
// Values are text as the duckdb-go driver scans them: times in UTC RFC
// 3339, byte strings as they are, booleans true/false, the rest as Go
// prints them (each DB renders so).
package shell

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// A DB is an open DuckDB database.
type DB interface {
	Connect() (Conn, error)
	Close() error
}

// A Conn is one connection of a DB.
type Conn interface {
	// Query runs one statement: its columns and rows (nil for NULL), or
	// DuckDB's error.
	Query(sql string) (columns []string, rows [][]*string, err error)
	Close() error
}

// Opener opens the database at path ("" in memory) with the settings
// applied at open.
type Opener func(path string, settings map[string]string) (DB, error)

type request struct {
	Conn  string  `json:"conn"`
	SQL   string  `json:"sql"`
	Close *string `json:"close,omitempty"`
}

// Response is one request's answer.
type Response struct {
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
	Error   string      `json:"error"`
}

type settings []string

func (s *settings) String() string     { return strings.Join(*s, ",") }
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

// Main parses the command line, runs the mode it asks for over the DB open
// opens, and exits (status 1 after an error, which goes to stderr, prefixed
// with name).
func Main(name string, open Opener) {
	database := flag.String("database", "", "database file (default: in memory)")
	var set settings
	flag.Var(&set, "setting", "a DuckDB setting NAME=VALUE applied at open (repeatable)")
	script := flag.Bool("sql", false, "run the SQL script on stdin and print the results")
	echo := flag.Bool("echo", false, "with --sql: print each statement before its result")
	flag.Parse()
	if err := run(open, *database, set, *script, *echo); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

func run(open Opener, database string, set settings, script, echo bool) error {
	config := map[string]string{"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false"}
	for _, s := range set {
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--setting %q: want NAME=VALUE", s)
		}
		config[name] = value
	}
	db, err := open(database, config)
	if err != nil {
		return err
	}
	defer db.Close()
	if script {
		text, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		c, err := db.Connect()
		if err != nil {
			return err
		}
		defer c.Close()
		return runScript(c, string(text), echo, os.Stdout)
	}
	return serve(db, os.Stdin, os.Stdout)
}

func serve(db DB, r io.Reader, w io.Writer) error {
	conns := map[string]Conn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(w)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return fmt.Errorf("bad request %q: %v", in.Text(), err)
		}
		if req.Close != nil {
			if c := conns[*req.Close]; c != nil {
				c.Close()
				delete(conns, *req.Close)
			}
			if err := out.Encode(Response{}); err != nil {
				return err
			}
			continue
		}
		c := conns[req.Conn]
		if c == nil {
			var err error
			if c, err = db.Connect(); err != nil {
				return err
			}
			if _, _, err := c.Query("SET TimeZone = 'UTC'"); err != nil {
				return err
			}
			conns[req.Conn] = c
		}
		if err := out.Encode(query(c, req.SQL)); err != nil {
			return err
		}
	}
	return in.Err()
}

func query(c Conn, q string) Response {
	cols, rows, err := c.Query(q)
	if err != nil {
		return Response{Error: err.Error()}
	}
	if rows == nil {
		rows = [][]*string{}
	}
	return Response{Columns: cols, Rows: rows}
}
