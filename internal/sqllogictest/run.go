//go:build cgo

package sqllogictest

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver
)

// Options configure a run.
type Options struct {
	// Settings are DuckDB settings applied when each database is opened (DSN
	// query parameters), e.g. {"allow_unsigned_extensions": "true"}. They
	// override the runner's defaults: extension_directory and
	// secret_directory inside the file's __TEST_DIR__ and
	// autoinstall_known_extensions=false, so that nothing touches $HOME or
	// the network.
	Settings map[string]string
	// InitSQL runs on every new connection, after the runner's own
	// SET TimeZone = 'UTC'.
	InitSQL []string
	// Extensions maps extension names to files: `require <name>` runs
	// LOAD '<file>' (and a failure to load is a test failure, not a skip).
	// Other names are tried with LOAD <name> (built-in or installed
	// extensions); when that fails the requirement is unmet.
	Extensions map[string]string
	// AllowSkip lists requirements (extension names, "vector_size", ...,
	// and "env:VAR" for require-env VAR) that may be unmet in this run: a
	// file needing one of them is skipped instead of failing. A file can
	// also allow itself to be skipped with a "# allow-skip: <reason>" line.
	AllowSkip []string
	// Env supplies ${VAR} values and require-env variables before the
	// process environment is consulted.
	Env map[string]string
	// Engine is the name skipif/onlyif compare with; default "duckdb".
	Engine string
}

// standardVectorSize and defaultBlockSize are the compile-time constants of
// the DuckDB builds duckdb-go ships, for require vector_size / block_size.
const (
	standardVectorSize = 2048
	defaultBlockSize   = 262144
)

// RunDir runs every *.test file under dir (recursively, in lexical order), each
// as a subtest named by its path relative to dir. A directory without test
// files is an error.
func RunDir(t *testing.T, dir string, opts Options) {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name, err := filepath.Rel(dir, f)
		if err != nil {
			name = f
		}
		t.Run(filepath.ToSlash(name), func(t *testing.T) { RunFile(t, f, opts) })
	}
}

// Files lists the *.test files under dir, recursively, in lexical order.
// Finding none is an error.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqllogictest: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("sqllogictest: no .test files under %s", dir)
	}
	slices.Sort(files)
	return files, nil
}

// RunFile parses and runs one test file against a fresh DuckDB database. The
// first failing record fails t (Errorf) and ends the file; a file whose
// requirements are unmet fails too, unless skipping it is allowed (see
// Options.AllowSkip), in which case t is skipped.
func RunFile(t testing.TB, path string, opts Options) {
	t.Helper()
	f, err := ParseFile(path)
	if err != nil {
		t.Errorf("sqllogictest: %v", err)
		return
	}
	Run(t, f, opts)
}

// Run runs a parsed file.
func Run(t testing.TB, f *File, opts Options) {
	t.Helper()
	if opts.Engine == "" {
		opts.Engine = "duckdb"
	}
	r := &runner{
		t:      t,
		f:      f,
		opts:   opts,
		ctx:    context.Background(),
		vars:   map[string]string{},
		labels: map[string]labeled{},
	}
	r.testDir = t.TempDir()
	err := r.open()
	if err == nil {
		err = r.exec(f.Records, nil)
	}
	r.close()
	var skip *skipFile
	var halt errHalt
	switch {
	case err == nil:
	case errors.As(err, &halt):
		t.Logf("%s:%d: halt: the rest of the file is not run", f.Path, int(halt))
	case errors.As(err, &skip):
		if reason := r.skipAllowed(skip.what); reason != "" {
			t.Skipf("%s:%d: %s (skip allowed: %s)", f.Path, skip.line, skip.msg, reason)
			return
		}
		t.Errorf("%s:%d: %s\nThe file would be skipped, and a skipped file is a failure here. "+
			"If this run may lack it, list %q in Options.AllowSkip, or add a line \"%s <reason>\" to the file.",
			f.Path, skip.line, skip.msg, skip.what, strings.TrimSpace(allowSkipPrefix))
	default:
		t.Errorf("%v", err)
	}
	if r.skipped > 0 {
		t.Logf("%s: %d records not run (mode skip)", f.Path, r.skipped)
	}
}

