package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// A SlotList is the C API function table in slot order (slot 0 first).
type SlotList struct {
	Name  string // file base name, for messages and the header comment
	Slots []string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseSlots reads a slot list: one C identifier per line, nothing else (a
// blank line would shift every later slot, so it is an error).
func ParseSlots(name string, data []byte) (SlotList, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	l := SlotList{Name: name}
	if text == "" {
		return l, fmt.Errorf("%s: empty slot list", name)
	}
	seen := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		if !identRE.MatchString(line) {
			return l, fmt.Errorf("%s:%d: %q is not a C identifier", name, i+1, line)
		}
		if prev, ok := seen[line]; ok {
			return l, fmt.Errorf("%s:%d: %s already holds slot %d", name, i+1, line, prev)
		}
		seen[line] = i
		l.Slots = append(l.Slots, line)
	}
	return l, nil
}

// CheckPrefix verifies that every slot of base sits at the same index in next
// (next may only append slots).
func CheckPrefix(base, next SlotList) error {
	if len(next.Slots) < len(base.Slots) {
		return fmt.Errorf("%s has %d slots, fewer than the %d of %s", next.Name, len(next.Slots), len(base.Slots), base.Name)
	}
	for i, s := range base.Slots {
		if next.Slots[i] != s {
			return fmt.Errorf("slot %d is %s in %s but %s in %s: %s is not a prefix of %s",
				i, s, base.Name, next.Slots[i], next.Name, base.Name, next.Name)
		}
	}
	return nil
}

// A Decl is one function prototype found in duckdb.h.
type Decl struct {
	Name   string
	Ret    string // return type, whitespace normalized ("const char *")
	Params string // parameter list without the parentheses ("void", "duckdb_database *out")
	Cond   string // preprocessor condition guarding it; "" if unconditional
	Line   int
}

// Header is what the generator needs from duckdb.h.
type Header struct {
	Decls      map[string][]Decl // by function name, in file order
	APIVersion string            // default DUCKDB_API_VERSION_* ("1.5.6"), if found
}

// ParseHeader extracts every `DUCKDB_C_API <ret> <name>(<params>);` prototype
// of a duckdb.h, with the #if/#ifdef/#elif/#else condition that guards it.
// It understands comments, string and character literals, line splices and
// conditional directives; it does not expand macros.
func ParseHeader(name string, data []byte) (*Header, error) {
	lines := logicalLines(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err := stripComments(lines); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := &Header{Decls: map[string][]Decl{}}
	var stack []*condFrame
	var decl *strings.Builder // non-nil while inside a DUCKDB_C_API declaration
	var declLine int
	var declCond string
	versions := map[string]string{}
	var pendingGuard *condFrame // the file's first directive, if #ifndef, until the next directive
	firstDirective := true
	for _, ln := range lines {
		text := strings.TrimSpace(ln.text)
		if strings.HasPrefix(text, "#") {
			if decl != nil {
				return nil, fmt.Errorf("%s:%d: preprocessor directive inside the declaration that starts on line %d", name, ln.num, declLine)
			}
			guardCandidate := pendingGuard
			pendingGuard = nil
			dir, arg := splitDirective(text)
			switch dir {
			case "if", "ifdef", "ifndef":
				expr := arg
				if dir == "ifdef" {
					expr = "defined(" + arg + ")"
				} else if dir == "ifndef" {
					expr = "!defined(" + arg + ")"
				}
				f := &condFrame{cur: expr, line: ln.num, macro: arg}
				stack = append(stack, f)
				if firstDirective && dir == "ifndef" {
					pendingGuard = f
				}
			case "elif", "else":
				if len(stack) == 0 {
					return nil, fmt.Errorf("%s:%d: #%s without #if", name, ln.num, dir)
				}
				f := stack[len(stack)-1]
				if f.sawElse {
					return nil, fmt.Errorf("%s:%d: #%s after #else", name, ln.num, dir)
				}
				f.prev = append(f.prev, f.cur)
				f.guard = false
				if dir == "else" {
					f.cur, f.sawElse = "", true
				} else {
					f.cur = arg
				}
			case "endif":
				if len(stack) == 0 {
					return nil, fmt.Errorf("%s:%d: #endif without #if", name, ln.num)
				}
				stack = stack[:len(stack)-1]
			case "define":
				w := firstWord(arg)
				if guardCandidate != nil && w == guardCandidate.macro {
					guardCandidate.guard = true // #ifndef X / #define X: an include guard, not a condition
				}
				if _, seen := versions[w]; !seen && strings.HasPrefix(w, "DUCKDB_API_VERSION_") {
					versions[w] = strings.TrimSpace(strings.TrimPrefix(arg, w))
				}
			}
			firstDirective = false
			continue
		}
		rest := ln.text
		for rest != "" {
			if decl == nil {
				i := indexIdent(rest, "DUCKDB_C_API")
				if i < 0 {
					break
				}
				decl = &strings.Builder{}
				declLine = ln.num
				declCond = condition(stack)
				rest = rest[i+len("DUCKDB_C_API"):]
				continue
			}
			if j := strings.IndexByte(rest, ';'); j >= 0 {
				decl.WriteString(rest[:j])
				d, err := parseDecl(decl.String())
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, declLine, err)
				}
				d.Cond, d.Line = declCond, declLine
				h.Decls[d.Name] = append(h.Decls[d.Name], d)
				decl = nil
				rest = rest[j+1:]
				continue
			}
			decl.WriteString(rest)
			decl.WriteByte(' ')
			rest = ""
		}
	}
	if decl != nil {
		return nil, fmt.Errorf("%s:%d: declaration not terminated by ';'", name, declLine)
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("%s:%d: #if not closed", name, stack[len(stack)-1].line)
	}
	if ma, mi, pa := versions["DUCKDB_API_VERSION_MAJOR"], versions["DUCKDB_API_VERSION_MINOR"], versions["DUCKDB_API_VERSION_PATCH"]; ma != "" && mi != "" && pa != "" {
		h.APIVersion = ma + "." + mi + "." + pa
	}
	return h, nil
}

