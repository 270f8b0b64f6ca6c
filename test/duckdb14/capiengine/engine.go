// Package capiengine is a sqllogictest engine over DuckDB's official
// libduckdb.so, opened with dlopen(RTLD_LOCAL) as Python, Node and Java open
// theirs (package capi), through DuckDB's C API only. It renders results as
// DuckDB's runner does (TestResultHelper::SQLLogicTestConvertValue): NULL,
// BOOLEAN as 1 or 0, anything else cast to VARCHAR, (empty) for the empty
// string, NUL bytes as \0.
//
// Statements run as written, through duckdb_query, as the runner runs them.
// The C API has no generic value-to-text for nested types, so a query (the
// last statement of a query record, of DuckDB's SELECT type) runs wrapped,
// with DuckDB doing the casts: its statement is first prepared as written
// (so binder and catalog errors are DuckDB's own, with its own text), then
//
//	SELECT typeof(c1), CAST(c1 AS VARCHAR), ... FROM (<statement>) AS moraine_slt(c1, ...)
//
// runs in its place, once: the column types are typeof's, the values the
// casts (the same cast the runner's CastAs makes). Other statements
// (INSERT ... RETURNING, CALL, PRAGMA, EXPLAIN, ...) run as written and
// render through the C API's value functions, which refuse nested types.
//
// Differences from the duckdb-go engine (test/duckdb14/engine), which opens
// DuckDB through its C++ API: the official build loads its statically
// linked extensions at open (the runner loads only core_functions), and
// restart reopens the database without carrying the main connection's
// settings (no Restarter).
package capiengine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/moraine-go/moraine/internal/sqllogictest"
	"github.com/moraine-go/moraine/test/duckdb14/capi"
	"github.com/moraine-go/moraine/test/duckdb14/shell"
)

// LibDuckDB is the official libduckdb.so, set at build time (-ldflags -X)
// or by MORAINE_LIBDUCKDB.
var LibDuckDB string

// New returns the engine.
func New() sqllogictest.Engine {
	lib := LibDuckDB
	if env := os.Getenv("MORAINE_LIBDUCKDB"); env != "" {
		lib = env
	}
	return engine{lib: lib}
}

type engine struct{ lib string }

func (e engine) Open(ctx context.Context, cfg sqllogictest.Config) (sqllogictest.Database, error) {
	if e.lib == "" {
		return nil, errors.New("capiengine: no libduckdb.so (build with -X .../capiengine.LibDuckDB or set MORAINE_LIBDUCKDB)")
	}
	if _, err := capi.Load(e.lib); err != nil {
		return nil, err
	}
	// The runner's configuration, as far as settings reach it.
	settings := map[string]string{
		"autoload_known_extensions":    "false",
		"autoinstall_known_extensions": "false",
		"allow_unsigned_extensions":    "true",
		"allow_unredacted_secrets":     "true",
		"checkpoint_threshold":         "0b",
	}
	if cfg.ReadOnly {
		settings["access_mode"] = "READ_ONLY"
	}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	db, err := capi.Open(cfg.Path, settings)
	if err != nil {
		return nil, duckError(err)
	}
	return &database{db: db}, nil
}

type database struct {
	db     *capi.DB
	mu     sync.Mutex
	helper *capi.Conn // ValuesEqual's casts, apart from the test's connections
}

func (d *database) Connect(ctx context.Context) (sqllogictest.Conn, error) {
	c, err := d.db.Connect()
	if err != nil {
		return nil, err
	}
	return &conn{db: d, c: c}, nil
}

func (d *database) Close() error {
	d.mu.Lock()
	if d.helper != nil {
		d.helper.Close()
		d.helper = nil
	}
	d.mu.Unlock()
	d.db.Close()
	return nil
}

