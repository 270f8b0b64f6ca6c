package slate_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/slate"
)

// TestCheckpointAdminOnEachStore runs the checkpoint admin calls on the
// memory and the local store: a detached checkpoint pins the manifest that
// holds it (the state of the last L0 flush, not rows only in the WAL), one
// made from a source pins the same manifest, the writer's own checkpoint
// flushes first and pins everything written; each keeps its state readable
// by pinned readers across later writes, a compaction and GC. Refresh moves
// the expiry (0: never), delete removes a checkpoint (a second delete, a
// refresh of a missing one and a missing source are ErrCheckpointMissing),
// and the listing shows what is left.
func TestCheckpointAdminOnEachStore(t *testing.T) {
	runEnvs(t, nativeStoreEnvs(), func(t *testing.T, e *env) {
		s := e.store(t)
		db := e.open(t, s, manual()...)
		defer db.Close(bg)
		model := map[string]string{}
		writeRound(t, db, model, 0, 10)
		if err := db.FlushMemtable(bg); err != nil {
			t.Fatal(err)
		}
		atFlush := maps.Clone(model)
		writeRound(t, db, model, 1, 10) // only in the WAL

		before := time.Now()
		c1, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Lifetime: time.Hour, Name: "one"})
		if err != nil {
			t.Fatal(err)
		}
		latest, err := slate.DescribeManifest(bg, s, "db")
		if err != nil {
			t.Fatal(err)
		}
		if c1.Name != "one" || c1.ManifestID != latest.ID || c1.Expires.Before(before.Add(time.Hour)) || c1.Expires.After(time.Now().Add(time.Hour)) {
			t.Fatalf("detached checkpoint %+v; latest manifest %d", c1, latest.ID)
		}
		c2, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Source: c1.ID, Name: "two"})
		if err != nil {
			t.Fatal(err)
		}
		if c2.ManifestID != c1.ManifestID || !c2.Expires.IsZero() {
			t.Fatalf("checkpoint from source: %+v (source %+v)", c2, c1)
		}
		if _, err := slate.CreateDetachedCheckpoint(bg, s, "db", slate.CheckpointOptions{Source: uuid.New()}); !errors.Is(err, slate.ErrCheckpointMissing) {
			t.Fatalf("checkpoint from a missing source: %v, want ErrCheckpointMissing", err)
		}
		c3, err := db.CreateCheckpoint(bg, slate.CheckpointOptions{Name: "three"})
		if err != nil {
			t.Fatal(err)
		}
		atC3 := maps.Clone(model)
		if c3.ManifestID <= c1.ManifestID {
			t.Fatalf("the writer's checkpoint %+v pins an older manifest than %+v", c3, c1)
		}

		// Later writes, a full compaction and GC: the pinned states stay.
		for round := 2; round < 4; round++ {
			writeRound(t, db, model, round, 10)
			if err := db.FlushMemtable(bg); err != nil {
				t.Fatal(err)
			}
		}
		if rep, err := db.CompactAll(bg); err != nil || !rep.Compacted {
			t.Fatalf("CompactAll: %+v %v", rep, err)
		}
		if _, err := db.RunGC(bg, noMinAge()); err != nil {
			t.Fatal(err)
		}
		readPinned := func(what string, id uuid.UUID, want map[string]string) {
			t.Helper()
			r := e.reader(t, s, slate.ReaderOptions{Mode: slate.ReaderPinned, Checkpoint: id})
			sameMap(t, what, scanMap(t, r.Scan(bg, nil, nil)), want)
			r.Close(bg)
		}
		readPinned("detached checkpoint", c1.ID, atFlush)
		readPinned("checkpoint from source", c2.ID, atFlush)
		readPinned("writer's checkpoint", c3.ID, atC3)

		// Refresh and delete.
		before = time.Now()
		r, err := slate.RefreshCheckpoint(bg, s, "db", c1.ID, 2*time.Hour)
		if err != nil || r.Expires.Before(before.Add(2*time.Hour)) || r.ManifestID != c1.ManifestID {
			t.Fatalf("refresh: %+v %v", r, err)
		}
		if r, err := slate.RefreshCheckpoint(bg, s, "db", c1.ID, 0); err != nil || !r.Expires.IsZero() {
			t.Fatalf("refresh to never expire: %+v %v", r, err)
		}
		if _, err := slate.RefreshCheckpoint(bg, s, "db", uuid.New(), time.Hour); !errors.Is(err, slate.ErrCheckpointMissing) {
			t.Fatalf("refresh of a missing checkpoint: %v, want ErrCheckpointMissing", err)
		}
		if err := slate.DeleteCheckpoint(bg, s, "db", c1.ID); err != nil {
			t.Fatal(err)
		}
		if err := slate.DeleteCheckpoint(bg, s, "db", c1.ID); !errors.Is(err, slate.ErrCheckpointMissing) {
			t.Fatalf("second delete: %v, want ErrCheckpointMissing", err)
		}
		cps, err := slate.ListCheckpoints(bg, s, "db")
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) != 2 || !hasCheckpoint(cps, c2.ID) || !hasCheckpoint(cps, c3.ID) {
			t.Fatalf("listing after deleting %s: %+v", c1.ID, cps)
		}
		for _, c := range cps {
			if (c.ID == c2.ID && c.Name != "two") || (c.ID == c3.ID && c.Name != "three") {
				t.Fatalf("listing: %+v", cps)
			}
		}
		// c2 still pins the manifest c1 pinned.
		if _, err := db.RunGC(bg, noMinAge()); err != nil {
			t.Fatal(err)
		}
		readPinned("checkpoint from source after its source was deleted", c2.ID, atFlush)
		sameMap(t, "writer", scanMap(t, db.Scan(bg, nil, nil)), model)
	})
}
