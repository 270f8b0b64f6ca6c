package core_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// setupTwoTables creates tables a and b and returns their ids.
func setupTwoTables(t *testing.T, c *core.Catalog) (core.TableID, core.TableID) {
	var a, b core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		if a, err = tx.CreateTable(mainSchema(t, tx), "a", cols("x")); err != nil {
			return err
		}
		b, err = tx.CreateTable(mainSchema(t, tx), "b", cols("x"))
		return err
	})
	return a, b
}

func insertInto(table core.TableID, path string) func(*core.Transaction) error {
	return func(tx *core.Transaction) error {
		_, err := tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: path, RecordCount: 1})
		return err
	}
}

// TestExplicitTransactionLosesToAConcurrentCommit: an explicit transaction
// prepared at head N fails with CommitConflict when another commit landed
// first, naming what it lost to when the changes truly overlap.
func TestExplicitTransactionLosesToAConcurrentCommit(t *testing.T) {
	cases := []struct {
		name       string
		mine       func(a, b core.TableID) func(*core.Transaction) error
		theirs     func(a, b core.TableID) func(*core.Transaction) error
		wantReason string // substring of the message; "" = the generic lost-race text
	}{
		{"insert vs drop", func(a, b core.TableID) func(*core.Transaction) error { return insertInto(a, "m.parquet") },
			func(a, b core.TableID) func(*core.Transaction) error {
				return func(tx *core.Transaction) error { return tx.DropTable(a) }
			}, "dropped table"},
		{"append vs append (benign, still refused: explicit transactions never retry)",
			func(a, b core.TableID) func(*core.Transaction) error { return insertInto(a, "m.parquet") },
			func(a, b core.TableID) func(*core.Transaction) error { return insertInto(a, "t.parquet") }, "never retried"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := openRW(t, objstore.NewMemory(0))
			a, b := setupTwoTables(t, c)
			tx, err := c.Begin(bg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.mine(a, b)(tx); err != nil {
				t.Fatal(err)
			}
			landed := commit(t, c, tc.theirs(a, b))
			_, err = tx.Commit(bg)
			wantKind(t, err, core.CommitConflict)
			if !strings.Contains(err.Error(), "conflict") || !strings.Contains(err.Error(), tc.wantReason) {
				t.Fatalf("message %q does not contain %q", err, tc.wantReason)
			}
			if h := snap(t, c).Head(); h.SnapshotID != landed {
				t.Fatalf("head %d after the loser, want the winner's %d", h.SnapshotID, landed)
			}
		})
	}
}

// raceClosure runs a Commit whose closure is held open while an explicit
// transaction (begun earlier) lands, so the closure's batch loses the head
// race at the engine and is classified against it.
func raceClosure(t *testing.T, c *core.Catalog, winner func(*core.Transaction) error, loser func(*core.Transaction) error) (core.SnapshotID, error, int) {
	tx, err := c.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := winner(tx); err != nil {
		t.Fatal(err)
	}
	var runs int
	var mu sync.Mutex
	entered := make(chan struct{}, 10)
	proceed := make(chan struct{})
	var once sync.Once
	var id core.SnapshotID
	var cerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		id, cerr = c.Commit(bg, func(t2 *core.Transaction) error {
			mu.Lock()
			runs++
			first := runs == 1
			mu.Unlock()
			if first {
				entered <- struct{}{}
				<-proceed
			}
			return loser(t2)
		})
	}()
	<-entered
	if _, err := tx.Commit(bg); err != nil {
		t.Fatalf("the winner's commit failed: %v", err)
	}
	once.Do(func() { close(proceed) })
	<-done
	return id, cerr, runs
}

func TestClosureReRunsAfterABenignLostRace(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	a, _ := setupTwoTables(t, c)
	id, err, runs := raceClosure(t, c, insertInto(a, "winner.parquet"), insertInto(a, "loser.parquet"))
	if err != nil {
		t.Fatalf("benign race: %v", err)
	}
	if runs < 2 {
		t.Fatalf("the closure ran %d times; a lost race must re-run it", runs)
	}
	s := snap(t, c)
	if s.ID() != id || len(s.DataFiles(a)) != 2 {
		t.Fatalf("head %d (want %d) with %d files (want both)", s.ID(), id, len(s.DataFiles(a)))
	}
}

func TestClosureFailsWithCommitConflictOnATrueConflict(t *testing.T) {
	c := openRW(t, objstore.NewMemory(0))
	a, _ := setupTwoTables(t, c)
	_, err, runs := raceClosure(t, c, func(tx *core.Transaction) error { return tx.DropTable(a) }, func(tx *core.Transaction) error {
		if _, ok := tx.View().Table(a); !ok {
			return fmt.Errorf("table gone on re-run")
		}
		return insertInto(a, "loser.parquet")(tx)
	})
	wantKind(t, err, core.CommitConflict)
	if runs != 1 {
		t.Fatalf("a true conflict must not re-run the closure (ran %d times)", runs)
	}
	if !strings.Contains(err.Error(), "dropped table") {
		t.Fatalf("the error does not name what it lost to: %v", err)
	}
}

