// Command capigen generates cshim/duckdb_capi.h, the C declaration of the
// function table DuckDB's C extension API hands to an extension
// (struct duckdb_ext_api_v1), from two inputs:
//
//   - the slot list: the table's functions in slot order, measured on running
//     DuckDB binaries (tools/capigen/slots/capi-v1-slots-duckdb-<version>.txt);
//   - duckdb.h of the DuckDB that duckdb-go links (from the
//     github.com/duckdb/duckdb-go-bindings module), for the exact prototypes.
//
// It checks that the slot list is a prefix of the newer list given by -next
// (DuckDB only appends slots) and fails otherwise.
//
// Usage, from anywhere inside the module:
//
//	go generate ./tools/capigen      # rewrite cshim/duckdb_capi.h
//	go run ./tools/capigen -check    # fail if cshim/duckdb_capi.h is stale
//
// Flags override the defaults: -slots, -next, -header, -out.
package main

//go:generate go run .

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	bindingsModule = "github.com/duckdb/duckdb-go-bindings"
	defaultSlots   = "tools/capigen/slots/capi-v1-slots-duckdb-1.5.6.txt"
	defaultNext    = "tools/capigen/slots/capi-v1-slots-duckdb-2.0.0.txt"
	defaultOut     = "cshim/duckdb_capi.h"
	regenerateHint = "go generate ./tools/capigen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "capigen:", err)
		os.Exit(1)
	}
}

// config holds resolved input and output paths.
type config struct {
	slots, next, header, out string
	check                    bool
}

func run(args []string) error {
	fs := flag.NewFlagSet("capigen", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.slots, "slots", "", "slot list the struct is generated from (default <module>/"+defaultSlots+")")
	fs.StringVar(&c.next, "next", "", "newer slot list that must extend -slots (default <module>/"+defaultNext+")")
	fs.StringVar(&c.header, "header", "", "duckdb.h (default: include/duckdb.h of the "+bindingsModule+" module)")
	fs.StringVar(&c.out, "out", "", "generated header (default <module>/"+defaultOut+")")
	fs.BoolVar(&c.check, "check", false, "do not write: fail if -out differs from what would be generated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := c.resolve(); err != nil {
		return err
	}
	want, err := generateFiles(c.slots, c.next, c.header)
	if err != nil {
		return err
	}
	if c.check {
		return checkFile(c.out, want)
	}
	return os.WriteFile(c.out, want, 0o644)
}

// resolve fills in default paths.
func (c *config) resolve() error {
	if c.slots != "" && c.next != "" && c.header != "" && c.out != "" {
		return nil
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	for _, p := range []struct {
		v   *string
		def string
	}{{&c.slots, defaultSlots}, {&c.next, defaultNext}, {&c.out, defaultOut}} {
		if *p.v == "" {
			*p.v = filepath.Join(root, filepath.FromSlash(p.def))
		}
	}
	if c.header == "" {
		dir, err := goOutput("list", "-m", "-f", "{{.Dir}}", bindingsModule)
		if err != nil {
			return err
		}
		if dir == "" {
			return fmt.Errorf("module %s is not in the module cache (go mod download %s)", bindingsModule, bindingsModule)
		}
		c.header = filepath.Join(dir, "include", "duckdb.h")
	}
	return nil
}

func moduleRoot() (string, error) {
	gomod, err := goOutput("env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run from the moraine module or pass -slots, -next, -header and -out")
	}
	return filepath.Dir(gomod), nil
}

func goOutput(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = ": " + strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("go %s: %v%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// generateFiles reads the inputs and returns the generated header.
func generateFiles(slotsPath, nextPath, headerPath string) ([]byte, error) {
	slots, err := readSlots(slotsPath)
	if err != nil {
		return nil, err
	}
	next, err := readSlots(nextPath)
	if err != nil {
		return nil, err
	}
	hdr, err := os.ReadFile(headerPath)
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(headerPath, hdr)
	if err != nil {
		return nil, err
	}
	return Generate(slots, next, h)
}

func readSlots(path string) (SlotList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return SlotList{}, err
	}
	return ParseSlots(filepath.Base(path), b)
}

// checkFile compares the file at path with want.
func checkFile(path string, want []byte) error {
	have, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (run %s)", err, regenerateHint)
	}
	if bytes.Equal(have, want) {
		return nil
	}
	hl := strings.Split(string(have), "\n")
	wl := strings.Split(string(want), "\n")
	for i := 0; i < len(hl) || i < len(wl); i++ {
		var h, w string
		if i < len(hl) {
			h = hl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if h != w || i >= len(hl) || i >= len(wl) {
			return fmt.Errorf("%s is stale (run %s); first difference at line %d:\n  have: %s\n  want: %s", path, regenerateHint, i+1, h, w)
		}
	}
	return fmt.Errorf("%s is stale (run %s)", path, regenerateHint)
}
