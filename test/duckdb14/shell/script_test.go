package shell

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	for _, c := range []struct {
		script string
		want   []string
	}{
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT 1;;\n ;", []string{"SELECT 1"}},
		{"SELECT 'a;b', \"c;d\"; SELECT 2;", []string{"SELECT 'a;b', \"c;d\"", "SELECT 2"}},
		{"SELECT 'it''s;'; SELECT 3", []string{"SELECT 'it''s;'", "SELECT 3"}},
		{"SELECT E'\\';'; SELECT 4", []string{"SELECT E'\\';'", "SELECT 4"}},
		{"-- a; comment\nSELECT 5; -- trailing; comment", []string{"-- a; comment\nSELECT 5"}},
		{"SELECT /* ; */ 6; /* only; a comment */", []string{"SELECT /* ; */ 6"}},
		{"CREATE MACRO m() AS $$;$$; SELECT $tag$;$tag$", []string{"CREATE MACRO m() AS $$;$$", "SELECT $tag$;$tag$"}},
		{"SELECT $1; SELECT 7", []string{"SELECT $1", "SELECT 7"}},
		{"SELECT 'unterminated; SELECT 8", []string{"SELECT 'unterminated; SELECT 8"}},
		{"", nil},
	} {
		if got := SplitStatements(c.script); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitStatements(%q) = %q, want %q", c.script, got, c.want)
		}
	}
}
