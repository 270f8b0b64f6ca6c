package main

import (
	"context"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// A store of named lakes (DuckLake's METADATA_SCHEMA): inspect lists them,
// and -lake inspects one.
func TestInspectNamedLakes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root, err := objstore.NewLocal(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := core.LakeStore(root, "Sales 1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.Open(ctx, ls, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, func(tx *core.Transaction) error { _, err := tx.CreateSchema("quarterly"); return err }); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if err := core.PublishLake(ctx, root, "Sales 1"); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCmd(t, "inspect", dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errs)
	}
	wantContains(t, "inspect's output", out, `named lakes  "Sales 1"`, "no lake of its own")

	code, out, errs = runCmd(t, "inspect", "-lake", "sales 1", dir)
	if code != 0 {
		t.Fatalf("inspect -lake: exit %d: %s", code, errs)
	}
	wantContains(t, "inspect -lake's output", out, "quarterly")

	if code, _, errs = runCmd(t, "inspect", "-lake", "nowhere", dir); code == 0 {
		t.Fatal("inspect -lake of a lake the store does not hold succeeded")
	}
	wantContains(t, "inspect -lake nowhere's error", errs, "no moraine catalog")
}
