//go:build cgo

package main

// These tests check cshim/duckdb_capi.h against the DuckDB that duckdb-go
// links into this test binary (with -rdynamic, so its C API is exported).

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/moraine-go/moraine/internal/duckdbtest"
	"github.com/moraine-go/moraine/tools/capigen/internal/dlsym"
	"github.com/moraine-go/moraine/tools/exttrailer/trailer"
)

func cshimDir(t *testing.T) string {
	t.Helper()
	root, err := duckdbtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "cshim")
}

func committedSlots(t *testing.T) SlotList {
	t.Helper()
	l, err := readSlots(filepath.Join("slots", "capi-v1-slots-duckdb-1.5.6.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHeaderUpToDate is `capigen -check`: the committed header is what the
// generator produces from the committed slot lists and the linked duckdb.h.
func TestHeaderUpToDate(t *testing.T) {
	if err := run([]string{"-check"}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDetectsStaleHeader(t *testing.T) {
	stale := filepath.Join(t.TempDir(), "duckdb_capi.h")
	b, err := os.ReadFile(filepath.Join(cshimDir(t), "duckdb_capi.h"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("// slot 7\n"), []byte("// slot seven\n"), 1)
	if err := os.WriteFile(stale, b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = run([]string{"-check", "-out", stale})
	if err == nil || !strings.Contains(err.Error(), "is stale (run go generate ./tools/capigen)") {
		t.Fatalf("run -check on a stale header = %v", err)
	}
}

func compile(t *testing.T, args ...string) {
	t.Helper()
	inc, err := duckdbtest.IncludeDir()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"-I", cshimDir(t), "-I", inc}, args...)
	if out, err := exec.Command(duckdbtest.CC(), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", duckdbtest.CC(), strings.Join(args, " "), err, out)
	}
}

// TestHeaderCompiles compiles the header with gcc -std=c11 -Wall -Werror under
// the macro settings an includer may choose, and checks every member's type
// against the function duckdb.h declares.
func TestHeaderCompiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "include.c")
	if err := os.WriteFile(src, []byte("#include \"duckdb_capi.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, defs := range [][]string{
		nil,
		{"-DDUCKDB_API_NO_DEPRECATED"},
		{"-DDUCKDB_API_VERSION_MAJOR=1", "-DDUCKDB_API_VERSION_MINOR=2", "-DDUCKDB_API_VERSION_PATCH=0"},
		{"-DDUCKDB_API_ALLOW_UNSTABLE=1"},
	} {
		compile(t, append([]string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", src}, defs...)...)
	}
	compile(t, "-std=c11", "-Wall", "-Werror", "-fsyntax-only", filepath.Join("testdata", "typecheck.c"))
	if _, err := exec.LookPath("c++"); err == nil {
		compile(t, "-x", "c++", "-std=c++11", "-Wall", "-Werror", "-fsyntax-only", src)
	}
}

// TestSlotOffsets: every member sits at slot*sizeof(void*), as the C compiler
// lays the header out, and every slot names a function the DuckDB host exports.
func TestSlotOffsets(t *testing.T) {
	slots := committedSlots(t)
	bin := filepath.Join(t.TempDir(), "offsets")
	compile(t, "-std=c11", "-Wall", "-Werror", "-o", bin, filepath.Join("testdata", "offsets.c"))
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	ptr := uint64(unsafe.Sizeof(uintptr(0)))
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "sizeof" {
			if size, _ := strconv.ParseUint(f[1], 10, 64); size != uint64(len(slots.Slots))*ptr {
				t.Errorf("sizeof(duckdb_ext_api_v1) = %d, want %d", size, uint64(len(slots.Slots))*ptr)
			}
			continue
		}
		if len(f) != 3 {
			t.Fatalf("unexpected output line %q", sc.Text())
		}
		i, _ := strconv.Atoi(f[0])
		off, _ := strconv.ParseUint(f[2], 10, 64)
		if i != n || f[1] != slots.Slots[i] {
			t.Fatalf("line %d is slot %d %s, want slot %d %s", n, i, f[1], n, slots.Slots[n])
		}
		if off != uint64(i)*ptr {
			t.Errorf("offsetof(%s) = %d, want %d (slot %d)", f[1], off, uint64(i)*ptr, i)
		}
		n++
	}
	if n != len(slots.Slots) {
		t.Fatalf("offsets printed for %d members, want %d", n, len(slots.Slots))
	}

	var missing []string
	for _, s := range slots.Slots {
		if dlsym.Lookup(s) == 0 {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d slots are not exported by the DuckDB host: %v", len(missing), missing)
	}
}

// TestGetAPISlots loads a test extension into DuckDB that compares every
// member of the table get_api(info, "v1.2.0") returns with the address the
// host exports under the member's name (see testdata/slotcheck.c).
func TestGetAPISlots(t *testing.T) {
	var platform string
	dir := t.TempDir()
	settings := duckdbtest.HermeticConfig(dir)
	settings["allow_unsigned_extensions"] = "true"
	db := duckdbtest.Open(t, duckdbtest.DSN("", settings))
	if err := db.QueryRow("SELECT platform FROM pragma_platform()").Scan(&platform); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "slotcheck.so")
	duckdbtest.BuildSharedLibrary(t, lib, []string{filepath.Join("testdata", "slotcheck.c")}, cshimDir(t))
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	b, err = trailer.Append(b, trailer.Metadata{Platform: platform, Version: "v1.2.0", ExtensionVersion: "slotcheck", ABI: trailer.ABICStruct})
	if err != nil {
		t.Fatal(err)
	}
	ext := filepath.Join(dir, "moraine.duckdb_extension")
	if err := os.WriteFile(ext, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("LOAD '" + ext + "'")
	if err == nil {
		t.Fatal("the slotcheck extension loaded; it should always report through its load error")
	}
	m := regexp.MustCompile(`slotcheck: checked=(\d+) unexported=(\d+) mismatched=(\d+)(.*)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("LOAD error without a slotcheck report: %v", err)
	}
	slots := committedSlots(t)
	if m[1] != strconv.Itoa(len(slots.Slots)) || m[2] != "0" || m[3] != "0" {
		t.Fatalf("get_api table vs exported symbols: checked=%s unexported=%s mismatched=%s (of %d slots)%s",
			m[1], m[2], m[3], len(slots.Slots), m[4])
	}
	t.Logf("all %s slots of get_api(\"v1.2.0\") match the exported functions", m[1])
}
