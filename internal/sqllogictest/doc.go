// Package sqllogictest runs sqllogictest files written in DuckDB's dialect
// (the format of DuckDB's test/sql/*.test) against real DuckDB through
// database/sql and github.com/duckdb/duckdb-go/v2, from `go test`:
//
//	func TestSQL(t *testing.T) {
//		sqllogictest.RunDir(t, "testdata/sql", sqllogictest.Options{
//			Settings:   map[string]string{"allow_unsigned_extensions": "true"},
//			Extensions: map[string]string{"moraine": extFile},
//		})
//	}
//
// Each file is a subtest with its own database (in memory until a load
// record), its own __TEST_DIR__ (a t.TempDir) and its own connections.
//
// The parser and runner are this package's own because no maintained Go
// parser of DuckDB's dialect was found: the Go sqllogictest code that exists
// (CockroachDB's and Dolt's in-tree harnesses, a few small standalone
// runners) reads SQLite's original format, without DuckDB's require, load,
// named connections, loops or expected error messages, and the maintained
// DuckDB-dialect runners are DuckDB's own (C++, Python) and Rust crates
// (sqllogictest-rs, duckdb-slt).
//
// # Records
//
// Records are separated by empty lines; lines starting with # are comments
// and also end a record's SQL. The SQL of statement and query records may
// span lines and hold several statements.
//
//	statement ok|error|maybe [conn]   SQL; error/maybe may be followed by ---- and the
//	                                  expected error: a substring, <REGEX>:re or <!REGEX>:re
//	                                  (matched anywhere, . matches newlines). statement error
//	                                  without ---- accepts any error.
//	query <types> [sort|conn] [label] SQL, ---- and the expected rows, values separated by
//	                                  tabs (or one value per line). <types> has one letter per
//	                                  column (I, T, R, ...); only their number is checked. The
//	                                  second field is nosort, rowsort (or sort), valuesort, or
//	                                  else a connection name, as in DuckDB. A label makes
//	                                  queries with the same label compare equal. A single line
//	                                  "N values hashing to <md5>" compares the result's hash.
//	skipif|onlyif <engine>            before a record; the engine is Options.Engine ("duckdb").
//	require <ext>                     LOAD the extension (Options.Extensions gives files);
//	require vector_size|exact_vector_size|block_size N, notwindows, windows, 64bit,
//	        allow_unsigned_extensions, no_extension_autoloading, skip_reload, ...
//	require-env VAR [value]           VAR must be set (to value); then ${VAR} works.
//	load [path] [readonly] [version]  reopen on a database file (emptied unless readonly);
//	                                  no path: in memory.
//	restart                           close and reopen the database (required extensions
//	                                  are loaded again); an in-memory database starts empty.
//	reconnect                         replace all connections.
//	mode skip|unskip                  skip the records in between.
//	mode output_result|no_output      log query results (t.Logf).
//	loop i 0 10 / foreach x a b c / foreach x,y 1,a 2,b  ...  endloop   (nestable)
//	sleep N second|millisecond|...    halt (the rest of the file is not run)
//	hash-threshold N                  accepted; only explicit hash lines are compared as hashes.
//
// In SQL, expected results, expected errors and load paths, __TEST_DIR__ is
// the file's temporary directory and ${NAME} a loop variable, a require-env
// variable, Options.Env[NAME] or the environment variable NAME; an unset
// ${NAME} fails the record. concurrentloop, concurrentforeach, set, unzip and
// __BUILD_DIRECTORY__ are errors.
//
// # Skipping is a failure
//
// DuckDB's runners skip a file whose require or require-env is not met. Here
// that fails the file (naming the requirement), because a CI run must not
// pass by skipping. A skip is allowed when Options.AllowSkip lists the
// requirement ("httpfs", "vector_size", "env:VAR", ...) or when the file
// holds a line "# allow-skip: <reason>" (DuckDB's runners read it as a
// comment). skipif/onlyif and mode skip are explicit in the file and are not
// failures; the number of records mode skip left out is logged.
//
// # Results
//
// Values are rendered as DuckDB casts them to VARCHAR (see format.go): NULL
// as NULL, the empty string as (empty), booleans true/false, nested values as
// [1, 2], {'a': 1}, {k=v}. Each connection runs SET TimeZone = 'UTC' first,
// as DuckDB's runners do, so TIMESTAMPTZ renders with +00. JSON columns must
// be cast to VARCHAR (duckdb-go decodes them). rowsort sorts the actual rows
// by their text, valuesort all values; the expected lines are taken as
// written (as in DuckDB, they must already be in sorted order). Values compare
// equal when their text is equal, when the expected value is a <REGEX>:
// pattern that matches, when both are numbers of a FLOAT/DOUBLE column within
// 1% (+1e-8) of the actual value, when both are equal exact numbers (1.50 and
// 1.5 in a DECIMAL column), or for booleans spelled t/f/1/0/....
//
// # Failures
//
// The first failing record ends the file. Its message starts with
// file:line of the record and shows the SQL (and connection), the expected
// and the actual output (the latter in the file's format, ready to paste),
// the loop iteration if any. Syntax errors are reported as file:line before
// anything runs.
//
// # Settings
//
// Options.Settings become DuckDB settings of every database opened (DSN query
// parameters). By default extension_directory and secret_directory are inside
// __TEST_DIR__ and autoinstall_known_extensions is false, so a run touches
// neither $HOME nor the network.
package sqllogictest
