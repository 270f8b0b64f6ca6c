package catalogpb_test

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/moraine-go/moraine/core/internal/catalogpb"
)

const protoPath = "../../../proto/moraine/store/v1/store.proto"

var (
	messageRE  = regexp.MustCompile(`^message\s+(\w+)\s*\{`)
	fieldRE    = regexp.MustCompile(`^(?:optional\s+|repeated\s+)?(?:map\s*<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;`)
	reservedRE = regexp.MustCompile(`^reserved\s+([\d\s,]+);`)
)

// parseProto reads the message and field declarations (full message name ->
// field name -> number) and the reserved numbers of store.proto. It knows
// just the subset of the language the file uses.
func parseProto(t *testing.T) (map[string]map[string]int, map[string][]int) {
	t.Helper()
	src, err := os.ReadFile(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]map[string]int{}
	reserved := map[string][]int{}
	var stack []string // open blocks: message names, or "" for oneofs
	msg := func() string {
		var parts []string
		for _, s := range stack {
			if s != "" {
				parts = append(parts, s)
			}
		}
		return "moraine.store.v1." + strings.Join(parts, ".")
	}
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "":
		case messageRE.MatchString(line):
			stack = append(stack, messageRE.FindStringSubmatch(line)[1])
			fields[msg()] = map[string]int{}
			if strings.HasSuffix(line, "}") {
				stack = stack[:len(stack)-1]
			}
		case strings.HasPrefix(line, "oneof "):
			stack = append(stack, "")
		case line == "}":
			stack = stack[:len(stack)-1]
		case reservedRE.MatchString(line):
			for _, n := range strings.Split(reservedRE.FindStringSubmatch(line)[1], ",") {
				v, _ := strconv.Atoi(strings.TrimSpace(n))
				reserved[msg()] = append(reserved[msg()], v)
			}
		case len(stack) > 0 && fieldRE.MatchString(line):
			m := fieldRE.FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[2])
			fields[msg()][m[1]] = n
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unbalanced braces in %s", protoPath)
	}
	return fields, reserved
}

// TestGeneratedMatchesProto fails when store.proto and the checked-in
// store.pb.go disagree on messages, field names or numbers: run `make proto`.
func TestGeneratedMatchesProto(t *testing.T) {
	want, reserved := parseProto(t)
	fd := catalogpb.File_moraine_store_v1_store_proto
	got := map[string]map[string]int{}
	gotReserved := map[string][]int{}
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			f := map[string]int{}
			for j := 0; j < m.Fields().Len(); j++ {
				fl := m.Fields().Get(j)
				f[string(fl.Name())] = int(fl.Number())
			}
			got[string(m.FullName())] = f
			rr := m.ReservedRanges()
			for j := 0; j < rr.Len(); j++ {
				for n := rr.Get(j)[0]; n < rr.Get(j)[1]; n++ {
					gotReserved[string(m.FullName())] = append(gotReserved[string(m.FullName())], int(n))
				}
			}
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	if len(want) < 30 {
		t.Fatalf("parsed only %d messages from %s; parser out of date?", len(want), protoPath)
	}
	names := func(m map[string]map[string]int) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if a, b := strings.Join(names(want), " "), strings.Join(names(got), " "); a != b {
		t.Fatalf("messages differ (run `make proto`):\n proto: %s\n gen:   %s", a, b)
	}
	for name, wf := range want {
		gf := got[name]
		for f, n := range wf {
			if gf[f] != n {
				t.Errorf("%s.%s: proto says %d, generated code %d (run `make proto`)", name, f, n, gf[f])
			}
		}
		if len(gf) != len(wf) {
			t.Errorf("%s: proto has %d fields, generated code %d (run `make proto`)", name, len(wf), len(gf))
		}
		if a, b := reserved[name], gotReserved[name]; !slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))) {
			t.Errorf("%s: reserved %v in proto, %v generated (run `make proto`)", name, a, b)
		}
	}
}
