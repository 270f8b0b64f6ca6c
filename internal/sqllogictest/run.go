package sqllogictest

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a run.
type Options struct {
	// Engine opens the databases. Required.
	Engine Engine
	// Settings are DuckDB settings applied when each database is opened,
	// e.g. {"allow_unsigned_extensions": "true"}. They override the
	// runner's defaults: extension_directory and secret_directory inside
	// the file's __TEST_DIR__ and autoinstall_known_extensions=false, so
	// that nothing touches $HOME or the network.
	Settings map[string]string
	// Extensions maps extension names to files: `require <name>` runs
	// LOAD '<file>' (and a failure to load is a test failure, not a skip).
	// Other names are loaded as the engine loads built-in extensions
	// (ExtensionLoader), or with LOAD <name>; when that fails the
	// requirement is unmet.
	Extensions map[string]string
	// AllowSkip lists requirements (extension names, "vector_size", ...,
	// "env:VAR" for require-env VAR, "error:<message>" for
	// SkipErrorMessages) that may be unmet in this run: under go test
	// (RunFile, RunDir), a file needing one of them is skipped instead of
	// failing. A file can also allow itself to be skipped with a
	// "# allow-skip: <reason>" line.
	AllowSkip []string
	// Env holds variables in scope of every file: ${NAME} and {NAME}
	// become their values, a test-env of the same name is overridden, and
	// a require-env is satisfied by them before the process environment is
	// consulted.
	Env map[string]string
	// SkipErrorMessages: a statement or query failing with an error that
	// contains one of these ends the file as skipped, as DuckDB's runner
	// does for its skip_error_messages (by default "HTTP" and "Unable to
	// connect"). Default none: the failure is a failure.
	SkipErrorMessages []string
	// Timeout bounds each file (0: no bound): when it passes, the running
	// statement is interrupted and the file fails.
	Timeout time.Duration
	// KeepUnsetVars leaves a ${NAME} that is set nowhere as it is, as
	// DuckDB's runner does; by default it fails the record (a typo would
	// otherwise reach DuckDB as text).
	KeepUnsetVars bool
	// TestDir is the file's __TEST_DIR__. Default: a new temporary
	// directory, removed after the file.
	TestDir string
	// Log receives what the run logs (mode output_result, halt, ...);
	// nil discards it. It may be called from several goroutines.
	Log Logger
	// OnRecord, when set, is called with the line of each record before it
	// runs (from several goroutines in a concurrentloop).
	OnRecord func(line int)
}

// A Logger receives log lines; testing.TB is one.
type Logger interface {
	Logf(format string, args ...any)
}

// systemName is the name skipif/onlyif <system> compare with.
const systemName = "duckdb"

// standardVectorSize and defaultBlockSize are the compile-time constants of
// the DuckDB builds the engines use, for require vector_size / block_size.
const (
	standardVectorSize = 2048
	defaultBlockSize   = 262144
)

// Status is how a file ended.
type Status int

// File statuses.
const (
	Passed  Status = iota // every record ran as expected (or the file halted)
	Failed                // a record failed; Outcome.Line and Msg say which and why
	Skipped               // a requirement is unmet; Outcome.What names it
)

func (s Status) String() string {
	switch s {
	case Failed:
		return "FAIL"
	case Skipped:
		return "SKIP"
	}
	return "PASS"
}

// Outcome is the result of running one file.
type Outcome struct {
	Status Status
	Path   string
	// Line is the line of the record that failed or made the file skip
	// (0 when the file failed as a whole, e.g. it cannot be read).
	Line int
	// Msg is the failure message (it starts with path:line:) or, for a
	// skip, the unmet requirement ("require httpfs: ...").
	Msg string
	// What names the unmet requirement of a skip as Options.AllowSkip
	// does ("httpfs", "env:VAR", ...).
	What string
}

// Summary returns the outcome's first line: the reason without the SQL and
// results that follow in Msg.
func (o Outcome) Summary() string {
	prefix := fmt.Sprintf("%s:%d: ", o.Path, o.Line)
	return strings.TrimPrefix(firstLine(o.Msg), prefix)
}

