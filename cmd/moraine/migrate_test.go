package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// legacyLake creates a local lake at an older format with a little
// content: a schema, a table with a data file and a delete file, a view.
func legacyLake(t *testing.T, format uint64, origin *uint64) string {
	t.Helper()
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = core.CreateLegacyForTest(context.Background(), store, core.CatalogOptions{}, format, origin, func(c *core.Catalog) error {
		_, err := c.Commit(context.Background(), func(tx *core.Transaction) error {
			s, err := tx.CreateSchema("sales")
			if err != nil {
				return err
			}
			tb, err := tx.CreateTable(s, "orders", []core.ColumnDef{{Name: "a", Type: "int64"}})
			if err != nil {
				return err
			}
			f, err := tx.RegisterDataFile(core.DataFileDef{TableID: tb, Path: "f.parquet", RecordCount: 3})
			if err != nil {
				return err
			}
			if _, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: tb, DataFileID: f, Path: "d.parquet", DeleteCount: 1}); err != nil {
				return err
			}
			_, err = tx.CreateView(s, "v", "SELECT 1", "", "")
			return err
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
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
	dir := legacyLake(t, core.FormatLegacy, nil)

	code, out, errs := runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errs)
	}
	wantContains(t, "inspect before", out, "format    9, commit-log origin: none")

	code, out, errs = runCmd(t, "migrate", "-dry-run", dir)
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errs)
	}
	wantContains(t, "dry run", out, "format    9 -> 12 (dry run: would migrate; nothing was written)", "9->11 (name directory)", "11->12 (delete-file target lookup)")

	code, out, errs = runCmd(t, "migrate", dir)
	if code != 0 {
		t.Fatalf("migrate: %d %s", code, errs)
	}
	wantContains(t, "migrate", out, "format    9 -> 12, migrated\n", "9->11 (name directory: 4 entries", "11->12 (delete-file target lookup: 1 entries", "origin    none")
	if strings.Contains(out, "resumed") {
		t.Fatalf("an uninterrupted migration reports a resume:\n%s", out)
	}

	code, out, _ = runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatal("inspect after migration failed")
	}
	wantContains(t, "inspect after", out, "format    12, commit-log origin: none", "sales.orders")

	code, out, errs = runCmd(t, "migrate", dir)
	if code != 0 {
		t.Fatalf("second migrate: %d %s", code, errs)
	}
	wantContains(t, "second migrate", out, "format    12: nothing to do")
}

func TestMigrateCommandRefusesLogResidentLakes(t *testing.T) {
	dir := legacyLake(t, core.FormatLegacyLog, nil)
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
