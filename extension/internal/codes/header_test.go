package codes

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// headerPath is the public C header, relative to this package.
var headerPath = filepath.Join("..", "..", "..", "cshim", "moraine.h")

var defineRE = regexp.MustCompile(`^#define\s+(MORAINE_[A-Z0-9_]+)\s+(\S+)`)

// headerCodes parses the error-code section of moraine.h: every #define
// from the "---- Error codes" banner to the next banner. It also returns
// the MORAINE_* names defined elsewhere in the header.
func headerCodes(t *testing.T) (codes map[string]int32, order []string, elsewhere map[string]bool) {
	t.Helper()
	f, err := os.Open(headerPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	codes, elsewhere = map[string]int32{}, map[string]bool{}
	in, seen := false, false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "/* ----") {
			in = strings.HasPrefix(text, "/* ---- Error codes")
			seen = seen || in
			continue
		}
		m := defineRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		if !in {
			elsewhere[m[1]] = true
			continue
		}
		v, err := strconv.ParseInt(m[2], 10, 32)
		if err != nil {
			t.Fatalf("%s:%d: %s is %q, not a decimal int32", headerPath, line, m[1], m[2])
		}
		if _, dup := codes[m[1]]; dup {
			t.Fatalf("%s:%d: %s defined twice", headerPath, line, m[1])
		}
		codes[m[1]] = int32(v)
		order = append(order, m[1])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatalf("%s: no \"/* ---- Error codes\" section", headerPath)
	}
	return codes, order, elsewhere
}

// Every MORAINE_* error code moraine.h defines has the value this package
// gives it, and every code here is defined there: the header and the Go
// side cannot drift apart.
func TestHeaderMatchesCodes(t *testing.T) {
	header, order, elsewhere := headerCodes(t)
	goCodes := map[string]int32{}
	for c := Code(0); c.String() != "UNKNOWN"; c++ {
		goCodes["MORAINE_"+c.String()] = int32(c)
	}
	if len(goCodes) != len(names) {
		t.Fatalf("the codes are not contiguous from 0: %d named, %d found", len(names), len(goCodes))
	}
	for _, name := range order {
		v, ok := goCodes[name]
		switch {
		case !ok:
			t.Errorf("moraine.h defines %s %d; extension/internal/codes has no such code", name, header[name])
		case v != header[name]:
			t.Errorf("moraine.h defines %s %d; extension/internal/codes says %d", name, header[name], v)
		}
	}
	for name, v := range goCodes {
		if _, ok := header[name]; !ok {
			t.Errorf("extension/internal/codes has %s = %d; moraine.h's error-code section does not define it", name, v)
		}
		if elsewhere[name] {
			t.Errorf("%s is defined outside moraine.h's error-code section", name)
		}
	}
	// The section is not trivially empty and pins the values named in
	// reference-moraine §6.4 (TestPinnedValues pins the Go side).
	if header["MORAINE_OK"] != 0 || header["MORAINE_INTERNAL"] != 8 || header["MORAINE_OPEN_RACED"] != 15 || header["MORAINE_OUTCOME_UNKNOWN"] != 16 || len(header) != 17 {
		t.Errorf("moraine.h error codes: %v", header)
	}
}
