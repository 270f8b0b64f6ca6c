// Command duckdb-shell is a DuckDB v1.4.4 process that Go tests drive over
// a pipe, or that runs a SQL script (--sql): the interface, modes and
// output of package shell. It links DuckDB v1.4.4 (duckdb-go v2.5.5,
// symbols exported, so a CPP extension that leaves DuckDB's symbols to its
// host loads into it too); build/duckdb-official-v1.4.4 is the same
// command over DuckDB's official libduckdb.so.
//
//	duckdb-shell [--database PATH] [--setting NAME=VALUE]... [--sql]
package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/moraine-go/moraine/test/duckdb14/shell"
)

func main() { shell.Main("duckdb-shell", open) }

func open(path string, settings map[string]string) (shell.DB, error) {
	q := url.Values{}
	for name, value := range settings {
		q.Set(name, value)
	}
	db, err := sql.Open("duckdb", path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return database{db}, nil
}

type database struct{ db *sql.DB }

func (d database) Close() error { return d.db.Close() }

func (d database) Connect() (shell.Conn, error) {
	c, err := d.db.Conn(context.Background())
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

type conn struct{ c *sql.Conn }

func (c conn) Close() error { return c.c.Close() }

func (c conn) Query(q string) ([]string, [][]*string, error) {
	rows, err := c.c.QueryContext(context.Background(), q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	out := [][]*string{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v != nil {
				s := text(v)
				row[i] = &s
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return cols, out, nil
}

// text renders a value as package shell says: times in UTC RFC 3339, byte
// strings as they are, the rest as fmt prints them.
func text(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}
