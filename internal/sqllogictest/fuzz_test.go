package sqllogictest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: the parser never panics, and every error it returns is a
// *ParseError naming a line of the input. Seeds: every file in testdata.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"parse", "pass", "fail", "skip", "fake", "duckdb"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.test"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
		}
	}
	f.Add("loop i 0 1\n\nforeach x a\n\nendloop\n")
	f.Add("concurrentloop i 0 2\n\nonlyif i>=1&&i<>3\nstatement ok\nx\n\nendloop\n\nmode skip\n\nquery Q\nx\n")
	f.Add("set ignore_error_messages a, b c\n\nreset label x\n\nunzip a.gz\n\ntags t\n\ntest-env A b\n")
	f.Fuzz(func(t *testing.T, text string) {
		file, err := Parse("fuzz.test", text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 1 || pe.Line > countLines(text)+1 {
				t.Fatalf("error line %d outside the input (%d lines): %v", pe.Line, countLines(text), err)
			}
			return
		}
		var walk func([]Record)
		walk = func(recs []Record) {
			for _, r := range recs {
				if r.Kind == 0 || r.Line < 1 {
					t.Fatalf("bad record %+v", r)
				}
				walk(r.Body)
			}
		}
		walk(file.Records)
	})
}

func countLines(s string) int {
	n := 1
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
		}
	}
	return n
}