// RunPath parses and runs one file. A file that cannot be read or parsed
// fails.
func RunPath(ctx context.Context, path string, opts Options) Outcome {
	f, err := ParseFile(path)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return Outcome{Status: Failed, Path: path, Line: pe.Line, Msg: pe.Error()}
		}
		return Outcome{Status: Failed, Path: path, Msg: fmt.Sprintf("%s:0: %v", path, err)}
	}
	return Exec(ctx, f, opts)
}

// Exec runs a parsed file against a fresh database. The context bounds the
// whole file: cancelling it interrupts the running statement.
func Exec(ctx context.Context, f *File, opts Options) (out Outcome) {
	out = Outcome{Path: f.Path}
	if opts.Engine == nil {
		out.Status, out.Msg = Failed, f.Path+":0: sqllogictest: Options.Engine is not set"
		return out
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	r := &runner{
		f:      f,
		opts:   opts,
		ctx:    ctx,
		labels: map[string]labeled{},
		memo:   map[*Record]string{},
		// DuckDB's runner always fails on these, even for statement error.
		alwaysFail: []string{"differs from original result!", "INTERNAL"},
		ignore:     slices.Clone(opts.SkipErrorMessages),
	}
	r.testDir = opts.TestDir
	if r.testDir == "" {
		dir, err := os.MkdirTemp("", "sqllogictest-")
		if err != nil {
			out.Status, out.Msg = Failed, fmt.Sprintf("%s:0: %v", f.Path, err)
			return out
		}
		defer os.RemoveAll(dir)
		r.testDir = dir
	}
	if wd, err := os.Getwd(); err == nil {
		r.workDir = wd
	}
	r.defineVars()
	err := r.open()
	if err == nil {
		err = r.exec(f.Records, &execState{})
	}
	r.close()
	var skip *skipFile
	var halt errHalt
	var fail *failure
	switch {
	case err == nil:
		out.Status = Passed
	case errors.As(err, &halt):
		out.Status = Passed
		r.logf("%s:%d: halt: the rest of the file is not run", f.Path, int(halt))
	case errors.As(err, &skip):
		out.Status, out.Line, out.Msg, out.What = Skipped, skip.line, skip.msg, skip.what
	case errors.As(err, &fail):
		out.Status, out.Line, out.Msg = Failed, fail.line, fail.msg
	default:
		out.Status, out.Msg = Failed, fmt.Sprintf("%s:0: %v", f.Path, err)
	}
	if f.Skipped > 0 {
		r.logf("%s: %d records not run (mode skip)", f.Path, f.Skipped)
	}
	return out
}

// defineVars sets the standard variables and Options.Env.
func (r *runner) defineVars() {
	r.vars.set("TEST_UUID", runUUID)
	r.vars.set("WORKING_DIR", r.workDir)
	r.vars.set("DATA_DIR", r.workDir+"/data")
	r.vars.set("TEMP_DIR", r.testDir)
	r.vars.set("CATALOG_DIR", r.testDir+"/"+runUUID)
	r.vars.set("TEST_NAME", r.f.Path)
	r.vars.set("TEST_NAME__NO_SLASH", strings.ReplaceAll(r.f.Path, "/", "_"))
	keys := make([]string, 0, len(r.opts.Env))
	for k := range r.opts.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.vars.set(k, r.opts.Env[k])
	}
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

// failure is a failed record; its message names the file and line.
type failure struct {
	line int
	msg  string
}

func (f *failure) Error() string { return f.msg }

type labeled struct {
	line   int
	hash   string
	values []string
}

type runner struct {
	f       *File
	opts    Options
	ctx     context.Context
	testDir string
	workDir string

	dbPath   string // "" for in-memory
	readOnly bool
	version  string // storage_compatibility_version from load
	db       Database
	conns    map[string]Conn // named connections; "" is the main connection
	loaded   []string        // required extensions, loaded again after restart/load

	varsMu sync.RWMutex
	vars   vars

	labelsMu sync.Mutex
	labels   map[string]labeled

	memoMu sync.Mutex
	memo   map[*Record]string // SQL after replaceKeywords, once per record as DuckDB parses once

	finished atomic.Bool // a concurrent iteration failed: the others stop

	hashThreshold int
	outputResult  bool
	outputHash    bool
	requireEnvs   map[string]bool
	alwaysFail    []string
	ignore        []string
}

func (r *runner) logf(format string, args ...any) {
	if r.opts.Log != nil {
		r.opts.Log.Logf(format, args...)
	}
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
	if r.version != "" {
		s["storage_compatibility_version"] = r.version
	}
	return s
}

func (r *runner) config() Config {
	return Config{Path: r.dbPath, ReadOnly: r.readOnly, Settings: r.settings()}
}

func (r *runner) open() error {
	db, err := r.opts.Engine.Open(r.ctx, r.config())
	if err != nil {
		return r.openError(err)
	}
	r.db = db
	r.conns = map[string]Conn{}
	return r.reload()
}

func (r *runner) openError(err error) error {
	where := "an in-memory database"
	if r.dbPath != "" {
		where = r.dbPath
	}
	return fmt.Errorf("cannot open %s: %v", where, err)
}

// reload loads the required extensions again after the database was
// reopened.
func (r *runner) reload() error {
	for _, ext := range r.loaded {
		unavailable, err := r.loadExtension(ext)
		if err == nil {
			err = unavailable
		}
		if err != nil {
			return fmt.Errorf("loading extension %s again after reopening the database: %v", ext, err)
		}
	}
	return nil
}

func (r *runner) closeConns() {
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = map[string]Conn{}
}

func (r *runner) close() {
	r.closeConns()
	if r.db != nil {
		r.db.Close()
		r.db = nil
	}
}

// conn returns the named connection, opening it on first use.
func (r *runner) conn(name string) (Conn, error) {
	if c := r.conns[name]; c != nil {
		return c, nil
	}
	c, err := r.db.Connect(r.ctx)
	if err != nil {
		return nil, err
	}
	r.conns[name] = c
	return c, nil
}

// loadExtension loads a required extension: from its file when configured,
// else as a built-in. unavailable is non-nil when it is not available here
// (the requirement is unmet, and it says why); err is a failure.
func (r *runner) loadExtension(name string) (unavailable, err error) {
	c, err := r.conn("")
	if err != nil {
		return nil, err
	}
	if p, ok := r.opts.Extensions[name]; ok {
		return nil, c.Exec(r.ctx, "LOAD "+sqlQuote(p))
	}
	if l, ok := r.db.(ExtensionLoader); ok {
		loaded, err := l.LoadExtension(r.ctx, name)
		if err == nil && !loaded {
			return errors.New("the extension is not available"), nil
		}
		return nil, err
	}
	if err := c.Exec(r.ctx, "LOAD "+quoteIdent(name)); err != nil {
		return fmt.Errorf("the extension cannot be loaded: %v", errText(err)), nil
	}
	return nil, nil
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// execState is the state of one thread of execution: the main one, or one
// iteration of a concurrentloop.
type execState struct {
	loops []loopFrame
	conn  Conn // a concurrentloop iteration's own connection; nil otherwise
}

func (st *execState) parallel() bool { return st.conn != nil }

func (v loopFrame) String() string { return v.rec.LoopVar + "=" + v.value }

func (r *runner) exec(recs []Record, st *execState) error {
	for i := range recs {
		if r.finished.Load() {
			return nil
		}
		if err := r.ctx.Err(); err != nil {
			return r.failf(&recs[i], st, "%v", err)
		}
		rec := &recs[i]
		run, err := r.conditionsMet(rec, st)
		if err != nil {
			return err
		}
		if !run {
			continue
		}
		if r.opts.OnRecord != nil {
			r.opts.OnRecord(rec.Line)
		}
		if err := r.record(rec, st); err != nil {
			return err
		}
	}
	return nil
}

// conditionsMet evaluates the skipif/onlyif conditions of a record.
func (r *runner) conditionsMet(rec *Record, st *execState) (bool, error) {
	for _, c := range rec.Conditions {
		if c.Var != "" {
			continue
		}
		if strings.EqualFold(c.Engine, systemName) != c.OnlyIf {
			return false, nil
		}
	}
	for _, c := range rec.Conditions {
		if c.Var == "" {
			continue
		}
		if len(st.loops) == 0 {
			return false, r.failf(rec, st, "conditions (onlyif/skipif) on loop parameters can only occur within a loop")
		}
		holds, found := false, false
		for _, l := range st.loops {
			if l.rec.LoopVar != c.Var {
				continue
			}
			found = true
			v := l.value
			switch c.Op {
			case "=":
				holds = v == c.Value
			case "<>":
				holds = v != c.Value
			default:
				a, err1 := strconv.ParseInt(v, 10, 64)
				b, err2 := strconv.ParseInt(c.Value, 10, 64)
				if err1 != nil || err2 != nil {
					return false, r.failf(rec, st, "condition %s%s%s: %q is not an integer", c.Var, c.Op, c.Value, v)
				}
				switch c.Op {
				case "<":
					holds = a < b
				case "<=":
					holds = a <= b
				case ">":
					holds = a > b
				case ">=":
					holds = a >= b
				}
			}
		}
		if !found {
			return false, r.failf(rec, st, "condition in onlyif/skipif not found: %s must be a loop iterator name", c.Var)
		}
		if holds != c.OnlyIf {
			return false, nil
		}
	}
	return true, nil
}

func (r *runner) failf(rec *Record, st *execState, format string, args ...any) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", r.f.Path, rec.Line)
	fmt.Fprintf(&b, format, args...)
	if st != nil && len(st.loops) > 0 {
		parts := make([]string, len(st.loops))
		for i, l := range st.loops {
			parts[i] = l.String()
		}
		fmt.Fprintf(&b, "\n(in loop iteration %s)", strings.Join(parts, ", "))
	}
	return &failure{line: rec.Line, msg: b.String()}
}

// sql returns a record's SQL with every substitution made.
func (r *runner) sql(rec *Record, st *execState) (string, error) {
	r.memoMu.Lock()
	s, ok := r.memo[rec]
	if !ok {
		s = r.replaceKeywords(rec.SQL)
		r.memo[rec] = s
	}
	r.memoMu.Unlock()
	return r.finishSubst(s, rec, st)
}

// subst makes every substitution in s, an argument of rec.
func (r *runner) subst(s string, rec *Record, st *execState) (string, error) {
	return r.finishSubst(r.replaceKeywords(s), rec, st)
}

// finishSubst applies the loop variables and the process environment.
func (r *runner) finishSubst(s string, rec *Record, st *execState) (string, error) {
	s, err := r.loopReplace(s, st.loops)
	if err != nil {
		return "", r.failf(rec, st, "%v", err)
	}
	s, missing := processEnv(s)
	if missing != "" && !r.opts.KeepUnsetVars {
		return "", r.failf(rec, st, "${%s} is not set (not a loop variable, test-env or require-env, nor in Options.Env or the environment)", missing)
	}
	return s, nil
}

// record runs one record. In a concurrentloop, checkConcurrent has refused
// the kinds that cannot run there before the loop started.
func (r *runner) record(rec *Record, st *execState) error {
	switch rec.Kind {
	case KindStatement:
		return r.statement(rec, st)
	case KindQuery:
		return r.query(rec, st)
	case KindRequire:
		return r.require(rec, st)
	case KindRequireEnv:
		return r.requireEnv(rec, st)
	case KindTestEnv:
		args := rec.Args()
		value := args[1]
		if v, ok := r.opts.Env[args[0]]; ok {
			value = v
		}
		r.varsMu.Lock()
		r.vars.set(args[0], value)
		r.varsMu.Unlock()
	case KindLoad:
		return r.load(rec, st)
	case KindRestart:
		return r.restart(rec, st)
	case KindReconnect:
		// New connections (the database stays open): connection state such
		// as settings, temporary tables and open transactions is gone.
		r.closeConns()
	case KindMode:
		switch rec.Args()[0] {
		case "output_result":
			r.outputResult = true
		case "output_hash":
			r.outputHash = true
		case "no_output":
			r.outputResult, r.outputHash = false, false
		}
	case KindHalt:
		return errHalt(rec.Line)
	case KindSleep:
		n, _ := strconv.ParseUint(rec.Args()[0], 10, 63)
		t := time.NewTimer(time.Duration(int64(n) * sleepUnit(rec.Args()[1])))
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.ctx.Done():
			return r.failf(rec, st, "sleep: %v", r.ctx.Err())
		}
	case KindHashThreshold:
		r.hashThreshold, _ = strconv.Atoi(rec.Args()[0])
	case KindSet:
		return r.set(rec, st)
	case KindReset:
		name := rec.Args()[1]
		r.labelsMu.Lock()
		_, ok := r.labels[name]
		delete(r.labels, name)
		r.labelsMu.Unlock()
		if !ok {
			return r.failf(rec, st, "reset label %s: no query has that label", name)
		}
	case KindUnzip:
		return r.unzip(rec, st)
	case KindTags:
		// Tags select files in DuckDB's runner; every file runs here.
	case KindLoop:
		return r.loop(rec, st)
	case KindInvalid:
		return r.failf(rec, st, "%s", rec.Error)
	default:
		return r.failf(rec, st, "internal error: record kind %d", rec.Kind)
	}
	return nil
}

