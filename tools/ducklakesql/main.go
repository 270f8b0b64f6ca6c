// Command ducklakesql captures the SQL DuckLake sends to its metadata
// catalog: it runs a script of user actions in one DuckDB process with
// DuckDB's query log on, and writes, per action, every statement DuckDB
// logged on DuckLake's own connections (the user's statements left out).
// The capture is the contract moraine's DuckLake rows are built and tested
// against (docs/ducklake-sql/).
//
//	go run ./tools/ducklakesql -host build/duckdb-official-v1.5.5 \
//	    -ducklake ../shared/ducklake/v1.5.5/ducklake.duckdb_extension \
//	    -actions docs/ducklake-sql/actions-1.0.sql > docs/ducklake-sql/contract-1.0.txt
//
// The host is one of the project's `-sql` runners (build/duckdb-official-*
// or build/duckdb-shell-*): it reads a script on stdin and prints each
// result as a header line and rows. The actions file holds actions, each
// starting with a line `-- action: <title>` followed by its statements (one
// per line, `;`-terminated); `{dir}` in them is a fresh directory. Lines
// `-- before <host> <ducklake>` ... `-- end before` hold a script run
// before the capture in the same directory by another host and DuckLake
// build (to make a lake of an older DuckLake for a migration), not
// captured. Paths, UUIDs and timestamps are normalized (<dir>, <uuid>,
// <timestamp>), so two captures of the same DuckLake compare equal.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

type action struct {
	title string
	sql   []string
}

type before struct {
	host, ducklake string
	sql            []string
}

type script struct {
	before  *before
	actions []action
}

// parse reads an actions file.
func parse(r io.Reader) (script, error) {
	var s script
	sc := bufio.NewScanner(r)
	inBefore := false
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "-- before "):
			f := strings.Fields(strings.TrimPrefix(line, "-- before "))
			if len(f) != 2 || s.before != nil || len(s.actions) > 0 {
				return s, fmt.Errorf("line %d: want one `-- before <host> <ducklake>` before the first action", n)
			}
			s.before = &before{host: f[0], ducklake: f[1]}
			inBefore = true
		case line == "-- end before":
			if !inBefore {
				return s, fmt.Errorf("line %d: `-- end before` without `-- before`", n)
			}
			inBefore = false
		case strings.HasPrefix(line, "-- action: "):
			if inBefore {
				return s, fmt.Errorf("line %d: an action inside `-- before`", n)
			}
			s.actions = append(s.actions, action{title: strings.TrimPrefix(line, "-- action: ")})
		case strings.HasPrefix(line, "--"):
		case inBefore:
			s.before.sql = append(s.before.sql, line)
		case len(s.actions) == 0:
			return s, fmt.Errorf("line %d: a statement before the first `-- action:`", n)
		default:
			if !strings.HasSuffix(line, ";") {
				return s, fmt.Errorf("line %d: a statement is one line ending in ';': %q", n, line)
			}
			a := &s.actions[len(s.actions)-1]
			a.sql = append(a.sql, line)
		}
	}
	if inBefore {
		return s, errors.New("`-- before` without `-- end before`")
	}
	if len(s.actions) == 0 {
		return s, errors.New("no `-- action:` in the file")
	}
	return s, sc.Err()
}

const marker = "@@"

// captureDir is where a capture's lakes live (removed before and after).
const captureDir = "/tmp/moraine-ducklakesql-capture"

// logged is one query-log entry.
type logged struct {
	Action int    `json:"a"`
	Conn   int64  `json:"c"`
	SQL    string `json:"m"`
}

// captureScript is the script the host runs: each action after a
// truncation of the log, then the log read back as one JSON object per
// line.
func captureScript(s script, ducklake, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SET threads = 1;\nLOAD '%s';\nCALL enable_logging('QueryLog');\n", ducklake)
	for i, a := range s.actions {
		b.WriteString("CALL truncate_duckdb_logs();\n")
		for _, q := range a.sql {
			b.WriteString(strings.ReplaceAll(q, "{dir}", dir) + "\n")
		}
		fmt.Fprintf(&b, "SELECT '%s' || to_json({a: %d, c: connection_id, m: message})::VARCHAR AS j FROM duckdb_logs WHERE type = 'QueryLog' ORDER BY context_id;\n", marker, i)
	}
	return b.String()
}

