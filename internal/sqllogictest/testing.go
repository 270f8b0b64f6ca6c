package sqllogictest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// RunDir runs every *.test file under dir (recursively, in lexical order), each
// as a subtest named by its path relative to dir. A directory without test
// files is an error.
func RunDir(t *testing.T, dir string, opts Options) {
	t.Helper()
	runEach(t, dir, func(t *testing.T, path string) { RunFile(t, path, opts) })
}

// runEach runs fn on every *.test file under dir (see Files), each as a
// subtest named by its path relative to dir.
func runEach(t *testing.T, dir string, fn func(t *testing.T, path string)) {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name, err := filepath.Rel(dir, path)
		if err != nil {
			name = path
		}
		t.Run(filepath.ToSlash(name), func(t *testing.T) { fn(t, path) })
	}
}

// RunFile parses and runs one test file against a fresh database, with
// t.TempDir() as its __TEST_DIR__ and t as the log (unless opts say
// otherwise). The first failing record fails t (Errorf) and ends the file;
// a file whose requirements are unmet fails too, unless skipping it is
// allowed (Options.AllowSkip, or a "# allow-skip:" line), in which case t
// is skipped.
func RunFile(t testing.TB, path string, opts Options) {
	t.Helper()
	if opts.TestDir == "" {
		opts.TestDir = t.TempDir()
	}
	if opts.Log == nil {
		opts.Log = t
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Errorf("sqllogictest: %v", err)
		return
	}
	out := Exec(context.Background(), f, opts)
	switch out.Status {
	case Failed:
		t.Errorf("%s", out.Msg)
	case Skipped:
		if reason := skipAllowed(f, opts, out.What); reason != "" {
			t.Skipf("%s:%d: %s (skip allowed: %s)", f.Path, out.Line, out.Msg, reason)
			return
		}
		t.Errorf("%s:%d: %s\nThe file would be skipped, and a skipped file is a failure here. "+
			"If this run may lack it, list %q in Options.AllowSkip, or add a line \"%s <reason>\" to the file.",
			f.Path, out.Line, out.Msg, out.What, strings.TrimSpace(allowSkipPrefix))
	}
}

// skipAllowed returns why the file may be skipped for requirement what, or "".
func skipAllowed(f *File, opts Options, what string) string {
	if slices.Contains(opts.AllowSkip, what) {
		return "Options.AllowSkip lists " + strconv.Quote(what)
	}
	if f.AllowSkip != "" {
		return f.AllowSkip
	}
	return ""
}

// Files lists the *.test files of the given paths: a file is itself, a
// directory every *.test file under it, recursively, in lexical order.
// Finding none is an error.
func Files(paths ...string) ([]string, error) {
	var files []string
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("sqllogictest: %w", err)
		}
		if !info.IsDir() {
			files = append(files, path)
			continue
		}
		var found []string
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".test") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sqllogictest: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("sqllogictest: no .test files under %s", path)
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("sqllogictest: no .test files")
	}
	return files, nil
}

// Expectation comments of files run by RunExpectations.
const (
	expectFailPrefix = "# expect-fail:"
	expectSkipPrefix = "# expect-skip:"
)

// RunExpectations runs every *.test file under dir as a subtest and checks
// its outcome against the file's expectation comments: each
// "# expect-fail: <text>" line makes the file expected to fail with a
// message containing text, each "# expect-skip: <text>" line expected to be
// skipped with a reason containing it; a file with neither must pass. It is
// the runner's conformance suite for an engine: the runner's testdata holds
// such files, and every engine module runs them.
func RunExpectations(t *testing.T, dir string, opts Options) {
	t.Helper()
	runEach(t, dir, func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var wantFail, wantSkip []string
		for _, l := range strings.Split(string(b), "\n") {
			if s, ok := strings.CutPrefix(l, expectFailPrefix); ok {
				wantFail = append(wantFail, strings.TrimSpace(s))
			}
			if s, ok := strings.CutPrefix(l, expectSkipPrefix); ok {
				wantSkip = append(wantSkip, strings.TrimSpace(s))
			}
		}
		o := opts
		o.TestDir = t.TempDir()
		if o.Log == nil {
			o.Log = t
		}
		out := RunPath(context.Background(), path, o)
		check := func(status Status, wants []string) {
			if out.Status != status {
				t.Fatalf("%s, want %s:\n%s", out.Status, status, out.Msg)
			}
			for _, w := range wants {
				if !strings.Contains(out.Msg, w) {
					t.Errorf("the message lacks %q:\n%s", w, out.Msg)
				}
			}
		}
		switch {
		case len(wantFail) > 0:
			check(Failed, wantFail)
		case len(wantSkip) > 0:
			check(Skipped, wantSkip)
		default:
			check(Passed, nil)
		}
	})
}

// Recorder is a testing.TB that records what RunFile reports instead of
// failing the real test, for testing the runner's failure reporting.
// Methods it does not override (TempDir, Cleanup, Name, ...) go to the
// real test, TB.
type Recorder struct {
	testing.TB
	Errors []string // Error and Errorf
	Skips  []string // Skipf
	Logs   []string // Logf
}

func (r *Recorder) Helper() {}

func (r *Recorder) Errorf(format string, args ...any) {
	r.Errors = append(r.Errors, fmt.Sprintf(format, args...))
}

func (r *Recorder) Error(args ...any) { r.Errors = append(r.Errors, fmt.Sprint(args...)) }

func (r *Recorder) Skipf(format string, args ...any) {
	r.Skips = append(r.Skips, fmt.Sprintf(format, args...))
}

func (r *Recorder) Logf(format string, args ...any) {
	r.Logs = append(r.Logs, fmt.Sprintf(format, args...))
}

// Fatalf fails the real test: the runner must report with Errorf and return.
func (r *Recorder) Fatalf(format string, args ...any) {
	r.TB.Fatalf("runner called Fatalf (it must report with Errorf and return): "+format, args...)
}
