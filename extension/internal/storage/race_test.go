package storage

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
)

// Writes racing a Commit either land in it or are refused: a write that
// returned OK is never lost (Txn is safe for concurrent use, and after
// Commit the transaction takes no further write). Each round races a few
// writers, inserting one tag row per call until refused, against a Commit
// issued once the first write landed, then reads the committed rows back
// through a fresh Lake (the committing lake keeps the view Commit built
// from the change set, which would hide a lost write).
func TestWritesRacingCommitLandOrAreRefused(t *testing.T) {
	const rounds, writers, perWriter = 100, 4, 50
	c, _ := newLake(t)
	for round := range rounds {
		if round%10 == 0 {
			c, _ = newLake(t) // keep the dumps small
		}
		lake := NewLake(c)
		tx, err := lake.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		value := fmt.Sprintf("round %d", round)
		var (
			mu     sync.Mutex
			landed = map[string]bool{}
			first  atomic.Bool
			wg     sync.WaitGroup
			errs   = make(chan error, writers)
		)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					key := fmt.Sprintf("w%d-%d", w, i)
					err := tx.Insert("ducklake_tag", [][]any{{int64(1), int64(1), nil, key, value}})
					if core.KindOf(err) == core.InvalidArgument {
						return // refused: the transaction committed
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					landed[key] = true
					mu.Unlock()
					first.Store(true)
				}
			}()
		}
		for !first.Load() {
			runtime.Gosched()
		}
		if err := tx.Commit(bg); err != nil {
			t.Fatalf("round %d: commit: %v", round, err)
		}
		if commits, conflicts := lake.Counts(); commits != 1 || conflicts != 0 {
			t.Fatalf("round %d: one commit counted as %d commits, %d conflicts", round, commits, conflicts)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: insert: %v", round, err)
		}
		after, err := NewLake(c).Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := after.Scan("ducklake_tag", []int{3}, []Filter{{Column: 4, Op: OpEq, Value: value}})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := all(s, 0)
		committed := map[string]bool{}
		for _, r := range rows {
			committed[r[0].(string)] = true
		}
		for key := range landed {
			if !committed[key] {
				t.Fatalf("round %d: the insert of %s returned OK but is not in the commit (%d of %d OK writes committed)", round, key, len(committed), len(landed))
			}
		}
		if len(committed) != len(landed) {
			t.Fatalf("round %d: %d rows committed, %d writes returned OK", round, len(committed), len(landed))
		}
	}
}

// gated counts a catalog's dumps and holds each until open is closed.
type gated struct {
	*core.Catalog
	open  chan struct{}
	dumps atomic.Int32
}

func (g *gated) Dump(ctx context.Context) (*core.Dump, error) {
	g.dumps.Add(1)
	<-g.open
	return g.Catalog.Dump(ctx)
}

// Transactions beginning together on a moved head share one
// materialization of it.
func TestConcurrentBeginsMaterializeOnce(t *testing.T) {
	c, _ := newLake(t)
	g := &gated{Catalog: c.Catalog, open: make(chan struct{})}
	l := NewLake(g)
	const n = 8
	var wg sync.WaitGroup
	views := make([]*Txn, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i], errs[i] = l.Begin(bg)
		}()
	}
	time.Sleep(50 * time.Millisecond) // let every Begin reach the materialization
	close(g.open)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if views[i].View() != views[0].View() {
			t.Fatalf("transaction %d pinned another view", i)
		}
	}
	if d := g.dumps.Load(); d != 1 {
		t.Fatalf("%d concurrent Begins made %d dumps, want 1", n, d)
	}
}
