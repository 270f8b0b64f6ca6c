package core_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// Several lakes in one store: each named lake is a catalog of its own (its
// snapshots, its ids, its commits), listed once published, found by any
// spelling of its name; the store's own lake is untouched by theirs.
func TestLakesInOneStore(t *testing.T) {
	root := objstore.NewMemory(0)
	main := openRW(t, root)
	defer main.Close(bg)
	commit(t, main, func(tx *core.Transaction) error { _, err := tx.CreateSchema("root_only"); return err })

	if names, err := core.Lakes(bg, root); err != nil || len(names) != 0 {
		t.Fatalf("Lakes before any is published = %v, %v", names, err)
	}
	open := func(name string) *core.Catalog {
		s, err := core.LakeStore(root, name)
		if err != nil {
			t.Fatalf("LakeStore(%q): %v", name, err)
		}
		return openRW(t, s)
	}
	sales, ops := open(`Sales "q1"`), open("ops")
	defer sales.Close(bg)
	defer ops.Close(bg)
	for _, name := range []string{`Sales "q1"`, "ops"} {
		if err := core.PublishLake(bg, root, name); err != nil {
			t.Fatalf("PublishLake(%q): %v", name, err)
		}
	}
	if err := core.PublishLake(bg, root, "OPS"); err != nil {
		t.Fatalf("publishing again (another spelling): %v", err)
	}
	commit(t, sales, func(tx *core.Transaction) error { _, err := tx.CreateSchema("s"); return err })
	commit(t, sales, func(tx *core.Transaction) error { _, err := tx.CreateSchema("t"); return err })
	commit(t, ops, func(tx *core.Transaction) error { _, err := tx.CreateSchema("s"); return err })

	heads := map[string]int64{}
	for name, c := range map[string]*core.Catalog{"main": main, "sales": sales, "ops": ops} {
		h, err := c.Head(bg)
		if err != nil {
			t.Fatal(err)
		}
		heads[name] = int64(h.SnapshotID)
	}
	if heads["main"] != 1 || heads["sales"] != 2 || heads["ops"] != 1 {
		t.Fatalf("heads = %v, want main 1, sales 2, ops 1 (each lake its own snapshots)", heads)
	}
	// A reopen of a lake sees its own schemas only.
	sales.Close(bg)
	again := open(`sales "Q1"`)
	defer again.Close(bg)
	d, err := again.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	var schemas []string
	for _, s := range d.Schemas {
		schemas = append(schemas, s.Name)
	}
	if !slices.Equal(schemas, []string{"main", "s", "t"}) {
		t.Fatalf("the reopened lake (another spelling of its name) has schemas %q, want main, s, t", schemas)
	}

	names, err := core.Lakes(bg, root)
	if err != nil || !slices.Equal(names, []string{`Sales "q1"`, "ops"}) {
		t.Fatalf("Lakes = %q, %v", names, err)
	}
	if got, ok, err := core.FindLake(bg, root, `SALES "Q1"`); err != nil || !ok || got != `Sales "q1"` {
		t.Fatalf("FindLake = %q, %v, %v", got, ok, err)
	}
	if _, ok, err := core.FindLake(bg, root, "nowhere"); err != nil || ok {
		t.Fatalf("FindLake(nowhere) = %v, %v", ok, err)
	}
	// The store's own lake is "main" in any spelling, and is no named lake.
	if s, err := core.LakeStore(root, "MAIN"); err != nil || s != objstore.Store(root) {
		t.Fatalf("LakeStore(MAIN) = %v, %v; want the root", s, err)
	}
	for _, bad := range []string{"", "Main", strings.Repeat("x", core.MaxLakeNameLen+1)} {
		if err := core.PublishLake(bg, root, bad); core.KindOf(err) != core.InvalidArgument {
			t.Fatalf("PublishLake(%.20q): %v, want InvalidArgument", bad, err)
		}
	}
}

// A store holding named lakes but none of its own opens read-only with
// LeaveEmpty as holding no lake (its named lakes open from it); without
// named lakes, or without LeaveEmpty, the read-only open is refused.
func TestReadOnlyOpenOfAStoreOfNamedLakes(t *testing.T) {
	root := objstore.NewMemory(0)
	ro := core.CatalogOptions{ReaderPollInterval: -1, LeaveEmpty: true}
	if _, err := core.OpenReadOnly(bg, root, ro); core.KindOf(err) != core.NotFound {
		t.Fatalf("read-only open of an empty store: %v, want NotFound", err)
	}
	ls, err := core.LakeStore(root, "s1")
	if err != nil {
		t.Fatal(err)
	}
	w := openRW(t, ls)
	commit(t, w, func(tx *core.Transaction) error { _, err := tx.CreateSchema("x"); return err })
	w.Close(bg)
	if err := core.PublishLake(bg, root, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := core.OpenReadOnly(bg, root, core.CatalogOptions{ReaderPollInterval: -1}); core.KindOf(err) != core.NotFound {
		t.Fatalf("read-only open without LeaveEmpty: %v, want NotFound", err)
	}
	c, err := core.OpenReadOnly(bg, root, ro)
	if err != nil {
		t.Fatalf("read-only open with LeaveEmpty of a store of named lakes: %v", err)
	}
	defer c.Close(bg)
	if c.HasLake() {
		t.Fatal("HasLake on a store with no lake of its own")
	}
	if _, err := c.Head(bg); core.KindOf(err) != core.NotFound {
		t.Fatalf("Head: %v, want NotFound", err)
	}
	// The same after a LeaveEmpty writer left an engine without a catalog
	// at the root (what a DuckLake attach of a named lake does).
	e, err := core.Open(bg, root, core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close(bg)
	c2, err := core.OpenReadOnly(bg, root, ro)
	if err != nil || c2.HasLake() {
		t.Fatalf("read-only open after an empty writer: %v (HasLake %v)", err, err == nil && c2.HasLake())
	}
	c2.Close(bg)
	// A named lake published before its first commit (CREATE SCHEMA alone)
	// opens read-only as holding no lake.
	empty, err := core.LakeStore(root, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.OpenReadOnly(bg, empty, ro); core.KindOf(err) != core.NotFound {
		t.Fatalf("read-only open of an empty part, not said to be a named lake: %v, want NotFound", err)
	}
	named := ro
	named.NamedLake = "empty"
	c3, err := core.OpenReadOnly(bg, empty, named)
	if err != nil || c3.HasLake() {
		t.Fatalf("read-only open of an empty named lake: %v", err)
	}
	c3.Close(bg)
}
