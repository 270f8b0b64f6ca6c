// Package sqllogictest runs sqllogictest files written in DuckDB's dialect
// (the format of DuckDB's test/sql/*.test) with the semantics of DuckDB
// v1.4.4's own runner (test/sqlite/sqllogic_test_runner.cpp,
// sqllogic_command.cpp, sqllogic_parser.cpp, result_helper.cpp), against
// any DuckDB an Engine adapts.
//
// It is a module of its own with no dependency outside the standard
// library, so that modules pinning different DuckDB versions (the main
// module's duckdb-go v2.10506.0, test/duckdb14's v2.5.5) can all use it:
//
//	func TestSQL(t *testing.T) {
//		sqllogictest.RunDir(t, "testdata/sql", sqllogictest.Options{
//			Engine:     duckdbtest.Engine(), // or test/duckdb14/engine.New()
//			Settings:   map[string]string{"allow_unsigned_extensions": "true"},
//			Extensions: map[string]string{"moraine": extFile},
//		})
//	}
//
// RunDir and RunFile report to a testing.TB; RunPath and Exec return an
// Outcome (pass, fail at a line with a message, skip with the unmet
// requirement) for programs such as test/duckdb14's sqllogictest-v1.4.4.
// Each file gets its own database (in memory until a load record), its own
// __TEST_DIR__ and its own connections.
//
// # Engines
//
// An Engine opens databases, connections run SQL, and a query's result
// comes back with every value already rendered as DuckDB's runner renders
// it (Value::CastAs VARCHAR; NULL; (empty); BOOLEAN as 1/0). Errors are
// *Error with DuckDB's exception type, so an internal error fails a file.
// Conn.ValuesEqual is the numeric half of DuckDB's CompareValues (cast both
// texts to the column type and compare). Optional interfaces load built-in
// extensions as DuckDB's runner does (ExtensionLoader) and restart a
// database keeping its options and the main connection's session
// (Restarter).
//
// # Records
//
// Records are separated by lines that are empty (white space is not
// empty) or start with #. The SQL of statement and query records may span
// lines and hold several statements.
//
//	statement ok|error|maybe [conn]   SQL; error and maybe need ---- and the expected error
//	                                  (which may be empty: any error): a substring, or
//	                                  <REGEX>:re / <!REGEX>:re, which must (not) match the
//	                                  whole message (RE2 FullMatch, . matches newlines).
//	                                  statement error must see an error; an internal error
//	                                  (or a message holding INTERNAL) fails even there.
//	query <types> [sort|conn] [label] SQL, ---- and the expected values: one row per line,
//	                                  values separated by tabs, or one value per line.
//	                                  <types> is T, I or R per column; the column count must
//	                                  match. Sort modes: nosort (none), rowsort (sort),
//	                                  valuesort; anything else is a connection name, as in
//	                                  DuckDB. A query without ---- expects no rows.
//	                                  "N values hashing to <md5>" compares the result's hash
//	                                  only; a label compares the result's hash with the
//	                                  label's first result only (the values listed are not
//	                                  compared); past hash-threshold N values, a result is
//	                                  compared by hash only. <FILE>:path reads the expected
//	                                  values from a | separated CSV file with a header.
//	skipif|onlyif <system>            before a record: skip it when <system> is (is not) duckdb; or a
//	                                  loop condition: skipif i=2,
//	                                  onlyif threadid>0 (=, <>, <, <=, >, >=, joined by &&).
//	require <what>                    an extension (Options.Extensions gives files; other
//	                                  names load as built-ins), or DuckDB's keywords:
//	                                  vector_size|exact_vector_size|block_size N, ram SIZE,
//	                                  disk_space SIZE, notwindows, windows, notmingw, mingw,
//	                                  notmusl, 64bit, longdouble, allow_unsigned_extensions,
//	                                  no_extension_autoloading "EXPECTED|FIXME...",
//	                                  skip_reload, noforcestorage, no_alternative_verify,
//	                                  nothreadsan, strinline, no_latest_storage,
//	                                  no_vector_verification.
//	require-env VAR [value]           VAR must be set (to value); then ${VAR} works.
//	test-env VAR value                VAR is value unless Options.Env sets it.
//	load [path] [readonly|readwrite] [version]  reopen on a database file (emptied unless
//	                                  readonly); no path: in memory.
//	restart [no_extension_load]       close and reopen the database (required extensions
//	                                  are loaded again unless no_extension_load); an
//	                                  in-memory database starts empty.
//	reconnect                         replace all connections.
//	mode skip|unskip                  pass over the records in between without parsing them.
//	mode output_result|output_hash|no_output|debug   log query results or their hashes
//	                                  (output_hash compares nothing).
//	loop i 0 10 / foreach x a b c / foreach x,y 1,a 2,b  ...  endloop   (nestable; a
//	                                  loop runs at least once). foreach expands <signed>,
//	                                  <unsigned>, <integral>, <numeric>, <alltypes>,
//	                                  <compression>, <all_types_columns>; !v removes v.
//	concurrentloop / concurrentforeach   the same, every iteration at once, each on its own
//	                                  connection (statements, queries and loops only).
//	set ignore_error_messages m1, m2  errors holding one of these skip the file
//	set always_fail_error_messages m  errors holding one of these always fail
//	set seed X                        SELECT SETSEED(X)
//	reset label name                  forget a label's result
//	unzip in.gz [out]                 gunzip (default out: __TEST_DIR__/<name>)
//	tags t1 t2                        accepted (before any statement or query)
//	sleep N second|millisecond|...    pause
//	halt                              nothing after it is read
//	hash-threshold N                  see query
//
// A record left out by skipif/onlyif, or inside mode skip, is not parsed
// (as in DuckDB); everything else is parsed before the file runs, and a
// syntax error fails the file at its line.
//
// # Substitution
//
// As DuckDB's ReplaceKeywords: every variable X (test-env, require-env,
// Options.Env, and TEST_UUID, WORKING_DIR, DATA_DIR, TEMP_DIR, CATALOG_DIR,
// TEST_NAME, TEST_NAME__NO_SLASH) replaces ${X} and {X}; then {TEST_DIR} and
// __TEST_DIR__ (the file's directory), {UUID} (a new UUID per record),
// {TEST_NAME}, {BASE_TEST_NAME} (the file's path with / as _) and
// __WORKING_DIRECTORY__; then ${v} of the enclosing loops (not {v}: DuckDB
// v1.4.4 does not replace it). A ${NAME} left over is taken from the process
// environment, and fails the record when unset there too (unless
// Options.KeepUnsetVars, DuckDB's rule, leaves it as it is). Expected values
// and errors are compared as written and with the keywords replaced.
//
// # Results
//
// The engine renders values. rowsort sorts the actual rows by their text,
// valuesort all values; the expected lines are taken as written (as in
// DuckDB, they must already be in sorted order). A value matches when its
// text is equal, when the expected value is a <REGEX>: pattern that matches
// it whole, when the column is BOOLEAN and both are true/1 or false/0 (case
// insensitive), or when the engine's ValuesEqual says so (numbers).
//
// # Skipping is a failure under go test
//
// A file ends as Skipped when a require or require-env is not met, or when
// a statement fails with one of Options.SkipErrorMessages or the messages
// of set ignore_error_messages (DuckDB's runner skips such files too).
// RunFile and RunDir fail such a file (naming the requirement), because a CI
// run must not pass by skipping, unless Options.AllowSkip lists the
// requirement ("httpfs", "vector_size", "env:VAR", "error:HTTP", ...) or the
// file holds a line "# allow-skip: <reason>" (DuckDB's runners read it as a
// comment). skipif/onlyif and mode skip are explicit in the file and are
// not failures.
//
// # Failures
//
// The first failing record ends the file. Its message starts with
// file:line of the record and shows the SQL (and connection), the expected
// and the actual output (the latter in the file's format, ready to paste),
// the loop iteration if any.
//
// # Settings
//
// Options.Settings become DuckDB settings of every database opened. By
// default extension_directory and secret_directory are inside __TEST_DIR__
// and autoinstall_known_extensions is false, so a run touches neither
// $HOME nor the network.
package sqllogictest