// LoadExtension loads an extension linked into the official build, as the
// runner's require does for its own binary's; any other is unavailable.
func (d *database) LoadExtension(ctx context.Context, name string) (bool, error) {
	c, err := d.db.Connect()
	if err != nil {
		return false, err
	}
	defer c.Close()
	_, rows, err := c.Query("SELECT loaded, install_mode FROM duckdb_extensions() WHERE extension_name = '" + strings.ReplaceAll(name, "'", "''") + "'")
	if err != nil {
		return false, duckError(err)
	}
	if len(rows) != 1 || rows[0][0] == nil {
		return false, nil
	}
	if *rows[0][0] == "true" {
		return true, nil
	}
	if rows[0][1] == nil || *rows[0][1] != "STATICALLY_LINKED" {
		return false, nil
	}
	if _, _, err := c.Query("LOAD " + name); err != nil {
		return false, duckError(err)
	}
	return true, nil
}

type conn struct {
	db *database
	c  *capi.Conn
}

func (c *conn) Close() error { c.c.Close(); return nil }

// Exec runs every statement of sql (duckdb_query, as the runner's
// Connection::Query); the results are not rendered.
func (c *conn) Exec(ctx context.Context, sql string) error {
	defer c.interruptOn(ctx)()
	r, err := c.c.Run(sql)
	if err != nil {
		return duckError(err)
	}
	r.Close()
	return nil
}

// Query runs every statement of sql in order and returns the last one's
// result: statements run as written (duckdb_query, as the runner's
// Connection::Query runs them: DuckLake's merge_adjacent_files, for one,
// fails when run as a prepared statement), except the last one when it is a
// query, which runs wrapped (see the package doc). Only when this package
// cannot tell the statements' texts apart does it run them prepared.
func (c *conn) Query(ctx context.Context, sql string) (*sqllogictest.Result, error) {
	defer c.interruptOn(ctx)()
	stmts, err := c.c.Statements(sql)
	if err != nil {
		return nil, duckError(err)
	}
	if stmts == nil {
		return &sqllogictest.Result{}, nil
	}
	defer stmts.Close()
	texts := shell.SplitStatements(sql)
	aligned := len(texts) == stmts.Len()
	for i := range stmts.Len() {
		last := i == stmts.Len()-1
		if aligned && !last {
			r, err := c.c.Run(texts[i])
			if err != nil {
				return nil, duckError(err)
			}
			r.Close()
			continue
		}
		p, err := stmts.Prepare(i)
		if err != nil {
			return nil, duckError(err)
		}
		switch {
		case last && aligned && p.IsSelect():
			res, err := c.wrapped(p, texts[i])
			p.Close()
			return res, err
		case last && aligned:
			p.Close()
			r, err := c.c.Run(texts[i])
			if err != nil {
				return nil, duckError(err)
			}
			defer r.Close()
			return render(r)
		}
		r, err := p.Execute()
		p.Close()
		if err != nil {
			return nil, duckError(err)
		}
		if !last {
			r.Close()
			continue
		}
		defer r.Close()
		return render(r)
	}
	return &sqllogictest.Result{}, nil
}