func (r *runner) requireEnv(rec *Record, st *execState) error {
	args := rec.Args()
	name := args[0]
	v, ok := r.opts.Env[name]
	if !ok {
		v, ok = os.LookupEnv(name)
	}
	if !ok {
		return &skipFile{line: rec.Line, what: "env:" + name, msg: fmt.Sprintf("require-env %s: the variable is not set", name)}
	}
	if len(args) == 2 && v != args[1] {
		return &skipFile{line: rec.Line, what: "env:" + name,
			msg: fmt.Sprintf("require-env %s %s: the variable is %q", name, args[1], v)}
	}
	if r.requireEnvs[name] {
		return r.failf(rec, st, "environment variable %s has already been defined", name)
	}
	if r.requireEnvs == nil {
		r.requireEnvs = map[string]bool{}
	}
	r.requireEnvs[name] = true
	r.varsMu.Lock()
	r.vars.set(name, v)
	r.varsMu.Unlock()
	return nil
}

func (r *runner) load(rec *Record, st *execState) error {
	args := rec.Args()
	path := ""
	if len(args) > 0 {
		p, err := r.subst(args[0], rec, st)
		if err != nil {
			return err
		}
		path = p
	}
	readOnly := len(args) > 1 && strings.EqualFold(args[1], "readonly")
	if len(args) > 2 {
		r.version = args[2]
	} else if v, ok := r.currentSetting("storage_compatibility_version"); ok {
		// As DuckDB's runner: the new database gets the storage version of
		// the current one (which SET may have changed).
		r.version = v
	}
	r.close()
	if !readOnly && path != "" {
		// As DuckDB's runner does: load starts from an empty database file.
		for _, p := range []string{path, path + ".wal"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return r.failf(rec, st, "load: removing the old database: %v", err)
			}
		}
	}
	r.dbPath, r.readOnly = path, readOnly
	if err := r.open(); err != nil {
		return r.failf(rec, st, "load: %v", err)
	}
	return nil
}