// skipAllowed returns why the file may be skipped for requirement what, or "".
func (r *runner) skipAllowed(what string) string {
	if slices.Contains(r.opts.AllowSkip, what) {
		return "Options.AllowSkip lists " + strconv.Quote(what)
	}
	if r.f.AllowSkip != "" {
		return r.f.AllowSkip
	}
	return ""
}

// skipFile ends a file whose requirement is unmet.
type skipFile struct {
	line int
	what string // the requirement, as named in AllowSkip
	msg  string
}

func (s *skipFile) Error() string { return s.msg }

// errHalt ends a file at a halt record (its line).
type errHalt int

func (h errHalt) Error() string { return "halt" }

type labeled struct {
	line   int
	values []string
}

type runner struct {
	t       testing.TB
	f       *File
	opts    Options
	ctx     context.Context
	testDir string

	dbPath   string // "" for in-memory
	readOnly bool
	version  string // storage_compatibility_version from load
	db       *sql.DB
	conns    map[string]*sql.Conn // "" is the default connection
	loaded   []string             // required extensions, loaded again after restart/load

	vars         map[string]string // require-env variables
	skipLevel    int
	skipped      int
	outputResult bool
	labels       map[string]labeled
}

// settings returns the DuckDB settings for opening the database.
func (r *runner) settings() map[string]string {
	s := map[string]string{
		"extension_directory":          filepath.Join(r.testDir, "extensions"),
		"secret_directory":             filepath.Join(r.testDir, "secrets"),
		"autoinstall_known_extensions": "false",
	}
	for k, v := range r.opts.Settings {
		s[k] = v
	}
	if r.readOnly {
		s["access_mode"] = "READ_ONLY"
	}
	if r.version != "" {
		s["storage_compatibility_version"] = r.version
	}
	return s
}

func dsn(path string, settings map[string]string) string {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(path)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(settings[k]))
	}
	return b.String()
}

func (r *runner) open() error {
	db, err := sql.Open("duckdb", dsn(r.dbPath, r.settings()))
	if err == nil {
		err = db.PingContext(r.ctx)
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		where := "an in-memory database"
		if r.dbPath != "" {
			where = r.dbPath
		}
		return fmt.Errorf("%s: cannot open %s: %v", r.f.Path, where, err)
	}
	db.SetMaxIdleConns(0) // a released connection is closed, so reconnect gets a new one
	r.db = db
	r.conns = map[string]*sql.Conn{}
	for _, ext := range r.loaded {
		if err := r.loadExtension(ext); err != nil {
			return fmt.Errorf("%s: loading extension %s again after reopening the database: %v", r.f.Path, ext, err)
		}
	}
	return nil
}

func (r *runner) close() {
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
	if r.db != nil {
		r.db.Close()
		r.db = nil
	}
}

// conn returns the named connection, opening it on first use.
func (r *runner) conn(name string) (*sql.Conn, error) {
	if c := r.conns[name]; c != nil {
		return c, nil
	}
	c, err := r.db.Conn(r.ctx)
	if err != nil {
		return nil, err
	}
	// As DuckDB's runners do; fails only without ICU, which every duckdb-go build has.
	_, _ = c.ExecContext(r.ctx, "SET TimeZone = 'UTC'")
	for _, q := range r.opts.InitSQL {
		if _, err := c.ExecContext(r.ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("Options.InitSQL %q: %v", q, err)
		}
	}
	r.conns[name] = c
	return c, nil
}

func (r *runner) loadExtension(name string) error {
	c, err := r.conn("")
	if err != nil {
		return err
	}
	if p, ok := r.opts.Extensions[name]; ok {
		_, err = c.ExecContext(r.ctx, "LOAD "+sqlQuote(p))
	} else {
		_, err = c.ExecContext(r.ctx, "LOAD "+quoteIdent(name))
	}
	return err
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// loopVars are the loop variables in scope, innermost last.
type loopVars []struct{ name, value string }

func (v loopVars) lookup(name string) (string, bool) {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i].name == name {
			return v[i].value, true
		}
	}
	return "", false
}

func (v loopVars) String() string {
	var parts []string
	for _, x := range v {
		parts = append(parts, x.name+"="+x.value)
	}
	return strings.Join(parts, ", ")
}

