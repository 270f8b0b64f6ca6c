package storage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The runner never accepts a wrong result (the negative control): copies of
// DuckLake's own test files (DuckDB's sqllogictest format) with one expected
// result value changed, or one expected error message changed, must fail
// where the files themselves pass, in both hosts.
func TestRunnerRejectsMutatedTestFiles(t *testing.T) {
	root := loadSuite(t).root // the release's DuckLake's files
	files := []string{
		"test/sql/update/update_not_null.test",
		"test/sql/transaction/transaction_insert_update_delete.test",
		"test/sql/alter/add_column.test",
		"test/sql/snapshot_info/ducklake_current_commit.test",
		"test/sql/data_inlining/basic_data_inlining.test",
		"test/sql/constraints/not_null.test",
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "data"), filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	var mutated []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".test")
		if m, ok := mutateResult(string(b)); ok {
			p := filepath.Join(dir, base+"-result.test")
			if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			mutated = append(mutated, p)
		}
		if m, ok := mutateError(string(b)); ok {
			p := filepath.Join(dir, base+"-error.test")
			if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
				t.Fatal(err)
			}
			mutated = append(mutated, p)
		}
	}
	if len(mutated) < len(files) {
		t.Fatalf("only %d mutations of %d files", len(mutated), len(files))
	}
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) {
			args := append(append([]string{}, h.sltArgs...), "--extension", extension(), "--timeout", "120")
			// The originals pass: a mutated copy fails for its mutation.
			orig := exec.Command(sqllogictest(), append(args, files...)...)
			orig.Dir = root
			if out, err := orig.CombinedOutput(); err != nil {
				t.Fatalf("the unmutated files fail: %v\n%s", err, out)
			}
			for _, m := range mutated {
				cmd := exec.Command(sqllogictest(), append(args, m)...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				// It fails, and for its mutation (the failure shows the
				// changed expectation), not for something else.
				if err == nil || !strings.Contains(string(out), "FAIL "+m) ||
					!strings.Contains(string(out), "moraine_mutated_value") && !strings.Contains(string(out), "moraine mutated message") {
					t.Errorf("%s (a copy with one expectation changed) passed:\n%s", filepath.Base(m), out)
				}
			}
			t.Logf("%d mutated copies of %d files all fail", len(mutated), len(files))
		})
	}
}

// mutateResult changes the first value of the first query's expected
// result to a word no query returns.
func mutateResult(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "query ") {
			continue
		}
		for j := i + 1; j+1 < len(lines) && lines[j] != ""; j++ {
			if lines[j] == "----" && lines[j+1] != "" {
				vals := strings.Split(lines[j+1], "\t")
				vals[0] = "moraine_mutated_value"
				lines[j+1] = strings.Join(vals, "\t")
				return strings.Join(lines, "\n"), true
			}
		}
	}
	return "", false
}

// mutateError changes the expected message of the first statement error
// that names one.
func mutateError(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "statement error" {
			continue
		}
		for j := i + 1; j+1 < len(lines) && lines[j] != ""; j++ {
			if lines[j] == "----" && lines[j+1] != "" {
				lines[j+1] = fmt.Sprintf("moraine mutated message %d", j)
				return strings.Join(lines, "\n"), true
			}
		}
	}
	return "", false
}
