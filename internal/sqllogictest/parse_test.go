package sqllogictest

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseAllRecords(t *testing.T) {
	path := filepath.Join("testdata", "parse", "all_records.test")
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.AllowSkip != "this file is only parsed, never run" {
		t.Errorf("AllowSkip = %q", f.AllowSkip)
	}
	type want struct {
		kind  Kind
		line  int
		check func(r Record) string // returns a complaint, or ""
	}
	eq := func(what string, got, w any) string {
		if !reflect.DeepEqual(got, w) {
			return what + ": got " + strings.ReplaceAll(strings.TrimSpace(fmtAny(got)), "\n", " ") + ", want " + fmtAny(w)
		}
		return ""
	}
	wants := []want{
		{KindTags, 5, func(r Record) string { return eq("tags", f.Tags, []string{"parse", "example"}) }},
		{KindStatement, 7, func(r Record) string {
			return eq("stmt", []any{r.Expect, r.SQL, r.Conn, r.Error, r.HasSep}, []any{ExpectOK, "CREATE TABLE t (i INTEGER, s VARCHAR)", "", "", false})
		}},
		{KindStatement, 10, func(r Record) string {
			return eq("stmt", []any{r.SQL, r.Conn}, []any{"INSERT INTO t\nVALUES (1, 'a')", "con1"})
		}},
		{KindStatement, 14, func(r Record) string {
			return eq("stmt", []any{r.Expect, r.Error, r.SepLine}, []any{ExpectError, "Catalog Error", 16})
		}},
		{KindStatement, 19, func(r Record) string {
			return eq("stmt", []any{r.Expect, r.Error, r.HasSep}, []any{ExpectError, "", true})
		}},
		{KindStatement, 23, func(r Record) string {
			return eq("stmt", []any{r.Expect, r.Conn, r.Error}, []any{ExpectMaybe, "con2", "<REGEX>:.*x.*\nsecond line"})
		}},
		{KindQuery, 29, func(r Record) string {
			return eq("query", []any{r.Types, r.Sort, r.SQL, r.Results, r.Conn, r.Label},
				[]any{"IT", RowSort, "SELECT i, s\nFROM t", []string{"1\ta", "2\t(empty)"}, "", ""})
		}},
		{KindQuery, 36, func(r Record) string {
			return eq("query", []any{r.Types, r.Sort, r.Conn, r.Results}, []any{"I", NoSort, "con1", []string{"1"}})
		}},
		{KindQuery, 41, func(r Record) string {
			return eq("query", []any{r.Types, r.Sort, r.Label, r.HasSep}, []any{"R", ValueSort, "mylabel", false})
		}},
		{KindQuery, 46, func(r Record) string {
			return eq("conditions", r.Conditions, []Condition{{OnlyIf: false, Engine: "duckdb"}, {OnlyIf: true, Engine: "sqlite"}})
		}},
		{KindRequire, 51, func(r Record) string { return eq("args", r.Args(), []string{"json"}) }},
		{KindRequire, 53, func(r Record) string { return eq("args", r.Args(), []string{"vector_size", "512"}) }},
		{KindRequireEnv, 55, func(r Record) string { return eq("args", r.Args(), []string{"MORAINE_X"}) }},
		{KindRequireEnv, 57, func(r Record) string { return eq("args", r.Args(), []string{"MORAINE_Y", "yes"}) }},
		{KindLoad, 59, func(r Record) string { return eq("args", r.Args(), []string{"__TEST_DIR__/db.duckdb"}) }},
		{KindLoad, 61, func(r Record) string { return eq("args", r.Args(), []string{"__TEST_DIR__/db.duckdb", "readonly"}) }},
		{KindRestart, 63, nil},
		{KindRestart, 65, func(r Record) string { return eq("args", r.Args(), []string{"no_extension_load"}) }},
		{KindReconnect, 67, nil},
		// mode skip and unskip act while parsing: no records
		{KindSleep, 73, func(r Record) string { return eq("args", r.Args(), []string{"2", "millisecond"}) }},
		{KindHashThreshold, 75, nil},
		{KindLoop, 77, func(r Record) string {
			if c := eq("loop", []any{r.IsForeach, r.LoopVars, r.LoopStart, r.LoopEnd, len(r.Body)}, []any{false, []string{"i"}, 0, 3, 1}); c != "" {
				return c
			}
			in := r.Body[0]
			if c := eq("inner", []any{in.Kind, in.Line, in.IsForeach, in.LoopVar, in.LoopVars, in.LoopValues, len(in.Body)},
				[]any{KindLoop, 79, true, "t,u", []string{"t", "u"}, []string{"a,1", "b,2"}, 1}); c != "" {
				return c
			}
			return eq("innermost", []any{in.Body[0].Line, in.Body[0].SQL}, []any{81, "SELECT ${i}, '${t}', ${u}"})
		}},
		{KindLoop, 88, func(r Record) string {
			return eq("foreach", r.LoopValues, []string{"tinyint", "smallint", "integer", "bigint", "hugeint",
				"utinyint", "usmallint", "uinteger", "ubigint", "uhugeint", "BOOLEAN"})
		}},
		{KindLoop, 97, func(r Record) string {
			if c := eq("concurrentloop", []any{r.Concurrent, r.LoopVar, r.LoopStart, r.LoopEnd, len(r.Body)}, []any{true, "i", 0, 2, 1}); c != "" {
				return c
			}
			return eq("conditions", r.Body[0].Conditions, []Condition{{OnlyIf: true, Var: "i", Op: "=", Value: "1"}, {OnlyIf: true, Var: "i", Op: "<>", Value: "0"}})
		}},
		{KindTestEnv, 105, func(r Record) string { return eq("args", r.Args(), []string{"MORAINE_Z", "{UUID}.db"}) }},
		{KindSet, 107, func(r Record) string { return eq("messages", r.SetValues, []string{"HTTP", "Unable to connect"}) }},
		{KindReset, 109, func(r Record) string { return eq("args", r.Args(), []string{"label", "mylabel"}) }},
		{KindUnzip, 111, func(r Record) string { return eq("args", r.Args(), []string{"data/x.db.gz", "__TEST_DIR__/x.db"}) }},
		{KindMode, 113, func(r Record) string { return eq("args", r.Args(), []string{"output_result"}) }},
		{KindHalt, 115, nil},
	}
	if len(f.Records) != len(wants) {
		for _, r := range f.Records {
			t.Logf("record kind %d at line %d", r.Kind, r.Line)
		}
		t.Fatalf("%d records, want %d", len(f.Records), len(wants))
	}
	for i, w := range wants {
		r := f.Records[i]
		if r.Kind != w.kind || r.Line != w.line {
			t.Errorf("record %d: kind %d line %d, want kind %d line %d", i, r.Kind, r.Line, w.kind, w.line)
			continue
		}
		if w.check != nil {
			if c := w.check(r); c != "" {
				t.Errorf("record %d (line %d): %s", i, r.Line, c)
			}
		}
	}
}