// currentSetting reads a setting on the main connection.
func (r *runner) currentSetting(name string) (string, bool) {
	if r.db == nil {
		return "", false
	}
	c, err := r.conn("")
	if err != nil {
		return "", false
	}
	res, err := c.Query(r.ctx, "SELECT current_setting("+sqlQuote(name)+")::VARCHAR")
	if err != nil || len(res.Rows) != 1 || len(res.Rows[0]) != 1 || res.Rows[0][0] == "NULL" {
		return "", false
	}
	return res.Rows[0][0], true
}

func (r *runner) restart(rec *Record, st *execState) error {
	noLoad := len(rec.Args()) == 1 // restart no_extension_load
	if rs, ok := r.db.(Restarter); ok {
		// The engine restarts with the main connection; the others close.
		main := r.conns[""]
		delete(r.conns, "")
		r.closeConns()
		db, c, err := rs.Restart(r.ctx, main, r.config())
		if err != nil {
			r.db = nil
			return r.failf(rec, st, "restart: %v", r.openError(err))
		}
		r.db = db
		if c != nil {
			r.conns[""] = c
		}
	} else {
		r.close()
		db, err := r.opts.Engine.Open(r.ctx, r.config())
		if err != nil {
			return r.failf(rec, st, "restart: %v", r.openError(err))
		}
		r.db = db
	}
	if noLoad {
		return nil
	}
	if err := r.reload(); err != nil {
		return r.failf(rec, st, "restart: %v", err)
	}
	return nil
}

