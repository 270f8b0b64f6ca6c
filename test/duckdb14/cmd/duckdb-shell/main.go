// Command duckdb-shell is a DuckDB v1.4.4 process that Go tests drive over
// a pipe: the tests of the storage extension that need something between
// two statements (a commit through the Go API, another process, a kill)
// start it, write requests to its stdin and read one response per request
// from its stdout. It links DuckDB v1.4.4 (duckdb-go v2.5.5, symbols
// exported, so the CPP extension loads into it).
//
//	duckdb-shell [--database PATH] [--setting NAME=VALUE]... [--sql]
//
// With --sql it is a plain DuckDB v1.4.4 for scripts, where no DuckDB CLI
// of that version is at hand: it reads a SQL script from stdin, runs its
// statements in order on one connection and prints each result as the
// DuckDB CLI's list mode does (a header line, then rows, values separated
// by "|"); at the first error it prints the error and the statement to
// stderr and exits 1.
//
// Without --sql it serves tests.
// The database opens with allow_unsigned_extensions and
// autoinstall_known_extensions=false (plus the settings given). Each
// request is one line of JSON:
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
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

type request struct {
	Conn  string  `json:"conn"`
	SQL   string  `json:"sql"`
	Close *string `json:"close,omitempty"`
}

type response struct {
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
	Error   string      `json:"error"`
}

type settings []string

func (s *settings) String() string     { return strings.Join(*s, ",") }
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	database := flag.String("database", "", "database file (default: in memory)")
	var set settings
	flag.Var(&set, "setting", "a DuckDB setting NAME=VALUE applied at open (repeatable)")
	script := flag.Bool("sql", false, "run the SQL script on stdin and print the results")
	flag.Parse()
	if err := run(*database, set, *script); err != nil {
		fmt.Fprintln(os.Stderr, "duckdb-shell:", err)
		os.Exit(1)
	}
}

func run(database string, set settings, script bool) error {
	q := url.Values{}
	q.Set("allow_unsigned_extensions", "true")
	q.Set("autoinstall_known_extensions", "false")
	for _, s := range set {
		name, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--setting %q: want NAME=VALUE", s)
		}
		q.Set(name, value)
	}
	db, err := sql.Open("duckdb", database+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	if script {
		text, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return runScript(ctx, c, string(text), os.Stdout)
	}
	conns := map[string]*sql.Conn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
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
			if err := out.Encode(response{}); err != nil {
				return err
			}
			continue
		}
		c := conns[req.Conn]
		if c == nil {
			if c, err = db.Conn(ctx); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
				return err
			}
			conns[req.Conn] = c
		}
		if err := out.Encode(query(ctx, c, req.SQL)); err != nil {
			return err
		}
	}
	return in.Err()
}

func query(ctx context.Context, c *sql.Conn, q string) response {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return response{Error: err.Error()}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return response{Error: err.Error()}
	}
	r := response{Columns: cols, Rows: [][]*string{}}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return response{Error: err.Error()}
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v != nil {
				s := text(v)
				row[i] = &s
			}
		}
		r.Rows = append(r.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return response{Error: err.Error()}
	}
	return r
}

// text renders a value for a test to compare: times in UTC RFC 3339,
// byte strings as they are, the rest as fmt prints them.
func text(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}
