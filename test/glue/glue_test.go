// Package glue tests RFC 0024's "link, do not fork" from outside: a commit
// log that lives in a module of its own (testdata/countinglog, standing in
// for a private library: it imports moraine's public packages only) builds
// against this checkout, and its glue package builds into the storage
// extension with nothing of this repository edited (MORAINE_GO_GLUE, the
// route make extension-glue and moraine_commitlog take), which DuckDB
// processes then commit through.
package glue

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// An outside module implementing a provider against the public API builds,
// vets and passes the public acceptance suite (core/commitlogtest) offline
// (the module cache only: GOPROXY=off), with one replace to the checkout:
// the public packages stay importable, and a library can prove the
// contract.
func TestOutsideModuleBuilds(t *testing.T) {
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = filepath.Join("testdata", "countinglog")
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in testdata/countinglog: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The outside glue builds into a storage extension for DuckDB v1.4.4
// (named countinglog), which two DuckDB processes load and commit through
// DuckLake at the same time: every row lands, and the outside commit log
// counted the slots both processes offered.
func TestOutsideGlueBuildsAnExtension(t *testing.T) {
	build := os.Getenv("MORAINE_EXTENSION_DIR")
	if build == "" {
		t.Fatal("MORAINE_EXTENSION_DIR names the build directory (make test sets it): its DuckDB v1.4.4 shell and headers")
	}
	root := repoRoot(t)
	out := t.TempDir()
	// DuckDB's headers: the build's copy (nothing downloaded here).
	if err := os.Symlink(filepath.Join(build, "duckdb-v1.4.4"), filepath.Join(out, "duckdb-v1.4.4")); err != nil {
		t.Fatal(err)
	}
	glue := filepath.Join(root, "test", "glue", "testdata", "countinglog", "glue")
	for _, args := range [][]string{
		{"-S", root, "-B", filepath.Join(out, "cmake"), "-DMORAINE_OUTPUT_DIR=" + out, "-DMORAINE_GO_GLUE=" + glue,
			"-DMORAINE_STORAGE_NAME=countinglog", "-DMORAINE_DUCKDB_VERSIONS=v1.4.4"},
		{"--build", filepath.Join(out, "cmake"), "--target", "storage_extension_v1_4_4", "--parallel"},
	} {
		cmd := exec.Command("cmake", args...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cmake %v: %v\n%s", args, err, b)
		}
	}
	ext := filepath.Join(out, "v1.4.4", "countinglog.duckdb_extension")
	if _, err := os.Stat(filepath.Join(out, "repository", "v1.4.4", "linux_amd64", "countinglog.duckdb_extension")); err != nil {
		t.Fatalf("the glue build is not laid out in its repository: %v", err)
	}
	shell := filepath.Join(build, "duckdb-shell-v1.4.4")
	ducklake := filepath.Join(root, "..", "shared", "ducklake", "v1.4.4", "ducklake.duckdb_extension")
	lake, counts := t.TempDir(), filepath.Join(t.TempDir(), "offers")
	prelude := fmt.Sprintf("LOAD '%s';\nLOAD '%s';\nATTACH 'ducklake:moraine:%s/lake' AS lake (DATA_PATH '%s/data/');\n", ext, ducklake, lake, lake)
	run := func(script string) (string, error) {
		cmd := exec.Command(shell, "--setting", "extension_directory="+filepath.Join(lake, "ext"), "--sql")
		cmd.Stdin = strings.NewReader(prelude + script)
		cmd.Env = append(os.Environ(), "MORAINE_COUNTING_LOG="+counts)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if b, err := run("CREATE TABLE lake.t (writer INTEGER, i INTEGER);\n"); err != nil {
		t.Fatalf("creating the table: %v\n%s", err, b)
	}
	const writers, inserts = 2, 5
	var wg sync.WaitGroup
	errs := make([]error, writers)
	outs := make([]string, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sb strings.Builder
			for i := range inserts {
				fmt.Fprintf(&sb, "INSERT INTO lake.t VALUES (%d, %d);\n", w, i)
			}
			outs[w], errs[w] = run(sb.String())
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w])
		}
	}
	got, err := run("SELECT count(*) AS n, count(DISTINCT writer) AS writers FROM lake.t;\nSELECT role FROM moraine_info('__ducklake_metadata_lake');\n")
	if err != nil {
		t.Fatalf("reading: %v\n%s", err, got)
	}
	if want := fmt.Sprintf("n|writers\n%d|%d\nrole\ncommitter\n", writers*inserts, writers); !strings.Contains(got, want) {
		t.Fatalf("read back\n%s\nwant\n%s", got, want)
	}
	b, err := os.ReadFile(counts)
	if err != nil {
		t.Fatalf("the outside commit log counted nothing: %v", err)
	}
	pids, won := map[string]bool{}, 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, result, _ := strings.Cut(line, " ")
		pids[pid] = true
		if result == "true" {
			won++
		}
	}
	// The setup, both writers and the reader each offered slots (the
	// reader's attach commits nothing but may claim nothing either: at
	// least the writers' and the setup's processes).
	if len(pids) < writers+1 || won < writers*inserts+1 {
		t.Fatalf("the outside commit log saw %d processes and %d won slots:\n%s\nwant at least %d processes and %d won slots", len(pids), won, b, writers+1, writers*inserts+1)
	}
}
