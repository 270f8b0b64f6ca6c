package sqlfn

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The Type values are MORAINE_TYPE_* of cshim/moraine.h, both ways: the
// header and the Go side cannot drift apart.
func TestTypesMatchTheHeader(t *testing.T) {
	want := map[string]Type{
		"NULL": TypeNull, "BOOLEAN": TypeBoolean, "BIGINT": TypeBigint, "UBIGINT": TypeUbigint, "DOUBLE": TypeDouble,
		"VARCHAR": TypeVarchar, "BLOB": TypeBlob, "TIMESTAMP_TZ": TypeTimestampTZ, "LIST": TypeList, "STRUCT": TypeStruct,
		"OTHER": TypeOther, "ANY": TypeAny, "ABSENT": TypeAbsent, "DUCKDB": TypeDuckDB,
	}
	if len(want) != len(typeNames) {
		t.Fatalf("this test knows %d types, the package names %d", len(want), len(typeNames))
	}
	f, err := os.Open(filepath.Join("..", "..", "..", "cshim", "moraine.h"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^#define\s+MORAINE_TYPE_([A-Z0-9_]+)\s+(\d+)\b`)
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[2])
		w, ok := want[m[1]]
		switch {
		case !ok:
			t.Errorf("moraine.h defines MORAINE_TYPE_%s %d; package sqlfn has no such type", m[1], v)
		case int(w) != v:
			t.Errorf("moraine.h defines MORAINE_TYPE_%s %d; package sqlfn says %d", m[1], v, int(w))
		}
		seen[m[1]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("moraine.h does not define MORAINE_TYPE_%s", name)
		}
	}
	// Pinned: the wire values never change.
	if TypeAbsent != 12 || TypeDuckDB != 13 || TypeTimestampTZ != 7 {
		t.Fatal("a pinned type value moved")
	}
}
