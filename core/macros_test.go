package core_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/provider"
)

func strp(s string) *string { return &s }

// addOne is DuckLake 1.0's rows for `CREATE MACRO s.add_one(a, b := 1) AS
// a + b` (docs/ducklake-sql/contract-1.0.txt), as the Go API takes them.
func addOne() []core.MacroImpl {
	return []core.MacroImpl{{SQL: "(a + b)", Type: "scalar", Parameters: []core.MacroParameter{
		{Name: "a", Type: "unknown", DefaultValue: strp("NULL"), DefaultValueType: strp("unknown")},
		{Name: "b", Type: "unknown", DefaultValue: strp("1"), DefaultValueType: strp("int32")},
	}}}
}

// A macro with its overloads and parameters survives the commit, a reopen
// and time travel; dropping it ends it at the drop's snapshot; its name is
// its own namespace (a table of the same name is fine), unique among the
// schema's live macros.
func TestMacrosLiveInTheCatalog(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openRW(t, store)
	var id core.MacroID
	created := commit(t, c, func(tx *core.Transaction) error {
		if _, err := tx.CreateTable(mainSchema(t, tx), "add_one", []core.ColumnDef{{Name: "x", Type: "int64"}}); err != nil {
			return err
		}
		var err error
		id, err = tx.CreateMacro(mainSchema(t, tx), "add_one", addOne())
		if err != nil {
			return err
		}
		_, err = tx.CreateMacro(mainSchema(t, tx), "small", []core.MacroImpl{
			{SQL: "SELECT 1 AS x", Type: "table"},
			{SQL: "SELECT n AS x", Type: "table", Parameters: []core.MacroParameter{{Name: "n", Type: "int64"}}},
		})
		return err
	})
	want := core.Macro{ID: id, Versioned: core.Versioned{Begin: created}, SchemaID: 0, Name: "add_one", Impls: addOne()}
	want.Impls[0].Dialect = "duckdb"
	want.Impls[0].Parameters[1].ColumnID = 1
	if got, ok := snap(t, c).MacroByName("main", "scalar", "add_one"); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("the macro in the committing handle:\n%+v\nwant\n%+v", got, want)
	}
	ro := openRO(t, store, core.CatalogOptions{})
	if got, ok := snap(t, ro).MacroByName("main", "scalar", "add_one"); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("the macro read from the store:\n%+v\nwant\n%+v", got, want)
	}
	small, _ := snap(t, ro).MacroByName("main", "table", "small")
	if len(small.Impls) != 2 || small.Impls[1].ID != 1 || small.Impls[1].Parameters[0].Name != "n" {
		t.Fatalf("the table macro's overloads: %+v", small)
	}
	if sn := snap(t, c).Snapshot(); !strings.Contains(sn.ChangesMade, `created_scalar_macro:"main"."add_one"`) ||
		!strings.Contains(sn.ChangesMade, `created_table_macro:"main"."small"`) {
		t.Fatalf("changes_made %q", sn.ChangesMade)
	}

	// A view hands out copies: changing one changes nothing else.
	got, _ := snap(t, c).MacroByName("main", "scalar", "add_one")
	got.Impls[0].Parameters[0].Name = "changed"
	if again, _ := snap(t, c).MacroByName("main", "scalar", "add_one"); again.Impls[0].Parameters[0].Name != "a" {
		t.Fatal("changing a macro a view returned changed the view")
	}

	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "add_one", addOne())
		return err
	})
	wantKind(t, err, core.AlreadyExists)
	// A table macro of the same name is another macro (DuckDB keeps the
	// two kinds apart).
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "add_one", []core.MacroImpl{{SQL: "SELECT 1 AS one", Type: "table"}})
		return err
	})
	if s, ok := snap(t, c).MacroByName("main", "scalar", "add_one"); !ok || s.ID != id {
		t.Fatal("the table macro of the same name replaced the scalar one")
	}
	if tm, ok := snap(t, c).MacroByName("main", "table", "add_one"); !ok || tm.ID == id {
		t.Fatal("the table macro of the scalar one's name is not there")
	}

	dropped := commit(t, c, func(tx *core.Transaction) error { return tx.DropMacro(id) })
	if _, ok := snap(t, c).MacroByName("main", "scalar", "add_one"); ok {
		t.Fatal("the dropped macro is still live")
	}
	if sn := snap(t, c).Snapshot(); sn.ID != dropped || sn.ChangesMade != "dropped_scalar_macro:"+strconv.FormatUint(uint64(id), 10) {
		t.Fatalf("changes_made %q", sn.ChangesMade)
	}
	before, err := c.ViewAt(bg, created)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := before.MacroByName("main", "scalar", "add_one"); !ok {
		t.Fatal("time travel to the macro's snapshot does not see it")
	}
	d, err := c.Dump(bg)
	if err != nil {
		t.Fatal(err)
	}
	var versions []core.Macro
	for _, m := range d.Macros {
		if m.ID == id {
			versions = append(versions, m)
		}
	}
	if len(versions) != 1 || versions[0].End == nil || *versions[0].End != dropped || versions[0].Begin != created {
		t.Fatalf("the dump's history of the dropped macro: %+v", versions)
	}
	// The name is free again.
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "add_one", addOne())
		return err
	})
}

