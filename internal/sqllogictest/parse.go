package sqllogictest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Kind is the kind of a record.
type Kind int

// Record kinds.
const (
	KindStatement     Kind = iota + 1 // statement ok|error|maybe [connection]
	KindQuery                         // query <types> [sort mode|connection] [label]
	KindRequire                       // require <what> [args]
	KindRequireEnv                    // require-env <VAR> [value]
	KindLoad                          // load [path] [readonly] [version]
	KindRestart                       // restart
	KindReconnect                     // reconnect
	KindMode                          // mode skip|unskip|output_result|output_hash|no_output|debug
	KindLoop                          // loop <var> <start> <end> ... endloop, foreach <vars> <values...> ... endloop
	KindHalt                          // halt
	KindSleep                         // sleep <n> <unit>
	KindHashThreshold                 // hash-threshold <n>
)

// Expect is what a statement record expects.
type Expect int

// Statement expectations.
const (
	ExpectOK    Expect = iota + 1 // statement ok
	ExpectError                   // statement error
	ExpectMaybe                   // statement maybe: success, or an error matching Error
)

// SortMode is how query results are ordered before comparison.
type SortMode int

// Sort modes, as sqllogictest defines them.
const (
	NoSort    SortMode = iota // compare rows in the order returned
	RowSort                   // sort rows (by their values as text, column by column)
	ValueSort                 // sort all values individually, ignoring rows
)