func fmtAny(v any) string {
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(v), "\n", `\n`), "\t", `\t`))
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"bad_statement_kind.test":    `bad_statement_kind.test:4: statement "okay": want ok, error or maybe`,
		"bad_ok_with_result.test":    "bad_ok_with_result.test:3: statement ok cannot have an expected result",
		"bad_query_types.test":       `bad_query_types.test:3: query column types "it"`,
		"bad_unknown_command.test":   `bad_unknown_command.test:4: unknown command "frobnicate"`,
		"bad_missing_endloop.test":   "bad_missing_endloop.test:1: loop without endloop",
		"bad_stray_endloop.test":     "bad_stray_endloop.test:4: endloop without loop or foreach",
		"bad_no_blank_line.test":     "bad_no_blank_line.test:2: records must be separated by an empty line (after line 1)",
		"bad_loop_bounds.test":       `bad_loop_bounds.test:1: loop bounds "a" and "b" must be integers`,
		"bad_empty_sql.test":         "bad_empty_sql.test:1: statement without SQL",
		"bad_condition.test":         "bad_condition.test:1: skipif/onlyif must be in the form of x=y",
		"bad_allow_skip_reason.test": "bad_allow_skip_reason.test:1: # allow-skip: needs a reason",
		"bad_skipif.test":            "bad_skipif.test:1: skipif needs an engine name or a loop condition",
		"bad_mode.test":              `bad_mode.test:1: unknown mode "fast"`,
		"bad_whitespace_line.test":   "bad_whitespace_line.test:4: a line of white space separates nothing",
	}
	for name, want := range cases {
		_, err := ParseFile(filepath.Join("testdata", "parse", name))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v is not a *ParseError", name, err)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant it to contain %q", name, err, want)
		}
		if !strings.HasPrefix(err.Error(), filepath.Join("testdata", "parse", name)+":") {
			t.Errorf("%s: error %q does not start with the file name", name, err)
		}
	}
}

func TestParseInline(t *testing.T) {
	// CRLF line endings, a final record without a trailing newline, a
	// comment line ending the SQL, and "#" inside expected results.
	f, err := Parse("inline.test", "query T\r\nSELECT '#'\r\n----\r\n#\r\n\r\nstatement ok\r\nSELECT 1\r\n# done")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 2 || f.Records[0].Results[0] != "#" || f.Records[1].SQL != "SELECT 1" {
		t.Fatalf("%+v", f.Records)
	}
	// As DuckDB: a line of white space is not empty, so it is a result (and
	// part of SQL); mode skip passes over records without parsing them.
	f, err = Parse("ws.test", "query T\nSELECT ' '\n----\n \n\nmode skip\n\nquery ZZ\nnot parsed\n\nmode unskip\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 1 || !reflect.DeepEqual(f.Records[0].Results, []string{" "}) || f.Skipped != 1 {
		t.Fatalf("%+v skipped %d", f.Records, f.Skipped)
	}
	// A statement skipif leaves out is parsed only when it runs.
	f, err = Parse("cond.test", "skipif duckdb\nquery ZZ\nSELECT 1\n")
	if err != nil || len(f.Records) != 1 || f.Records[0].Kind != KindInvalid || !strings.Contains(f.Records[0].Error, `query column types "ZZ"`) {
		t.Fatalf("%+v, %v", f, err)
	}
}