func (r *runner) set(rec *Record, st *execState) error {
	args := rec.Args()
	switch args[0] {
	case "ignore_error_messages":
		r.ignore = rec.SetValues
	case "always_fail_error_messages":
		r.alwaysFail = rec.SetValues
	case "seed":
		c, err := r.conn("")
		if err == nil {
			err = c.Exec(r.ctx, "SELECT SETSEED("+args[1]+")")
		}
		if err != nil {
			return r.failf(rec, st, "set seed: %v", err)
		}
	}
	return nil
}

func (r *runner) unzip(rec *Record, st *execState) error {
	args := rec.Args()
	in, err := r.subst(args[0], rec, st)
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(in[strings.LastIndex(in, "/")+1:], ".gz")
	out := r.replaceKeywords("__TEST_DIR__/" + name)
	if len(args) == 2 && args[1] != "NULL" {
		if out, err = r.subst(args[1], rec, st); err != nil {
			return err
		}
	}
	if err := gunzip(in, out); err != nil {
		return r.failf(rec, st, "unzip: %v", err)
	}
	return nil
}

func gunzip(in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	zr, err := gzip.NewReader(src)
	if err != nil {
		return fmt.Errorf("%s: %v", in, err)
	}
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, zr); err != nil {
		dst.Close()
		return fmt.Errorf("%s: %v", in, err)
	}
	return dst.Close()
}

