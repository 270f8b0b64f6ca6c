// Package pgtest starts a private PostgreSQL server for benchmarks that
// compare moraine with DuckLake on PostgreSQL: a fresh cluster (initdb,
// PostgreSQL's default settings: fsync and synchronous_commit on) in a
// temporary directory, listening on 127.0.0.1 at a free port, stopped and
// removed when the test or benchmark ends. It uses the server binaries of
// the machine (PostgreSQL 15 under /usr/lib/postgresql/15/bin on this kind,
// or PG_BINDIR); PostgreSQL refuses to run as root, so as root the server
// runs as the postgres user.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// Server is a running cluster.
type Server struct {
	Port int
	bin  string
	dir  string
	as   []string // the command prefix that runs as the cluster's owner
}

// BinDir is where the server binaries are: PG_BINDIR, or the newest
// /usr/lib/postgresql/<major>/bin.
func BinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestMajor := "", -1
	for _, d := range dirs {
		major, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err == nil && major > bestMajor {
			best, bestMajor = d, major
		}
	}
	if best == "" {
		return "", fmt.Errorf("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (set PG_BINDIR)")
	}
	return best, nil
}

// Start starts a cluster; it fails tb when it cannot.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := BinDir()
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{bin: bin, dir: tb.TempDir()}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			tb.Fatalf("running as root, PostgreSQL needs a user to run as (postgres): %v", err)
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
		if err := exec.Command("chown", "-R", "postgres", s.dir).Run(); err != nil {
			tb.Fatalf("chown %s: %v", s.dir, err)
		}
		// The temporary directory's parents must be searchable by it.
		for d := filepath.Dir(s.dir); d != "/" && d != "."; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
	}
	data := filepath.Join(s.dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s", s.Port, s.dir)
	if out, err := s.run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(s.dir, "server.log"), "-w", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		tb.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	tb.Cleanup(func() { s.run("pg_ctl", "-D", data, "-m", "fast", "-w", "stop") })
	return s
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	argv := append(append(append([]string{}, s.as...), filepath.Join(s.bin, tool)), args...)
	return exec.Command(argv[0], argv[1:]...).CombinedOutput()
}

// CreateDB creates a database and returns its libpq connection string.
func (s *Server) CreateDB(tb testing.TB, name string) string {
	tb.Helper()
	if out, err := s.run("createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", "postgres", name); err != nil {
		tb.Fatalf("createdb %s: %v\n%s", name, err, out)
	}
	return fmt.Sprintf("dbname=%s host=127.0.0.1 port=%d user=postgres", name, s.Port)
}
