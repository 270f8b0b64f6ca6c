package main

import (
	"strings"
	"testing"
)

func TestParseSlots(t *testing.T) {
	l, err := ParseSlots("s.txt", []byte("duckdb_open\nduckdb_close\n"))
	if err != nil || len(l.Slots) != 2 || l.Slots[1] != "duckdb_close" {
		t.Fatalf("ParseSlots = %+v, %v", l, err)
	}
	for in, want := range map[string]string{
		"":                         "empty slot list",
		"a\n\nb\n":                 "s.txt:2: \"\" is not a C identifier",
		"a\nb c\n":                 "s.txt:2: \"b c\" is not a C identifier",
		"a\nb\na\n":                "s.txt:3: a already holds slot 0",
		"duckdb_open\n# comment\n": "s.txt:2:",
	} {
		if _, err := ParseSlots("s.txt", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSlots(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	base := SlotList{Name: "old", Slots: []string{"a", "b"}}
	if err := CheckPrefix(base, SlotList{Name: "new", Slots: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrefix(base, SlotList{Name: "new", Slots: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "fewer") {
		t.Fatalf("shorter list: %v", err)
	}
	err := CheckPrefix(base, SlotList{Name: "new", Slots: []string{"a", "x", "b"}})
	if err == nil || !strings.Contains(err.Error(), "slot 1 is b in old but x in new") {
		t.Fatalf("inserted slot: %v", err)
	}
}

const testHeader = `#ifndef TEST_H
#define TEST_H
// A header in the style of duckdb.h.
#define DUCKDB_API_VERSION_MAJOR 1
#define DUCKDB_API_VERSION_MINOR 5
#define DUCKDB_API_VERSION_PATCH 6
#ifndef DUCKDB_C_API
#define DUCKDB_C_API __attribute__((visibility("default")))
#endif
#define NOT_A_DECL "DUCKDB_C_API int fake(void);"

/* block comment mentioning DUCKDB_C_API int hidden(void); */
DUCKDB_C_API duckdb_state duckdb_open(const char *path, duckdb_database *out_database);

#if DUCKDB_API_VERSION_AT_LEAST(0, 9, 0)
DUCKDB_C_API const char *duckdb_library_version(void); // trailing comment
#endif

#if A
#if B
DUCKDB_C_API void duckdb_multi_line(duckdb_connection connection,
                                    idx_t   count /* inline comment */ ,
                                    char **out);
#elif C
DUCKDB_C_API void *duckdb_elif(void);
#else
DUCKDB_C_API void duckdb_else(void);
#endif
#endif

#ifdef X
DUCKDB_C_API int duckdb_twice(int a);
#else
DUCKDB_C_API long duckdb_twice(long a);
#endif

DUCKDB_C_API sel_t *duckdb_ptr_ret(duckdb_selection_vector \
sel);
#endif
`

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader("test.h", []byte(testHeader))
	if err != nil {
		t.Fatal(err)
	}
	if h.APIVersion != "1.5.6" {
		t.Errorf("APIVersion = %q", h.APIVersion)
	}
	want := map[string][]Decl{
		"duckdb_open": {{Name: "duckdb_open", Ret: "duckdb_state", Params: "const char *path, duckdb_database *out_database", Line: 13}},
		"duckdb_library_version": {{Name: "duckdb_library_version", Ret: "const char *", Params: "void",
			Cond: "DUCKDB_API_VERSION_AT_LEAST(0, 9, 0)", Line: 16}},
		"duckdb_multi_line": {{Name: "duckdb_multi_line", Ret: "void", Params: "duckdb_connection connection, idx_t count , char **out",
			Cond: "(A) && (B)", Line: 21}},
		"duckdb_elif": {{Name: "duckdb_elif", Ret: "void *", Params: "void", Cond: "(A) && (!(B) && (C))", Line: 25}},
		"duckdb_else": {{Name: "duckdb_else", Ret: "void", Params: "void", Cond: "(A) && (!(B) && !(C))", Line: 27}},
		"duckdb_twice": {
			{Name: "duckdb_twice", Ret: "int", Params: "int a", Cond: "defined(X)", Line: 32},
			{Name: "duckdb_twice", Ret: "long", Params: "long a", Cond: "!(defined(X))", Line: 34},
		},
		"duckdb_ptr_ret": {{Name: "duckdb_ptr_ret", Ret: "sel_t *", Params: "duckdb_selection_vector sel", Line: 37}},
	}
	if len(h.Decls) != len(want) {
		t.Errorf("found %d functions, want %d: %v", len(h.Decls), len(want), h.Decls)
	}
	for name, wd := range want {
		got := h.Decls[name]
		if len(got) != len(wd) {
			t.Errorf("%s: %+v, want %+v", name, got, wd)
			continue
		}
		for i := range wd {
			if got[i] != wd[i] {
				t.Errorf("%s:\n got %+v\nwant %+v", name, got[i], wd[i])
			}
		}
	}
	if m := h.Decls["duckdb_ptr_ret"][0].member(); m != "sel_t *(*duckdb_ptr_ret)(duckdb_selection_vector sel);" {
		t.Errorf("member = %s", m)
	}
	if m := h.Decls["duckdb_open"][0].member(); m != "duckdb_state (*duckdb_open)(const char *path, duckdb_database *out_database);" {
		t.Errorf("member = %s", m)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	for in, want := range map[string]string{
		"DUCKDB_C_API int f(void)\n":                        "t.h:1: declaration not terminated",
		"DUCKDB_C_API int f(\n#if X\nint a);\n#endif\n":     "t.h:2: preprocessor directive inside the declaration that starts on line 1",
		"#if X\nDUCKDB_C_API int f(void);\n":                "t.h:1: #if not closed",
		"#endif\n":                                          "t.h:1: #endif without #if",
		"#else\n":                                           "t.h:1: #else without #if",
		"#if X\n#else\n#else\n#endif\n":                     "t.h:3: #else after #else",
		"/* open\nDUCKDB_C_API int f(void);\n":              "line 1: unterminated comment",
		"DUCKDB_C_API int (void);\n":                        "t.h:1: cannot find return type and name",
		"DUCKDB_C_API f(void);\n":                           "t.h:1: cannot find return type and name",
		"DUCKDB_C_API int f(void) __attribute__((pure));\n": `unexpected "__attribute__((pure))" after the parameters of f`,
		"DUCKDB_C_API int f;\n":                             "has no parameter list",
		"#define S \"abc\n":                                 "unterminated \" literal",
	} {
		if _, err := ParseHeader("t.h", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHeader(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestGenerate(t *testing.T) {
	h, err := ParseHeader("test.h", []byte(testHeader))
	if err != nil {
		t.Fatal(err)
	}
	slots := SlotList{Name: "old.txt", Slots: []string{"duckdb_open", "duckdb_library_version", "duckdb_internal",
		"duckdb_multi_line", "duckdb_twice", "duckdb_ptr_ret"}}
	next := SlotList{Name: "new.txt", Slots: append(append([]string(nil), slots.Slots...), "duckdb_new")}
	out, err := Generate(slots, next, h)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"// Code generated by go run ./tools/capigen; DO NOT EDIT.\n",
		"// Slots:      old.txt (6 slots)\n",
		"// Extended by: new.txt (7 slots, the first 6 equal)\n",
		"// Prototypes: duckdb.h, C API surface 1.5.6 (5 of 6 slots declared)\n",
		"#define DUCKDB_EXT_API_V1_SLOT_COUNT 6\n",
		"typedef struct duckdb_ext_api_v1 {\n\tduckdb_state (*duckdb_open)(const char *path, duckdb_database *out_database); // slot 0\n" +
			"#if DUCKDB_API_VERSION_AT_LEAST(0, 9, 0)\n\tconst char *(*duckdb_library_version)(void); // slot 1\n#else\n\tvoid *duckdb_library_version; // slot 1\n#endif\n" +
			"\tvoid *duckdb_internal; // slot 2: not declared in duckdb.h\n" +
			"#if (A) && (B)\n\tvoid (*duckdb_multi_line)(duckdb_connection connection, idx_t count , char **out); // slot 3\n#else\n\tvoid *duckdb_multi_line; // slot 3\n#endif\n" +
			"#if defined(X)\n\tint (*duckdb_twice)(int a); // slot 4\n#elif !(defined(X))\n\tlong (*duckdb_twice)(long a); // slot 4\n#else\n\tvoid *duckdb_twice; // slot 4\n#endif\n" +
			"\tsel_t *(*duckdb_ptr_ret)(duckdb_selection_vector sel); // slot 5\n} duckdb_ext_api_v1;\n",
		"#define DUCKDB_EXT_API_V1_SLOTS(X) \\\n\tX(0, duckdb_open) \\\n\tX(1, duckdb_library_version) \\\n\tX(2, duckdb_internal) \\\n" +
			"\tX(3, duckdb_multi_line) \\\n\tX(4, duckdb_twice) \\\n\tX(5, duckdb_ptr_ret)\n\n",
		"_Static_assert(sizeof(duckdb_ext_api_v1) == DUCKDB_EXT_API_V1_SLOT_COUNT * sizeof(void *)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("generated header lacks:\n%s\n--- header:\n%s", want, s)
		}
	}
	// Consecutive members under one condition share one #if block.
	h2, err := ParseHeader("h2.h", []byte("#if V\nDUCKDB_C_API int a(void);\nDUCKDB_C_API int b(void);\n#endif\n"))
	if err != nil {
		t.Fatal(err)
	}
	two := SlotList{Name: "two", Slots: []string{"a", "b"}}
	out, err = Generate(two, two, h2)
	if err != nil {
		t.Fatal(err)
	}
	if want := "#if V\n\tint (*a)(void); // slot 0\n\tint (*b)(void); // slot 1\n#else\n\tvoid *a; // slot 0\n\tvoid *b; // slot 1\n#endif\n"; !strings.Contains(string(out), want) {
		t.Errorf("grouping: want\n%s\nin\n%s", want, out)
	}
	// A next list that is not an extension is refused.
	if _, err := Generate(slots, SlotList{Name: "bad", Slots: []string{"duckdb_open"}}, h); err == nil {
		t.Error("Generate accepted a next list shorter than the slot list")
	}
}