func (r *runner) loop(rec *Record, st *execState) error {
	var frames []loopFrame
	if rec.IsForeach {
		for _, v := range rec.LoopValues {
			frames = append(frames, loopFrame{rec: rec, value: v})
		}
	} else {
		// As DuckDB: the body runs at least once, for the start value.
		for i := rec.LoopStart; ; i++ {
			frames = append(frames, loopFrame{rec: rec, value: strconv.Itoa(i)})
			if i+1 >= rec.LoopEnd {
				break
			}
		}
	}
	if !rec.Concurrent {
		for _, fr := range frames {
			inner := &execState{loops: append(slices.Clip(st.loops), fr), conn: st.conn}
			if err := r.exec(rec.Body, inner); err != nil {
				return err
			}
			if r.finished.Load() {
				break
			}
		}
		return nil
	}
	if st.parallel() {
		return r.failf(rec, st, "nested concurrent loops are not supported")
	}
	if err := r.checkConcurrent(rec.Body, st); err != nil {
		return err
	}
	// A concurrent loop: every iteration in its own goroutine with its own
	// connection, the enclosing loops' variables not in scope (as DuckDB).
	errs := make([]error, len(frames))
	var wg sync.WaitGroup
	for i, fr := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := r.db.Connect(r.ctx)
			if err != nil {
				errs[i] = r.failf(rec, st, "concurrent loop: new connection: %v", err)
				r.finished.Store(true)
				return
			}
			defer c.Close()
			if err := r.exec(rec.Body, &execState{loops: []loopFrame{fr}, conn: c}); err != nil {
				errs[i] = err
				r.finished.Store(true)
			}
		}()
	}
	wg.Wait()
	r.finished.Store(false)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkConcurrent refuses what a concurrent loop cannot run, before it
