package keys

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// randU64 favours the edges (0, 1, 0xff.., byte boundaries) over uniform
// values so order and carry bugs show.
func randU64(r *rand.Rand) uint64 {
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return 1<<64 - 1
	case 2:
		return uint64(r.IntN(4))
	case 3:
		return 1<<(8*uint(r.IntN(8))) + uint64(r.IntN(3)) - 1
	}
	return r.Uint64()
}

func randComps(r *rand.Rand, n int) []uint64 {
	if n == 0 {
		return nil
	}
	c := make([]uint64, n)
	for i := range c {
		c[i] = randU64(r)
	}
	return c
}

var versionedKinds = func() (out []Kind) {
	for _, k := range Kinds() {
		if k.Versioned() {
			out = append(out, k)
		}
	}
	return out
}()

var nameKinds = []NameKind{NameSchema, NameTable, NameView, NameMacro}

// randKey returns a random valid Key of shape s.
func randKey(r *rand.Rand, s Shape) Key {
	k := Key{Shape: s}
	switch s {
	case ShapeCurrent:
		all := Kinds()
		k.Kind = all[r.IntN(len(all))]
	case ShapeHistory:
		k.Kind = versionedKinds[r.IntN(len(versionedKinds))]
	case ShapeNameDir:
		k.NameKind = nameKinds[r.IntN(len(nameKinds))]
	}
	k.Comps = randComps(r, k.arity())
	if k.HasEnd() {
		k.End = randU64(r)
	}
	return k
}

func allShapes() []Shape {
	var out []Shape
	for s := ShapeInvalid + 1; s < numShapes; s++ {
		out = append(out, s)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		for _, s := range allShapes() {
			k := randKey(r, s)
			b, err := k.Encode()
			if err != nil {
				t.Fatalf("Encode(%+v): %v", k, err)
			}
			if b[0] != byte(s.Subspace()) {
				t.Fatalf("%v: first byte %02x, want subspace %02x", k, b[0], byte(s.Subspace()))
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode(%x) of %+v: %v", b, k, err)
			}
			if !reflect.DeepEqual(got, k) {
				t.Fatalf("round trip: %+v -> %x -> %+v", k, b, got)
			}
			if got.String() == "" || strings.Contains(got.String(), "invalid") {
				t.Fatalf("String of %x = %q", b, got.String())
			}
		}
	}
}

