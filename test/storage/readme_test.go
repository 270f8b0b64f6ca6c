package storage

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// readmeBlocks returns the README's fenced blocks of a language, in order.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```\n")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeCheckout lays out a checkout as the README assumes (root/moraine
// with build/ in it, root/shared beside it, a fresh HOME in root/home) and
// returns root and a runner of SQL scripts there (the host's shell --sql;
// the output with the process's stderr, which must exit 0).
func readmeCheckout(t *testing.T, h host) (string, func(sql string) string) {
	t.Helper()
	root := t.TempDir()
	checkout := filepath.Join(root, "moraine")
	for _, d := range []string{checkout, filepath.Join(root, "home")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shared, err := filepath.Abs(filepath.Join(repoRoot(), "..", "shared"))
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{filepath.Join(checkout, "build"): dir, filepath.Join(root, "shared"): shared} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return root, func(sql string) string {
		t.Helper()
		out, err := runReadmeSQL(h, checkout, filepath.Join(root, "home"), sql)
		if err != nil {
			t.Fatalf("%s --sql: %v\n%s\nscript:\n%s", h.shell, err, out, sql)
		}
		return out
	}
}

// runReadmeSQL runs a README script in h. The README loads DuckLake for
// v1.4.4 from ../shared; another release loads its own.
func runReadmeSQL(h host, dir, home, sql string) (string, error) {
	sql = strings.ReplaceAll(sql, "/ducklake/v1.4.4/", "/ducklake/"+version+"/")
	cmd := exec.Command(h.shell, "--sql")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdin = strings.NewReader(sql)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestREADMECommitLogPath runs the README's commit-log section as written:
// the lake created once, four copies of the writer script at the same
// time (each its own DuckDB process), then the reader, whose output must
// be the README's. The processes' log lines on stderr are left out of the
// comparison. In both hosts (hosts): duckdb-go and DuckDB's official build.
func TestREADMECommitLogPath(t *testing.T) {
	var create, writer, reader string
	for _, b := range readmeBlocks(t, "sql") {
		switch {
		case !strings.Contains(b, "shared-lake"):
		case strings.Contains(b, "CREATE TABLE"):
			create = b
		case strings.Contains(b, "INSERT"):
			writer = b
		case strings.Contains(b, "READ_ONLY"):
			reader = b
		}
	}
	var want string
	for _, b := range readmeBlocks(t, "text") {
		if strings.HasPrefix(b, "snapshots\n") {
			want = b
		}
	}
	if create == "" || writer == "" || reader == "" || want == "" {
		t.Fatal("README: the commit-log section's three sql blocks and its text block not found")
	}
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) { readmeCommitLogPath(t, h, create, writer, reader, want) })
	}
}

func readmeCommitLogPath(t *testing.T, h host, create, writer, reader, want string) {
	root, runSQL := readmeCheckout(t, h)
	runSQL(create)
	var wg sync.WaitGroup
	outs, errs := make([]string, 4), make([]error, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = runReadmeSQL(h, filepath.Join(root, "moraine"), filepath.Join(root, "home"), writer)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	var kept []string
	for _, line := range strings.SplitAfter(runSQL(reader), "\n") {
		if !strings.Contains(line, " INFO moraine: ") {
			kept = append(kept, line)
		}
	}
	if got := strings.Join(kept, ""); got != want {
		t.Fatalf("README's commit-log reader printed\n%s\nthe README shows\n%s", got, want)
	}
}

// TestREADMEDuckLakePath runs the README's DuckLake section as written: its
// SQL through each host's shell --sql (build/duckdb-shell-v1.4.4, and
// build/duckdb-official-v1.4.4 over DuckDB's official libduckdb.so) from a
// checkout laid out as
// the README assumes (build/ in it, ../shared beside it), with the default
// extension directory under a fresh HOME, and compares the output with the
// README's. Then the demo lake, read through ATTACH as the README shows.
func TestREADMEDuckLakePath(t *testing.T) {
	var script, demo string
	for _, b := range readmeBlocks(t, "sql") {
		switch {
		case strings.Contains(b, "ducklake:moraine:./my-lake"):
			script = b
		case strings.Contains(b, "moraine:./moraine-demo"):
			demo = b
		}
	}
	texts := readmeBlocks(t, "text")
	if script == "" || demo == "" || len(texts) == 0 {
		t.Fatal("README: the DuckLake section's sql blocks and its text block not found")
	}
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) { readmeDuckLakePath(t, h, script, demo, texts[0]) })
	}
}

func readmeDuckLakePath(t *testing.T, h host, script, demo, want string) {
	root, runSQL := readmeCheckout(t, h)
	checkout := filepath.Join(root, "moraine")
	if got := runSQL(script); got != want {
		t.Fatalf("README's DuckLake script printed\n%s\nthe README shows\n%s", got, want)
	}
	for _, p := range []string{"moraine/my-lake", "moraine/my-lake-data", "home/.duckdb/extensions/" + version + "/" + runtime.GOOS + "_" + runtime.GOARCH + "/moraine.duckdb_extension"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("after the README's script (the catalog, the data, the installed extension): %v", err)
		}
	}
	moraine(t, "demo", "-dir", filepath.Join(checkout, "moraine-demo"))
	got := runSQL(demo)
	if lines := strings.Split(strings.TrimSpace(got), "\n"); lines[0] != "table_name" || !strings.Contains(got, "\nevent_log\n") || !strings.Contains(got, "\nusers\n") {
		t.Fatalf("README's read of the demo lake printed\n%s\nwant table_name, then the demo's tables event_log (events, renamed) and users", got)
	}
}