func runHost(host, sql string) ([]byte, error) {
	cmd := exec.Command(host, "-setting", "allow_unsigned_extensions=true", "-sql")
	cmd.Stdin = strings.NewReader(sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %v\n%s", host, err, stderr.Bytes())
	}
	return out, nil
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}(:?\d{2})?)?`)
)

func normalize(sql, dir string) string {
	sql = strings.ReplaceAll(sql, dir, "<dir>")
	sql = uuidRE.ReplaceAllString(sql, "<uuid>")
	return timeRE.ReplaceAllString(sql, "<timestamp>")
}

// report writes the capture: per action, its statements and the metadata
// statements DuckLake sent for it.
func report(w io.Writer, s script, out []byte, dir, header string) error {
	per := make([][]logged, len(s.actions))
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, marker) {
			continue
		}
		var l logged
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, marker)), &l); err != nil {
			return fmt.Errorf("a log line the capture cannot read: %v: %q", err, line)
		}
		if l.Action < 0 || l.Action >= len(per) {
			return fmt.Errorf("a log line of no action: %q", line)
		}
		per[l.Action] = append(per[l.Action], l)
	}
	fmt.Fprint(w, header)
	total := 0
	for i, a := range s.actions {
		user := int64(-1)
		var meta []logged
		for _, l := range per[i] {
			if strings.HasPrefix(l.SQL, "SELECT '"+marker+"'") {
				continue
			}
			if user < 0 {
				user = l.Conn // the action's first statement is the user's
			}
			if l.Conn == user {
				continue
			}
			meta = append(meta, l)
		}
		total += len(meta)
		fmt.Fprintf(w, "\n==== %s\n", a.title)
		for _, q := range a.sql {
			fmt.Fprintf(w, "user> %s\n", normalize(strings.ReplaceAll(q, "{dir}", dir), dir))
		}
		fmt.Fprintf(w, "-> %d metadata statements\n", len(meta))
		conns := map[int64]int{}
		for j, l := range meta {
			if _, ok := conns[l.Conn]; !ok {
				conns[l.Conn] = len(conns) + 1
			}
			fmt.Fprintf(w, "[%d] (conn %d) %s\n", j+1, conns[l.Conn], strings.TrimSpace(normalize(l.SQL, dir)))
		}
	}
	fmt.Fprintf(w, "\n==== %d actions, %d metadata statements\n", len(s.actions), total)
	return nil
}

func main() {
	host := flag.String("host", "", "a -sql runner (build/duckdb-official-<version>)")
	ducklake := flag.String("ducklake", "", "the DuckLake extension the capture loads")
	actions := flag.String("actions", "", "the actions file")
	flag.Parse()
	if *host == "" || *ducklake == "" || *actions == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*host, *ducklake, *actions, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ducklakesql:", err)
		os.Exit(1)
	}
}

func run(host, ducklake, actions string, w io.Writer) error {
	f, err := os.Open(actions)
	if err != nil {
		return err
	}
	s, err := parse(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", actions, err)
	}
	// The same directory for every capture: the paths DuckLake writes into
	// Parquet files (a delete file names its data file) change those
	// files' sizes, which the SQL carries. One capture runs at a time.
	dir := captureDir
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if b := s.before; b != nil {
		sql := fmt.Sprintf("LOAD '%s';\n%s\n", b.ducklake, strings.ReplaceAll(strings.Join(b.sql, "\n"), "{dir}", dir))
		if _, err := runHost(b.host, sql); err != nil {
			return fmt.Errorf("the script before the capture: %w", err)
		}
	}
	out, err := runHost(host, captureScript(s, ducklake, dir))
	if err != nil {
		return err
	}
	header := fmt.Sprintf("DuckLake -> metadata catalog SQL, captured by tools/ducklakesql from %s\n"+
		"(DuckDB's query log; every statement on DuckLake's own connections, per user action;\n"+
		"paths, UUIDs and timestamps normalized; conn N numbers DuckLake's connections per action).\n", filepath.Base(actions))
	return report(w, s, out, dir, header)
}