// starts (as DuckDB's SupportsConcurrent).
func (r *runner) checkConcurrent(recs []Record, st *execState) error {
	for i := range recs {
		rec := &recs[i]
		switch rec.Kind {
		case KindStatement, KindQuery:
			if rec.Conn != "" {
				return r.failf(rec, st, "named connections are not supported in a concurrent loop")
			}
		case KindReset:
		case KindLoop:
			if err := r.checkConcurrent(rec.Body, st); err != nil {
				return err
			}
		default:
			return r.failf(rec, st, "concurrent loop is not supported over %s", rec.Unparsed[0])
		}
	}
	return nil
}

// connFor returns the connection a statement or query runs on.
func (r *runner) connFor(rec *Record, st *execState) (Conn, error) {
	if st.parallel() {
		return st.conn, nil
	}
	c, err := r.conn(rec.Conn)
	if err != nil {
		return nil, r.failf(rec, st, "connection %q: %v", rec.Conn, err)
	}
	return c, nil
}

// errText is the message of an error as DuckDB's runner sees it.
func errText(err error) string {
	var de *Error
	if errors.As(err, &de) {
		return de.Message
	}
	return err.Error()
}

// internal reports whether an error fails the file even where an error is
// expected: an internal error, or a message DuckDB's runner always fails on
// (set always_fail_error_messages).
func (r *runner) internal(err error) bool {
	var de *Error
	if errors.As(err, &de) && de.IsInternal() {
		return true
	}
	msg := errText(err)
	for _, m := range r.alwaysFail {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// skipOnError ends the file as skipped when an error holds one of the
// messages to skip on (Options.SkipErrorMessages, set
// ignore_error_messages); it returns nil otherwise.
func (r *runner) skipOnError(rec *Record, msg string) error {
	for _, m := range r.ignore {
		if strings.Contains(msg, m) {
			return &skipFile{line: rec.Line, what: "error:" + m,
				msg: fmt.Sprintf("skip on error message matching %q: %s", m, firstLine(msg))}
		}
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func (r *runner) statement(rec *Record, st *execState) error {
	q, err := r.sql(rec, st)
	if err != nil {
		return err
	}
	c, err := r.connFor(rec, st)
	if err != nil {
		return err
	}
	execErr := c.Exec(r.ctx, q)
	if execErr != nil && r.ctx.Err() != nil {
		return r.failf(rec, st, "%v\n%s", r.ctx.Err(), showSQL(q, rec.Conn))
	}
	if rec.Expect == ExpectOK {
		if execErr == nil {
			return nil
		}
		msg := errText(execErr)
		if err := r.skipOnError(rec, msg); err != nil {
			return err
		}
		return r.failf(rec, st, "statement ok failed\n%s\nerror:\n%s", showSQL(q, rec.Conn), indent(msg))
	}
	if execErr != nil && r.internal(execErr) {
		return r.failf(rec, st, "statement %s failed with an internal error, which is never expected\n%s\nerror:\n%s",
			rec.Args()[0], showSQL(q, rec.Conn), indent(errText(execErr)))
	}
	want := rec.Error
	if execErr != nil && want != "" {
		msg := errText(execErr)
		if strings.Contains(msg, want) || strings.Contains(msg, r.replaceKeywords(want)) {
			return nil
		}
		// DuckDB matches a pattern against the result's text: the error
		// and a newline.
		if ok, isRE := r.regexMatches(want, msg+"\n"); isRE && ok {
			return nil
		}
		if err := r.skipOnError(rec, msg); err != nil {
			return err
		}
		what := "statement error failed with the wrong error"
		if rec.Expect == ExpectMaybe {
			what = "statement maybe failed with an unexpected error"
		}
		return r.failf(rec, st, "%s\n%s\nexpected an error matching:\n%s\nactual error:\n%s",
			what, showSQL(q, rec.Conn), indent(want), indent(msg))
	}
	if rec.Expect == ExpectError && execErr == nil {
		what := "an error"
		if want != "" {
			what = "an error matching:\n" + indent(want)
		}
		return r.failf(rec, st, "statement error succeeded\n%s\nexpected %s", showSQL(q, rec.Conn), what)
	}
	return nil
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