// The typed constructors agree with Key.Encode.
func TestConstructorsMatchKey(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	enc := func(k Key) []byte {
		b, err := k.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := 0; i < 1000; i++ {
		a, b, c, d, e := randU64(r), randU64(r), randU64(r), randU64(r), randU64(r)
		for _, kind := range Kinds() {
			comps := randComps(r, kind.Arity())
			if got, want := Current(kind, comps...), enc(Key{Shape: ShapeCurrent, Kind: kind, Comps: comps}); !bytes.Equal(got, want) {
				t.Fatalf("Current(%v, %v) = %x, want %x", kind, comps, got, want)
			}
			if kind.Versioned() {
				if got, want := History(kind, e, comps...), enc(Key{Shape: ShapeHistory, Kind: kind, Comps: comps, End: e}); !bytes.Equal(got, want) {
					t.Fatalf("History(%v, %d, %v) = %x, want %x", kind, e, comps, got, want)
				}
			}
		}
		for _, nk := range nameKinds {
			if got, want := NameDirHash(nk, a, b), enc(Key{Shape: ShapeNameDir, NameKind: nk, Comps: []uint64{a, b}}); !bytes.Equal(got, want) {
				t.Fatalf("NameDirHash = %x, want %x", got, want)
			}
		}
		pairs := []struct {
			got  []byte
			want Key
		}{
			{Snapshot(a), Key{Shape: ShapeSnapshot, Comps: []uint64{a}}},
			{GcFile(a), Key{Shape: ShapeGcFile, Comps: []uint64{a}}},
			{InlineLiveInsert(a, b, c, d), Key{Shape: ShapeInlineLiveInsert, Comps: []uint64{a, b, c, d}}},
			{InlineLiveDelete(a, b), Key{Shape: ShapeInlineLiveDelete, Comps: []uint64{a, b}}},
			{InlineArchivedInsert(a, b, c, d, e), Key{Shape: ShapeInlineArchivedInsert, Comps: []uint64{a, b, c, d}, End: e}},
			{InlineArchivedDelete(a, b, e), Key{Shape: ShapeInlineArchivedDelete, Comps: []uint64{a, b}, End: e}},
			{DeleteTarget(a, b, c), Key{Shape: ShapeDeleteTarget, Comps: []uint64{a, b, c}}},
			{SchemaVersion(a, b), Key{Shape: ShapeSchemaVersion, Comps: []uint64{a, b}}},
			{Changelog(a), Key{Shape: ShapeChangelog, Comps: []uint64{a}}},
		}
		for _, p := range pairs {
			if want := enc(p.want); !bytes.Equal(p.got, want) {
				t.Fatalf("%v: constructor %x, Key.Encode %x", p.want, p.got, want)
			}
		}
	}
}

func cmpU64s(a, b []uint64) int { return slices.Compare(a, b) }

// Within one shape (and kind), byte order is component order (then end).
func TestOrdering(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		for _, s := range allShapes() {
			a := randKey(r, s)
			b := randKey(r, s)
			b.Kind, b.NameKind = a.Kind, a.NameKind
			b.Comps = randComps(r, a.arity())
			// Share a random-length leading run so ties in early components
			// are exercised.
			if n := len(a.Comps); n > 0 {
				copy(b.Comps, a.Comps[:r.IntN(n+1)])
			}
			if r.IntN(4) == 0 {
				b.Comps = slices.Clone(a.Comps)
			}
			ab, _ := a.Encode()
			bb, _ := b.Encode()
			want := cmpU64s(append(slices.Clone(a.Comps), a.End), append(slices.Clone(b.Comps), b.End))
			if got := bytes.Compare(ab, bb); got != want {
				t.Fatalf("%v vs %v: bytes.Compare = %d, component order %d", a, b, got, want)
			}
		}
	}
	// Kinds sort by their byte; a kind's keys are contiguous.
	kinds := Kinds()
	for i := 1; i < len(kinds); i++ {
		hi := Current(kinds[i-1], slices.Repeat([]uint64{1<<64 - 1}, kinds[i-1].Arity())...)
		lo := Current(kinds[i], make([]uint64, kinds[i].Arity())...)
		if bytes.Compare(hi, lo) >= 0 {
			t.Errorf("largest %v key %x not below smallest %v key %x", kinds[i-1], hi, kinds[i], lo)
		}
	}
}

func TestPrefixesBoundTheirKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 5000; i++ {
		k := randKey(r, ShapeCurrent)
		n := r.IntN(k.arity() + 1)
		p := CurrentPrefix(k.Kind, k.Comps[:n]...)
		b, _ := k.Encode()
		start, end := PrefixRange(p)
		if !bytes.HasPrefix(b, p) || bytes.Compare(b, start) < 0 || (end != nil && bytes.Compare(b, end) >= 0) {
			t.Fatalf("%v (%x) outside prefix range [%x, %x)", k, b, start, end)
		}
		// The other shapes' and kinds' keys are outside it.
		o := randKey(r, allShapes()[r.IntN(len(allShapes()))])
		ob, _ := o.Encode()
		if bytes.HasPrefix(ob, p) != (bytes.Compare(ob, start) >= 0 && (end == nil || bytes.Compare(ob, end) < 0)) {
			t.Fatalf("%x: prefix membership and range membership of %x disagree", p, ob)
		}
	}
	for _, s := range allShapes() {
		k := randKey(r, s)
		b, _ := k.Encode()
		if !bytes.HasPrefix(b, SubspacePrefix(s.Subspace())) {
			t.Errorf("%v not under its subspace prefix", k)
		}
	}
	if !bytes.HasPrefix(GcFile(3), GcFilePrefix()) || bytes.HasPrefix(GcFile(3), CurrentEntityPrefix()) {
		t.Error("gc-file keys must be under GcFilePrefix and not CurrentEntityPrefix")
	}
	if !bytes.HasPrefix(CurrentTable(3), CurrentEntityPrefix()) {
		t.Error("current table not under CurrentEntityPrefix")
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"ff", ""},
		{"ffff", ""},
		{"00", "01"},
		{"01", "02"},
		{"fe", "ff"},
		{"01ff", "02"},
		{"0102", "0103"},
		{"00ffff", "01"},
		{"0402030000000000000007", "0402030000000000000008"},
		{"04020300000000000000ff", "04020300000000000001"},
	} {
		in := unhex(t, c.in)
		orig := slices.Clone(in)
		got := PrefixEnd(in)
		var want []byte
		if c.want != "" {
			want = unhex(t, c.want)
		}
		if !bytes.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("PrefixEnd(%s) = %x, want %s", c.in, got, c.want)
		}
		if !bytes.Equal(in, orig) {
			t.Errorf("PrefixEnd(%s) modified its input", c.in)
		}
		if got != nil {
			got[0]++ // must not alias the input
			if !bytes.Equal(in, orig) {
				t.Errorf("PrefixEnd(%s) aliases its input", c.in)
			}
		}
	}
	if PrefixEnd(nil) != nil {
		t.Error("PrefixEnd(nil) != nil")
	}
	// Property: PrefixEnd(p) > every extension of p, and is itself not an
	// extension of p.
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 20000; i++ {
		p := make([]byte, r.IntN(5))
		for j := range p {
			p[j] = []byte{0, 1, 0xfe, 0xff, byte(r.Uint32())}[r.IntN(5)]
		}
		end := PrefixEnd(p)
		ext := append(slices.Clone(p), bytes.Repeat([]byte{0xff}, r.IntN(4))...)
		if end == nil {
			if strings.Trim(string(p), "\xff") != "" {
				t.Fatalf("PrefixEnd(%x) = nil", p)
			}
			continue
		}
		if bytes.Compare(ext, end) >= 0 || bytes.HasPrefix(end, p) || bytes.Compare(end, p) <= 0 {
			t.Fatalf("PrefixEnd(%x) = %x does not bound %x", p, end, ext)
		}
	}
}

