package sqllogictest

import (
	"context"
	"strings"
)

// An Engine opens DuckDB databases for the runner. The runner owns no
// driver: an engine adapts one (database/sql with duckdb-go, DuckDB's C++
// API through cgo, or a fake in tests) and renders results as DuckDB's own
// runner does, so that expected results written for DuckDB compare equal.
type Engine interface {
	// Open opens a database. The context bounds the open only.
	Open(ctx context.Context, cfg Config) (Database, error)
}

// Config is what a database is opened with.
type Config struct {
	Path     string            // database file; "" is an in-memory database
	ReadOnly bool              // open with access_mode READ_ONLY
	Settings map[string]string // DuckDB settings by name, applied at open (as a DSN or DBConfig would)
}

// A Database is one open DuckDB database.
type Database interface {
	// Connect opens a new connection. It may be called from several
	// goroutines at once (concurrentloop).
	Connect(ctx context.Context) (Conn, error)
	// Close closes the database; the runner has closed its connections
	// first.
	Close() error
}

// A Conn is one connection. The runner uses a connection from one goroutine
// at a time. A cancelled context must interrupt a running statement.
type Conn interface {
	// Exec runs every statement in sql (a statement record).
	Exec(ctx context.Context, sql string) error
	// Query runs sql (every statement in it, as DuckDB's Connection::Query
	// does) and returns the result, every value already rendered as
	// DuckDB's runner renders it (see Result).
	Query(ctx context.Context, sql string) (*Result, error)
	// ValuesEqual reports whether an actual and an expected value, as text,
	// are equal once both are cast to the column type typ, as DuckDB's
	// runner decides when their text differs: for numeric types (integers,
	// DECIMAL, FLOAT, DOUBLE), "NULL" is the NULL of the type, both texts
	// are cast to typ (TryCastAs) and compared with Value::ValuesAreEqual
	// (floating point within 1% + 1e-8). It returns false for other types
	// and when a cast fails. Booleans are compared by the runner.
	ValuesEqual(typ, actual, expected string) bool
	// Close closes the connection.
	Close() error
}

// A Result is a query's result with every value rendered as DuckDB's runner
// renders it (TestResultHelper::SQLLogicTestConvertValue): NULL as "NULL",
// BOOLEAN as 1 or 0 (or, for an engine that documents it, true/false), any
// other value as its CAST to VARCHAR with "(empty)" for the empty string and
// a NUL byte as `\0`.
type Result struct {
	Columns []string   // column names
	Types   []string   // column types as DuckDB names them: "INTEGER", "DECIMAL(18,3)", "STRUCT(a INTEGER)", ...
	Rows    [][]string // rendered values, one slice per row
}

// Error is a DuckDB error as an engine reports it. Engines return *Error (or
// an error wrapping one) for errors DuckDB raised, so that the runner can
// tell an internal error, which fails a file even where an error is
// expected, from the others.
type Error struct {
	// Type is DuckDB's exception type as ExceptionTypeToString spells it
	// ("Catalog", "Binder", "INTERNAL", "Constraint", ...), "" if unknown.
	Type string
	// Message is the error as DuckDB's runner sees it (ErrorData::Message,
	// e.g. "Catalog Error: Table with name x does not exist!...").
	Message string
}

func (e *Error) Error() string { return e.Message }

// IsInternal reports whether the error is an internal DuckDB error.
func (e *Error) IsInternal() bool { return strings.EqualFold(e.Type, "INTERNAL") }

// ExtensionLoader is an optional interface of a Database: it loads an
// extension by name as DuckDB's runner does for `require <name>`
// (ExtensionHelper::LoadExtension: only extensions built into the binary).
// loaded is false when the extension is not available (the requirement is
// unmet); err is for an extension that failed while loading. Without it the
// runner runs LOAD <name>.
type ExtensionLoader interface {
	LoadExtension(ctx context.Context, name string) (loaded bool, err error)
}

// Restarter is an optional interface of a Database: Restart closes the
// database and opens it again with cfg, carrying over what DuckDB's runner
// carries over on restart (the database's options, including those changed
// with SET since it was opened, and the given connection's session settings
// and search path, which the returned connection gets). conn is the main
// connection, or nil when it was never opened; the runner has closed every
// other connection. Without it the runner closes and opens the database.
type Restarter interface {
	Restart(ctx context.Context, conn Conn, cfg Config) (Database, Conn, error)
}