type condFrame struct {
	prev    []string // conditions of the earlier branches
	cur     string   // condition of the current branch ("" after #else)
	sawElse bool
	line    int
	macro   string // the argument of #ifndef, to recognize an include guard
	guard   bool   // an include guard: contributes no condition
}

// expr is the condition under which the current branch of f is compiled.
func (f *condFrame) expr() string {
	var parts []string
	for _, p := range f.prev {
		parts = append(parts, "!("+p+")")
	}
	if f.cur != "" {
		if len(parts) == 0 {
			return f.cur
		}
		parts = append(parts, "("+f.cur+")")
	}
	return strings.Join(parts, " && ")
}

func condition(stack []*condFrame) string {
	var parts []string
	for _, f := range stack {
		if f.guard {
			continue
		}
		parts = append(parts, f.expr())
	}
	if len(parts) == 1 {
		return parts[0]
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " && ")
}

type logicalLine struct {
	num  int // 1-based number of the first physical line
	text string
}

// logicalLines splits text into lines, splicing lines that end in a backslash
// onto the next (C translation phase 2).
func logicalLines(text string) []logicalLine {
	phys := strings.Split(text, "\n")
	var out []logicalLine
	for i := 0; i < len(phys); i++ {
		start := i
		s := phys[i]
		for strings.HasSuffix(s, "\\") && i+1 < len(phys) {
			i++
			s = s[:len(s)-1] + phys[i]
		}
		out = append(out, logicalLine{num: start + 1, text: s})
	}
	return out
}

// stripComments replaces comments by a space, in place, across lines. String
// and character literals are kept as they are.
func stripComments(lines []logicalLine) error {
	inBlock := false
	blockStart := 0
	for li := range lines {
		s := lines[li].text
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if inBlock {
				if c == '*' && i+1 < len(s) && s[i+1] == '/' {
					inBlock = false
					i++
					b.WriteByte(' ')
				}
				continue
			}
			switch {
			case c == '/' && i+1 < len(s) && s[i+1] == '/':
				i = len(s)
			case c == '/' && i+1 < len(s) && s[i+1] == '*':
				inBlock, blockStart = true, lines[li].num
				i++
			case c == '"' || c == '\'':
				j := i + 1
				for j < len(s) && s[j] != c {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(s) {
					return fmt.Errorf("line %d: unterminated %c literal", lines[li].num, c)
				}
				b.WriteString(s[i : j+1])
				i = j
			default:
				b.WriteByte(c)
			}
		}
		lines[li].text = b.String()
	}
	if inBlock {
		return fmt.Errorf("line %d: unterminated comment", blockStart)
	}
	return nil
}