func TestMacroArgumentsAreChecked(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	for name, impls := range map[string][]core.MacroImpl{
		"no implementation":  nil,
		"mixed kinds":        {{SQL: "1", Type: "scalar"}, {SQL: "SELECT 1", Type: "table"}},
		"unknown kind":       {{SQL: "1", Type: "aggregate"}},
		"empty name (below)": addOne(),
	} {
		macro := "m"
		if strings.HasPrefix(name, "empty name") {
			macro = ""
		}
		_, err := c.Commit(bg, func(tx *core.Transaction) error {
			_, err := tx.CreateMacro(mainSchema(t, tx), macro, impls)
			return err
		})
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(core.SchemaID(99), "m", addOne())
		return err
	})
	wantKind(t, err, core.NotFound)
}

// A schema holding macros is not empty; a cascading drop drops them.
func TestDropSchemaWithMacros(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	var s core.SchemaID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		if s, err = tx.CreateSchema("s"); err != nil {
			return err
		}
		_, err = tx.CreateMacro(s, "m", addOne())
		return err
	})
	_, err := c.Commit(bg, func(tx *core.Transaction) error { return tx.DropSchema(s, false) })
	wantKind(t, err, core.Constraint)
	if err == nil || !strings.Contains(err.Error(), "1 macros") {
		t.Fatalf("refusal %v does not count the macro", err)
	}
	commit(t, c, func(tx *core.Transaction) error { return tx.DropSchema(s, true) })
	if n := len(snap(t, c).AllMacros()); n != 0 {
		t.Fatalf("%d macros left after the schema's cascading drop", n)
	}
}

// A catalog at format 12 takes no macro (a format-12 build would not see
// it) and says how to raise it; RaiseFormat stamps 13 (an additive step),
// after which it does.
func TestMacrosNeedFormat13(t *testing.T) {
	store := objstore.NewMemory(0)
	openRW(t, store).Close(bg)
	if err := core.SetFormatForTest(bg, store, "", core.FormatDeleteTargets, nil); err != nil {
		t.Fatal(err)
	}
	c := openRW(t, store)
	_, err := c.Commit(bg, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "m", addOne())
		return err
	})
	wantKind(t, err, core.Migration)
	if !strings.Contains(err.Error(), "moraine migrate") || !strings.Contains(err.Error(), "format 12") {
		t.Fatalf("the refusal does not say what to do: %v", err)
	}
	r, err := c.RaiseFormat(bg, false)
	if err != nil || !r.Written || r.From != 12 || r.To != 13 {
		t.Fatalf("raise: %+v %v", r, err)
	}
	commit(t, c, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "m", addOne())
		return err
	})
	if f, _ := openRO(t, store, core.CatalogOptions{}).Format(); f != core.FormatDuckLake10 {
		t.Fatalf("format %d after the raise", f)
	}
	// A build that knows formats up to 12 refuses the store by name.
	if err := core.SetFormatForTest(bg, store, "", core.FormatCurrent+1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Open(bg, store, core.CatalogOptions{}); !errors.Is(err, core.Migration) || !strings.Contains(err.Error(), "upgrade moraine") {
		t.Fatalf("a store from the future: %v", err)
	}
}

