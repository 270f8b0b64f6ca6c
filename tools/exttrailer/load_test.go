//go:build cgo

package main

// These tests load real extension files into the DuckDB that duckdb-go links
// into this test binary. They record, as assertions, the facts cshim/README.md
// states about loading and installing moraine.duckdb_extension.

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/internal/duckdbtest"
	"github.com/moraine-go/moraine/tools/exttrailer/extrepo"
	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

func host(t *testing.T) (platform, version string) { return duckdbtest.Host(t) }

// buildLibrary compiles the test extension's C source into a shared library.
func buildLibrary(t *testing.T) string { return duckdbtest.BuildTestLibrary(t, t.TempDir()) }

// makeExtension runs the exttrailer command on lib, writing dir/<name>.duckdb_extension.
func makeExtension(t *testing.T, lib, dir, name string, flags ...string) string {
	t.Helper()
	platform, _ := host(t)
	out := filepath.Join(dir, name+extrepo.FileSuffix)
	args := append([]string{"-in", lib, "-out", out, "-platform", platform, "-version", "0.0.1-test"}, flags...)
	if err := run(args); err != nil {
		t.Fatalf("exttrailer %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// hermetic points HOME at an empty directory for the test and returns DuckDB
// settings that keep extensions in dir; the caller checks home stays empty.
func hermetic(t *testing.T) (settings map[string]string, home string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	settings = duckdbtest.HermeticConfig(t.TempDir())
	settings["allow_unsigned_extensions"] = "true"
	return settings, home
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("DuckDB wrote into the home directory: %v", found)
	}
}

type extInfo struct {
	loaded, installed                         bool
	version, installPath, mode, installedFrom string
}

func moraineInfo(t *testing.T, db *sql.DB) extInfo {
	t.Helper()
	var e extInfo
	var path, mode, from sql.NullString
	err := db.QueryRow(`SELECT loaded, installed, extension_version, install_path, install_mode, installed_from
		FROM duckdb_extensions() WHERE extension_name = 'moraine'`).
		Scan(&e.loaded, &e.installed, &e.version, &path, &mode, &from)
	if err != nil {
		t.Fatal(err)
	}
	e.installPath, e.mode, e.installedFrom = path.String, mode.String, from.String
	return e
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func TestLoadUnsigned(t *testing.T) {
	settings, home := hermetic(t)
	ext := makeExtension(t, buildLibrary(t), t.TempDir(), "moraine")
	m, err := trailer.ReadFile(ext)
	if err != nil {
		t.Fatal(err)
	}
	if m.ABI != trailer.ABICStruct || m.Version != "v1.2.0" || m.ExtensionVersion != "0.0.1-test" {
		t.Fatalf("trailer %+v", m)
	}
	db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
	if _, err := db.Exec("LOAD " + sqlString(ext)); err != nil {
		t.Fatalf("LOAD: %v", err)
	}
	if e := moraineInfo(t, db); !e.loaded || e.version != "0.0.1-test" {
		t.Fatalf("after LOAD: %+v", e)
	}
	assertEmptyDir(t, home)
}

func TestLoadErrors(t *testing.T) {
	platform, version := host(t)
	lib := buildLibrary(t)
	dir := t.TempDir()
	noTrailer := filepath.Join(dir, "notrailer.duckdb_extension")
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noTrailer, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		file     string
		unsigned bool
		want     string
	}{
		{"no trailer", noTrailer, true,
			"The file is not a DuckDB extension. The metadata at the end of the file is invalid"},
		{"wrong platform", makeExtension(t, lib, filepath.Join(dir, "osx"), "moraine", "-platform", "osx_arm64"), true,
			fmt.Sprintf("The file was built for the platform 'osx_arm64', but we can only load extensions built for platform '%s'.", platform)},
		{"unsigned not allowed", makeExtension(t, lib, filepath.Join(dir, "ok"), "moraine"), false,
			"signature is either missing or invalid and unsigned extensions are disabled by configuration (allow_unsigned_extensions)"},
		{"C API too new", makeExtension(t, lib, filepath.Join(dir, "new"), "moraine", "-capi", "v1.6.0"), true,
			fmt.Sprintf("but we can only load extensions built for DuckDB C API '%s' and lower.", version)},
		{"ABI CPP", makeExtension(t, lib, filepath.Join(dir, "cpp"), "moraine", "-abi", "CPP", "-duckdb", version), true,
			"did not contain the expected entrypoint function 'moraine_duckdb_cpp_init'"},
		{"file name is not the entry point", makeExtension(t, lib, filepath.Join(dir, "other"), "othername"), true,
			`did not contain function "othername_init_c_api"`},
		{"not a .duckdb_extension file", lib, true,
			"DuckDB extensions are files ending with '.duckdb_extension'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			settings, _ := hermetic(t)
			if !c.unsigned {
				delete(settings, "allow_unsigned_extensions")
			}
			db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
			_, err := db.Exec("LOAD " + sqlString(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LOAD error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestRepositoryInstall lays out a private repository with extrepo.Layout and
// installs from it, both with INSTALL ... FROM and with
// custom_extension_repository, keeping everything out of $HOME.
func TestRepositoryInstall(t *testing.T) {
	platform, version := host(t)
	ext := makeExtension(t, buildLibrary(t), t.TempDir(), "moraine")
	repo := filepath.Join(t.TempDir(), "repository")
	if _, err := extrepo.Layout(repo, ext, version, platform); err != nil {
		t.Fatal(err)
	}

	t.Run("install from", func(t *testing.T) {
		settings, home := hermetic(t)
		db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
		if _, err := db.Exec("LOAD moraine"); err == nil {
			t.Fatal("LOAD moraine succeeded before INSTALL")
		}
		if _, err := db.Exec("INSTALL moraine FROM " + sqlString(repo)); err != nil {
			t.Fatalf("INSTALL: %v", err)
		}
		if _, err := db.Exec("LOAD moraine"); err != nil {
			t.Fatalf("LOAD after INSTALL: %v", err)
		}
		e := moraineInfo(t, db)
		wantPath := filepath.Join(settings["extension_directory"], version, platform, "moraine.duckdb_extension")
		if !e.loaded || !e.installed || e.mode != "REPOSITORY" || e.installedFrom != repo || e.installPath != wantPath {
			t.Fatalf("after INSTALL FROM + LOAD: %+v (want install path %s)", e, wantPath)
		}
		// Another database with the same extension_directory loads it without
		// installing again.
		db2 := duckdbtest.Open(t, duckdbtest.DSN("", settings))
		if _, err := db2.Exec("LOAD moraine"); err != nil {
			t.Fatalf("LOAD in a second database: %v", err)
		}
		assertEmptyDir(t, home)
	})

	t.Run("custom_extension_repository", func(t *testing.T) {
		settings, home := hermetic(t)
		settings["custom_extension_repository"] = repo
		db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
		if _, err := db.Exec("INSTALL moraine"); err != nil {
			t.Fatalf("INSTALL: %v", err)
		}
		if _, err := db.Exec("LOAD moraine"); err != nil {
			t.Fatalf("LOAD: %v", err)
		}
		if e := moraineInfo(t, db); !e.loaded || e.installedFrom != repo {
			t.Fatalf("%+v", e)
		}
		assertEmptyDir(t, home)
	})
}

// TestRepositoryLookup measures which files DuckDB reads from a local
// repository directory.
func TestRepositoryLookup(t *testing.T) {
	platform, version := host(t)
	lib := buildLibrary(t)
	v1 := makeExtension(t, lib, t.TempDir(), "moraine", "-version", "plain")
	v2 := makeExtension(t, lib, t.TempDir(), "moraine", "-version", "gzipped")
	layout := func(src string) string {
		repo := t.TempDir()
		if _, err := extrepo.Layout(repo, src, version, platform); err != nil {
			t.Fatal(err)
		}
		return extrepo.Path(repo, "moraine", version, platform)
	}
	install := func(t *testing.T, repo string) (extInfo, error) {
		settings, _ := hermetic(t)
		db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
		if _, err := db.Exec("INSTALL moraine FROM " + sqlString(repo)); err != nil {
			return extInfo{}, err
		}
		if _, err := db.Exec("LOAD moraine"); err != nil {
			return extInfo{}, err
		}
		return moraineInfo(t, db), nil
	}
	repoOf := func(p string) string { return filepath.Dir(filepath.Dir(filepath.Dir(p))) }

	t.Run("plain only", func(t *testing.T) {
		p := layout(v1)
		if err := os.Remove(p + ".gz"); err != nil {
			t.Fatal(err)
		}
		if e, err := install(t, repoOf(p)); err != nil || e.version != "plain" {
			t.Fatalf("%+v, %v", e, err)
		}
	})
	t.Run("gz only", func(t *testing.T) {
		p := layout(v2)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if e, err := install(t, repoOf(p)); err != nil || e.version != "gzipped" {
			t.Fatalf("%+v, %v", e, err)
		}
	})
	t.Run("both: gz wins", func(t *testing.T) {
		p := layout(v1)
		gzSrc := layout(v2) + ".gz"
		b, err := os.ReadFile(gzSrc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".gz", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if e, err := install(t, repoOf(p)); err != nil || e.version != "gzipped" {
			t.Fatalf("%+v, %v", e, err)
		}
	})
	t.Run("version directory is the DuckDB version", func(t *testing.T) {
		repo := t.TempDir()
		if _, err := extrepo.Layout(repo, v1, "v1.2.0", platform); err != nil {
			t.Fatal(err)
		}
		_, err := install(t, repo)
		want := filepath.Join(repo, version, platform, "moraine.duckdb_extension")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("INSTALL from a v1.2.0-only repository: %v\nwant an error naming %s", err, want)
		}
	})
}

func TestCommandErrors(t *testing.T) {
	lib := buildLibrary(t)
	dir := t.TempDir()
	ext := makeExtension(t, lib, dir, "moraine")
	base := []string{"-platform", "linux_amd64", "-version", "1"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-out", filepath.Join(dir, "x.duckdb_extension"), "-platform", "linux_amd64", "-version", "1"}, "-in is required"},
		{append([]string{"-in", lib, "-out", filepath.Join(dir, "x.so")}, base...), "must end in .duckdb_extension"},
		{append([]string{"-in", ext, "-out", filepath.Join(dir, "y.duckdb_extension")}, base...), "already ends with a DuckDB metadata trailer"},
		{append([]string{"-in", lib, "-out", filepath.Join(dir, "z.duckdb_extension"), "-abi", "CPP"}, base...), "needs -duckdb"},
		{append([]string{"-in", lib, "-out", filepath.Join(dir, "z.duckdb_extension"), "-abi", "RUST"}, base...), "ABI type"},
		{append([]string{"-in", lib, "-out", filepath.Join(dir, "z.duckdb_extension"), "-capi", "1.2"}, base...), "not of the form"},
		{append([]string{"-in", lib, "-out", filepath.Join(dir, "z.duckdb_extension"), "-repo", dir}, base...), "-repo needs -repo-duckdb"},
	}
	for _, c := range cases {
		err := run(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want error containing %q", c.args, err, c.want)
		}
	}
	// -repo lays out the repository in the same step.
	repo := filepath.Join(dir, "repo")
	out := filepath.Join(dir, "build", "moraine.duckdb_extension")
	if err := run(append([]string{"-in", lib, "-out", out, "-repo", repo, "-repo-duckdb", "v1.5.6,v2.0.0"}, base...)); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1.5.6", "v2.0.0"} {
		if _, err := os.Stat(extrepo.Path(repo, "moraine", v, "linux_amd64") + ".gz"); err != nil {
			t.Error(err)
		}
	}
}
