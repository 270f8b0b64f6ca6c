package sqllogictest

import (
	"errors"
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
	KindLoad                          // load [path] [readonly|readwrite] [version]
	KindRestart                       // restart [no_extension_load]
	KindReconnect                     // reconnect
	KindMode                          // mode skip|unskip|output_result|output_hash|no_output|debug
	KindLoop                          // loop/foreach/concurrentloop/concurrentforeach ... endloop
	KindHalt                          // halt
	KindSleep                         // sleep <n> <unit>
	KindHashThreshold                 // hash-threshold <n>
	KindTestEnv                       // test-env <VAR> <default value>
	KindSet                           // set ignore_error_messages|always_fail_error_messages ... / set seed <x>
	KindReset                         // reset label <name>
	KindUnzip                         // unzip <in.gz> [out]
	KindTags                          // tags <tag>...
	KindInvalid                       // a record excluded by skipif/onlyif whose text does not parse (Error says why)
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

// A Condition is one skipif/onlyif condition before a record: either a
// system name (skipif duckdb) or, as in DuckDB's own tests, a comparison of
// a loop variable (skipif i=2, onlyif threadid>0; one line may hold several
// joined by &&).
type Condition struct {
	OnlyIf bool   // onlyif (else skipif)
	Engine string // system name, lower case (when Var is "")
	Var    string // loop variable (lower case, as DuckDB compares it)
	Op     string // "=", "<>", "<", "<=", ">", ">="
	Value  string
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
	Types    string // query records: one letter per column (T, I or R)
	Sort     SortMode
	Label    string
	Results  []string // query records: expected result lines
	HasSep   bool     // the record has a "----" line
	SepLine  int      // line of the "----"
	Unparsed []string // the command line split in fields

	// Loops.
	LoopVar    string   // the variable as written: "i", or "a,b" for a foreach over pairs
	LoopVars   []string // loop: one name; foreach: one or more (comma separated)
	LoopValues []string // foreach values (each comma separated when several vars)
	LoopStart  int      // loop
	LoopEnd    int      // loop (exclusive; the body runs at least once, as in DuckDB)
	IsForeach  bool
	Concurrent bool // concurrentloop, concurrentforeach
	Body       []Record

	// set ignore_error_messages / always_fail_error_messages: the messages.
	SetValues []string
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
	// Skipped counts the records left out by mode skip.
	Skipped int
	// Tags are the file's tags line.
	Tags []string
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

// Parse parses the text of a test file in DuckDB's sqllogictest dialect,
// with the rules of DuckDB v1.4.4's parser (test/sqlite/sqllogic_parser.cpp
// and sqllogic_test_runner.cpp): records are separated by lines that are
// empty (no white space either) or start with #.
func Parse(path, text string) (*File, error) {
	p := &parser{path: path, lines: strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")}
	f := &File{Path: path}
	p.file = f
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
	file  *File

	skipLevel    int  // mode skip nesting
	halted       bool // a halt was read: nothing after it is parsed
	testCommands bool // a statement or query was seen (tags must come first)
}

func (p *parser) errAt(line int, format string, args ...any) error {
	return &ParseError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// emptyOrComment is DuckDB's separator rule: an empty line, or one starting
// with #. A line of white space is not empty.
func emptyOrComment(l string) bool {
	return l == "" || strings.HasPrefix(l, "#")
}

// fields splits a command line on DuckDB's white space.
func fields(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
	})
}

// singleLine reports whether a command is a one-line record, which must be
// followed by an empty line, a comment or the end of the file.
func singleLine(cmd string) bool {
	switch cmd {
	case "statement", "query", "skipif", "onlyif":
		return false
	}
	return true
}

// records parses records until the end of the file or an endloop, which it
// returns (for the caller to match with its loop).
func (p *parser) records(depth int) ([]Record, *Record, error) {
	var out []Record
	for !p.halted {
		for p.i < len(p.lines) && emptyOrComment(p.lines[p.i]) {
			p.i++
		}
		if p.i >= len(p.lines) {
			return out, nil, nil
		}
		fs := fields(p.lines[p.i])
		if len(fs) == 0 {
			return nil, nil, p.errAt(p.i+1, "a line of white space separates nothing: records are separated by empty lines")
		}
		if !knownCommand(fs[0]) {
			return nil, nil, p.errAt(p.i+1, "unknown command %q", fs[0])
		}
		if singleLine(fs[0]) && p.i+1 < len(p.lines) && !emptyOrComment(p.lines[p.i+1]) {
			return nil, nil, p.errAt(p.i+2, "records must be separated by an empty line (after line %d)", p.i+1)
		}
		if fs[0] == "statement" || fs[0] == "query" {
			p.testCommands = true
		}
		var conds []Condition
		systemCond := false
		for fs[0] == "skipif" || fs[0] == "onlyif" {
			if len(fs) < 2 {
				return nil, nil, p.errAt(p.i+1, "%s needs an engine name or a loop condition (skipif duckdb, onlyif i=0)", fs[0])
			}
			cs, err := p.conditions(fs[0] == "onlyif", strings.ToLower(fs[1]))
			if err != nil {
				return nil, nil, err
			}
			for _, c := range cs {
				if c.Var == "" {
					systemCond = true
				}
			}
			conds = append(conds, cs...)
			p.i++
			if p.i >= len(p.lines) || emptyOrComment(p.lines[p.i]) {
				return nil, nil, p.errAt(p.i, "%s must be followed by the record it applies to", fs[0])
			}
			fs = fields(p.lines[p.i])
			if len(fs) == 0 {
				return nil, nil, p.errAt(p.i+1, "%s must be followed by the record it applies to", conds[len(conds)-1].keyword())
			}
			if !knownCommand(fs[0]) {
				return nil, nil, p.errAt(p.i+1, "unknown command %q", fs[0])
			}
		}
		if p.skipLevel > 0 && fs[0] != "mode" {
			// As DuckDB: a record inside mode skip is not parsed, only
			// passed over to the next empty or comment line.
			p.file.Skipped++
			p.skipRecord()
			continue
		}
		start := p.i
		rec, err := p.record(depth)
		if err != nil {
			var pe *ParseError
			if !systemCond || fs[0] != "statement" && fs[0] != "query" || !errors.As(err, &pe) {
				return nil, nil, err
			}
			// DuckDB does not parse a record that skipif/onlyif leaves
			// out; keep the error for the run, in case the record runs.
			p.i = start
			p.skipRecord()
			rec = Record{Kind: KindInvalid, Line: start + 1, Unparsed: fs, Error: pe.Msg}
		}
		rec.Conditions = conds
		if rec.Kind == 0 { // endloop
			if len(conds) > 0 {
				return nil, nil, p.errAt(rec.Line, "skipif/onlyif cannot apply to endloop")
			}
			return out, &rec, nil
		}
		if rec.Kind == KindMode && !p.applyMode(rec.Args()[0]) {
			continue // skip and unskip act while parsing
		}
		if rec.Kind == KindHalt && len(conds) == 0 {
			p.halted = true // as DuckDB: nothing after a halt is read
		}
		out = append(out, rec)
	}
	return out, nil, nil
}

// applyMode applies mode skip/unskip to the parse; it returns false for
// them (they are no records of their own).
func (p *parser) applyMode(mode string) bool {
	switch mode {
	case "skip":
		p.skipLevel++
		return false
	case "unskip":
		if p.skipLevel > 0 {
			p.skipLevel--
		}
		return false
	}
	return true
}

// skipRecord moves past the record at p.i: to the next empty or comment
// line, as DuckDB's NextStatement does.
func (p *parser) skipRecord() {
	p.i++
	for p.i < len(p.lines) && !emptyOrComment(p.lines[p.i]) {
		p.i++
	}
}

func (c Condition) keyword() string {
	if c.OnlyIf {
		return "onlyif"
	}
	return "skipif"
}

// conditions parses the argument of skipif/onlyif: a system name, or loop
// conditions x=y, x<>y, x>y, x>=y, x<y, x<=y joined by &&.
func (p *parser) conditions(onlyIf bool, text string) ([]Condition, error) {
	if !strings.ContainsAny(text, "=<>") {
		return []Condition{{OnlyIf: onlyIf, Engine: text}}, nil
	}
	var out []Condition
	for _, part := range strings.Split(text, "&&") {
		var c Condition
		for _, op := range []string{"<>", ">=", ">", "<=", "<", "="} {
			if !strings.Contains(part, op) {
				continue
			}
			// As DuckDB: the first operator the text holds splits it, in
			// exactly two non-empty parts.
			var parts []string
			for _, s := range strings.Split(part, op) {
				if s != "" {
					parts = append(parts, strings.TrimSpace(s))
				}
			}
			if len(parts) == 2 {
				c = Condition{OnlyIf: onlyIf, Var: parts[0], Op: op, Value: parts[1]}
			}
			break
		}
		if c.Op == "" {
			return nil, p.errAt(p.i+1, "skipif/onlyif must be in the form of x=y or x>y, potentially separated by &&")
		}
		if c.Op != "=" && c.Op != "<>" {
			if _, err := strconv.ParseInt(c.Value, 10, 64); err != nil {
				return nil, p.errAt(p.i+1, "skipif/onlyif %s%s%s: %s compares integers", c.Var, c.Op, c.Value, c.Op)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func knownCommand(cmd string) bool {
	switch cmd {
	case "skipif", "onlyif", "statement", "query", "hash-threshold", "halt", "mode", "set", "reset", "loop",
		"concurrentloop", "foreach", "concurrentforeach", "endloop", "require", "require-env", "test-env", "load",
		"restart", "reconnect", "sleep", "unzip", "tags":
		return true
	}
	return false
}

// record parses the record starting at p.i (a non-empty, non-comment line).
// An endloop is returned as a Record with Kind 0.
func (p *parser) record(depth int) (Record, error) {
	line := p.i + 1
	fs := fields(p.lines[p.i])
	p.i++
	r := Record{Line: line, Unparsed: fs}
	args := fs[1:]
	switch cmd := fs[0]; cmd {
	case "statement":
		if len(args) < 1 {
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
		if len(args) >= 2 {
			r.Conn = args[1]
		}
		if err := p.body(&r); err != nil {
			return r, err
		}
		if r.Expect == ExpectOK && r.HasSep {
			return r, p.errAt(r.SepLine, "statement ok cannot have an expected result; use statement error or query")
		}
		if r.Expect != ExpectOK && !r.HasSep {
			return r, p.errAt(line, "statement %s needs ---- and the expected error message (which may be empty: any error)", args[0])
		}
		r.Error = strings.Join(r.Results, "\n")
		r.Results = nil
	case "query":
		if len(args) < 1 {
			return r, p.errAt(line, "query needs column types (e.g. query IT), then optionally a sort mode or connection name, and a label")
		}
		r.Kind = KindQuery
		r.Types = args[0]
		for _, c := range r.Types {
			if c != 'T' && c != 'I' && c != 'R' {
				return r, p.errAt(line, "query column types %q: want T, I or R, one per column", r.Types)
			}
		}
		if len(args) >= 2 {
			switch args[1] {
			case "nosort", "none":
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
		if len(args) >= 3 {
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
	case "require-env", "test-env":
		r.Kind = KindRequireEnv
		if cmd == "test-env" {
			r.Kind = KindTestEnv
			if len(args) != 2 {
				return r, p.errAt(line, "test-env needs a variable name and its default value")
			}
		} else if len(args) < 1 || len(args) > 2 {
			return r, p.errAt(line, "require-env needs a variable name and optionally its required value")
		}
		if depth > 0 {
			return r, p.errAt(line, "%s cannot be used in a loop", cmd)
		}
	case "load":
		if len(args) >= 2 && !strings.EqualFold(args[1], "readonly") && !strings.EqualFold(args[1], "readwrite") {
			return r, p.errAt(line, "load: %q is not readonly or readwrite", args[1])
		}
		r.Kind = KindLoad
	case "restart":
		if len(args) > 1 || len(args) == 1 && args[0] != "no_extension_load" {
			return r, p.errAt(line, "restart takes no arguments but no_extension_load")
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
		if depth > 0 {
			return r, p.errAt(line, "halt inside a loop: the loop would miss its endloop")
		}
	case "sleep":
		if len(args) != 2 {
			return r, p.errAt(line, "sleep needs a duration and a unit (e.g. sleep 1 second)")
		}
		if _, err := strconv.ParseUint(args[0], 10, 63); err != nil {
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
	case "set":
		if len(args) < 1 {
			return r, p.errAt(line, "set needs what to set (ignore_error_messages, always_fail_error_messages or seed)")
		}
		r.Kind = KindSet
		switch args[0] {
		case "ignore_error_messages", "always_fail_error_messages":
			r.SetValues = splitMessages(args[1:])
		case "seed":
			if len(args) != 2 {
				return r, p.errAt(line, "set seed needs one value")
			}
			if _, err := strconv.ParseFloat(args[1], 64); err != nil {
				return r, p.errAt(line, "set seed needs a floating point value, not %q", args[1])
			}
		default:
			return r, p.errAt(line, "unknown set parameter %q", args[0])
		}
	case "reset":
		if len(args) != 2 || !strings.EqualFold(args[0], "label") {
			return r, p.errAt(line, "reset needs label and a label name (reset label my_label)")
		}
		r.Kind = KindReset
	case "unzip":
		if len(args) != 1 && len(args) != 2 {
			return r, p.errAt(line, "unzip needs a .gz file and optionally where to write it (default __TEST_DIR__/<name>)")
		}
		if !strings.HasSuffix(args[0], ".gz") {
			return r, p.errAt(line, "unzip: %q is not a .gz file", args[0])
		}
		r.Kind = KindUnzip
	case "tags":
		if len(args) == 0 {
			return r, p.errAt(line, "tags needs at least one tag")
		}
		if p.testCommands {
			return r, p.errAt(line, "tags must come before any statement or query")
		}
		if p.file.Tags != nil {
			return r, p.errAt(line, "tags may be given only once")
		}
		p.file.Tags = args
		r.Kind = KindTags
	case "loop", "concurrentloop":
		if len(args) != 3 {
			return r, p.errAt(line, "%s needs a variable, a start and an end (e.g. loop i 0 10)", cmd)
		}
		start, err1 := strconv.Atoi(args[1])
		end, err2 := strconv.Atoi(args[2])
		if err1 != nil || err2 != nil {
			return r, p.errAt(line, "loop bounds %q and %q must be integers", args[1], args[2])
		}
		r.Kind, r.LoopVar, r.LoopVars, r.LoopStart, r.LoopEnd = KindLoop, args[0], []string{args[0]}, start, end
		r.Concurrent = cmd == "concurrentloop"
	case "foreach", "concurrentforeach":
		if len(args) < 2 {
			return r, p.errAt(line, "%s needs a variable and at least one value (e.g. foreach t INTEGER BIGINT)", cmd)
		}
		r.Kind, r.IsForeach, r.LoopVar, r.LoopVars = KindLoop, true, args[0], strings.Split(args[0], ",")
		r.Concurrent = cmd == "concurrentforeach"
		for _, v := range args[1:] {
			r.LoopValues = foreachValues(v, r.LoopValues)
		}
		if len(r.LoopValues) == 0 {
			return r, p.errAt(line, "%s has no values left", cmd)
		}
	case "endloop":
		if len(args) != 0 {
			return r, p.errAt(line, "endloop takes no arguments")
		}
		if depth == 0 {
			return r, p.errAt(line, "endloop without loop or foreach")
		}
		return r, nil // Kind 0
	default: // knownCommand admitted a command this switch does not know
		return r, p.errAt(line, "unknown command %q", cmd)
	}
	if r.Kind == KindLoop {
		body, end, err := p.records(depth + 1)
		if err != nil {
			return r, err
		}
		if end == nil {
			return r, p.errAt(line, "%s without endloop", fs[0])
		}
		r.Body = body
	}
	return r, nil
}

// splitMessages parses the arguments of set ignore_error_messages: messages
// separated by commas, each of which may hold spaces.
func splitMessages(args []string) []string {
	var out []string
	for _, m := range strings.Split(strings.Join(args, " "), ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// body reads the SQL of a statement or query and, after "----", the expected
// lines up to the next empty line (comment lines are results there).
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
		for p.i < len(p.lines) && p.lines[p.i] != "" {
			r.Results = append(r.Results, p.lines[p.i])
			p.i++
		}
	}
	return nil
}

// sleepUnit returns the length of a sleep unit in nanoseconds, 0 if unknown.
func sleepUnit(u string) int64 {
	switch u {
	case "second", "seconds", "sec":
		return 1e9
	case "millisecond", "milliseconds", "milli":
		return 1e6
	case "microsecond", "microseconds", "micro":
		return 1e3
	case "nanosecond", "nanoseconds", "nano":
		return 1
	}
	return 0
}

// foreachValues expands one foreach argument into values as DuckDB's
// ForEachTokenReplace does: the collections <signed>, <unsigned>,
// <integral> (both), <numeric> (integral and float, double), <alltypes>
// (numeric and bool, interval, varchar), <compression> and
// <all_types_columns>; !value removes an earlier value; anything else is
// one value.
func foreachValues(arg string, values []string) []string {
	name := strings.TrimSpace(strings.ToLower(arg))
	if strings.HasPrefix(name, "!") {
		for i, v := range values {
			if v == arg[1:] {
				return append(values[:i:i], values[i+1:]...)
			}
		}
		return append(values, arg)
	}
	all := name == "<alltypes>"
	numeric := all || name == "<numeric>"
	integral := numeric || name == "<integral>"
	signed := integral || name == "<signed>"
	unsigned := integral || name == "<unsigned>"
	collection := false
	add := func(on bool, vs ...string) {
		if on {
			values = append(values, vs...)
			collection = true
		}
	}
	add(signed, "tinyint", "smallint", "integer", "bigint", "hugeint")
	add(unsigned, "utinyint", "usmallint", "uinteger", "ubigint", "uhugeint")
	add(numeric, "float", "double")
	add(all, "bool", "interval", "varchar")
	add(name == "<compression>", "none", "uncompressed", "rle", "bitpacking", "dictionary", "fsst", "dict_fsst", "alp", "alprd")
	add(name == "<all_types_columns>", allTypesColumns...)
	if !collection {
		values = append(values, arg)
	}
	return values
}

// allTypesColumns are the column names of DuckDB's test_all_types().
var allTypesColumns = []string{
	"bool", "tinyint", "smallint", "int", "bigint", "hugeint", "uhugeint", "utinyint", "usmallint", "uint",
	"ubigint", "date", "time", "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns", "time_tz",
	"timestamp_tz", "float", "double", "dec_4_1", "dec_9_4", "dec_18_6", "dec38_10", "uuid", "interval",
	"varchar", "blob", "bit", "small_enum", "medium_enum", "large_enum", "int_array", "double_array",
	"date_array", "timestamp_array", "timestamptz_array", "varchar_array", "nested_int_array", "struct",
	"struct_of_arrays", "array_of_structs", "map", "union", "fixed_int_array", "fixed_varchar_array",
	"fixed_nested_int_array", "fixed_nested_varchar_array", "fixed_struct_array", "struct_of_fixed_array",
	"fixed_array_of_int_list", "list_of_fixed_int_array",
}