func (r *runner) exec(recs []Record, vars loopVars) error {
	for i := range recs {
		rec := &recs[i]
		if r.skipLevel > 0 && !(rec.Kind == KindMode && rec.Args()[0] == "unskip") {
			r.skipped++
			continue
		}
		if !r.conditionsMet(rec) {
			continue
		}
		if err := r.record(rec, vars); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) conditionsMet(rec *Record) bool {
	for _, c := range rec.Conditions {
		if c.OnlyIf != strings.EqualFold(c.Engine, r.opts.Engine) {
			return false
		}
	}
	return true
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// subst replaces __TEST_DIR__, __WORKING_DIRECTORY__ and ${NAME} (a loop
// variable, a require-env variable, Options.Env, or the environment).
func (r *runner) subst(s string, rec *Record, vars loopVars) (string, error) {
	if strings.Contains(s, "__BUILD_DIRECTORY__") {
		return "", r.failf(rec, vars, "__BUILD_DIRECTORY__ is not supported by this runner")
	}
	s = strings.ReplaceAll(s, "__TEST_DIR__", r.testDir)
	if strings.Contains(s, "__WORKING_DIRECTORY__") {
		wd, err := os.Getwd()
		if err != nil {
			return "", r.failf(rec, vars, "__WORKING_DIRECTORY__: %v", err)
		}
		s = strings.ReplaceAll(s, "__WORKING_DIRECTORY__", wd)
	}
	var missing []string
	s = varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := vars.lookup(name); ok {
			return v
		}
		if v, ok := r.lookupEnv(name); ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		return "", r.failf(rec, vars, "${%s} is not set (not a loop variable, nor in Options.Env or the environment)", missing[0])
	}
	return s, nil
}

func (r *runner) lookupEnv(name string) (string, bool) {
	if v, ok := r.vars[name]; ok {
		return v, true
	}
	if v, ok := r.opts.Env[name]; ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// failure is a failed record; its message names the file and line.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func (r *runner) failf(rec *Record, vars loopVars, format string, args ...any) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", r.f.Path, rec.Line)
	fmt.Fprintf(&b, format, args...)
	if len(vars) > 0 {
		fmt.Fprintf(&b, "\n(in loop iteration %s)", vars)
	}
	return &failure{msg: b.String()}
}

func (r *runner) record(rec *Record, vars loopVars) error {
	switch rec.Kind {
	case KindStatement:
		return r.statement(rec, vars)
	case KindQuery:
		return r.query(rec, vars)
	case KindRequire:
		return r.require(rec)
	case KindRequireEnv:
		args := rec.Args()
		v, ok := r.lookupEnv(args[0])
		if !ok {
			return &skipFile{line: rec.Line, what: "env:" + args[0], msg: fmt.Sprintf("require-env %s: the variable is not set", args[0])}
		}
		if len(args) == 2 && v != args[1] {
			return &skipFile{line: rec.Line, what: "env:" + args[0],
				msg: fmt.Sprintf("require-env %s %s: the variable is %q", args[0], args[1], v)}
		}
		r.vars[args[0]] = v
	case KindLoad:
		args := rec.Args()
		path := ""
		if len(args) > 0 {
			p, err := r.subst(args[0], rec, vars)
			if err != nil {
				return err
			}
			path = p
		}
		readOnly := len(args) > 1
		r.close()
		if !readOnly && path != "" {
			// As DuckDB's runners do: load starts from an empty database file.
			for _, p := range []string{path, path + ".wal"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return r.failf(rec, vars, "load: removing the old database: %v", err)
				}
			}
		}
		r.dbPath, r.readOnly = path, readOnly
		r.version = ""
		if len(args) == 3 {
			r.version = args[2]
		}
		if err := r.open(); err != nil {
			return r.failf(rec, vars, "load: %v", err)
		}
	case KindRestart:
		r.close()
		if err := r.open(); err != nil {
			return r.failf(rec, vars, "restart: %v", err)
		}
	case KindReconnect:
		// New connections (the database stays open): connection state such
		// as settings, temporary tables and open transactions is gone.
		for _, c := range r.conns {
			c.Close()
		}
		r.conns = map[string]*sql.Conn{}
	case KindMode:
		switch rec.Args()[0] {
		case "skip":
			r.skipLevel++
		case "unskip":
			if r.skipLevel > 0 {
				r.skipLevel--
			}
		case "output_result":
			r.outputResult = true
		case "no_output":
			r.outputResult = false
		}
	case KindHalt:
		return errHalt(rec.Line)
	case KindSleep:
		n, _ := strconv.Atoi(rec.Args()[0])
		time.Sleep(time.Duration(int64(n) * sleepUnit(rec.Args()[1])))
	case KindHashThreshold:
		// Accepted; results are compared as hashes only where the file
		// gives a "N values hashing to H" line.
	case KindLoop:
		return r.loop(rec, vars)
	default:
		return r.failf(rec, vars, "internal error: record kind %d", rec.Kind)
	}
	return nil
}