func splitDirective(text string) (dir, arg string) {
	text = strings.TrimSpace(strings.TrimPrefix(text, "#"))
	i := strings.IndexAny(text, " \t(")
	if i < 0 {
		return text, ""
	}
	return text[:i], normalizeSpace(text[i:])
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		if i := strings.IndexByte(f[0], '('); i >= 0 {
			return f[0][:i]
		}
		return f[0]
	}
	return ""
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// indexIdent finds word as a whole identifier in s.
func indexIdent(s, word string) int {
	off := 0
	for {
		i := strings.Index(s[off:], word)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(word)
		if (i == 0 || !isIdentByte(s[i-1])) && (end == len(s) || !isIdentByte(s[end])) {
			return i
		}
		off = end
	}
}

func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// parseDecl parses "<ret> <name>(<params>)" (the text between DUCKDB_C_API
// and the semicolon).
func parseDecl(s string) (Decl, error) {
	s = normalizeSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return Decl{}, fmt.Errorf("DUCKDB_C_API declaration %q has no parameter list", s)
	}
	head := strings.TrimSpace(s[:open])
	nameStart := len(head)
	for nameStart > 0 && isIdentByte(head[nameStart-1]) {
		nameStart--
	}
	name := head[nameStart:]
	ret := strings.TrimSpace(head[:nameStart])
	if !identRE.MatchString(name) || ret == "" {
		return Decl{}, fmt.Errorf("cannot find return type and name in %q", s)
	}
	depth, closeIdx := 0, -1
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				closeIdx = i
			}
		}
		if closeIdx >= 0 {
			break
		}
	}
	if closeIdx < 0 {
		return Decl{}, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	if tail := strings.TrimSpace(s[closeIdx+1:]); tail != "" {
		return Decl{}, fmt.Errorf("unexpected %q after the parameters of %s", tail, name)
	}
	params := strings.TrimSpace(s[open+1 : closeIdx])
	params = strings.ReplaceAll(strings.ReplaceAll(params, "( ", "("), " )", ")")
	return Decl{Name: name, Ret: ret, Params: params}, nil
}

// member renders d as a struct member: "<ret> (*<name>)(<params>);".
func (d Decl) member() string {
	sep := " "
	if strings.HasSuffix(d.Ret, "*") {
		sep = ""
	}
	return d.Ret + sep + "(*" + d.Name + ")(" + d.Params + ");"
}

