package sqllogictest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// query runs a query record and checks its result as DuckDB v1.4.4's
// runner does (TestResultHelper::CheckQueryResult).
func (r *runner) query(rec *Record, st *execState) error {
	q, err := r.sql(rec, st)
	if err != nil {
		return err
	}
	c, err := r.connFor(rec, st)
	if err != nil {
		return err
	}
	res, err := c.Query(r.ctx, q)
	if err != nil {
		if r.ctx.Err() != nil {
			return r.failf(rec, st, "%v\n%s", r.ctx.Err(), showSQL(q, rec.Conn))
		}
		msg := errText(err)
		if err := r.skipOnError(rec, msg); err != nil {
			return err
		}
		return r.failf(rec, st, "query failed\n%s\nerror:\n%s", showSQL(q, rec.Conn), indent(msg))
	}
	ncols := len(res.Types)
	var values []string
	for _, row := range res.Rows {
		if len(row) != ncols {
			return r.failf(rec, st, "query: the engine returned a row of %d values for %d columns", len(row), ncols)
		}
		values = append(values, row...)
	}
	nrows := len(res.Rows)
	total := len(values)
	compareHash := rec.Label != "" || r.hashThreshold > 0 && total > r.hashThreshold
	resultIsHash := len(rec.Results) == 1 && isHashLine(rec.Results[0])
	if resultIsHash {
		compareHash = true
	}
	if r.outputResult {
		r.logf("%s:%d: result:\n%s", r.f.Path, rec.Line, indent(renderValues(values, ncols)))
	}
	switch rec.Sort {
	case RowSort:
		if ncols > 0 {
			rows := make([][]string, nrows)
			for i := range rows {
				rows[i] = values[i*ncols : (i+1)*ncols]
			}
			slices.SortStableFunc(rows, slices.Compare)
			sorted := make([]string, 0, total)
			for _, row := range rows {
				sorted = append(sorted, row...)
			}
			values = sorted
		}
	case ValueSort:
		slices.Sort(values)
	}
	expected := rec.Results
	declared := len(rec.Types)
	if len(expected) == 1 && strings.HasPrefix(expected[0], "<FILE>:") {
		name, err := r.subst(strings.TrimPrefix(expected[0], "<FILE>:"), rec, st)
		if err != nil {
			return err
		}
		if expected, declared, err = r.resultFile(name, res.Columns); err != nil {
			return r.failf(rec, st, "%v", err)
		}
	}
	mismatch := func(format string, args ...any) error {
		detail := fmt.Sprintf(format, args...)
		return r.failf(rec, st, "query result differs: %s\n%s\nexpected (%d lines):\n%s\nactual (%s, %d rows, as the file would hold it):\n%s",
			detail, showSQL(q, rec.Conn), len(expected), indent(strings.Join(expected, "\n")), rec.Sort, nrows, indent(renderValues(values, ncols)))
	}
	hash := ""
	if r.outputHash || compareHash {
		hash = hashValues(values)
		if r.outputHash {
			r.logf("%s:%d: %s", r.f.Path, rec.Line, hash)
			return nil
		}
	}
	if compareHash {
		// The result compares by its hash only: with the label's earlier
		// result, and with the file's hash line.
		if rec.Label != "" {
			r.labelsMu.Lock()
			prev, ok := r.labels[rec.Label]
			if !ok {
				r.labels[rec.Label] = labeled{line: rec.Line, hash: hash, values: values}
			}
			r.labelsMu.Unlock()
			if ok && prev.hash != hash {
				return mismatch("label %s: the result differs from the query at line %d, which gave:\n%s",
					rec.Label, prev.line, indent(renderValues(prev.values, ncols)))
			}
		}
		if resultIsHash && expected[0] != hash {
			return mismatch("result hash is %q", hash)
		}
		return nil
	}
	return r.compareValues(rec, c, res, values, expected, declared, mismatch)
}

// compareValues checks a result against the expected lines: row-wise
// (values separated by tabs) or one value per line, as DuckDB decides.
func (r *runner) compareValues(rec *Record, c Conn, res *Result, values, expected []string, declared int,
	mismatch func(string, ...any) error) error {
	ncols := len(res.Types)
	nrows := len(res.Rows)
	if declared != ncols {
		// As DuckDB: a wrong column count fails the record, whatever the
		// values.
		return mismatch("the query returns %d columns, the record declares %d (%s)", ncols, declared, rec.Types)
	}
	if ncols == 0 {
		return mismatch("the query returns no columns")
	}
	rowWise := ncols > 1 && len(expected) == nrows
	if !rowWise {
		rowWise = !slices.ContainsFunc(expected, func(l string) bool { return !strings.Contains(l, "\t") })
	}
	expectedRows := len(expected) / ncols
	if rowWise {
		expectedRows = len(expected)
	} else if len(expected)%ncols != 0 {
		return mismatch("%d values (one per line) do not divide into rows of %d columns", len(expected), ncols)
	}
	if expectedRows != nrows {
		if rowWise || ncols == 1 {
			return mismatch("expected %d rows, got %d", expectedRows, nrows)
		}
		return mismatch("expected %d values (one per line), got %d", len(expected), len(values))
	}
	want := expected
	if rowWise {
		want = nil
		for i, l := range expected {
			parts := splitTabs(l)
			if len(parts) != ncols {
				return mismatch("expected line %d has %d tab-separated values, the query returns %d columns", i+1, len(parts), ncols)
			}
			want = append(want, parts...)
		}
	}
	for i := range want {
		col := i % ncols
		if !r.valueMatches(c, values[i], want[i], res.Types[col]) {
			return mismatch("row %d, column %d: %q <> expected %q", i/ncols+1, col+1, values[i], want[i])
		}
	}
	return nil
}