func (r *runner) loop(rec *Record, vars loopVars) error {
	run := func(values []string) error {
		inner := slices.Clone(vars)
		for i, name := range rec.LoopVars {
			inner = append(inner, struct{ name, value string }{name, values[i]})
		}
		return r.exec(rec.Body, inner)
	}
	if !rec.IsForeach {
		for i := rec.LoopStart; i < rec.LoopEnd; i++ {
			if err := run([]string{strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range rec.LoopValues {
		values := []string{v}
		if len(rec.LoopVars) > 1 {
			values = strings.Split(v, ",")
		}
		if err := run(values); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) require(rec *Record) error {
	args := rec.Args()
	what := strings.ToLower(args[0])
	unmet := func(format string, a ...any) error {
		return &skipFile{line: rec.Line, what: what, msg: "require " + strings.Join(args, " ") + ": " + fmt.Sprintf(format, a...)}
	}
	intArg := func() (int, error) {
		if len(args) != 2 {
			return 0, r.failf(rec, nil, "require %s needs a number", what)
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return 0, r.failf(rec, nil, "require %s: %q is not a number", what, args[1])
		}
		return n, nil
	}
	setting := func(name string) (string, error) {
		c, err := r.conn("")
		if err != nil {
			return "", err
		}
		var v string
		err = c.QueryRowContext(r.ctx, "SELECT current_setting("+sqlQuote(name)+")::VARCHAR").Scan(&v)
		return v, err
	}
	switch what {
	case "vector_size", "exact_vector_size", "block_size":
		n, err := intArg()
		if err != nil {
			return err
		}
		switch {
		case what == "vector_size" && standardVectorSize < n,
			what == "exact_vector_size" && standardVectorSize != n:
			return unmet("the vector size is %d", standardVectorSize)
		case what == "block_size" && defaultBlockSize != n:
			return unmet("the block size is %d", defaultBlockSize)
		}
		return nil
	case "windows", "mingw":
		if runtime.GOOS != "windows" {
			return unmet("not on Windows")
		}
		return nil
	case "notwindows", "notmingw":
		if runtime.GOOS == "windows" {
			return unmet("on Windows")
		}
		return nil
	case "64bit":
		if strconv.IntSize != 64 {
			return unmet("not a 64-bit build")
		}
		return nil
	case "longdouble":
		return unmet("long double is not wider than double in this build")
	case "skip_reload", "noforcestorage", "no_alternative_verify", "nothreadsan", "strinline", "no_latest_storage":
		return nil // this runner never forces reloads, storage, alternative verification or thread sanitizer
	case "allow_unsigned_extensions":
		v, err := setting("allow_unsigned_extensions")
		if err != nil {
			return r.failf(rec, nil, "require %s: %v", what, err)
		}
		if v != "true" {
			return unmet("allow_unsigned_extensions is %s (set it in Options.Settings)", v)
		}
		return nil
	case "no_extension_autoloading":
		v, err := setting("autoload_known_extensions")
		if err != nil {
			return r.failf(rec, nil, "require %s: %v", what, err)
		}
		if v != "false" {
			return unmet("autoload_known_extensions is %s", v)
		}
		return nil
	}
	if len(args) != 1 {
		return r.failf(rec, nil, "require %s: unexpected arguments %q", args[0], args[1:])
	}
	name := args[0]
	err := r.loadExtension(name)
	if _, configured := r.opts.Extensions[name]; configured && err != nil {
		return r.failf(rec, nil, "require %s: LOAD %s failed: %v", name, sqlQuote(r.opts.Extensions[name]), err)
	}
	if err != nil {
		return unmet("the extension cannot be loaded: %v", err)
	}
	if !slices.Contains(r.loaded, name) {
		r.loaded = append(r.loaded, name)
	}
	return nil
}

func (r *runner) statement(rec *Record, vars loopVars) error {
	q, err := r.subst(rec.SQL, rec, vars)
	if err != nil {
		return err
	}
	want, err := r.subst(rec.Error, rec, vars)
	if err != nil {
		return err
	}
	c, err := r.conn(rec.Conn)
	if err != nil {
		return r.failf(rec, vars, "connection %q: %v", rec.Conn, err)
	}
	_, execErr := c.ExecContext(r.ctx, q)
	switch rec.Expect {
	case ExpectOK:
		if execErr != nil {
			return r.failf(rec, vars, "statement ok failed\n%s\nerror:\n%s", showSQL(q, rec.Conn), indent(execErr.Error()))
		}
	case ExpectError:
		if execErr == nil {
			what := "an error"
			if want != "" {
				what = "an error matching:\n" + indent(want)
			}
			return r.failf(rec, vars, "statement error succeeded\n%s\nexpected %s", showSQL(q, rec.Conn), what)
		}
		if !errorMatches(want, execErr.Error()) {
			return r.failf(rec, vars, "statement error failed with the wrong error\n%s\nexpected an error matching:\n%s\nactual error:\n%s",
				showSQL(q, rec.Conn), indent(want), indent(execErr.Error()))
		}
	case ExpectMaybe:
		if execErr != nil && !errorMatches(want, execErr.Error()) {
			return r.failf(rec, vars, "statement maybe failed with an unexpected error\n%s\nexpected success or an error matching:\n%s\nactual error:\n%s",
				showSQL(q, rec.Conn), indent(want), indent(execErr.Error()))
		}
	}
	return nil
}

// errorMatches checks an error message against an expectation: "" matches
// anything, <REGEX>:re must match somewhere, <!REGEX>:re must not, anything
// else must be a substring.
func errorMatches(want, got string) bool {
	if want == "" {
		return true
	}
	if ok, isRE := regexMatches(want, got); isRE {
		return ok
	}
	return strings.Contains(got, want)
}

// regexMatches evaluates <REGEX>:/<!REGEX>: patterns (matched anywhere in
// got, with . matching newlines). isRE is false for other strings.
func regexMatches(pattern, got string) (ok, isRE bool) {
	negate := false
	switch {
	case strings.HasPrefix(pattern, "<REGEX>:"):
		pattern = strings.TrimPrefix(pattern, "<REGEX>:")
	case strings.HasPrefix(pattern, "<!REGEX>:"):
		pattern, negate = strings.TrimPrefix(pattern, "<!REGEX>:"), true
	default:
		return false, false
	}
	re, err := regexp.Compile("(?s)" + pattern)
	if err != nil {
		return false, true
	}
	return re.MatchString(got) != negate, true
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func showSQL(q, conn string) string {
	if conn != "" {
		return "SQL (connection " + conn + "):\n" + indent(q)
	}
	return "SQL:\n" + indent(q)
}

func (r *runner) query(rec *Record, vars loopVars) error {
	q, err := r.subst(rec.SQL, rec, vars)
	if err != nil {
		return err
	}
	expected := make([]string, len(rec.Results))
	for i, l := range rec.Results {
		if expected[i], err = r.subst(l, rec, vars); err != nil {
			return err
		}
	}
	c, err := r.conn(rec.Conn)
	if err != nil {
		return r.failf(rec, vars, "connection %q: %v", rec.Conn, err)
	}
	types, rows, err := readRows(r.ctx, c, q)
	if err != nil {
		return r.failf(rec, vars, "query failed\n%s\nerror:\n%s", showSQL(q, rec.Conn), indent(err.Error()))
	}
	switch rec.Sort {
	case RowSort:
		slices.SortFunc(rows, slices.Compare)
	case ValueSort:
		var all []string
		for _, row := range rows {
			all = append(all, row...)
		}
		slices.Sort(all)
		for i := range rows {
			rows[i] = all[i*len(types) : (i+1)*len(types)]
		}
	}
	if r.outputResult {
		r.t.Logf("%s:%d: result:\n%s", r.f.Path, rec.Line, indent(renderRows(rows)))
	}
	mismatch := func(format string, args ...any) error {
		detail := fmt.Sprintf(format, args...)
		return r.failf(rec, vars, "query result differs: %s\n%s\nexpected (%d lines):\n%s\nactual (%s, %d rows, as the file would hold it):\n%s",
			detail, showSQL(q, rec.Conn), len(expected), indent(strings.Join(expected, "\n")), rec.Sort, len(rows), indent(renderRows(rows)))
	}
	if len(types) != len(rec.Types) {
		return mismatch("the query returns %d columns, the record declares %d (%s)", len(types), len(rec.Types), rec.Types)
	}
	var values []string
	for _, row := range rows {
		values = append(values, row...)
	}
	if rec.Label != "" {
		if prev, ok := r.labels[rec.Label]; ok {
			if !slices.Equal(prev.values, values) {
				return mismatch("label %s: the result differs from the query at line %d, which gave:\n%s",
					rec.Label, prev.line, indent(strings.Join(prev.values, "\n")))
			}
		} else {
			r.labels[rec.Label] = labeled{line: rec.Line, values: values}
		}
	}
	if !rec.HasSep {
		return nil
	}
	if len(expected) == 1 && hashLineRE.MatchString(expected[0]) {
		if got := hashValues(values); got != expected[0] {
			return mismatch("result hash is %q", got)
		}
		return nil
	}
	ncols := len(types)
	rowWise := ncols == 1 || slices.ContainsFunc(expected, func(l string) bool { return strings.Contains(l, "\t") })
	var want []string
	if rowWise {
		for i, l := range expected {
			parts := []string{l}
			if ncols > 1 {
				parts = slices.DeleteFunc(strings.Split(l, "\t"), func(s string) bool { return s == "" })
			}
			if len(parts) != ncols {
				return mismatch("expected line %d has %d tab-separated values, the query returns %d columns", i+1, len(parts), ncols)
			}
			want = append(want, parts...)
		}
	} else {
		want = expected // one value per line
	}
	if len(want) != len(values) {
		if rowWise {
			return mismatch("expected %d rows, got %d", len(want)/ncols, len(rows))
		}
		return mismatch("expected %d values (one per line), got %d", len(want), len(values))
	}
	for i := range want {
		col := i % ncols
		if !valueMatches(values[i], want[i], types[col]) {
			return mismatch("row %d, column %d: %q <> expected %q", i/ncols+1, col+1, values[i], want[i])
		}
	}
	return nil
}

// readRows runs q and renders every value.
func readRows(ctx context.Context, c *sql.Conn, q string) ([]*colType, [][]string, error) {
	rs, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cts, err := rs.ColumnTypes()
	if err != nil {
		return nil, nil, err
	}
	types := make([]*colType, len(cts))
	for i, ct := range cts {
		if types[i], err = parseType(ct.DatabaseTypeName()); err != nil {
			return nil, nil, fmt.Errorf("column %d (%s): %v", i+1, ct.Name(), err)
		}
	}
	var rows [][]string
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			s, err := formatTop(v, types[i])
			if err != nil {
				return nil, nil, fmt.Errorf("column %d (%s): %v", i+1, cts[i].Name(), err)
			}
			row[i] = s
		}
		rows = append(rows, row)
	}
	return types, rows, rs.Err()
}

func renderRows(rows [][]string) string {
	lines := make([]string, len(rows))
	for i, row := range rows {
		lines[i] = strings.Join(row, "\t")
	}
	return strings.Join(lines, "\n")
}

var hashLineRE = regexp.MustCompile(`^\d+ values hashing to [0-9a-f]{32}$`)

// hashValues is sqllogictest's result hash: MD5 over every value followed by
// a newline.
func hashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte("\n"))
	}
	return fmt.Sprintf("%d values hashing to %s", len(values), hex.EncodeToString(h.Sum(nil)))
}

// valueMatches compares a rendered value with an expected one: equal text, a
// <REGEX>: pattern, or equal numbers (floating point within 1% of the actual
// value, plus 1e-8, as DuckDB's runner allows; integers and decimals exactly,
// so "1.50" matches "1.5"); booleans accept DuckDB's spellings (t, 1, ...).
func valueMatches(got, want string, t *colType) bool {
	if got == want {
		return true
	}
	if ok, isRE := regexMatches(want, got); isRE {
		return ok
	}
	if got == "NULL" || want == "NULL" {
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
	case t.name == "BOOLEAN":
		w, ok := parseBool(want)
		return ok && strconv.FormatBool(w) == got
	}
	return false
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "1", "yes", "y", "on":
		return true, true
	case "false", "f", "0", "no", "n", "off":
		return false, true
	}
	return false, false
}
