// Package extrepo lays out a private DuckDB extension repository: a directory
// that `INSTALL <name> FROM '<dir>'` (or `SET custom_extension_repository` and
// a plain `INSTALL <name>`) installs from.
//
// Measured with DuckDB 1.5.6 (see cshim/README.md and the tests of
// tools/exttrailer): for a local directory repository DuckDB looks up
//
//	<dir>/<duckdb version>/<platform>/<name>.duckdb_extension[.gz]
//
// where <duckdb version> is the version of the running DuckDB ("v1.5.6"), not
// the C API version in the trailer, also for C_STRUCT extensions. It accepts the
// file plain or gzip-compressed (it sniffs the content), and when both
// <name>.duckdb_extension and <name>.duckdb_extension.gz exist it installs the
// .gz. Layout writes both, with the same content, so the directory also works
// when served over HTTP (remote repositories are read as .gz).
package extrepo

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

// FileSuffix ends every extension file name; DuckDB derives the extension name,
// and so the entry point <name>_init_c_api, from what precedes it.
const FileSuffix = ".duckdb_extension"

// Path returns where the repository rooted at dir keeps the (uncompressed)
// extension file for the given DuckDB version and platform.
func Path(dir, name, duckdbVersion, platform string) string {
	return filepath.Join(dir, duckdbVersion, platform, name+FileSuffix)
}

// Layout copies the extension file extFile (a library with its trailer, named
// <name>.duckdb_extension) into the repository rooted at dir for DuckDB version
// duckdbVersion (e.g. "v1.5.6") and platform (e.g. "linux_amd64"), as
// Path(...) and Path(...)+".gz". It returns the uncompressed path.
//
// It refuses a file DuckDB would refuse to load there: no trailer, another
// platform, a CPP or C_STRUCT_UNSTABLE file built for another DuckDB version,
// or a C_STRUCT file asking for a C API newer than duckdbVersion.
func Layout(dir, extFile, duckdbVersion, platform string) (string, error) {
	base := filepath.Base(extFile)
	name, ok := strings.CutSuffix(base, FileSuffix)
	if !ok || name == "" {
		return "", fmt.Errorf("extrepo: %s: file name must be <name>%s", extFile, FileSuffix)
	}
	if duckdbVersion == "" || strings.ContainsAny(duckdbVersion, `/\`) || duckdbVersion == "." || duckdbVersion == ".." {
		return "", fmt.Errorf("extrepo: bad DuckDB version %q", duckdbVersion)
	}
	if platform == "" || strings.ContainsAny(platform, `/\`) || platform == "." || platform == ".." {
		return "", fmt.Errorf("extrepo: bad platform %q", platform)
	}
	b, err := os.ReadFile(extFile)
	if err != nil {
		return "", fmt.Errorf("extrepo: %w", err)
	}
	m, err := trailer.Parse(b)
	if err != nil {
		return "", fmt.Errorf("extrepo: %s: %w", extFile, err)
	}
	if err := m.Validate(); err != nil {
		return "", fmt.Errorf("extrepo: %s: %w", extFile, err)
	}
	if m.Platform != platform {
		return "", fmt.Errorf("extrepo: %s is built for platform %q, not %q", extFile, m.Platform, platform)
	}
	switch m.ABI {
	case trailer.ABICStruct:
		if newer, err := versionNewer(m.Version, duckdbVersion); err != nil {
			return "", fmt.Errorf("extrepo: %w", err)
		} else if newer {
			return "", fmt.Errorf("extrepo: %s needs C API %s, newer than DuckDB %s", extFile, m.Version, duckdbVersion)
		}
	default:
		if m.Version != duckdbVersion {
			return "", fmt.Errorf("extrepo: %s (ABI %s) is built for DuckDB %s, not %s", extFile, m.ABI, m.Version, duckdbVersion)
		}
	}

	dst := Path(dir, name, duckdbVersion, platform)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("extrepo: %w", err)
	}
	if err := writeFileAtomic(dst, b); err != nil {
		return "", fmt.Errorf("extrepo: %w", err)
	}
	gz, err := gzipBytes(b)
	if err != nil {
		return "", fmt.Errorf("extrepo: %w", err)
	}
	if err := writeFileAtomic(dst+".gz", gz); err != nil {
		return "", fmt.Errorf("extrepo: %w", err)
	}
	return dst, nil
}

// gzipBytes compresses b with an empty header (no name, no time), so the
// output depends on b alone.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// versionNewer reports whether version a ("v1.2.0") is newer than b.
func versionNewer(a, b string) (bool, error) {
	pa, err := parseVersion(a)
	if err != nil {
		return false, err
	}
	pb, err := parseVersion(b)
	if err != nil {
		return false, err
	}
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] > pb[i], nil
		}
	}
	return false, nil
}

func parseVersion(s string) ([3]int, error) {
	var v [3]int
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if !strings.HasPrefix(s, "v") || len(parts) != 3 {
		return v, fmt.Errorf("version %q is not of the form vMAJOR.MINOR.PATCH", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("version %q is not of the form vMAJOR.MINOR.PATCH", s)
		}
		v[i] = n
	}
	return v, nil
}

func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