func TestClosureRetryBudgetIsBounded(t *testing.T) {
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{MaxCommitAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	a, _ := setupTwoTables(t, c)
	_, err, _ = raceClosure(t, c, insertInto(a, "w.parquet"), insertInto(a, "l.parquet"))
	wantKind(t, err, core.RetryExhausted)
	if strings.Contains(strings.ToLower(err.Error()), "conflict") {
		t.Fatalf("RetryExhausted must not mention conflict: %v", err)
	}
}

// TestCrashSweepOverACommit freezes the store after k writes for every k
// while a commit runs, then reopens: the commit is fully there or fully
// absent, and the catalog keeps working.
func TestCrashSweepOverACommit(t *testing.T) {
	for k := 0; ; k++ {
		inner := objstore.NewMemory(0)
		c0, err := core.Open(bg, inner, core.CatalogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := setupTwoTables(t, c0)
		c0.Close(bg)

		faulty := objstore.NewFaulty(inner)
		faulty.FreezeAfter(k)
		var acked bool
		c, err := core.Open(bg, faulty, core.CatalogOptions{DisableRetry: true})
		if err == nil {
			_, err = c.Commit(bg, func(tx *core.Transaction) error {
				for i := 0; i < 3; i++ {
					if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: a, Path: fmt.Sprintf("f%d.parquet", i), RecordCount: 10}); err != nil {
						return err
					}
				}
				return tx.RenameTable(a, "renamed")
			})
			acked = err == nil
			if err != nil && !errors.Is(err, core.OutcomeUnknown) && !errors.Is(err, core.Store) && !errors.Is(err, core.Fenced) {
				t.Fatalf("k=%d: commit failed with an unexpected kind: %v", k, err)
			}
			c.Close(bg)
		}
		completed := !faulty.Frozen()
		r, err := core.Open(bg, inner, core.CatalogOptions{})
		if err != nil {
			t.Fatalf("k=%d: reopen after the crash: %v", k, err)
		}
		s := snap(t, r)
		files := len(s.DataFiles(a))
		tb, _ := s.Table(a)
		switch {
		case files == 3 && tb.Name == "renamed" && s.ID() == 2:
		case files == 0 && tb.Name == "a" && s.ID() == 1:
			if acked {
				t.Fatalf("k=%d: an acknowledged commit is missing after recovery", k)
			}
		default:
			t.Fatalf("k=%d: torn commit: %d files, table named %q, head %d", k, files, tb.Name, s.ID())
		}
		if _, err := r.Commit(bg, insertInto(a, "after.parquet")); err != nil {
			t.Fatalf("k=%d: commit after recovery: %v", k, err)
		}
		r.Close(bg)
		if completed {
			if k < 3 {
				t.Fatalf("the sweep covered only %d writes", k)
			}
			t.Logf("swept %d crash points", k)
			return
		}
		if k > 500 {
			t.Fatal("the commit never completed")
		}
	}
}

func TestFormatRefusals(t *testing.T) {
	origin := uint64(5)
	cases := []struct {
		name    string
		format  uint64
		origin  *uint64
		marker  bool
		message string
	}{
		{"unknown future format", core.FormatCurrent + 1, nil, false, "upgrade moraine"},
		{"mid-migration marker", core.FormatCurrent, nil, true, "moraine migrate"},
		{"legacy log-resident catalog", core.FormatLegacyLog, nil, false, "commit-log"},
		{"log-resident format 12 (origin set)", core.FormatCurrent, &origin, false, "commit-log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := objstore.NewMemory(0)
			c, err := core.Open(bg, store, core.CatalogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.Close(bg)
			if err := core.SetFormatForTest(bg, store, "", tc.format, tc.origin); err != nil {
				t.Fatal(err)
			}
			if tc.marker {
				if err := core.SetMigrationMarkerForTest(bg, store, ""); err != nil {
					t.Fatal(err)
				}
			}
			_, err = core.Open(bg, store, core.CatalogOptions{})
			wantKind(t, err, core.Migration)
			if !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("read-write refusal %q does not mention %q", err, tc.message)
			}
			_, err = core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1})
			wantKind(t, err, core.Migration)
			if !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("read-only refusal %q does not mention %q", err, tc.message)
			}
		})
	}
	// An unknown future format is refused before anything else is looked at.
	store := objstore.NewMemory(0)
	c, _ := core.Open(bg, store, core.CatalogOptions{})
	c.Close(bg)
	core.SetFormatForTest(bg, store, "", 99, &origin)
	core.SetMigrationMarkerForTest(bg, store, "")
	_, err := core.Open(bg, store, core.CatalogOptions{})
	if err == nil || !strings.Contains(err.Error(), "upgrade moraine") {
		t.Fatalf("future format with a marker and an origin: %v (the future format must be reported first)", err)
	}
}

func TestOnlyCommitConflictMentionsConflict(t *testing.T) {
	kinds := []core.Kind{core.Internal, core.NotFound, core.AlreadyExists, core.Constraint, core.RetryExhausted, core.Corruption,
		core.Store, core.InvalidArgument, core.Interrupted, core.Fenced, core.Migration, core.SnapshotExpired, core.Unsupported,
		core.OpenRaced, core.Configuration, core.OutcomeUnknown}
	for _, k := range kinds {
		if strings.Contains(strings.ToLower(k.String()), "conflict") {
			t.Errorf("kind %d's text %q mentions conflict", k, k)
		}
	}
	if !strings.Contains(core.CommitConflict.String(), "conflict") {
		t.Fatal("CommitConflict must say conflict (DuckLake retries on it)")
	}
	_ = time.Second
}