// splitTabs splits an expected row at tabs and drops empty parts, as
// DuckDB's StringUtil::Split does (a line of tabs only is one value).
func splitTabs(l string) []string {
	var parts []string
	for _, p := range strings.Split(l, "\t") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		parts = []string{l}
	}
	return parts
}

// valueMatches is DuckDB's CompareValues: equal text (as written, or after
// the keywords are replaced), a <REGEX>:/<!REGEX>: pattern, then equality
// cast to the column's type: numbers by the engine, booleans by their
// spellings true/1 and false/0 (and NULL only by NULL).
func (r *runner) valueMatches(c Conn, got, want, typ string) bool {
	if got == want || got == r.replaceKeywords(want) {
		return true
	}
	if ok, isRE := r.regexMatches(want, got); isRE && ok {
		return true
	}
	if strings.EqualFold(typ, "BOOLEAN") {
		g, gok := boolValue(got)
		w, wok := boolValue(want)
		if !gok || !wok {
			// Both NULL are equal (in any case). DuckDB's runner also
			// takes any other pair of non-booleans as two NULLs, so NULL
			// matched any word; that accepts a wrong result, which this
			// runner never does.
			return !gok && !wok && strings.EqualFold(got, "NULL") && strings.EqualFold(want, "NULL")
		}
		return g == w
	}
	return c.ValuesEqual(typ, got, want)
}

func boolValue(s string) (value, ok bool) {
	switch {
	case strings.EqualFold(s, "true") || s == "1":
		return true, true
	case strings.EqualFold(s, "false") || s == "0":
		return false, true
	}
	return false, false
}

// regexMatches evaluates <REGEX>:/<!REGEX>: patterns: the pattern must
// match the whole text (RE2 FullMatch, . matching newlines), or not match
// it. isRE is false for other strings.
func (r *runner) regexMatches(pattern, got string) (ok, isRE bool) {
	negate := false
	switch {
	case strings.HasPrefix(pattern, "<REGEX>:"):
		pattern = strings.TrimPrefix(pattern, "<REGEX>:")
	case strings.HasPrefix(pattern, "<!REGEX>:"):
		pattern, negate = strings.TrimPrefix(pattern, "<!REGEX>:"), true
	default:
		return false, false
	}
	re, err := regexp.Compile("(?s)^(?:" + pattern + ")$")
	if err != nil {
		return false, true
	}
	return re.MatchString(got) != negate, true
}

// resultFile reads a <FILE>: expected result: a CSV file with a header and
// | separated values, read by DuckDB into VARCHAR columns named like the
// result's (TestResultHelper::LoadResultFromFile), in a fresh in-memory
// database.
func (r *runner) resultFile(name string, columns []string) ([]string, int, error) {
	db, err := r.opts.Engine.Open(r.ctx, Config{Settings: map[string]string{"autoinstall_known_extensions": "false"}})
	if err != nil {
		return nil, 0, fmt.Errorf("<FILE>:%s: %v", name, err)
	}
	defer db.Close()
	c, err := db.Connect(r.ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("<FILE>:%s: %v", name, err)
	}
	defer c.Close()
	cols := make([]string, len(columns))
	for i, n := range columns {
		cols[i] = quoteIdent(n) + " := VARCHAR"
	}
	res, err := c.Query(r.ctx, "SELECT * FROM read_csv("+sqlQuote(name)+", header=1, sep='|', columns=STRUCT_PACK("+
		strings.Join(cols, ", ")+"), auto_detect=false)")
	if err != nil {
		return nil, 0, fmt.Errorf("could not read CSV file %q: %v", name, errText(err))
	}
	var values []string
	for _, row := range res.Rows {
		for _, v := range row {
			if v == "(empty)" {
				v = ""
			}
			values = append(values, v)
		}
	}
	return values, len(res.Types), nil
}

func renderValues(values []string, ncols int) string {
	if ncols == 0 {
		return ""
	}
	var lines []string
	for i := 0; i+ncols <= len(values); i += ncols {
		lines = append(lines, strings.Join(values[i:i+ncols], "\t"))
	}
	return strings.Join(lines, "\n")
}

// isHashLine is DuckDB's ResultIsHash: "<n> values hashing to <32 chars of
// 0-9a-z>".
func isHashLine(s string) bool {
	n, rest, ok := strings.Cut(s, " values hashing to ")
	if !ok || n == "" || len(rest) != 32 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// hashValues is sqllogictest's result hash: MD5 over every value followed by
// a newline.
func hashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte("\n"))
	}
	return fmt.Sprintf("%d values hashing to %s", len(values), hex.EncodeToString(h.Sum(nil)))
}
