//go:build cgo

package duckdbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/moraine-go/moraine/internal/sqllogictest"
)

// Engine returns the sqllogictest engine of this module: DuckDB 1.5.6
// through database/sql and duckdb-go v2.10506.0, values rendered from the
// Go values duckdb-go returns (see format.go). It differs from DuckDB's own
// runner where the Go values lose what DuckDB prints: booleans are
// true/false (not 1/0), JSON columns and types without a rendering here are
// errors asking for a cast to VARCHAR, and each connection runs
// SET TimeZone = 'UTC' first so that TIMESTAMPTZ renders with +00.
func Engine() sqllogictest.Engine { return sqlEngine{} }

type sqlEngine struct{}

type sqlDB struct{ db *sql.DB }

type sqlConn struct{ c *sql.Conn }

func (sqlEngine) Open(ctx context.Context, cfg sqllogictest.Config) (sqllogictest.Database, error) {
	settings := map[string]string{}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	if cfg.ReadOnly {
		settings["access_mode"] = "READ_ONLY"
	}
	db, err := sql.Open("duckdb", DSN(cfg.Path, settings))
	if err == nil {
		err = db.PingContext(ctx)
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, duckError(err)
	}
	db.SetMaxIdleConns(0) // a released connection is closed, so reconnect gets a new one
	return &sqlDB{db: db}, nil
}

func (d *sqlDB) Connect(ctx context.Context) (sqllogictest.Conn, error) {
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, duckError(err)
	}
	// Fails only without ICU, which every duckdb-go build has.
	_, _ = c.ExecContext(ctx, "SET TimeZone = 'UTC'")
	return &sqlConn{c: c}, nil
}

func (d *sqlDB) Close() error { return d.db.Close() }

func (c *sqlConn) Close() error { return c.c.Close() }

func (c *sqlConn) Exec(ctx context.Context, q string) error {
	_, err := c.c.ExecContext(ctx, q)
	return duckError(err)
}

func (c *sqlConn) Query(ctx context.Context, q string) (*sqllogictest.Result, error) {
	res, err := readRows(ctx, c.c, q)
	return res, duckError(err)
}

// duckError turns a duckdb-go error into a *sqllogictest.Error with
// DuckDB's exception type.
func duckError(err error) error {
	if err == nil {
		return nil
	}
	var de *duckdb.Error
	if errors.As(err, &de) {
		return &sqllogictest.Error{Type: errorTypeName(de.Type), Message: err.Error()}
	}
	return err
}

// errorTypeName names duckdb-go's error types as DuckDB's
// ExceptionTypeToString does, for the ones the runner tells apart.
func errorTypeName(t duckdb.ErrorType) string {
	switch t {
	case duckdb.ErrorTypeInternal:
		return "INTERNAL"
	case duckdb.ErrorTypeFatal:
		return "FATAL"
	case duckdb.ErrorTypeInterrupt:
		return "INTERRUPT"
	}
	return ""
}

// readRows runs q and renders every value.
func readRows(ctx context.Context, c *sql.Conn, q string) (*sqllogictest.Result, error) {
	rs, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cts, err := rs.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &sqllogictest.Result{}
	types := make([]*colType, len(cts))
	for i, ct := range cts {
		if types[i], err = parseType(ct.DatabaseTypeName()); err != nil {
			return nil, fmt.Errorf("column %d (%s): %v", i+1, ct.Name(), err)
		}
		res.Columns = append(res.Columns, ct.Name())
		res.Types = append(res.Types, ct.DatabaseTypeName())
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			s, err := formatTop(v, types[i])
			if err != nil {
				return nil, fmt.Errorf("column %d (%s): %v", i+1, cts[i].Name(), err)
			}
			row[i] = s
		}
		res.Rows = append(res.Rows, row)
	}
	return res, rs.Err()
}

// ValuesEqual compares numbers: floating point within 1% of the actual
// value plus 1e-8 (as DuckDB's ApproxEqual), integers and decimals exactly,
// so "1.50" matches "1.5".
func (c *sqlConn) ValuesEqual(typ, got, want string) bool {
	t, err := parseType(typ)
	if err != nil || got == "NULL" || want == "NULL" {
		return false
	}
	switch {
	case t.isFloat():
		g, err1 := strconv.ParseFloat(got, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if math.IsNaN(g) || math.IsNaN(w) {
			return math.IsNaN(g) && math.IsNaN(w)
		}
		if math.IsInf(g, 0) || math.IsInf(w, 0) {
			return g == w
		}
		return math.Abs(g-w) <= math.Abs(g)*0.01+1e-8
	case t.isExactNumeric():
		g, ok1 := new(big.Rat).SetString(got)
		w, ok2 := new(big.Rat).SetString(want)
		return ok1 && ok2 && g.Cmp(w) == 0
	}
	return false
}
