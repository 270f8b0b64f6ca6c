package extrepo

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

func writeExt(t *testing.T, dir, name string, m trailer.Metadata) string {
	t.Helper()
	b, err := trailer.Append([]byte("\x7fELF fake library"), m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var cstruct = trailer.Metadata{Platform: "linux_amd64", Version: "v1.2.0", ExtensionVersion: "0.1.0", ABI: trailer.ABICStruct}

func TestLayout(t *testing.T) {
	src := writeExt(t, t.TempDir(), "moraine.duckdb_extension", cstruct)
	repo := filepath.Join(t.TempDir(), "repo")
	got, err := Layout(repo, src, "v1.5.6", "linux_amd64")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(repo, "v1.5.6", "linux_amd64", "moraine.duckdb_extension")
	if got != want || Path(repo, "moraine", "v1.5.6", "linux_amd64") != want {
		t.Fatalf("Layout = %s, want %s", got, want)
	}
	orig, _ := os.ReadFile(src)
	plain, err := os.ReadFile(want)
	if err != nil || !bytes.Equal(plain, orig) {
		t.Fatalf("plain copy differs (%v)", err)
	}
	gzf, err := os.Open(want + ".gz")
	if err != nil {
		t.Fatal(err)
	}
	defer gzf.Close()
	zr, err := gzip.NewReader(gzf)
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unz, orig) {
		t.Fatalf("gz copy differs (%v)", err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Fatalf("gzip header carries name %q / time %v; want none (reproducible output)", zr.Name, zr.ModTime)
	}
	// Laying out again (another build) replaces the files; a second DuckDB
	// version gets its own directory.
	if _, err := Layout(repo, src, "v1.5.6", "linux_amd64"); err != nil {
		t.Fatal(err)
	}
	if _, err := Layout(repo, src, "v2.0.0", "linux_amd64"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "v2.0.0", "linux_amd64", "moraine.duckdb_extension.gz")); err != nil {
		t.Fatal(err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Join(repo, "v1.5.6", "linux_amd64"))
	if len(entries) != 2 {
		t.Fatalf("repository directory holds %d entries, want 2", len(entries))
	}
}

func TestLayoutRefuses(t *testing.T) {
	dir := t.TempDir()
	cpp := cstruct
	cpp.ABI, cpp.Version = trailer.ABICPP, "v1.4.4"
	newCAPI := cstruct
	newCAPI.Version = "v1.6.0"
	noTrailer := filepath.Join(dir, "plain.duckdb_extension")
	if err := os.WriteFile(noTrailer, bytes.Repeat([]byte{1}, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file, version, platform, want string
	}{
		{"bad name", writeExt(t, dir, "moraine.so", cstruct), "v1.5.6", "linux_amd64", "file name must be"},
		{"no trailer", noTrailer, "v1.5.6", "linux_amd64", "no DuckDB extension metadata trailer"},
		{"platform", writeExt(t, dir, "a.duckdb_extension", cstruct), "v1.5.6", "osx_arm64", `built for platform "linux_amd64", not "osx_arm64"`},
		{"capi newer", writeExt(t, dir, "b.duckdb_extension", newCAPI), "v1.5.6", "linux_amd64", "needs C API v1.6.0, newer than DuckDB v1.5.6"},
		{"cpp version", writeExt(t, dir, "c.duckdb_extension", cpp), "v1.5.6", "linux_amd64", "built for DuckDB v1.4.4, not v1.5.6"},
		{"bad version", writeExt(t, dir, "d.duckdb_extension", cstruct), "../x", "linux_amd64", "bad DuckDB version"},
		{"bad platform", writeExt(t, dir, "e.duckdb_extension", cstruct), "v1.5.6", "a/b", "bad platform"},
	}
	for _, c := range cases {
		_, err := Layout(filepath.Join(dir, "repo"), c.file, c.version, c.platform)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Layout = %v, want error containing %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "repo")); !os.IsNotExist(err) {
		t.Errorf("refused layouts created the repository directory (%v)", err)
	}
}

func TestVersionNewer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"v1.2.0", "v1.5.6", false}, {"v1.5.6", "v1.5.6", false}, {"v1.6.0", "v1.5.6", true},
		{"v2.0.0", "v1.10.0", true}, {"v1.10.0", "v1.9.9", true},
	} {
		got, err := versionNewer(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("versionNewer(%s, %s) = %v, %v", c.a, c.b, got, err)
		}
	}
	if _, err := versionNewer("1.2", "v1.2.0"); err == nil {
		t.Error("versionNewer accepted 1.2")
	}
}
