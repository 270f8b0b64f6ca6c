package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseRefusesMalformedActionFiles(t *testing.T) {
	for name, file := range map[string]string{
		"statement before any action": "SELECT 1;\n-- action: a\nSELECT 2;\n",
		"statement without semicolon": "-- action: a\nSELECT 1\n",
		"no action":                   "-- a comment\n",
		"unterminated before":         "-- before h d\nSELECT 1;\n-- action: a\nSELECT 2;\n",
		"before after an action":      "-- action: a\nSELECT 1;\n-- before h d\nSELECT 2;\n-- end before\n",
		"end before alone":            "-- end before\n-- action: a\nSELECT 1;\n",
		"before without its ducklake": "-- before h\n-- end before\n-- action: a\nSELECT 1;\n",
	} {
		if _, err := parse(strings.NewReader(file)); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
	s, err := parse(strings.NewReader("-- before h d\nCREATE TABLE x (i INT);\n-- end before\n-- action: a\nSELECT 1;\nSELECT 2;\n-- action: b\nSELECT 3;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.before == nil || s.before.host != "h" || s.before.ducklake != "d" || len(s.before.sql) != 1 ||
		len(s.actions) != 2 || len(s.actions[0].sql) != 2 || s.actions[1].title != "b" {
		t.Fatalf("parsed %+v", s)
	}
}

func TestReportKeepsOnlyDuckLakesStatements(t *testing.T) {
	s := script{actions: []action{{title: "a", sql: []string{"SELECT 1;"}}, {title: "b", sql: []string{"SELECT 2;"}}}}
	out := strings.Join([]string{
		"j",
		`@@{"a":0,"c":2,"m":"SELECT 1"}`,
		`@@{"a":0,"c":7,"m":"INSERT INTO t VALUES ('0190d6a3-1111-7222-8333-444455556666', '/tmp/x/data/f.parquet', '2026-12-07 10:00:00.123+00')"}`,
		`@@{"a":0,"c":2,"m":"SELECT '@@' || to_json(x)"}`,
		`@@{"a":1,"c":2,"m":"SELECT 2"}`,
	}, "\n")
	var b bytes.Buffer
	if err := report(&b, s, []byte(out), "/tmp/x", "H\n"); err != nil {
		t.Fatal(err)
	}
	want := "H\n\n==== a\nuser> SELECT 1;\n-> 1 metadata statements\n[1] (conn 1) INSERT INTO t VALUES ('<uuid>', '<dir>/data/f.parquet', '<timestamp>')\n" +
		"\n==== b\nuser> SELECT 2;\n-> 0 metadata statements\n\n==== 2 actions, 1 metadata statements\n"
	if b.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := report(&b, s, []byte(`@@{"a":5,"c":2,"m":"x"}`), "/tmp/x", ""); err == nil {
		t.Fatal("a log line of an action that does not exist was accepted")
	}
}

// The committed contract is what DuckLake 1.0 sends: capturing it again
// with DuckDB v1.5.5's official library (and v1.4.4's for the 0.3 lake the
// migration starts from) gives the same file.
func TestTheCommittedContractIsCurrent(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, f := range []string{"build/duckdb-official-v1.5.5", "build/duckdb-official-v1.4.4"} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: build the DuckDB hosts first (make extension)", err)
		}
	}
	var b bytes.Buffer
	if err := run("build/duckdb-official-v1.5.5", "../shared/ducklake/v1.5.5/ducklake.duckdb_extension", "docs/ducklake-sql/actions-1.0.sql", &b); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("docs/ducklake-sql/contract-1.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Numbers of three digits or more are masked: the sizes of delete files
	// vary by a byte or two between captures (they hold data files' paths,
	// which hold UUIDs, compressed).
	mask := regexp.MustCompile(`\b\d{3,}\b`)
	got, want := mask.ReplaceAllString(b.String(), "N"), mask.ReplaceAllString(string(committed), "N")
	if got != want {
		gl, cl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) || i < len(cl); i++ {
			var g, c string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(cl) {
				c = cl[i]
			}
			if g != c {
				t.Fatalf("docs/ducklake-sql/contract-1.0.txt differs from a new capture at line %d:\n  committed: %q\n  captured:  %q\nregenerate it with the command in tools/ducklakesql's doc", i+1, c, g)
			}
		}
	}
}
