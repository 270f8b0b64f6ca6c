package core_test

import (
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// LeaveEmpty: a read-write open of an empty store writes nothing and holds
// no lake; every read and commit is NotFound; an existing lake opens as
// usual.
func TestLeaveEmptyWritesNoGenesis(t *testing.T) {
	store := objstore.NewMemory(0)
	c, err := core.Open(bg, store, core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatalf("Open(LeaveEmpty): %v", err)
	}
	if c.HasLake() {
		t.Fatal("HasLake on an empty store")
	}
	if _, err := c.Head(bg); core.KindOf(err) != core.NotFound {
		t.Fatalf("Head: %v, want NotFound", err)
	}
	if _, err := c.Dump(bg); core.KindOf(err) != core.NotFound {
		t.Fatalf("Dump: %v, want NotFound", err)
	}
	if _, err := c.Commit(bg, func(tx *core.Transaction) error { return nil }); core.KindOf(err) != core.NotFound {
		t.Fatalf("Commit: %v, want NotFound", err)
	}
	if err := c.Close(bg); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Nothing of a catalog was written: a read-only open still finds the
	// store empty, and a plain open creates genesis.
	if _, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1}); err == nil {
		t.Fatal("OpenReadOnly found a catalog after a LeaveEmpty open")
	}
	w := openRW(t, store)
	if !w.HasLake() {
		t.Fatal("a plain open holds no lake")
	}
	w.Close(bg)
	again, err := core.Open(bg, store, core.CatalogOptions{LeaveEmpty: true})
	if err != nil {
		t.Fatalf("Open(LeaveEmpty) of a lake: %v", err)
	}
	defer again.Close(bg)
	if !again.HasLake() {
		t.Fatal("LeaveEmpty open of an existing lake holds no lake")
	}
	if h, err := again.Head(bg); err != nil || h.SnapshotID != 0 {
		t.Fatalf("Head = %+v, %v; want snapshot 0", h, err)
	}
}