// interruptOn interrupts the connection's query when ctx is cancelled,
// until the returned function is called.
func (c *conn) interruptOn(ctx context.Context) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.c.Interrupt()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// wrapped runs a query with DuckDB casting every value (see the package
// doc).
func (c *conn) wrapped(p *capi.Prepared, text string) (*sqllogictest.Result, error) {
	names, types := p.Columns()
	aliases := make([]string, len(names))
	sel := make([]string, len(names))
	for i := range names {
		aliases[i] = fmt.Sprintf("c%d", i+1)
		sel[i] = fmt.Sprintf("typeof(c%d), CAST(c%d AS VARCHAR)", i+1, i+1)
	}
	if len(names) == 0 {
		r, err := p.Execute()
		if err != nil {
			return nil, duckError(err)
		}
		r.Close()
		return &sqllogictest.Result{}, nil
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM (\n" + strings.TrimRight(strings.TrimSpace(text), ";") +
		"\n) AS moraine_slt(" + strings.Join(aliases, ", ") + ")"
	stmts, err := c.c.Statements(q)
	if err != nil {
		return nil, duckError(err)
	}
	if stmts == nil || stmts.Len() != 1 {
		return nil, fmt.Errorf("capiengine: wrapping the query made %v statements", stmts)
	}
	defer stmts.Close()
	wp, err := stmts.Prepare(0)
	if err != nil {
		return nil, duckError(err)
	}
	r, err := wp.Execute()
	wp.Close()
	if err != nil {
		return nil, duckError(err)
	}
	defer r.Close()
	out := &sqllogictest.Result{Columns: names, Types: types}
	for row := range r.Rows() {
		vals := make([]string, len(names))
		for i := range names {
			typ, _ := r.Text(2*i, row)
			if row == 0 {
				out.Types[i] = typ
			}
			if r.IsNull(2*i+1, row) {
				vals[i] = "NULL"
				continue
			}
			v, _ := r.Text(2*i+1, row)
			if typ == "BOOLEAN" {
				v = map[string]string{"true": "1", "false": "0"}[v]
			}
			vals[i] = convert(v)
		}
		out.Rows = append(out.Rows, vals)
	}
	return out, nil
}

// render renders a statement's result through the C API's value functions.
func render(r *capi.Result) (*sqllogictest.Result, error) {
	names, types := r.Columns()
	out := &sqllogictest.Result{Columns: names, Types: types}
	for row := range r.Rows() {
		vals := make([]string, len(names))
		for i := range names {
			switch {
			case r.IsNull(i, row):
				vals[i] = "NULL"
			case types[i] == "BOOLEAN":
				vals[i] = map[bool]string{true: "1", false: "0"}[r.Bool(i, row)]
			default:
				v, ok := r.Text(i, row)
				if !ok {
					return nil, fmt.Errorf("capiengine: column %q (%s) of a non-query statement cannot be rendered through the C API", names[i], types[i])
				}
				vals[i] = convert(v)
			}
		}
		out.Rows = append(out.Rows, vals)
	}
	return out, nil
}

// convert is the runner's text of a non-NULL value: (empty) for the empty
// string, NUL bytes as \0.
func convert(v string) string {
	if v == "" {
		return "(empty)"
	}
	return strings.ReplaceAll(v, "\x00", `\0`)
}

// ValuesEqual is the runner's CompareValues for numeric types: both texts
// cast to typ ("NULL" the NULL of the type) and compared with
// Value::ValuesAreEqual, floating point within 1% + 1e-8.
func (c *conn) ValuesEqual(typ, actual, expected string) bool {
	upper := strings.ToUpper(typ)
	switch {
	case upper == "FLOAT" || upper == "DOUBLE" || upper == "REAL":
		if actual == "NULL" || expected == "NULL" {
			return actual == expected
		}
		l, err1 := strconv.ParseFloat(actual, 64)
		r, err2 := strconv.ParseFloat(expected, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return approxEqual(l, r)
	case numeric(upper):
		return c.db.castsEqual(typ, actual, expected)
	}
	return false
}

// approxEqual is DuckDB's ApproxEqual for doubles.
func approxEqual(l, r float64) bool {
	if math.IsNaN(l) && math.IsNaN(r) {
		return true
	}
	if math.IsInf(l, 0) || math.IsInf(r, 0) || math.IsNaN(l) || math.IsNaN(r) {
		return l == r
	}
	return math.Abs(l-r) <= math.Abs(r)*0.01+0.00000001
}

func numeric(typ string) bool {
	switch typ {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT":
		return true
	}
	return strings.HasPrefix(typ, "DECIMAL")
}

// castsEqual casts both texts to typ in DuckDB and compares them.
func (d *database) castsEqual(typ, actual, expected string) bool {
	if actual == "NULL" || expected == "NULL" {
		return actual == expected
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.helper == nil {
		h, err := d.db.Connect()
		if err != nil {
			return false
		}
		d.helper = h
	}
	lit := func(s string) string { return "TRY_CAST('" + strings.ReplaceAll(s, "'", "''") + "' AS " + typ + ")" }
	_, rows, err := d.helper.Query("SELECT " + lit(actual) + " = " + lit(expected))
	return err == nil && len(rows) == 1 && rows[0][0] != nil && *rows[0][0] == "true"
}

// duckError makes a DuckDB error an *sqllogictest.Error, its type from the
// message's "<Type> Error: " prefix.
func duckError(err error) error {
	msg := err.Error()
	typ := ""
	if head, _, ok := strings.Cut(msg, " Error: "); ok && !strings.Contains(head, " ") {
		typ = head
	}
	return &sqllogictest.Error{Type: typ, Message: msg}
}
