// Command exttrailer turns a shared library into a loadable DuckDB extension
// file by appending DuckDB's 512-byte metadata trailer (see package trailer),
// and optionally lays the result out as a private extension repository (see
// package extrepo).
//
//	exttrailer -in build/libmoraine.so -out build/moraine.duckdb_extension \
//	    -platform linux_amd64 -capi v1.2.0 -version 0.1.0 -abi C_STRUCT \
//	    [-repo build/repository -repo-duckdb v1.5.6]
//
// The input must not already carry a trailer. The output is written to a
// temporary file beside it and renamed into place. The file name of the output
// decides the entry point DuckDB looks up (<name>_init_c_api for moraine.duckdb_extension),
// so it must be <extension name>.duckdb_extension.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moraine-go/moraine/tools/exttrailer/extrepo"
	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "exttrailer:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("exttrailer", flag.ContinueOnError)
	in := fs.String("in", "", "input shared library (required)")
	out := fs.String("out", "", "output file, <name>.duckdb_extension (required)")
	platform := fs.String("platform", "", "DuckDB platform, e.g. linux_amd64 (required)")
	capi := fs.String("capi", "v1.2.0", "C API version the extension requests (ABI C_STRUCT)")
	duckdb := fs.String("duckdb", "", "exact DuckDB version (ABI CPP and C_STRUCT_UNSTABLE)")
	version := fs.String("version", "", "extension version (required)")
	abi := fs.String("abi", trailer.ABICStruct, "ABI type: C_STRUCT, CPP or C_STRUCT_UNSTABLE")
	repo := fs.String("repo", "", "also lay out a private extension repository in this directory")
	repoDuckDB := fs.String("repo-duckdb", "", "DuckDB version directory of the repository, e.g. v1.5.6 (with -repo; repeatable as a comma-separated list)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for name, v := range map[string]string{"-in": *in, "-out": *out, "-platform": *platform, "-version": *version} {
		if v == "" {
			return fmt.Errorf("%s is required", name)
		}
	}
	if !strings.HasSuffix(*out, extrepo.FileSuffix) {
		return fmt.Errorf("-out %q must end in %s (DuckDB derives the entry point from the file name)", *out, extrepo.FileSuffix)
	}
	m := trailer.Metadata{Platform: *platform, ExtensionVersion: *version, ABI: *abi}
	switch *abi {
	case trailer.ABICPP, trailer.ABICStructUnstable:
		if *duckdb == "" {
			return fmt.Errorf("ABI %s needs -duckdb (the exact DuckDB version)", *abi)
		}
		m.Version = *duckdb
	case trailer.ABICStruct:
		if *duckdb != "" {
			return errors.New("-duckdb is for ABI CPP and C_STRUCT_UNSTABLE; ABI C_STRUCT records the C API version (-capi)")
		}
		m.Version = *capi
	default:
		return fmt.Errorf("unknown ABI type %q (want %s, %s or %s)", *abi, trailer.ABICStruct, trailer.ABICPP, trailer.ABICStructUnstable)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	lib, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	if _, err := trailer.Parse(lib); err == nil {
		return fmt.Errorf("%s already ends with a DuckDB metadata trailer", *in)
	}
	b, err := trailer.Append(lib, m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(*out, b, 0o755); err != nil {
		return err
	}
	if *repo != "" {
		if *repoDuckDB == "" {
			return errors.New("-repo needs -repo-duckdb (the DuckDB version directory, e.g. v1.5.6)")
		}
		for _, v := range strings.Split(*repoDuckDB, ",") {
			if _, err := extrepo.Layout(*repo, *out, v, *platform); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFileAtomic writes b to a temporary file in path's directory and renames
// it to path.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
