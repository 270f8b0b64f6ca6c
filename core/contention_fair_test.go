package core_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// Sixteen committers (separate handles, as separate processes would be)
// commit in tight loops through one log on a store with a bucket's
// latency: no commit fails, every
// acknowledged file is present once, and nobody starves: when the first
// committer is done, every other has landed some of its commits and the
// median a good part. (Before the contention policy, a committer that won
// a slot raced the next one at once and its peers backed off: here all
// but one or two writers had landed none.)
func TestSixteenCommittersNoneStarvesNoneFails(t *testing.T) {
	const writers, each = 16, 25
	// A store with a bucket's latency (a conditional PUT 2 ms, a read
	// 0.5 ms): the committers spend their time waiting on it, as against a
	// real store, rather than on a CPU the rest of the test run shares.
	store := latencyStore{Store: objstore.NewMemory(0), put: 2 * time.Millisecond, get: 500 * time.Microsecond}
	setup := openCommitter(t, store, logOpts())
	tables := make([]core.TableID, writers)
	for i := range tables {
		tables[i] = createTable(t, setup, fmt.Sprintf("t%d", i))
	}
	start := snap(t, setup).ID()
	cats := make([]*core.Catalog, writers)
	for i := range cats {
		cats[i] = openCommitter(t, store, logOpts())
	}
	var done [writers]atomic.Int64
	var firstDone atomic.Bool
	var atFirst [writers]int64
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := cats[w].Commit(bg, insertInto(tables[w], fmt.Sprintf("w%d-%d.parquet", w, i))); err != nil {
					errs <- fmt.Errorf("writer %d commit %d: %w", w, i, err)
					return
				}
				done[w].Add(1)
			}
			if firstDone.CompareAndSwap(false, true) {
				for i := range atFirst {
					atFirst[i] = done[i].Load()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	// Nobody is left at zero, and the median writer is a good part of the
	// way (bounds loose enough for a loaded machine under -race; the
	// previous policy left most writers at 0 or 1).
	t.Logf("commits landed by each writer when the first finished: %v", atFirst)
	sorted := slices.Clone(atFirst[:])
	slices.Sort(sorted)
	if sorted[0] == 0 || sorted[writers/2] < each/4 {
		t.Errorf("when the first committer finished, the writers had landed %v of %d commits each (want none at 0 and a median of at least %d)", atFirst, each, each/4)
	}
	s := snap(t, openCommitter(t, store, logOpts()))
	if got, want := s.ID(), start+writers*each; got != want {
		t.Fatalf("head snapshot %d, want %d (one per acknowledged commit)", got, want)
	}
	for w := range writers {
		seen := map[string]int{}
		for _, f := range s.DataFiles(tables[w]) {
			seen[f.Path]++
		}
		for i := 0; i < each; i++ {
			if p := fmt.Sprintf("w%d-%d.parquet", w, i); seen[p] != 1 {
				t.Fatalf("%s present %d times", p, seen[p])
			}
		}
	}
}

// latencyStore delays conditional PUTs and reads like a remote store.
type latencyStore struct {
	objstore.Store
	put, get time.Duration
}

func (s latencyStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	time.Sleep(s.put)
	return s.Store.PutIfAbsent(ctx, key, data)
}

func (s latencyStore) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	time.Sleep(s.get)
	return s.Store.Get(ctx, key)
}
