package sqllogictest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fakeEngine is an Engine for the runner's own tests: no SQL, a handful of
// commands, so that what the runner does (substitution, comparison,
// concurrency, requirements) is tested without DuckDB. A statement or
// query is one command:
//
//	ROWS <type> <type>...      then one row per line, values separated by |
//	                           (an empty line: no rows); "<empty>" is ""
//	ECHO <text>                one VARCHAR value: the text
//	EQUAL <a> <b>...           one BOOLEAN value: whether the words are equal
//	FAIL <type>: <message>     an error "<type> Error: <message>" of that type
//	INCR <key> / GET <key>     a counter of the database (GET: an INTEGER)
//	BARRIER <key> <n>          wait (up to 10 s) until n callers wait at key
//	SLEEP <ms>                 sleep, or until the context is cancelled
//	READ <path>                one VARCHAR value: the file's contents
//	SETTING <name>             one VARCHAR value: the setting (as opened, or SETDB; NULL if unset)
//	SETDB <name> <value>       set a setting of the database
//	LOAD <name|'file'>         succeeds for the names in fakeExtensions and any file
//	SELECT current_setting('<name>')::VARCHAR    as SETTING
//	SELECT SETSEED(<x>)        succeeds
type fakeEngine struct {
	mu  sync.Mutex
	dbs map[string]*fakeData // by path, for databases on "disk"
}

// fakeExtensions are the extensions LOAD finds by name.
var fakeExtensions = map[string]bool{"json": true, "parquet": true}

type fakeData struct {
	mu       sync.Mutex
	counters map[string]int
	barriers map[string]*fakeBarrier
}

type fakeBarrier struct {
	n, arrived int
	done       chan struct{}
}

type fakeDB struct {
	data     *fakeData
	mu       sync.Mutex
	settings map[string]string
}

// fakeSettingDefaults are the values of settings nobody set.
var fakeSettingDefaults = map[string]string{"autoload_known_extensions": "false", "allow_unsigned_extensions": "false"}

type fakeConn struct{ db *fakeDB }

func (e *fakeEngine) Open(ctx context.Context, cfg Config) (Database, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := &fakeData{counters: map[string]int{}, barriers: map[string]*fakeBarrier{}}
	if cfg.Path != "" {
		if e.dbs == nil {
			e.dbs = map[string]*fakeData{}
		}
		if old, ok := e.dbs[cfg.Path]; ok {
			d = old
		} else {
			e.dbs[cfg.Path] = d
		}
	}
	settings := map[string]string{}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	return &fakeDB{data: d, settings: settings}, nil
}

func (d *fakeDB) Connect(ctx context.Context) (Conn, error) { return &fakeConn{db: d}, nil }
func (d *fakeDB) Close() error                              { return nil }
func (c *fakeConn) Close() error                            { return nil }

func (c *fakeConn) Exec(ctx context.Context, sql string) error {
	_, err := c.Query(ctx, sql)
	return err
}

var currentSettingRE = regexp.MustCompile(`^SELECT current_setting\('([a-z_]+)'\)::VARCHAR$`)

func one(v string) *Result {
	return &Result{Columns: []string{"v"}, Types: []string{"VARCHAR"}, Rows: [][]string{{v}}}
}

