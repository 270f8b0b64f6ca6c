package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/internal/testutil/lakes"
)

// legacyLake is a copy of a local lake at an older format with a little
// content: a schema, a table with a data file and a delete file, a view
// (core's populateSmall wrote it). It returns the lake's directory.
func legacyLake(t *testing.T, format uint64) string {
	t.Helper()
	return lakes.Legacy(t, fmt.Sprintf("small-%d", format))
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func wantContains(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Fatalf("%s does not contain %q:\n%s", what, s, text)
		}
	}
}

func TestMigrateCommand(t *testing.T) {
	dir := legacyLake(t, core.FormatLegacy)

	code, out, errs := runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errs)
	}
	wantContains(t, "inspect before", out, "format    9, commit-log origin: none")

	code, out, errs = runCmd(t, "migrate", "-dry-run", dir)
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errs)
	}
	wantContains(t, "dry run", out, "format    9 -> 13 (dry run: would migrate; nothing was written)", "9->11 (name directory)", "11->12 (delete-file target lookup)", "12->13 (format stamp)")

	code, out, errs = runCmd(t, "migrate", dir)
	if code != 0 {
		t.Fatalf("migrate: %d %s", code, errs)
	}
	wantContains(t, "migrate", out, "format    9 -> 13, migrated\n", "9->11 (name directory: 4 entries", "11->12 (delete-file target lookup: 1 entries", "origin    none")
	if strings.Contains(out, "resumed") {
		t.Fatalf("an uninterrupted migration reports a resume:\n%s", out)
	}

	code, out, _ = runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatal("inspect after migration failed")
	}
	wantContains(t, "inspect after", out, "format    13, commit-log origin: none", "sales.orders")

	code, out, errs = runCmd(t, "migrate", dir)
	if code != 0 {
		t.Fatalf("second migrate: %d %s", code, errs)
	}
	wantContains(t, "second migrate", out, "format    13: nothing to do")
}

func TestMigrateCommandRefusesLogResidentLakes(t *testing.T) {
	dir := legacyLake(t, core.FormatLegacyLog)
	code, out, errs := runCmd(t, "migrate", dir)
	if code != 1 || out != "" {
		t.Fatalf("migrate of a log-resident lake: exit %d, output %q", code, out)
	}
	wantContains(t, "refusal", errs, "moraine migrate:", "log-resident", "commit-log library")
	// inspect reads a log-resident lake through the in-tree commit log.
	code, out, errs = runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatalf("inspect of a log-resident lake: exit %d: %s", code, errs)
	}
	wantContains(t, "inspect of a log-resident lake", out, "read through the in-tree commit log", "format    10")
}

func TestMigrateCommandUsage(t *testing.T) {
	if code, _, _ := runCmd(t, "migrate"); code != 2 {
		t.Fatalf("no URI: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "migrate", "-step", "0", t.TempDir()); code != 2 {
		t.Fatalf("-step 0: exit %d, want 2", code)
	}
	code, _, errs := runCmd(t, "migrate", t.TempDir())
	if code != 1 {
		t.Fatalf("empty directory: exit %d", code)
	}
	wantContains(t, "empty lake", errs, "nothing to migrate")
}

func TestAdoptInspectFoldCommands(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"demo", "-dir", dir, "-pace", "0", "-writers", "2", "-commits", "2"}, &out, &errb); code != 0 {
		t.Fatalf("demo: %d %s", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"adopt", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "is log-resident") {
		t.Fatalf("adopt: %d %q %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"inspect", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "read through the in-tree commit log") ||
		!strings.Contains(out.String(), "(log-resident)") {
		t.Fatalf("inspect of an adopted lake: %d %q %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"fold", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "unfolded slots: 0") {
		t.Fatalf("fold: %d %q %s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"migrate", dir}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "commit-log") {
		t.Fatalf("migrate of a log-resident lake must be refused: %d %q", code, errb.String())
	}
}
