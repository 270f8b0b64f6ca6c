package slate_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// walIDs lists the WAL ids in a store.
func walIDs(t *testing.T, s objstore.Store) []uint64 {
	t.Helper()
	infos, err := objstore.ListAll(bg, s, "db/wal/", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, o := range infos {
		id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(o.Key, "db/wal/"), ".sst"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestMoveWalStore moves the WAL from the main store to another one and
// back: every write survives, opening with the old store is refused, a
// writer left running on the old store is fenced, WAL ids only grow, and a
// checkpoint taken before the move stays readable from the old store. It
// runs with both stores in memory and with both on the local filesystem.
func TestMoveWalStore(t *testing.T) {
	for _, c := range []struct {
		name   string
		stores func(t *testing.T) (main, other objstore.Store)
	}{
		{"memory", func(t *testing.T) (objstore.Store, objstore.Store) {
			return objstore.NewMemory(0), objstore.OpenMemory("wal-"+uuid.NewString(), 0)
		}},
		{"local", func(t *testing.T) (objstore.Store, objstore.Store) { return localStore(t), localStore(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			main, other := c.stores(t)
			withOther := slate.WithWalStore(other)
			db := open(t, main, manual()...)
			model := map[string]string{}
			writeRound(t, db, model, 0, 10)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
			writeRound(t, db, model, 1, 10) // only in the WAL
			cp, err := db.CreateCheckpoint(bg, slate.CheckpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			atCp := scanMap(t, db.Scan(bg, nil, nil))
			writeRound(t, db, model, 2, 10) // only in the WAL; db is left running (a crash)

			rep, err := slate.MoveWalStore(bg, main, "db", nil, other, slate.WithSettings(fast()))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("move: %+v", rep)
			oldIDs, newIDs := walIDs(t, main), walIDs(t, other)
			if slices.Max(oldIDs) != rep.LastOldID || slices.Min(newIDs) != rep.FirstNewID || rep.FirstNewID <= rep.LastOldID {
				t.Fatalf("ids: old store %v, new store %v, report %+v", oldIDs, newIDs, rep)
			}
			// The writer that was running on the old store is fenced.
			if err := db.Put(bg, []byte("stale"), []byte("x")); !errors.Is(err, slate.ErrFenced) {
				t.Fatalf("write of the writer left on the old store: %v, want ErrFenced", err)
			}
			db.Close(bg)
			// The old store is refused, by writers and readers.
			if _, err := slate.Open(bg, main, "db", slate.WithSettings(fast())); !errors.Is(err, slate.ErrWalStoreMismatch) {
				t.Fatalf("open with the old WAL store: %v, want ErrWalStoreMismatch", err)
			}
			if _, err := slate.OpenReader(bg, main, "db", slate.ReaderOptions{}); !errors.Is(err, slate.ErrWalStoreMismatch) {
				t.Fatalf("reader with the old WAL store: %v, want ErrWalStoreMismatch", err)
			}
			// The new store has everything.
			db2 := open(t, main, append(manual(), withOther)...)
			sameMap(t, "after the move", scanMap(t, db2.Scan(bg, nil, nil)), model)
			writeRound(t, db2, model, 3, 10)
			r, err := slate.OpenReader(bg, main, "db", slate.ReaderOptions{PollInterval: -1}, withOther)
			if err != nil {
				t.Fatal(err)
			}
			sameMap(t, "reader on the new store", scanMap(t, r.Scan(bg, nil, nil)), model)
			r.Close(bg)
			// A checkpoint from before the move replays its WAL range from the old
			// store.
			pinned, err := slate.OpenReader(bg, main, "db", slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: cp.ID})
			if err != nil {
				t.Fatal(err)
			}
			sameMap(t, "pre-move checkpoint", scanMap(t, pinned.Scan(bg, nil, nil)), atCp)
			pinned.Close(bg)
			// GC on the new store keeps working and keeps the fences; the
			// operator's GC needs to be told where the WAL lives.
			if _, err := db2.RunGC(bg, noMinAge()); err != nil {
				t.Fatal(err)
			}
			if _, err := slate.RunGC(bg, main, "db", noMinAge()); !errors.Is(err, slate.ErrWalStoreMismatch) {
				t.Fatalf("standalone GC without the WAL store: %v, want ErrWalStoreMismatch", err)
			}
			fences := 0
			for _, f := range []objstore.Store{main, other} {
				infos, _ := objstore.ListAll(bg, f, "db/wal/", "")
				for _, o := range infos {
					if o.Size == 0 {
						fences++
					}
				}
			}
			if _, err := slate.RunGC(bg, main, "db", noMinAge(), withOther); err != nil {
				t.Fatal(err)
			}
			after := 0
			for _, f := range []objstore.Store{main, other} {
				infos, _ := objstore.ListAll(bg, f, "db/wal/", "")
				for _, o := range infos {
					if o.Size == 0 {
						after++
					}
				}
			}
			if after != fences {
				t.Fatalf("GC deleted fences: %d -> %d", fences, after)
			}
			db2.Close(bg) // uncrashed this time
			// Moving to a store that already holds newer WAL files is refused.
			if _, err := slate.MoveWalStore(bg, main, "db", other, other); !errors.Is(err, slate.ErrInvalid) {
				t.Fatalf("move to the same store: %v, want ErrInvalid", err)
			}
			// And back to the main store, above every id used in either.
			rep2, err := slate.MoveWalStore(bg, main, "db", other, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep2.FirstNewID <= slices.Max(walIDs(t, other)) || rep2.FirstNewID <= rep.FirstNewID {
				t.Fatalf("move back: %+v; ids in the other store %v", rep2, walIDs(t, other))
			}
			if _, err := slate.Open(bg, main, "db", slate.WithSettings(fast()), withOther); !errors.Is(err, slate.ErrWalStoreMismatch) {
				t.Fatalf("open with the store moved away from: %v", err)
			}
			db3 := open(t, main, manual()...)
			defer db3.Close(bg)
			sameMap(t, "after moving back", scanMap(t, db3.Scan(bg, nil, nil)), model)
			writeRound(t, db3, model, 4, 5)
			db4 := open(t, main, manual()...) // crash + reopen replays the main store's WAL
			defer db4.Close(bg)
			sameMap(t, "reopened after moving back", scanMap(t, db4.Scan(bg, nil, nil)), model)
		})
	}
}
