package shell

import (
	"fmt"
	"io"
	"strings"
)

// SplitStatements cuts a SQL script into its statements at the semicolons
// that end them: not inside '...' or "..." (doubled quotes escape), E'...'
// backslash escapes, $tag$...$tag$ bodies, -- line comments or /* */
// comments. Statements are returned trimmed, empty ones dropped; the text
// after the last semicolon is a statement too.
func SplitStatements(script string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(script[start:end]); s != "" && !onlyComments(s) {
			out = append(out, s)
		}
	}
	for i := 0; i < len(script); i++ {
		switch c := script[i]; {
		case c == '\'' || c == '"':
			escapes := c == '\'' && i > 0 && (script[i-1] == 'E' || script[i-1] == 'e')
			i = endOfQuoted(script, i, c, escapes)
		case c == '-' && strings.HasPrefix(script[i:], "--"):
			if j := strings.IndexByte(script[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(script)
			}
		case c == '/' && strings.HasPrefix(script[i:], "/*"):
			if j := strings.Index(script[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(script)
			}
		case c == '$':
			if tag, ok := dollarTag(script[i:]); ok {
				if j := strings.Index(script[i+len(tag):], tag); j >= 0 {
					i += len(tag) + j + len(tag) - 1
				} else {
					i = len(script)
				}
			}
		case c == ';':
			emit(i)
			start = i + 1
		}
	}
	emit(len(script))
	return out
}

// endOfQuoted returns the index of the quote closing the one at i.
func endOfQuoted(s string, i int, q byte, escapes bool) int {
	for j := i + 1; j < len(s); j++ {
		switch {
		case escapes && s[j] == '\\':
			j++
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j++
		case s[j] == q:
			return j
		}
	}
	return len(s)
}

// dollarTag reports the $tag$ opening s ($$ included).
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9':
		default:
			return "", false
		}
	}
	return "", false
}

// onlyComments reports a piece of script that is comments and space.
func onlyComments(s string) bool {
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case strings.HasPrefix(s, "--"):
			j := strings.IndexByte(s, '\n')
			if j < 0 {
				return true
			}
			s = s[j:]
		case strings.HasPrefix(s, "/*"):
			j := strings.Index(s, "*/")
			if j < 0 {
				return true
			}
			s = s[j+2:]
		default:
			return false
		}
	}
	return true
}

// runScript runs a SQL script statement by statement on one connection and
// writes each result as DuckDB's CLI does in list mode: a header line, then
// one line per row, values separated by "|", NULL as "NULL" (the row
// counts and empty status results of INSERT, CREATE, ATTACH and the like
// are not printed). With echo, each statement is printed first, after
// "D " as the CLI's prompt shows it. It stops at the first error and
// returns it, naming the statement.
func runScript(c Conn, script string, echo bool, w io.Writer) error {
	for _, stmt := range SplitStatements(script) {
		if echo {
			fmt.Fprintf(w, "D %s;\n", stmt)
		}
		r := query(c, stmt)
		if r.Error != "" {
			return fmt.Errorf("%s\n  in: %s", r.Error, stmt)
		}
		if len(r.Columns) == 0 || isStatus(stmt, r) {
			continue
		}
		fmt.Fprintln(w, strings.Join(r.Columns, "|"))
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = *v
				}
			}
			fmt.Fprintln(w, strings.Join(vals, "|"))
		}
	}
	return nil
}

// isStatus reports the result DuckDB gives a statement that is not a
// query: one column "Count" (rows changed), or "Success" and no rows.
func isStatus(stmt string, r Response) bool {
	if len(r.Columns) != 1 || !(r.Columns[0] == "Count" || r.Columns[0] == "Success" && len(r.Rows) == 0) {
		return false
	}
	word, _, _ := strings.Cut(strings.TrimSpace(stmt), " ")
	switch strings.ToUpper(word) {
	case "SELECT", "FROM", "WITH", "VALUES", "TABLE":
		return false
	}
	return true
}
