package sqllogictest

import (
	"crypto/rand"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Substitution follows DuckDB's runner (ReplaceKeywords, then
// LoopReplacement at execution):
//
//  1. every variable X in scope (the standard ones below, Options.Env,
//     test-env and require-env) replaces both ${X} and {X};
//  2. {TEST_DIR} and __TEST_DIR__ become the file's test directory,
//     {UUID} a new random UUID (one per record: every {UUID} of a record
//     is the same one), {TEST_NAME} the file's path as given and
//     {BASE_TEST_NAME} that path with / replaced by _,
//     __WORKING_DIRECTORY__ the working directory;
//  3. when the record runs, ${v} of each enclosing loop variable v.
//
// What is left of the form ${NAME} is then looked up in the process
// environment; a name found nowhere fails the record (a typo would
// otherwise reach DuckDB as text).
//
// The standard variables are those DuckDB's test configuration defines:
// TEST_UUID (one per run), WORKING_DIR, DATA_DIR (WORKING_DIR/data),
// TEMP_DIR (the test directory), CATALOG_DIR (TEMP_DIR/TEST_UUID),
// TEST_NAME and TEST_NAME__NO_SLASH.

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// runUUID is TEST_UUID: one per process, as DuckDB's is one per unittest run.
var runUUID = newUUID()

// vars are the variables in scope of a file, in the order they were defined.
type vars struct {
	names  []string
	values map[string]string
}

func (v *vars) set(name, value string) {
	if v.values == nil {
		v.values = map[string]string{}
	}
	if _, ok := v.values[name]; !ok {
		v.names = append(v.names, name)
	}
	v.values[name] = value
}

// replaceKeywords is DuckDB's ReplaceKeywords (steps 1 and 2 above).
func (r *runner) replaceKeywords(s string) string {
	if !strings.ContainsAny(s, "{_") {
		return s
	}
	r.varsMu.RLock()
	names := slices.Clone(r.vars.names)
	values := r.vars.values
	for _, name := range names {
		value := values[name]
		s = strings.ReplaceAll(s, "${"+name+"}", value)
		s = strings.ReplaceAll(s, "{"+name+"}", value)
	}
	r.varsMu.RUnlock()
	s = strings.ReplaceAll(s, "{TEST_DIR}", r.testDir)
	if strings.Contains(s, "{UUID}") {
		s = strings.ReplaceAll(s, "{UUID}", newUUID())
	}
	s = strings.ReplaceAll(s, "{TEST_NAME}", r.f.Path)
	s = strings.ReplaceAll(s, "{BASE_TEST_NAME}", strings.ReplaceAll(r.f.Path, "/", "_"))
	s = strings.ReplaceAll(s, "__TEST_DIR__", r.testDir)
	if strings.Contains(s, "__WORKING_DIRECTORY__") {
		s = strings.ReplaceAll(s, "__WORKING_DIRECTORY__", r.workDir)
	}
	return s
}

// loopFrame is one running loop iteration.
type loopFrame struct {
	rec *Record
	// value is the iteration's value as text: the loop index, or the
	// foreach value as written. Loop variable conditions compare it.
	value string
}

// loopReplace replaces ${v} of the loop variables (DuckDB's LoopReplacement):
// outermost loop first; a foreach over several variables (a,b) splits its
// value at commas.
func (r *runner) loopReplace(s string, loops []loopFrame) (string, error) {
	for _, l := range loops {
		value := l.value
		if l.rec.IsForeach {
			value = r.replaceKeywords(value)
		}
		if len(l.rec.LoopVars) == 1 {
			s = strings.ReplaceAll(s, "${"+l.rec.LoopVars[0]+"}", value)
			continue
		}
		parts := strings.Split(value, ",")
		if len(parts) != len(l.rec.LoopVars) {
			return "", fmt.Errorf("foreach loop: number of commas in loop iterator (%s) does not match number of commas in replacement (%s)",
				l.rec.LoopVar, value)
		}
		for i, name := range l.rec.LoopVars {
			s = strings.ReplaceAll(s, "${"+name+"}", parts[i])
		}
	}
	return s, nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// processEnv replaces the ${NAME} left after substitution with environment
// variables, and reports the first name that is set nowhere.
func processEnv(s string) (string, string) {
	if !strings.Contains(s, "${") {
		return s, ""
	}
	missing := ""
	s = varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := os.LookupEnv(name); ok {
			return v
		}
		if missing == "" {
			missing = name
		}
		return m
	})
	return s, missing
}