func (c *fakeConn) Query(ctx context.Context, sql string) (*Result, error) {
	if m := currentSettingRE.FindStringSubmatch(sql); m != nil {
		sql = "SETTING " + m[1]
	}
	if strings.HasPrefix(sql, "SELECT SETSEED(") {
		return one("ok"), nil
	}
	cmd, rest, _ := strings.Cut(sql, " ")
	d := c.db.data
	switch cmd {
	case "ROWS":
		head, body, _ := strings.Cut(rest, "\n")
		res := &Result{Types: strings.Fields(head)}
		for i := range res.Types {
			res.Columns = append(res.Columns, fmt.Sprintf("c%d", i+1))
		}
		for _, l := range strings.Split(body, "\n") {
			if l == "" {
				continue
			}
			row := strings.Split(l, "|")
			for i, v := range row {
				if v == "<empty>" {
					row[i] = "(empty)"
				}
			}
			res.Rows = append(res.Rows, row)
		}
		return res, nil
	case "ECHO":
		return one(rest), nil
	case "EQUAL":
		vs := strings.Fields(rest)
		eq := "1"
		for _, v := range vs {
			if v != vs[0] {
				eq = "0"
			}
		}
		return &Result{Columns: []string{"eq"}, Types: []string{"BOOLEAN"}, Rows: [][]string{{eq}}}, nil
	case "FAIL":
		typ, msg, _ := strings.Cut(rest, ": ")
		return nil, &Error{Type: typ, Message: typ + " Error: " + msg}
	case "INCR", "GET":
		d.mu.Lock()
		defer d.mu.Unlock()
		if cmd == "INCR" {
			d.counters[rest]++
			return one("ok"), nil
		}
		return &Result{Columns: []string{"n"}, Types: []string{"INTEGER"}, Rows: [][]string{{strconv.Itoa(d.counters[rest])}}}, nil
	case "BARRIER":
		key, ns, _ := strings.Cut(rest, " ")
		n, _ := strconv.Atoi(ns)
		d.mu.Lock()
		b := d.barriers[key]
		if b == nil {
			b = &fakeBarrier{n: n, done: make(chan struct{})}
			d.barriers[key] = b
		}
		b.arrived++
		if b.arrived == b.n {
			close(b.done)
		}
		d.mu.Unlock()
		select {
		case <-b.done:
			return one("ok"), nil
		case <-time.After(10 * time.Second):
			return nil, &Error{Type: "Invalid Input", Message: "Invalid Input Error: barrier " + key + " timed out: the callers do not run concurrently"}
		}
	case "SLEEP":
		ms, _ := strconv.Atoi(rest)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return one("ok"), nil
		case <-ctx.Done():
			return nil, &Error{Type: "INTERRUPT", Message: "INTERRUPT Error: Interrupted!"}
		}
	case "READ":
		b, err := os.ReadFile(rest)
		if err != nil {
			return nil, &Error{Type: "IO", Message: "IO Error: " + err.Error()}
		}
		return one(string(b)), nil
	case "SETTING":
		c.db.mu.Lock()
		v, ok := c.db.settings[rest]
		c.db.mu.Unlock()
		if !ok {
			v, ok = fakeSettingDefaults[rest]
		}
		if !ok {
			v = "NULL"
		}
		return one(v), nil
	case "SETDB":
		name, value, _ := strings.Cut(rest, " ")
		c.db.mu.Lock()
		c.db.settings[name] = value
		c.db.mu.Unlock()
		return one("ok"), nil
	case "LOAD":
		if strings.HasPrefix(rest, "'") || fakeExtensions[strings.Trim(rest, `"`)] {
			return one("ok"), nil
		}
		return nil, &Error{Type: "IO", Message: "IO Error: Extension " + rest + " not found"}
	}
	return nil, &Error{Type: "Parser", Message: fmt.Sprintf("Parser Error: syntax error at or near %q", cmd)}
}

// ValuesEqual compares INTEGER and DOUBLE values as numbers (DOUBLE within
// 1% + 1e-8, as DuckDB's ApproxEqual).
func (c *fakeConn) ValuesEqual(typ, got, want string) bool {
	switch typ {
	case "INTEGER":
		g, err1 := strconv.ParseFloat(got, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		return err1 == nil && err2 == nil && g == w
	case "DOUBLE":
		g, err1 := strconv.ParseFloat(got, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		d := g - w
		if d < 0 {
			d = -d
		}
		tol := w
		if tol < 0 {
			tol = -tol
		}
		return d <= tol*0.01+1e-8
	}
	return false
}