func TestHistoryConversion(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 5000; i++ {
		kind := versionedKinds[r.IntN(len(versionedKinds))]
		comps := randComps(r, kind.Arity())
		end := randU64(r)
		cur := Current(kind, comps...)
		h, err := ToHistory(cur, end)
		if err != nil || !bytes.Equal(h, History(kind, end, comps...)) {
			t.Fatalf("ToHistory(%x, %d) = %x, %v", cur, end, h, err)
		}
		back, gotEnd, err := ToCurrent(h)
		if err != nil || !bytes.Equal(back, cur) || gotEnd != end {
			t.Fatalf("ToCurrent(%x) = %x, %d, %v", h, back, gotEnd, err)
		}

		a, b, c, d := randU64(r), randU64(r), randU64(r), randU64(r)
		for _, p := range [][2][]byte{
			{InlineLiveInsert(a, b, c, d), InlineArchivedInsert(a, b, c, d, end)},
			{InlineLiveDelete(a, b), InlineArchivedDelete(a, b, end)},
		} {
			h, err := ToHistory(p[0], end)
			if err != nil || !bytes.Equal(h, p[1]) {
				t.Fatalf("ToHistory(%x) = %x, %v; want %x", p[0], h, err, p[1])
			}
			back, gotEnd, err := ToCurrent(h)
			if err != nil || !bytes.Equal(back, p[0]) || gotEnd != end {
				t.Fatalf("ToCurrent(%x) = %x, %d, %v", h, back, gotEnd, err)
			}
		}
	}
	// Keys with no history form.
	for _, k := range [][]byte{
		CurrentTag(1), CurrentTableStats(1), CurrentOption(0, 0), CurrentMapping(1, 2),
		CurrentFileColumnStats(1, 2, 3), CurrentTableColumnStats(1, 2),
		GcFile(1), Snapshot(1), Head(), NameDir(NameTable, 1, "t"), History(KindTable, 2, 1),
	} {
		if _, err := ToHistory(k, 5); !errors.Is(err, ErrInvalid) {
			t.Errorf("ToHistory(%s) = %v, want ErrInvalid", Describe(k), err)
		}
	}
	for _, k := range [][]byte{CurrentTable(1), InlineLiveDelete(1, 2), Changelog(1)} {
		if _, _, err := ToCurrent(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("ToCurrent(%s) = %v, want ErrInvalid", Describe(k), err)
		}
	}
	if _, err := ToHistory([]byte{0x04, 0x02}, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ToHistory(garbage) = %v, want ErrCorrupt", err)
	}
	if _, _, err := ToCurrent([]byte{0x05, 0x03, 1}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ToCurrent(garbage) = %v, want ErrCorrupt", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct{ hex, why string }{
		{"", "empty"},
		{"00", "unknown subspace"},
		{"01", "unknown subspace"},
		{"0a", "unknown subspace"},
		{"ff", "unknown subspace"},
		{"02", "sys without discriminant"},
		{"0201", "unknown sys discriminant"},
		{"0206", "unknown sys discriminant"},
		{"020200", "trailing bytes after sys/format"},
		{"03", "snapshot without id"},
		{"03 00000000000000", "snapshot id truncated"},
		{"03 000000000000000000", "snapshot trailing byte"},
		{"04", "current without discriminant"},
		{"0401", "unknown current discriminant"},
		{"0404", "unknown current discriminant"},
		{"0402", "current entity without kind"},
		{"040200" + u1, "unknown kind 00"},
		{"040201" + u1, "unknown kind 01"},
		{"040211" + u1, "unknown kind 11"},
		{"040203", "table without id"},
		{"040203" + u1 + u1, "table with two ids"},
		{"040205" + u1, "column with one id"},
		{"040209" + u1 + u1, "file column stats with two ids"},
		{"0403", "gc file without id"},
		{"0403" + u1 + "00", "gc file trailing byte"},
		{"05", "history without kind"},
		{"0500" + u1 + u1, "history unknown kind"},
		{"0503" + u1, "history table without end"},
		{"0503" + u1 + u1 + u1, "history table trailing component"},
		{"050a" + u1 + u1, "history of unversioned table_stats"},
		{"050c" + u1 + u1, "history of unversioned tag"},
		{"050d" + u1 + u1 + u1, "history of unversioned option"},
		{"0510" + u1 + u1 + u1, "history of unversioned mapping"},
		{"06", "inline without discriminants"},
		{"0603", "inline without operation"},
		{"060202" + u1 + u1 + u1 + u1, "unknown inline state"},
		{"060304" + u1 + u1, "unknown inline operation"},
		{"060302" + u1 + u1 + u1, "live insert with 3 components"},
		{"060402" + u1 + u1 + u1 + u1, "archived insert without end"},
		{"060303" + u1 + u1 + u1, "live delete with an end"},
		{"060403" + u1 + u1, "archived delete without end"},
		{"07", "index without discriminant"},
		{"0702", "unknown index discriminant (legacy unique index)"},
		{"0703", "unknown index discriminant (legacy multi index)"},
		{"0704", "name directory without kind"},
		{"070406" + u1 + u1, "unknown name kind"},
		{"070401" + u1 + u1, "unknown name kind"},
		{"070403" + u1, "name directory without hash"},
		{"0705" + u1 + u1, "delete target with 2 components"},
		{"08" + u1, "schema version with 1 component"},
		{"09", "changelog without id"},
		{"09" + u1 + u1, "changelog with 2 components"},
	} {
		b := unhex(t, c.hex)
		k, err := Decode(b)
		if err == nil {
			t.Errorf("Decode(%x) (%s) = %v, want an error", b, c.why, k)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "key: ") {
			t.Errorf("Decode(%x) (%s) error %q does not wrap ErrCorrupt with a key: prefix", b, c.why, err)
		}
		if !reflect.DeepEqual(k, Key{}) {
			t.Errorf("Decode(%x) returned %+v with its error", b, k)
		}
	}
}

