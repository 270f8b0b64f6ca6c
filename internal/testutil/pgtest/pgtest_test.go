package pgtest

import (
	"os/exec"
	"strings"
	"testing"
)

// The private server starts, serves SQL on its port, and says so: psql
// answers through the connection string CreateDB returns.
func TestStartServesSQL(t *testing.T) {
	s := Start(t)
	conn := s.CreateDB(t, "probe")
	bin, _ := BinDir()
	psql, err := exec.LookPath("psql")
	if err != nil {
		psql = bin + "/psql"
	}
	out, err := exec.Command(psql, conn, "-tAc", "SHOW synchronous_commit; SELECT 40 + 2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "42") || !strings.Contains(string(out), "on") {
		t.Fatalf("psql %q: %v\n%s", conn, err, out)
	}
}