// Two committers on a commit log creating a macro of the same name: one
// wins, the other's explicit transaction is a commit conflict naming the
// macro; a peer serves the winner's macro after the race (a macro slot is
// loaded, not advanced).
func TestMacroRaceOnACommitLog(t *testing.T) {
	store := objstore.NewMemory(0)
	opts := logOpts(func(o *core.CatalogOptions) { o.CommitLog = provider.New(provider.Options{}) })
	c1 := openCommitter(t, store, opts)
	c2 := openCommitter(t, store, opts)
	if err := c2.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	tx, err := c2.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.CreateMacro(mainSchema(t, tx), "m", addOne()); err != nil {
		t.Fatal(err)
	}
	commit(t, c1, func(tx *core.Transaction) error {
		_, err := tx.CreateMacro(mainSchema(t, tx), "m", addOne())
		return err
	})
	if _, err := tx.Commit(bg); !errors.Is(err, core.CommitConflict) || !strings.Contains(err.Error(), "created scalar macro main.m") {
		t.Fatalf("the second create of macro m: %v", err)
	}
	if _, ok := snap(t, c2).MacroByName("main", "scalar", "m"); !ok {
		t.Fatal("the loser does not see the winner's macro")
	}
}

// DuckLake's rows reach macros through the row-level entry: a ducklake_macro
// row with its implementations lands as one macro, its end-dating (DROP
// MACRO) ends it, and deleting a version removes it (expire_snapshots).
func TestMacroRowsThroughTheRowLevelEntry(t *testing.T) {
	c, store := emptyStore(t)
	if _, err := rowsCommit(t, c, duckLakeGenesis); err != nil {
		t.Fatal(err)
	}
	m := core.Macro{ID: 1, Versioned: core.Versioned{Begin: 1}, SchemaID: 0, Name: "add_one", Impls: addOne()}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 1, Time: t0, SchemaVersion: 1, NextCatalogID: 2, ChangesMade: `created_scalar_macro:"main"."add_one"`}); err != nil {
			return err
		}
		return tx.PutMacro(m)
	}); err != nil {
		t.Fatal(err)
	}
	ro := openRO(t, store, core.CatalogOptions{})
	if got, ok := snap(t, ro).MacroByName("main", "scalar", "add_one"); !ok || !reflect.DeepEqual(got, m) {
		t.Fatalf("the macro a rows commit wrote: %+v, want %+v", got, m)
	}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 2, Time: t0, SchemaVersion: 2, NextCatalogID: 2, ChangesMade: "dropped_scalar_macro:1"}); err != nil {
			return err
		}
		ended := m
		two := core.SnapshotID(2)
		ended.End = &two
		return tx.PutMacro(ended)
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := snap(t, c).MacroByName("main", "scalar", "add_one"); ok {
		t.Fatal("the end-dated macro is still live")
	}
	d, err := c.Dump(bg)
	if err != nil || len(d.Macros) != 1 || d.Macros[0].End == nil || *d.Macros[0].End != 2 {
		t.Fatalf("the dump after the end-dating: %+v %v", d.Macros, err)
	}
	if _, err := rowsCommit(t, c, func(tx *core.Transaction) error {
		if err := tx.PutSnapshot(core.Snapshot{ID: 3, Time: t0, SchemaVersion: 2, NextCatalogID: 2}); err != nil {
			return err
		}
		two := core.SnapshotID(2)
		return tx.DeleteMacro(1, 1, &two)
	}); err != nil {
		t.Fatal(err)
	}
	if d, err := c.Dump(bg); err != nil || len(d.Macros) != 0 {
		t.Fatalf("the dump after deleting the macro's version: %+v %v", d.Macros, err)
	}
}
