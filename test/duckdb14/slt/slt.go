// Package slt is the sqllogictest command over DuckDB v1.4.4, with the
// moraine extension and DuckLake, for any engine of package sqllogictest:
// build/sqllogictest-v1.4.4 (the duckdb-go engine, test/duckdb14/engine)
// and build/sqllogictest-official-v1.4.4 (DuckDB's official libduckdb.so,
// test/duckdb14/capiengine) are Main with their engine:
//
//	<command> [--extension PATH] [--ducklake PATH] [--env NAME=VALUE]... [--timeout SECONDS] PATH...
//
// Each PATH is a file or a directory (searched recursively for *.test). It
// prints one line per file, PASS path, FAIL path:line reason or SKIP path
// reason, then "N passed, N failed, N skipped", and exits 1 when a file
// failed (2 on bad usage). A failure's whole message (the SQL, the expected
// and actual results) goes to standard error after its line.
//
// Every file runs in a child process of its own (the command again), so
// that a crash or a hang ends only that file: a file running longer than
// --timeout (default 300 s; 0: none) is killed and fails at the record it
// was running.
//
// require moraine loads --extension (default build/v1.4.4/moraine.duckdb_extension
// of the repository, when present), which is also installed in the file's
// extension directory, so ATTACH 'moraine:...' (DuckLake's nested attach
// of DUCKLAKE_CONNECTION=moraine:...) loads it; an --extension of another
// name (the commit-log build, moraine_commitlog.duckdb_extension, which
// DuckDB cannot autoload for 'moraine:') is loaded into every database
// the file opens; require ducklake loads --ducklake
// (default ../shared/ducklake/v1.4.4/ducklake.duckdb_extension beside the
// repository, when present). --env NAME=VALUE overrides a file's
// test-env NAME and supplies ${NAME} and {NAME}. Databases open with
// allow_unsigned_extensions; an unmet require or require-env, or an error
// mentioning HTTP or "Unable to connect" (DuckDB's skip_error_messages),
// skips the file.
package slt

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/internal/sqllogictest"
)

// RepoRoot is the repository root, set by the Makefile (-ldflags -X
// github.com/moraine-go/moraine/test/duckdb14/slt.RepoRoot=...); without it
// the parent of the executable's directory (build/..) is used.
var RepoRoot string

// Version is the DuckDB release the command runs (set by the Makefile, as
// RepoRoot): it names the command (sqllogictest-<Version>) and the default
// extension files (build/<Version>/moraine.duckdb_extension,
// ../shared/ducklake/<Version>/ducklake.duckdb_extension).
var Version = "v1.4.4"

// command is the running command's name and engine (Main).
var command struct {
	name   string
	engine func() sqllogictest.Engine
}

// Environment variables between the command and its children.
const (
	childEnv     = "MORAINE_SLT14_CHILD"     // the child's test directory: run one file there
	extensionEnv = "MORAINE_SLT14_EXTENSION" // the child's moraine extension file ("" none)
	ducklakeEnv  = "MORAINE_SLT14_DUCKLAKE"  // the child's DuckLake extension file ("" none)
	resultMark   = "@result "                // the child's last line: the outcome as JSON
	lineMark     = "@line "                  // the child's progress: the record it starts
	usageText    = "[--extension PATH] [--ducklake PATH] [--env NAME=VALUE]... [--timeout SECONDS] PATH..."
)

type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("--env wants NAME=VALUE, not %q", s)
	}
	e[name] = value
	return nil
}

type config struct {
	extension, ducklake string
	env                 envFlag
	timeout             time.Duration
	paths               []string
}

