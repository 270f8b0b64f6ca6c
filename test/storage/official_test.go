package storage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestNodeClient runs moraine as a Node.js user does (in DuckDB v1.4.4,
// whatever the package's version): DuckDB's official
// v1.4.4 Node client (@duckdb/node-api 1.4.4-r.4, installed into
// build/official/v1.4.4 by make from test/official's package-lock.json),
// which loads DuckDB's official libduckdb.so with local symbol scope.
// test/official/client.cjs installs moraine from the private repository,
// attaches a lake through DuckLake, writes (an insert that writes Parquet,
// an update), reads, time-travels, detaches and attaches again, and loads
// the extension into a second database of the same process, which must
// share the first one's Go runtime.
func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (the official client's test needs it; .ci/run installs it): %v", err)
	}
	work, home := t.TempDir(), t.TempDir()
	cmd := exec.Command(node, filepath.Join(repoRoot(), "test", "official", "client.cjs"), repository(),
		filepath.Join(repoRoot(), "..", "shared", "ducklake", "v1.4.4", "ducklake.duckdb_extension"), work)
	cmd.Env = append(os.Environ(), "HOME="+home, "NODE_PATH="+filepath.Join(officialNodeDir(), "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.cjs: %v\n%s%s", err, out, stderr.String())
	}
	var got struct {
		Counts, Travel, Snapshots, Reattached, Both, Runtime, Tables [][]*string
		Error                                                        *string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client.cjs printed %q: %v", out, err)
	}
	for _, c := range []struct {
		what string
		got  [][]*string
		want [][]string
	}{
		{"kinds", got.Counts, [][]string{{"bulk", "100000", "5000350000"}, {"login", "1", "2"}, {"logout", "1", "3"}, {"signup", "1", "1"}}},
		{"logins at version 2", got.Travel, [][]string{{"2"}}},
		{"snapshots", got.Snapshots, [][]string{{"5"}}},
		{"rows after detach and attach", got.Reattached, [][]string{{"100003"}}},
		{"rows of two lakes attached at once", got.Both, [][]string{{"100003", "10"}}},
		{"live catalogs seen from a second database", got.Runtime, [][]string{{"2"}}},
		{"tables read through moraine's own attach", got.Tables, [][]string{{"events"}}},
	} {
		if g := strs(c.got); !reflect.DeepEqual(g, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, g, c.want)
		}
	}
	if got.Error == nil || !strings.Contains(*got.Error, "/dev/null/nowhere") {
		t.Errorf("a bad attach: got error %v, want one naming the path", got.Error)
	}
	files, _ := filepath.Glob(filepath.Join(work, "data", "main", "events", "*.parquet"))
	if len(files) == 0 {
		t.Errorf("no Parquet file under %s after a 100,000-row insert", filepath.Join(work, "data"))
	}
	if _, err := os.Stat(filepath.Join(home, ".duckdb", "extensions", "v1.4.4")); err != nil {
		t.Errorf("INSTALL left nothing in the default extension directory: %v", err)
	}
}

func strs(rows [][]*string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			if v == nil {
				out[i][j] = "NULL"
			} else {
				out[i][j] = *v
			}
		}
	}
	return out
}

// The official host keeps DuckDB's symbols local, as Python and Node do: an
// extension that leaves them to its host (DuckLake's older, non-static
// build) fails to load there, while it loads in the duckdb-go host. Without
// this, the tests above could pass in a host that exports DuckDB's symbols
// and prove nothing about self-containment. (That build is for v1.4.4: the
// v1.4.4 hosts run it whatever the package's version.)
func TestOfficialHostKeepsDuckDBSymbolsLocal(t *testing.T) {
	old := filepath.Join(repoRoot(), "..", "shared", "ducklake", "ducklake.duckdb_extension")
	script := "LOAD '" + old + "';\nSELECT 42 AS answer;\n"
	for _, h := range []host{{"duckdb-go", filepath.Join(dir, "duckdb-shell-v1.4.4"), nil}, {"official", filepath.Join(dir, "duckdb-official-v1.4.4"), nil}} {
		cmd := exec.Command(h.shell, "--sql")
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		switch h.name {
		case "official":
			if err == nil || !strings.Contains(string(out), "undefined symbol") {
				t.Errorf("%s: loading a non-self-contained extension: %v\n%s; want it refused for an undefined symbol", h.name, err, out)
			}
		default:
			if err != nil || !strings.Contains(string(out), "42") {
				t.Errorf("%s: loading a non-self-contained extension: %v\n%s; want it loaded", h.name, err, out)
			}
		}
	}
}