func TestEncodeRejectsInvalidKey(t *testing.T) {
	for _, k := range []Key{
		{},
		{Shape: numShapes},
		{Shape: ShapeCurrent, Kind: 0x11, Comps: []uint64{1}},
		{Shape: ShapeCurrent, Kind: KindTable},
		{Shape: ShapeCurrent, Kind: KindTable, Comps: []uint64{1, 2}},
		{Shape: ShapeCurrent, Kind: KindTable, Comps: []uint64{1}, End: 3},
		{Shape: ShapeHistory, Kind: KindTag, Comps: []uint64{1}, End: 3},
		{Shape: ShapeSnapshot, Kind: KindTable, Comps: []uint64{1}},
		{Shape: ShapeSnapshot, NameKind: NameTable, Comps: []uint64{1}},
		{Shape: ShapeNameDir, Comps: []uint64{1, 2}},
		{Shape: ShapeNameDir, NameKind: 9, Comps: []uint64{1, 2}},
		{Shape: ShapeFormat, Comps: []uint64{1}},
	} {
		if b, err := k.Encode(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Encode(%+v) = %x, %v; want ErrInvalid", k, b, err)
		}
	}
}

func TestConstructorsPanicOnMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"Current unknown kind":        func() { Current(0x11, 1) },
		"Current wrong arity":         func() { Current(KindColumn, 1) },
		"Current too many":            func() { Current(KindTable, 1, 2) },
		"History unversioned":         func() { History(KindTag, 2, 1) },
		"History wrong arity":         func() { History(KindColumn, 2, 1) },
		"CurrentPrefix too many":      func() { CurrentPrefix(KindTable, 1, 2) },
		"HistoryPrefix unversioned":   func() { HistoryPrefix(KindTableStats) },
		"NameDir unknown kind":        func() { NameDir(0x09, 0, "x") },
		"NameDirPrefix too many":      func() { NameDirPrefix(NameTable, 1, 2, 3) },
		"DeleteTargetPrefix too many": func() { DeleteTargetPrefix(1, 2, 3, 4) },
		"InlineLiveDeletePrefix":      func() { InlineLiveDeletePrefix(1, 2, 3) },
		"SchemaVersionPrefix":         func() { SchemaVersionPrefix(1, 2, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestKinds(t *testing.T) {
	ks := Kinds()
	if len(ks) != 19 || ks[0] != KindSchema || ks[15] != KindInlinedTable || ks[18] != KindFileVariantStats {
		t.Fatalf("Kinds() = %v", ks)
	}
	var versioned, unversioned []string
	for _, k := range ks {
		if !k.Valid() || k.Arity() != len(k.Components()) || k.Arity() == 0 {
			t.Errorf("%v: valid %v arity %d components %v", k, k.Valid(), k.Arity(), k.Components())
		}
		if k.Versioned() {
			versioned = append(versioned, k.String())
		} else {
			unversioned = append(unversioned, k.String())
		}
	}
	if got := strings.Join(versioned, ","); got != "schema,table,view,column,partition,data_file,delete_file,sort,macro" {
		t.Errorf("versioned kinds: %s", got)
	}
	if got := strings.Join(unversioned, ","); got != "file_column_stats,table_stats,table_column_stats,tag,option,mapping,inlined_table,inlined_delete_table,inlined_file_delete,file_variant_stats" {
		t.Errorf("unversioned kinds: %s", got)
	}
	if Kind(0x15).Valid() || Kind(0x15).Arity() != 0 || Kind(0x15).String() != "kind(0x15)" {
		t.Error("kind 0x15 must be unknown")
	}
	if Describe([]byte{0x0a}) == "" || !strings.HasPrefix(Describe([]byte{0x0a}), "corrupt key 0a") {
		t.Errorf("Describe(garbage) = %q", Describe([]byte{0x0a}))
	}
	if Describe(CurrentColumn(7, 3)) != "current/column/7/3" {
		t.Errorf("Describe = %q", Describe(CurrentColumn(7, 3)))
	}
}
