package objstore_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core/objstore"
)

// The multi-process race re-executes this test binary as children; a child
// sees these variables and runs childRace instead of the tests.
const (
	envChildDir  = "MORAINE_OBJSTORE_RACE_DIR"
	envChildID   = "MORAINE_OBJSTORE_RACE_ID"
	raceKeys     = 40
	raceChildren = 6
)

func init() {
	if dir := os.Getenv(envChildDir); dir != "" {
		os.Exit(childRace(dir, os.Getenv(envChildID)))
	}
}

// childRace races PutIfAbsent over raceKeys keys (and PutIfMatch on one
// shared CAS key) and prints one line per win.
func childRace(dir, id string) int {
	s, err := objstore.NewLocal(dir, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < raceKeys; i++ {
		key := fmt.Sprintf("race/%03d", i)
		_, err := s.PutIfAbsent(bg, key, []byte(id))
		switch {
		case err == nil:
			fmt.Fprintf(out, "won %s\n", key)
		case errors.Is(err, objstore.ErrExists):
		default:
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	// CAS race: everyone holds the ETag of the seed value.
	etag := strings.TrimSpace(os.Getenv("MORAINE_OBJSTORE_RACE_ETAG"))
	_, err = s.PutIfMatch(bg, "cas", []byte(id), etag)
	switch {
	case err == nil:
		fmt.Fprintln(out, "won cas")
	case errors.Is(err, objstore.ErrPrecondition):
	default:
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0
}

func TestLocalMultiProcessRaceHasOneWinnerPerKey(t *testing.T) {
	dir := t.TempDir()
	s, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := s.Put(bg, "cas", []byte("seed"))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, raceChildren)
	outs := make([]*bytes.Buffer, raceChildren)
	for i := range cmds {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChildDir+"="+dir, fmt.Sprintf("%s=child-%d", envChildID, i), "MORAINE_OBJSTORE_RACE_ETAG="+seed)
		outs[i] = &bytes.Buffer{}
		cmd.Stdout = outs[i]
		cmd.Stderr = os.Stderr
		cmds[i] = cmd
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
	}
	winners := map[string]string{}
	for i, o := range outs {
		for _, line := range strings.Split(strings.TrimSpace(o.String()), "\n") {
			if line == "" {
				continue
			}
			key := strings.TrimPrefix(line, "won ")
			if prev, dup := winners[key]; dup {
				t.Fatalf("%s won by both %s and child-%d", key, prev, i)
			}
			winners[key] = fmt.Sprintf("child-%d", i)
		}
	}
	if len(winners) != raceKeys+1 {
		t.Fatalf("%d keys have a winner, want %d", len(winners), raceKeys+1)
	}
	for key, who := range winners {
		data, _, err := s.Get(bg, key)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != who {
			t.Fatalf("%s holds %q but %s reported the win", key, data, who)
		}
	}
}

func TestLocalETagStableAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s1, _ := objstore.NewLocal(dir, 0)
	etag, err := s1.Put(bg, "m/x", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s2.Head(bg, "m/x")
	if err != nil || h.ETag != etag {
		t.Fatalf("reopened ETag %q (%v), want %q", h.ETag, err, etag)
	}
	if _, err := s2.PutIfMatch(bg, "m/x", []byte("v2"), etag); err != nil {
		t.Fatalf("PutIfMatch with the ETag from before reopen: %v", err)
	}
}

func TestLocalListingNeverShowsTempOrLockFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := objstore.NewLocal(dir, 0)
	if _, err := s.Put(bg, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// A crashed writer's leftovers.
	os.WriteFile(filepath.Join(dir, ".tmp", "leftover"), []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(dir, ".locks", "99"), nil, 0o644)
	all, err := objstore.ListAll(bg, s, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Key != "a" {
		t.Fatalf("List = %v, want only a", keysOfInfos(all))
	}
	// A key that looks like an internal name is escaped, so it lists fine.
	if _, err := s.Put(bg, ".tmp", []byte("y")); err != nil {
		t.Fatal(err)
	}
	all, _ = objstore.ListAll(bg, s, "", "")
	if len(all) != 2 || all[0].Key != ".tmp" {
		t.Fatalf("List = %v, want [.tmp a]", keysOfInfos(all))
	}
}

func TestLocalKeysMapToDirectories(t *testing.T) {
	dir := t.TempDir()
	s, _ := objstore.NewLocal(dir, 0)
	if _, err := s.Put(bg, "manifest/00000000000000000001.manifest", []byte("m")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest", "00000000000000000001.manifest")); err != nil {
		t.Fatalf("key not laid out as a file in a directory: %v", err)
	}
	// An object cannot also be a directory of other keys.
	_, err := s.Put(bg, "manifest/00000000000000000001.manifest/x", []byte("m"))
	if !errors.Is(err, objstore.ErrInvalid) {
		t.Fatalf("nesting a key under an object: %v, want ErrInvalid", err)
	}
	_, err = s.Put(bg, "manifest", []byte("m"))
	if !errors.Is(err, objstore.ErrInvalid) {
		t.Fatalf("an object over a directory: %v, want ErrInvalid", err)
	}
}

func keysOfInfos(infos []objstore.ObjectInfo) []string {
	var out []string
	for _, o := range infos {
		out = append(out, o.Key)
	}
	return out
}

func TestOpenResolvesURIs(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		uri  string
		want string
	}{
		{"file://" + dir + "/a", "file://" + dir + "/a"},
		{dir + "/b", "file://" + dir + "/b"},
		{"memory://lake1", "memory://lake1"},
	}
	for _, c := range cases {
		s, err := objstore.Open(bg, c.uri, objstore.Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", c.uri, err)
		}
		if s.String() != c.want {
			t.Errorf("Open(%q) = %s, want %s", c.uri, s, c.want)
		}
	}
	m1, _ := objstore.Open(bg, "memory://same", objstore.Options{})
	m2, _ := objstore.Open(bg, "memory://same", objstore.Options{})
	m1.Put(bg, "k", []byte("v"))
	if _, _, err := m2.Get(bg, "k"); err != nil {
		t.Fatalf("memory://same opened twice is not the same store: %v", err)
	}
	m3, _ := objstore.Open(bg, "memory://other", objstore.Options{})
	if _, _, err := m3.Get(bg, "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("memory://other sees memory://same's key: %v", err)
	}
}

func TestOpenRefusesBadURIsNamingAcceptedForms(t *testing.T) {
	for _, uri := range []string{"", "gs://bucket/x", "ftp://host/dir", "file://relative/dir", "memory://", "s3://", "s3:bucket", "hdfs:foo"} {
		_, err := objstore.Open(bg, uri, objstore.Options{})
		if !errors.Is(err, objstore.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", uri, err)
			continue
		}
		if !strings.Contains(err.Error(), "s3://bucket") || !strings.Contains(err.Error(), "memory://name") {
			t.Errorf("Open(%q) error does not name the accepted forms: %v", uri, err)
		}
	}
}
