package main

import (
	"context"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// TestMoveWalCommand moves a local lake's WAL to another directory and
// back: the report, opens with and without the new WAL store, a commit
// through it, and the refusals.
func TestMoveWalCommand(t *testing.T) {
	ctx := context.Background()
	lake, walDir := t.TempDir(), t.TempDir()
	local := func(dir string) objstore.Store {
		s, err := objstore.NewLocal(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	c, err := core.Open(ctx, local(lake), core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, func(tx *core.Transaction) error { _, err := tx.CreateSchema("sales"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCmd(t, "move-wal", lake, walDir)
	if code != 0 {
		t.Fatalf("move-wal: %d %s", code, errs)
	}
	walID := local(walDir).String()
	wantContains(t, "move-wal", out, "lake      "+lake, "wal       the lake's own store -> "+walID,
		"catalog   format 13, head snapshot 1", "open      with WAL store "+walID+" from now on")

	// Without the WAL store the lake is refused, naming where its WAL is.
	code, _, errs = runCmd(t, "inspect", lake)
	if code != 1 {
		t.Fatalf("inspect without the WAL store: %d", code)
	}
	wantContains(t, "inspect refusal", errs, "WAL store mismatch", walID)
	// Every command takes -wal-store: inspect and migrate read and check
	// the lake through it (refused without it, above).
	code, out, errs = runCmd(t, "inspect", "-wal-store", walDir, lake)
	if code != 0 {
		t.Fatalf("inspect -wal-store: %d %s", code, errs)
	}
	wantContains(t, "inspect -wal-store", out, "sales")
	if code, _, errs = runCmd(t, "migrate", lake); code != 1 {
		t.Fatalf("migrate without the WAL store: %d", code)
	}
	wantContains(t, "migrate refusal", errs, walID)
	code, out, errs = runCmd(t, "migrate", "-wal-store", walDir, lake)
	if code != 0 {
		t.Fatalf("migrate -wal-store: %d %s", code, errs)
	}
	wantContains(t, "migrate -wal-store", out, "format    13")
	// With it, the lake opens and commits.
	c, err = core.Open(ctx, local(lake), core.CatalogOptions{WalStore: local(walDir)})
	if err != nil {
		t.Fatalf("open with the new WAL store: %v", err)
	}
	if _, err := c.Commit(ctx, func(tx *core.Transaction) error { _, err := tx.CreateSchema("ops"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Moving again without naming the current WAL store is refused.
	code, _, errs = runCmd(t, "move-wal", lake, lake)
	if code != 1 {
		t.Fatalf("move-wal without -wal-store: %d", code)
	}
	wantContains(t, "wrong current WAL store", errs, "is not where CatalogOptions.WalStore says")

	// Back into the lake's own store: inspect works again and sees both commits.
	code, out, errs = runCmd(t, "move-wal", "-wal-store", walDir, lake, lake)
	if code != 0 {
		t.Fatalf("move-wal back: %d %s", code, errs)
	}
	wantContains(t, "move-wal back", out, "wal       "+walID+" -> the lake's own store", "head snapshot 2", "open      without a WAL store")
	code, out, errs = runCmd(t, "inspect", lake)
	if code != 0 {
		t.Fatalf("inspect after the move back: %d %s", code, errs)
	}
	wantContains(t, "inspect after the move back", out, "sales", "ops")

	// Refusals: a log-resident lake, and bad usage.
	legacy := legacyLake(t, core.FormatLegacyLog)
	code, _, errs = runCmd(t, "move-wal", legacy, t.TempDir())
	if code != 1 {
		t.Fatalf("move-wal of a log-resident lake: %d", code)
	}
	wantContains(t, "log-resident refusal", errs, "moraine move-wal: migration required: the catalog is log-resident (format 10")
	if code, _, _ := runCmd(t, "move-wal", lake); code != 2 {
		t.Fatalf("move-wal with one URI: exit %d, want 2", code)
	}
}

// adopt and fold take -wal-store: a lake whose WAL was moved is adopted with
// its commit log in the WAL store, folded, and inspected through it.
func TestAdoptAndFoldTakeTheWalStore(t *testing.T) {
	ctx := context.Background()
	lake, walDir := t.TempDir(), t.TempDir()
	c, err := core.Open(ctx, mustLocal(t, lake), core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, func(tx *core.Transaction) error { _, err := tx.CreateSchema("sales"); return err }); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if code, _, errs := runCmd(t, "move-wal", lake, walDir); code != 0 {
		t.Fatalf("move-wal: %d %s", code, errs)
	}
	if code, _, errs := runCmd(t, "adopt", lake); code != 1 || !strings.Contains(errs, "WAL store mismatch") {
		t.Fatalf("adopt without the WAL store: %d %s", code, errs)
	}
	code, out, errs := runCmd(t, "adopt", "-wal-store", walDir, lake)
	if code != 0 {
		t.Fatalf("adopt -wal-store: %d %s", code, errs)
	}
	wantContains(t, "adopt -wal-store", out, "is log-resident")
	if objs, err := objstore.ListAll(ctx, mustLocal(t, walDir), "log/", ""); err != nil || len(objs) == 0 {
		t.Fatalf("the commit log is not in the WAL store: %d objects, %v", len(objs), err)
	}
	code, out, errs = runCmd(t, "fold", "-wal-store", walDir, lake)
	if code != 0 {
		t.Fatalf("fold -wal-store: %d %s", code, errs)
	}
	wantContains(t, "fold -wal-store", out, "unfolded slots")
	code, out, errs = runCmd(t, "inspect", "-wal-store", walDir, lake)
	if code != 0 {
		t.Fatalf("inspect -wal-store of the adopted lake: %d %s", code, errs)
	}
	wantContains(t, "inspect -wal-store", out, "log-resident", "sales")
}

func mustLocal(t *testing.T, dir string) objstore.Store {
	t.Helper()
	s, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