// Generate renders cshim/duckdb_capi.h: struct duckdb_ext_api_v1 with one
// member per slot of slots, typed from h.
func Generate(slots, next SlotList, h *Header) ([]byte, error) {
	if err := CheckPrefix(slots, next); err != nil {
		return nil, err
	}
	declared := 0
	for _, s := range slots.Slots {
		if len(h.Decls[s]) > 0 {
			declared++
		}
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by go run ./tools/capigen; DO NOT EDIT.\n")
	p("//\n")
	p("// The function table of DuckDB's C extension API: access->get_api(info, version)\n")
	p("// returns a pointer to a struct duckdb_ext_api_v1, one function pointer per slot, in\n")
	p("// slot order. Members are typed with the prototypes duckdb.h declares.\n")
	p("//\n")
	p("// Slots:      %s (%d slots)\n", slots.Name, len(slots.Slots))
	p("// Extended by: %s (%d slots, the first %d equal)\n", next.Name, len(next.Slots), len(slots.Slots))
	if h.APIVersion != "" {
		p("// Prototypes: duckdb.h, C API surface %s (%d of %d slots declared)\n", h.APIVersion, declared, len(slots.Slots))
	} else {
		p("// Prototypes: duckdb.h (%d of %d slots declared)\n", declared, len(slots.Slots))
	}
	p("//\n")
	p("// A member that duckdb.h declares under #if is typed under the same condition and is\n")
	p("// a void * otherwise; a slot duckdb.h does not declare is a void *. Either way every\n")
	p("// slot keeps its offset, slot * sizeof(void *), whatever DUCKDB_API_* macros the\n")
	p("// includer defines. The table is only valid inside the extension entry point: copy\n")
	p("// the slots you use there. See cshim/README.md.\n")
	p("\n#ifndef MORAINE_DUCKDB_CAPI_H\n#define MORAINE_DUCKDB_CAPI_H\n\n")
	p("#include \"duckdb.h\"\n\n")
	p("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
	p("//! Number of slots (members) of struct duckdb_ext_api_v1.\n")
	p("#define DUCKDB_EXT_API_V1_SLOT_COUNT %d\n\n", len(slots.Slots))
	p("typedef struct duckdb_ext_api_v1 {\n")

	type run struct {
		cond  string
		first int
		end   int
	}
	condOf := func(i int) (string, bool) {
		ds := h.Decls[slots.Slots[i]]
		if len(ds) == 0 {
			return "", false
		}
		if len(ds) == 1 {
			return ds[0].Cond, true
		}
		return "\x00multi", true // rendered per member
	}
	for i := 0; i < len(slots.Slots); {
		cond, ok := condOf(i)
		j := i + 1
		for j < len(slots.Slots) {
			c2, ok2 := condOf(j)
			if ok2 != ok || c2 != cond || cond == "\x00multi" {
				break
			}
			j++
		}
		r := run{cond: cond, first: i, end: j}
		switch {
		case !ok:
			for k := r.first; k < r.end; k++ {
				p("\tvoid *%s; // slot %d: not declared in duckdb.h\n", slots.Slots[k], k)
			}
		case cond == "":
			for k := r.first; k < r.end; k++ {
				p("\t%s // slot %d\n", h.Decls[slots.Slots[k]][0].member(), k)
			}
		case cond == "\x00multi":
			ds := h.Decls[slots.Slots[i]]
			for n, d := range ds {
				if n == 0 {
					p("#if %s\n", orTrue(d.Cond))
				} else {
					p("#elif %s\n", orTrue(d.Cond))
				}
				p("\t%s // slot %d\n", d.member(), i)
			}
			p("#else\n\tvoid *%s; // slot %d\n#endif\n", slots.Slots[i], i)
		default:
			p("#if %s\n", cond)
			for k := r.first; k < r.end; k++ {
				p("\t%s // slot %d\n", h.Decls[slots.Slots[k]][0].member(), k)
			}
			p("#else\n")
			for k := r.first; k < r.end; k++ {
				p("\tvoid *%s; // slot %d\n", slots.Slots[k], k)
			}
			p("#endif\n")
		}
		i = j
	}
	p("} duckdb_ext_api_v1;\n\n")
	p("//! X-macro over the slots in order: X(slot index, member name).\n")
	p("#define DUCKDB_EXT_API_V1_SLOTS(X) \\\n")
	for i, s := range slots.Slots {
		if i == len(slots.Slots)-1 {
			p("\tX(%d, %s)\n\n", i, s)
		} else {
			p("\tX(%d, %s) \\\n", i, s)
		}
	}
	p("#ifdef __cplusplus\n")
	p("static_assert(sizeof(duckdb_ext_api_v1) == DUCKDB_EXT_API_V1_SLOT_COUNT * sizeof(void *), \"duckdb_ext_api_v1 has padding or a non-pointer member\");\n")
	p("#else\n")
	p("_Static_assert(sizeof(duckdb_ext_api_v1) == DUCKDB_EXT_API_V1_SLOT_COUNT * sizeof(void *), \"duckdb_ext_api_v1 has padding or a non-pointer member\");\n")
	p("#endif\n\n")
	p("#ifdef __cplusplus\n}\n#endif\n\n")
	p("#endif // MORAINE_DUCKDB_CAPI_H\n")
	return b.Bytes(), nil
}

func orTrue(cond string) string {
	if cond == "" {
		return "1"
	}
	return cond
}