func (m SortMode) String() string {
	switch m {
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return "nosort"
}

// A Condition is a skipif/onlyif line before a record.
type Condition struct {
	OnlyIf bool   // onlyif (else skipif)
	Engine string // e.g. "duckdb"
}

// A Record is one entry of a test file.
type Record struct {
	Kind Kind
	Line int // line of the record's first line (its command)

	Conditions []Condition

	// Statement and query records.
	SQL      string // the SQL, lines joined by "\n"
	Conn     string // connection name; "" is the default connection
	Expect   Expect // statement records
	Error    string // statement error|maybe: expected message text or <REGEX>:/<!REGEX>: pattern; "" accepts any error
	Types    string // query records: one letter per column
	Sort     SortMode
	Label    string
	Results  []string // query records: expected result lines
	HasSep   bool     // the record has a "----" line
	SepLine  int      // line of the "----"
	Unparsed []string // the command line split in fields

	// Loops.
	LoopVars   []string // loop: one name; foreach: one or more (comma separated)
	LoopValues []string // foreach values (each comma separated when several vars)
	LoopStart  int      // loop
	LoopEnd    int      // loop (exclusive)
	IsForeach  bool
	Body       []Record
}

// Args are the record's command fields after the command word.
func (r *Record) Args() []string {
	if len(r.Unparsed) == 0 {
		return nil
	}
	return r.Unparsed[1:]
}

// A File is a parsed test file.
type File struct {
	Path    string
	Records []Record
	// AllowSkip is the reason given by a "# allow-skip: <reason>" comment:
	// the file may be skipped when a require or require-env is not met.
	AllowSkip string
}

// ParseError is a syntax error in a test file.
type ParseError struct {
	Path string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// ParseFile reads and parses a test file.
func ParseFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

// allowSkipPrefix starts the comment that lets a file be skipped.
const allowSkipPrefix = "# allow-skip:"

// Parse parses the text of a test file in DuckDB's sqllogictest dialect.
func Parse(path, text string) (*File, error) {
	p := &parser{path: path, lines: strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")}
	f := &File{Path: path}
	for i, l := range p.lines {
		if rest, ok := strings.CutPrefix(l, allowSkipPrefix); ok {
			reason := strings.TrimSpace(rest)
			if reason == "" {
				return nil, p.errAt(i+1, "%s needs a reason", strings.TrimSpace(allowSkipPrefix))
			}
			f.AllowSkip = reason
		}
	}
	recs, end, err := p.records(0)
	if err != nil {
		return nil, err
	}
	if end != nil {
		return nil, p.errAt(end.Line, "endloop without loop or foreach")
	}
	f.Records = recs
	return f, nil
}

type parser struct {
	path  string
	lines []string
	i     int // index of the next line
}

func (p *parser) errAt(line int, format string, args ...any) error {
	return &ParseError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func emptyOrComment(l string) bool {
	return strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#")
}

// records parses records until the end of the file or an endloop, which it
// returns (for the caller to match with its loop).
func (p *parser) records(depth int) ([]Record, *Record, error) {
	var out []Record
	for {
		for p.i < len(p.lines) && emptyOrComment(p.lines[p.i]) {
			p.i++
		}
		if p.i >= len(p.lines) {
			return out, nil, nil
		}
		var conds []Condition
		for {
			fields := strings.Fields(p.lines[p.i])
			if fields[0] != "skipif" && fields[0] != "onlyif" {
				break
			}
			if len(fields) != 2 {
				return nil, nil, p.errAt(p.i+1, "%s needs exactly one engine name", fields[0])
			}
			conds = append(conds, Condition{OnlyIf: fields[0] == "onlyif", Engine: fields[1]})
			p.i++
			if p.i >= len(p.lines) || emptyOrComment(p.lines[p.i]) {
				return nil, nil, p.errAt(p.i, "%s must be followed by the record it applies to", fields[0])
			}
		}
		rec, err := p.record(depth)
		if err != nil {
			return nil, nil, err
		}
		rec.Conditions = conds
		if rec.Kind == 0 { // endloop
			if len(conds) > 0 {
				return nil, nil, p.errAt(rec.Line, "skipif/onlyif cannot apply to endloop")
			}
			return out, &rec, nil
		}
		out = append(out, rec)
	}
}

// record parses the record starting at p.i (a non-empty, non-comment line).
// An endloop is returned as a Record with Kind 0.
func (p *parser) record(depth int) (Record, error) {
	line := p.i + 1
	fields := strings.Fields(p.lines[p.i])
	p.i++
	r := Record{Line: line, Unparsed: fields}
	args := fields[1:]
	singleLine := true
	switch cmd := fields[0]; cmd {
	case "statement":
		singleLine = false
		if len(args) < 1 || len(args) > 2 {
			return r, p.errAt(line, "statement needs ok, error or maybe, and optionally a connection name")
		}
		r.Kind = KindStatement
		switch args[0] {
		case "ok":
			r.Expect = ExpectOK
		case "error":
			r.Expect = ExpectError
		case "maybe":
			r.Expect = ExpectMaybe
		default:
			return r, p.errAt(line, "statement %q: want ok, error or maybe", args[0])
		}
		if len(args) == 2 {
			r.Conn = args[1]
		}
		if err := p.body(&r); err != nil {
			return r, err
		}
		if r.Expect == ExpectOK && len(r.Results) > 0 {
			return r, p.errAt(r.SepLine, "statement ok cannot have an expected result; use statement error or query")
		}
		r.Error = strings.Join(r.Results, "\n")
		r.Results = nil
	case "query":
		singleLine = false
		if len(args) < 1 || len(args) > 3 {
			return r, p.errAt(line, "query needs column types (e.g. query IT), then optionally a sort mode or connection name, and a label")
		}
		r.Kind = KindQuery
		r.Types = args[0]
		for _, c := range r.Types {
			if c < 'A' || c > 'Z' {
				return r, p.errAt(line, "query column types %q: want one upper-case letter per column (I, T, R, B, ...)", r.Types)
			}
		}
		if len(args) >= 2 {
			switch args[1] {
			case "nosort":
				r.Sort = NoSort
			case "rowsort", "sort":
				r.Sort = RowSort
			case "valuesort":
				r.Sort = ValueSort
			default:
				// As in DuckDB: not a sort mode, so a connection name.
				r.Conn = args[1]
			}
		}
		if len(args) == 3 {
			r.Label = args[2]
		}
		if err := p.body(&r); err != nil {
			return r, err
		}
	case "require":
		if len(args) < 1 {
			return r, p.errAt(line, "require needs what is required (an extension name, vector_size N, ...)")
		}
		r.Kind = KindRequire
	case "require-env":
		if len(args) < 1 || len(args) > 2 {
			return r, p.errAt(line, "require-env needs a variable name and optionally its required value")
		}
		r.Kind = KindRequireEnv
	case "load":
		if len(args) > 3 || (len(args) >= 2 && args[1] != "readonly") {
			return r, p.errAt(line, "load takes a database path, optionally readonly and a storage version")
		}
		r.Kind = KindLoad
	case "restart":
		if len(args) != 0 {
			return r, p.errAt(line, "restart takes no arguments")
		}
		r.Kind = KindRestart
	case "reconnect":
		if len(args) != 0 {
			return r, p.errAt(line, "reconnect takes no arguments")
		}
		r.Kind = KindReconnect
	case "mode":
		if len(args) != 1 {
			return r, p.errAt(line, "mode needs one argument")
		}
		switch args[0] {
		case "skip", "unskip", "output_result", "output_hash", "no_output", "debug":
		default:
			return r, p.errAt(line, "unknown mode %q (want skip, unskip, output_result, output_hash, no_output or debug)", args[0])
		}
		r.Kind = KindMode
	case "halt":
		r.Kind = KindHalt
	case "sleep":
		if len(args) != 2 {
			return r, p.errAt(line, "sleep needs a duration and a unit (e.g. sleep 1 second)")
		}
		if _, err := strconv.Atoi(args[0]); err != nil {
			return r, p.errAt(line, "sleep duration %q is not an integer", args[0])
		}
		if sleepUnit(args[1]) == 0 {
			return r, p.errAt(line, "sleep unit %q: want second, millisecond, microsecond or nanosecond", args[1])
		}
		r.Kind = KindSleep
	case "hash-threshold":
		if len(args) != 1 {
			return r, p.errAt(line, "hash-threshold needs one number")
		}
		if _, err := strconv.Atoi(args[0]); err != nil {
			return r, p.errAt(line, "hash-threshold %q is not an integer", args[0])
		}
		r.Kind = KindHashThreshold
	case "loop":
		if len(args) != 3 {
			return r, p.errAt(line, "loop needs a variable, a start and an end (e.g. loop i 0 10)")
		}
		start, err1 := strconv.Atoi(args[1])
		end, err2 := strconv.Atoi(args[2])
		if err1 != nil || err2 != nil {
			return r, p.errAt(line, "loop bounds %q and %q must be integers", args[1], args[2])
		}
		r.Kind, r.LoopVars, r.LoopStart, r.LoopEnd = KindLoop, []string{args[0]}, start, end
	case "foreach":
		if len(args) < 2 {
			return r, p.errAt(line, "foreach needs a variable and at least one value (e.g. foreach t INTEGER BIGINT)")
		}
		r.Kind, r.IsForeach, r.LoopVars = KindLoop, true, strings.Split(args[0], ",")
		for _, v := range args[1:] {
			if vals, ok := foreachCollections[strings.ToLower(v)]; ok {
				r.LoopValues = append(r.LoopValues, vals...)
			} else {
				r.LoopValues = append(r.LoopValues, v)
			}
		}
		for _, v := range r.LoopValues {
			if n := len(strings.Split(v, ",")); len(r.LoopVars) > 1 && n != len(r.LoopVars) {
				return r, p.errAt(line, "foreach value %q has %d parts for %d variables", v, n, len(r.LoopVars))
			}
		}
	case "endloop":
		if len(args) != 0 {
			return r, p.errAt(line, "endloop takes no arguments")
		}
		if depth == 0 {
			return r, p.errAt(line, "endloop without loop or foreach")
		}
		if err := p.singleLineEnd(line); err != nil {
			return r, err
		}
		return r, nil // Kind 0
	case "concurrentloop", "concurrentforeach":
		return r, p.errAt(line, "%s is not supported by this runner (use loop or foreach)", cmd)
	case "set", "unzip", "tags", "reset":
		return r, p.errAt(line, "%s is not supported by this runner", cmd)
	default:
		return r, p.errAt(line, "unknown command %q", cmd)
	}
	if singleLine {
		if err := p.singleLineEnd(line); err != nil {
			return r, err
		}
	}
	if r.Kind == KindLoop {
		body, end, err := p.records(depth + 1)
		if err != nil {
			return r, err
		}
		if end == nil {
			return r, p.errAt(line, "%s without endloop", fields[0])
		}
		r.Body = body
	}
	return r, nil
}

// singleLineEnd checks that a one-line record is followed by an empty line, a
// comment or the end of the file.
func (p *parser) singleLineEnd(line int) error {
	if p.i < len(p.lines) && !emptyOrComment(p.lines[p.i]) {
		return p.errAt(p.i+1, "records must be separated by an empty line (after line %d)", line)
	}
	return nil
}

// body reads the SQL of a statement or query and, after "----", the expected
// lines up to the next empty line.
func (p *parser) body(r *Record) error {
	var sql []string
	for p.i < len(p.lines) && !emptyOrComment(p.lines[p.i]) && p.lines[p.i] != "----" {
		sql = append(sql, p.lines[p.i])
		p.i++
	}
	if len(sql) == 0 {
		return p.errAt(r.Line, "%s without SQL", r.Unparsed[0])
	}
	r.SQL = strings.Join(sql, "\n")
	if p.i < len(p.lines) && p.lines[p.i] == "----" {
		r.HasSep, r.SepLine = true, p.i+1
		p.i++
		for p.i < len(p.lines) && strings.TrimSpace(p.lines[p.i]) != "" {
			r.Results = append(r.Results, p.lines[p.i])
			p.i++
		}
	}
	return nil
}

// sleepUnit returns the length of a sleep unit in nanoseconds, 0 if unknown.
func sleepUnit(u string) int64 {
	switch strings.TrimSuffix(u, "s") {
	case "second":
		return 1e9
	case "millisecond":
		return 1e6
	case "microsecond":
		return 1e3
	case "nanosecond":
		return 1
	}
	return 0
}

// foreachCollections are the value lists DuckDB's runners expand in foreach.
var foreachCollections = map[string][]string{
	"<numeric>":  {"float", "double"},
	"<integral>": {"tinyint", "smallint", "integer", "bigint", "hugeint"},
	"<signed>":   {"tinyint", "smallint", "integer", "bigint", "hugeint"},
	"<unsigned>": {"utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"},
	"<alltypes>": {"bool", "interval", "varchar"},
}
