package storage

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// In both hosts of the package's release (every release of
// duckdb-versions.txt, v1.5.5 included), the storage extension installs
// from the private repository into a fresh extension directory (the file
// of that release: INSTALL picks repository/<version>/), loads, and serves
// a lake the Go API wrote through ATTACH 'moraine:...' (READ_ONLY): its
// tables, its snapshots, and the reader role.
func TestInstallLoadAndAttachReadOnly(t *testing.T) {
	lake := demoLake(t)
	script := `SELECT version() AS v;
INSTALL moraine FROM '` + repository() + `';
LOAD moraine;
ATTACH 'moraine:` + lake + `' AS m (READ_ONLY);
SELECT table_name FROM m.ducklake_table WHERE end_snapshot IS NULL ORDER BY table_name;
SELECT count(*) > 2 AS several_snapshots FROM m.ducklake_snapshot;
SELECT role, read_only FROM moraine_info('m');
`
	want := "v\n" + version + "\ntable_name\nevent_log\nusers\nseveral_snapshots\ntrue\nrole|read_only\nreader|true\n"
	for _, h := range hosts() {
		ext := t.TempDir()
		cmd := exec.Command(h.shell, "--setting", "extension_directory="+ext, "--sql")
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("%s: %v\n%s\nwant\n%s", h.name, err, out, want)
			continue
		}
		if _, err := os.Stat(filepath.Join(ext, version, runtime.GOOS+"_"+runtime.GOARCH, "moraine.duckdb_extension")); err != nil {
			t.Errorf("%s: INSTALL left no %s extension: %v", h.name, version, err)
		}
	}
}