func parseArgs(args []string) (*config, error) {
	fs := flag.NewFlagSet(command.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &config{env: envFlag{}}
	fs.StringVar(&c.extension, "extension", "", "the moraine extension file")
	fs.StringVar(&c.ducklake, "ducklake", "", "the DuckLake extension file")
	fs.Var(c.env, "env", "NAME=VALUE")
	timeout := fs.Float64("timeout", 300, "seconds per file (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.paths = fs.Args()
	if len(c.paths) == 0 {
		return nil, errors.New("no PATH given")
	}
	if *timeout < 0 {
		return nil, errors.New("--timeout must not be negative")
	}
	c.timeout = time.Duration(*timeout * float64(time.Second))
	root := root()
	for _, x := range []struct {
		path *string
		def  string
		flag string
	}{
		{&c.extension, filepath.Join(root, "build", Version, "moraine.duckdb_extension"), "--extension"},
		{&c.ducklake, filepath.Join(root, "..", "shared", "ducklake", Version, "ducklake.duckdb_extension"), "--ducklake"},
	} {
		if *x.path == "" {
			if _, err := os.Stat(x.def); err == nil {
				*x.path = x.def
			}
			continue
		}
		if _, err := os.Stat(*x.path); err != nil {
			return nil, fmt.Errorf("%s: %v", x.flag, err)
		}
	}
	for _, p := range []*string{&c.extension, &c.ducklake} {
		if *p != "" {
			if abs, err := filepath.Abs(*p); err == nil {
				*p = abs
			}
		}
	}
	return c, nil
}

func root() string {
	if RepoRoot != "" {
		return RepoRoot
	}
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return filepath.Dir(filepath.Dir(exe))
}

func (c *config) options() sqllogictest.Options {
	ext := map[string]string{}
	if c.extension != "" {
		ext["moraine"] = c.extension
	}
	if c.ducklake != "" {
		ext["ducklake"] = c.ducklake
	}
	eng := command.engine()
	if c.extension != "" && filepath.Base(c.extension) != "moraine.duckdb_extension" {
		eng = preloading{Engine: eng, file: c.extension}
	}
	return sqllogictest.Options{
		Engine:            eng,
		Settings:          map[string]string{"allow_unsigned_extensions": "true"},
		Extensions:        ext,
		Env:               c.env,
		SkipErrorMessages: []string{"HTTP", "Unable to connect"},
		KeepUnsetVars:     true,
	}
}

// Main runs the command called name (its messages' prefix) with engine's
// databases, and exits.
func Main(name string, engine func() sqllogictest.Engine) {
	command.name, command.engine = name, engine
	c, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\nusage: %s %s\n", name, err, name, usageText)
		os.Exit(2)
	}
	if dir := os.Getenv(childEnv); dir != "" {
		c.extension, c.ducklake = os.Getenv(extensionEnv), os.Getenv(ducklakeEnv)
		os.Exit(child(c, dir))
	}
	files, err := sqllogictest.Files(c.paths...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	var passed, failed, skipped int
	for _, f := range files {
		out := runChild(c, f)
		switch out.Status {
		case sqllogictest.Passed:
			passed++
			fmt.Printf("PASS %s\n", f)
		case sqllogictest.Skipped:
			skipped++
			fmt.Printf("SKIP %s %s\n", f, strings.TrimSpace(out.Summary()))
		default:
			failed++
			fmt.Printf("FAIL %s:%d %s\n", f, out.Line, strings.TrimSpace(out.Summary()))
			fmt.Fprintf(os.Stderr, "--- FAIL %s:%d\n%s\n", f, out.Line, out.Msg)
		}
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 {
		os.Exit(1)
	}
}

// preloading loads an extension DuckDB cannot autoload for ATTACH
// 'moraine:...' (the commit-log build, moraine_commitlog: autoloading looks
// for an extension named moraine) into every database it opens, before the
// file's first statement, as its users LOAD it before they ATTACH.
type preloading struct {
	sqllogictest.Engine
	file string
}

func (p preloading) Open(ctx context.Context, cfg sqllogictest.Config) (sqllogictest.Database, error) {
	db, err := p.Engine.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conn, err := db.Connect(ctx)
	if err == nil {
		err = conn.Exec(ctx, "LOAD '"+strings.ReplaceAll(p.file, "'", "''")+"'")
		conn.Close()
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("loading %s: %v", p.file, err)
	}
	return db, nil
}

// install puts the moraine extension into the child's extension directory,
// as INSTALL does, so that ATTACH 'moraine:...' (DuckLake's nested attach)
// loads it by itself, as it does for a user who installed it.
func install(opts sqllogictest.Options, file string) error {
	ctx := context.Background()
	db, err := opts.Engine.Open(ctx, sqllogictest.Config{Settings: opts.Settings})
	if err != nil {
		return fmt.Errorf("installing %s: %v", file, err)
	}
	defer db.Close()
	conn, err := db.Connect(ctx)
	if err != nil {
		return fmt.Errorf("installing %s: %v", file, err)
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "INSTALL '"+strings.ReplaceAll(file, "'", "''")+"'"); err != nil {
		return fmt.Errorf("installing %s: %v", file, err)
	}
	return nil
}

// child runs one file (the only PATH) in dir and reports on file
// descriptor 3 (not stdout, which DuckDB may print to: profiles, ...).
func child(c *config, dir string) int {
	report := os.NewFile(3, "report")
	if report == nil {
		fmt.Fprintln(os.Stderr, command.name+": the child has no report pipe")
		return 1
	}
	opts := c.options()
	// __TEST_DIR__ is dir/test; the extension directory is beside it, not
	// inside (as ~/.duckdb is outside DuckDB's test directory: a test that
	// allows only the test directory must not allow installing extensions).
	opts.TestDir = filepath.Join(dir, "test")
	opts.Settings["extension_directory"] = filepath.Join(dir, "extensions")
	if err := os.Mkdir(opts.TestDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if c.extension != "" {
		if err := install(opts, c.extension); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	opts.Log = stderrLog{}
	var mu sync.Mutex
	last := 0
	opts.OnRecord = func(line int) {
		mu.Lock()
		defer mu.Unlock()
		if line != last {
			last = line
			fmt.Fprintf(report, "%s%d\n", lineMark, line)
		}
	}
	out := sqllogictest.RunPath(context.Background(), c.paths[0], opts)
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mu.Lock()
	fmt.Fprintf(report, "%s%s\n", resultMark, b)
	mu.Unlock()
	return 0
}

type stderrLog struct{}

func (stderrLog) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// runChild runs one file in a child process with its own test directory
// and returns its outcome; a crash or a timeout is a failure at the record
// the child was running.
func runChild(c *config, file string) sqllogictest.Outcome {
	fail := func(line int, format string, args ...any) sqllogictest.Outcome {
		msg := fmt.Sprintf(format, args...)
		return sqllogictest.Outcome{Status: sqllogictest.Failed, Path: file, Line: line,
			Msg: fmt.Sprintf("%s:%d: %s", file, line, msg)}
	}
	dir, err := os.MkdirTemp("", command.name+"-")
	if err != nil {
		return fail(0, "%v", err)
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		return fail(0, "%v", err)
	}
	ctx := context.Background()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	args := []string{"--timeout", "0"}
	for k, v := range c.env {
		args = append(args, "--env", k+"="+v)
	}
	cmd := exec.CommandContext(ctx, exe, append(args, file)...)
	// The child gets the resolved extension files (empty: none) this way,
	// so that it does not look for the defaults again.
	cmd.Env = append(os.Environ(), childEnv+"="+dir, extensionEnv+"="+c.extension, ducklakeEnv+"="+c.ducklake)
	cmd.WaitDelay = 10 * time.Second // a killed child's output pipes may stay open
	var output outputBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(0, "%v", err)
	}
	defer pr.Close()
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fail(0, "%v", err)
	}
	pw.Close()
	line := 0
	var result *sqllogictest.Outcome
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, lineMark):
			line, _ = strconv.Atoi(strings.TrimPrefix(l, lineMark))
		case strings.HasPrefix(l, resultMark):
			var o sqllogictest.Outcome
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, resultMark)), &o); err == nil {
				result = &o
			}
		}
	}
	waitErr := cmd.Wait()
	if output.Len() > 0 && (result == nil || result.Status == sqllogictest.Failed) {
		os.Stderr.Write(output.Bytes())
	}
	if ctx.Err() != nil {
		return fail(line, "timeout: the file ran longer than %v (killed)", c.timeout)
	}
	if result != nil {
		return *result
	}
	return fail(line, "the run crashed (%v) at the record on this line", waitErr)
}

// outputBuffer keeps the first 16 KiB and the last 48 KiB written to it:
// a crash's first lines say why (a Go runtime's "fatal error: ..."), its
// last ones where.
type outputBuffer struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int
}

const (
	outputHead = 16 << 10
	outputTail = 48 << 10
)

func (t *outputBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := outputHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - outputTail; over > 0 {
		t.dropped += over
		t.tail = t.tail[over:]
	}
	return n, nil
}

func (t *outputBuffer) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.head) + len(t.tail)
}

func (t *outputBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]byte(nil), t.head...)
	if t.dropped > 0 {
		out = fmt.Appendf(out, "\n... %d bytes of output left out ...\n", t.dropped)
	}
	return append(out, t.tail...)
}
