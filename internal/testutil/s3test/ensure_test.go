package s3test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stubGo is a go command for tools/ensure-versitygw.sh: `go env GOBIN`
// and `go env GOPATH` answer from the environment, `go version -m FILE`
// reports the module version written on FILE's second line, and `go
// install` logs its arguments and writes such a file into GOBIN.
const stubGo = `#!/bin/sh
case "$1" in
env) if [ "$2" = GOBIN ]; then echo "$STUB_GOBIN"; else echo "$STUB_GOPATH"; fi ;;
version) v=$(sed -n 2p "$3" 2>/dev/null); [ -n "$v" ] || exit 1
	printf '%s: go1.26\n\tpath\tgithub.com/versity/versitygw/cmd/versitygw\n\tmod\tgithub.com/versity/versitygw\t%s\th1:x=\n' "$3" "$v" ;;
install) echo "$*" >>"$STUB_LOG"; printf '#!/bin/sh\n%s\n' "${2##*@}" >"$GOBIN/versitygw"; chmod +x "$GOBIN/versitygw" ;;
*) exit 2 ;;
esac
`

// make test installs versitygw itself when it is missing or another
// version (tools/ensure-versitygw.sh), into the directory FindVersitygw
// searches, and installs nothing when the right one is there.
func TestEnsureVersitygwInstallsWhatTheTestsFind(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "tools", "ensure-versitygw.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, gobin, log := filepath.Join(dir, "bin"), filepath.Join(dir, "gobin"), filepath.Join(dir, "install.log")
	for _, d := range []string{bin, gobin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(stubGo), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("GOBIN", gobin)
	t.Setenv(EnvVersitygw, "")
	run := func() string {
		t.Helper()
		cmd := exec.Command("bash", script, "v1.8.0")
		cmd.Env = append(os.Environ(), "STUB_GOBIN="+gobin, "STUB_GOPATH="+filepath.Join(dir, "gopath"), "STUB_LOG="+log)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ensure-versitygw.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	installs := func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(strings.TrimSpace(string(b)))
	}

	run()
	if got := strings.Join(installs(), " "); got != "install github.com/versity/versitygw/cmd/versitygw@v1.8.0" {
		t.Fatalf("with no versitygw the script ran %q, want one go install of v1.8.0", got)
	}
	if p, err := FindVersitygw(); err != nil || p != filepath.Join(gobin, "versitygw") {
		t.Fatalf("the tests find %q (%v), want the installed %s", p, err, filepath.Join(gobin, "versitygw"))
	}
	out := run()
	if n := len(installs()); n != 2 || !strings.Contains(out, filepath.Join(gobin, "versitygw")) {
		t.Fatalf("with v1.8.0 installed the script installed again (%d log fields) or did not say where it is:\n%s", n, out)
	}
	// Another version is replaced.
	if err := os.WriteFile(filepath.Join(gobin, "versitygw"), []byte("#!/bin/sh\nv1.7.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run()
	if n := len(installs()); n != 4 {
		t.Fatalf("over v1.7.0 the script ran %d installs, want a second one", n/2)
	}
}

// The version the harness expects is the one make test and .ci/run install.
func TestVersitygwVersionIsOneVersion(t *testing.T) {
	for file, want := range map[string]string{
		"Makefile": "VERSITYGW_VERSION ?= " + VersitygwVersion,
		".ci/run":  "VERSITYGW_VERSION=" + VersitygwVersion,
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("%s does not pin %q (s3test.VersitygwVersion)", file, want)
		}
	}
}
