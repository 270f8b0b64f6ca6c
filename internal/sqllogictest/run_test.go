package sqllogictest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fakeOptions() Options {
	return Options{
		Engine: &fakeEngine{},
		Env: map[string]string{
			"MORAINE_FAKE_OVERRIDDEN": "from Options.Env",
			"MORAINE_FAKE_ENV":        "env value",
		},
		SkipErrorMessages: []string{"HTTP", "Unable to connect"},
	}
}

// TestFake runs testdata/fake against the fake engine: what the runner does
// on its own (substitution, comparison, hashes and labels, loops and
// concurrent loops, requirements, commands, skips and failures).
func TestFake(t *testing.T) {
	if os.Getenv("MORAINE_FAKE_UNSET") != "" {
		t.Fatal("MORAINE_FAKE_UNSET must not be set")
	}
	RunExpectations(t, filepath.Join("testdata", "fake"), fakeOptions())
}

// TestTimeout: Options.Timeout interrupts a running statement.
func TestTimeout(t *testing.T) {
	opts := fakeOptions()
	opts.Timeout = 200 * time.Millisecond
	start := time.Now()
	RunExpectations(t, filepath.Join("testdata", "fake_timeout"), opts)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the file took %v", d)
	}
}

// TestKeepUnsetVars: Options.KeepUnsetVars leaves an unset ${NAME} as text.
func TestKeepUnsetVars(t *testing.T) {
	opts := fakeOptions()
	opts.KeepUnsetVars = true
	RunExpectations(t, filepath.Join("testdata", "fake_keepvars"), opts)
}

// TestRunFileSkipRule: under go test an unmet requirement fails the file
// unless the skip is allowed.
func TestRunFileSkipRule(t *testing.T) {
	path := filepath.Join("testdata", "fake", "skip_missing_extension.test")
	rec := &Recorder{TB: t}
	RunFile(rec, path, fakeOptions())
	if len(rec.Skips) != 0 || len(rec.Errors) != 1 ||
		!strings.Contains(rec.Errors[0], "a skipped file is a failure here") || !strings.Contains(rec.Errors[0], `list "httpfs" in Options.AllowSkip`) {
		t.Fatalf("errors %q skipped %q", rec.Errors, rec.Skips)
	}
	opts := fakeOptions()
	opts.AllowSkip = []string{"httpfs"}
	rec = &Recorder{TB: t}
	RunFile(rec, path, opts)
	if len(rec.Errors) != 0 || len(rec.Skips) != 1 || !strings.Contains(rec.Skips[0], `(skip allowed: Options.AllowSkip lists "httpfs")`) {
		t.Fatalf("errors %q skipped %q", rec.Errors, rec.Skips)
	}
}

// TestOutputResult: mode output_result logs query results, mode
// output_hash their hashes (and compares nothing).
func TestOutputResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.test")
	text := "mode output_result\n\nquery IT\nROWS INTEGER VARCHAR\n1|x\n----\n1\tx\n\nmode no_output\n\nmode output_hash\n\nquery I\nROWS INTEGER\n1\n----\n2\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{TB: t}
	RunFile(rec, path, fakeOptions())
	logs := strings.Join(rec.Logs, "\n")
	if len(rec.Errors) != 0 || !strings.Contains(logs, "out.test:3: result:\n    1\tx") ||
		!strings.Contains(logs, "out.test:13: 1 values hashing to b026324c6904b2a9cb4b88d6d61c81d1") {
		t.Fatalf("errors %q logs %q", rec.Errors, rec.Logs)
	}
}

// TestFiles: the file list, and no files is an error rather than a
// vacuous pass.
func TestFiles(t *testing.T) {
	files, err := Files(filepath.Join("testdata", "pass"), filepath.Join("testdata", "fake", "hash.test"))
	if err != nil || len(files) != 6 || filepath.Base(files[0]) != "basics.test" || filepath.Base(files[5]) != "hash.test" {
		t.Fatalf("Files = %q, %v", files, err)
	}
	if _, err := Files(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .test files under") {
		t.Fatalf("Files(empty dir) = %v", err)
	}
	if _, err := Files(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Files(missing dir) succeeded")
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]uint64{"1kb": 1000, "2 GiB": 2 << 30, "1.5mb": 1500000, "10b": 10, "3t": 3e12} {
		if got, err := parseMemoryLimit(in); err != nil || got != want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"gb", "1 parsecs"} {
		if _, err := parseMemoryLimit(in); err == nil {
			t.Errorf("parseMemoryLimit(%q) succeeded", in)
		}
	}
}
