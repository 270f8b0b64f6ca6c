package slate_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// writerWith opens a database on a fresh memory store holding key=value,
// closed when the test ends.
func writerWith(t *testing.T, key, value string) (objstore.Store, *slate.DB) {
	t.Helper()
	inner := objstore.NewMemory(0)
	db := open(t, inner)
	t.Cleanup(func() { db.Close(bg) })
	if err := db.Put(bg, []byte(key), []byte(value)); err != nil {
		t.Fatal(err)
	}
	return inner, db
}

// manifestGate holds every manifest read while it is shut, so a test can
// keep a reader's poll inside its manifest reads.
type manifestGate struct {
	objstore.Store
	mu      sync.Mutex
	shut    chan struct{} // nil: open
	entered chan struct{} // a read reached the shut gate (buffered 1)
}

func (g *manifestGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = make(chan struct{})
	g.entered = make(chan struct{}, 1)
}

func (g *manifestGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

func (g *manifestGate) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	g.mu.Lock()
	shut, entered := g.shut, g.entered
	g.mu.Unlock()
	if shut != nil && strings.HasSuffix(key, ".manifest") {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-shut:
		case <-ctx.Done():
			return nil, objstore.ObjectInfo{}, ctx.Err()
		}
	}
	return g.Store.Get(ctx, key)
}

// A Tail is served while a Refresh waits on its manifest reads: after a
// fold every managed reader moving its checkpoint writes a manifest, and a
// poll reading them all must not hold up a committer waiting to be served
// the slot it lost.
func TestReaderTailIsNotQueuedBehindARefreshsManifestReads(t *testing.T) {
	for _, mode := range []slate.ReaderMode{slate.ReaderFollowLatest, slate.ReaderManagedCheckpoint} {
		t.Run(mode.String(), func(t *testing.T) {
			inner, db := writerWith(t, "k", "v1")
			gate := &manifestGate{Store: inner}
			r, err := slate.OpenReader(bg, gate, "db", slate.ReaderOptions{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(bg)
			mustGet(t, r.Get, "k", "v1")

			gate.close()
			refreshed := make(chan error, 1)
			go func() { refreshed <- r.Refresh(bg) }()
			select {
			case <-gate.entered:
			case <-time.After(10 * time.Second):
				gate.open()
				t.Fatal("the Refresh never read a manifest")
			}
			h, err := db.Write(bg, batchOf("k", "v2"), slate.WriteOptions{})
			if err != nil {
				gate.open()
				t.Fatal(err)
			}
			tailed := make(chan error, 1)
			go func() { tailed <- r.Tail(bg) }()
			select {
			case err := <-tailed:
				if err != nil {
					t.Errorf("Tail: %v", err)
				}
				if got := r.Seq(); got < h.Seq {
					t.Errorf("after the Tail the reader serves seq %d, want %d", got, h.Seq)
				}
			case <-time.After(10 * time.Second):
				t.Error("Tail waited for the Refresh's manifest reads")
				gate.open()
				<-tailed
			}
			gate.open()
			if err := <-refreshed; err != nil {
				t.Fatalf("Refresh: %v", err)
			}
			mustGet(t, r.Get, "k", "v2")
		})
	}
}

// Polls (each reading manifests outside refreshMu), Tails and the writer's
// flushes interleaved: the reader ends serving every write, whichever of a
// poll and a Tail installed which manifest.
func TestReaderPollsAndTailsInterleavedServeEveryWrite(t *testing.T) {
	for _, mode := range []slate.ReaderMode{slate.ReaderFollowLatest, slate.ReaderManagedCheckpoint} {
		t.Run(mode.String(), func(t *testing.T) {
			inner, db := writerWith(t, "k000", "0")
			r, err := slate.OpenReader(bg, inner, "db", slate.ReaderOptions{Mode: mode, PollInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(bg)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, f := range []func(context.Context) error{r.Tail, r.Refresh} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := f(bg); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			const n = 120
			var last uint64
			for i := 1; i <= n; i++ {
				h, err := db.Write(bg, batchOf(keyN(i), valN(i)), slate.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				last = h.Seq
				if i%10 == 0 {
					if err := db.FlushMemtable(bg); err != nil {
						t.Fatal(err)
					}
				}
			}
			ctx, cancel := contextWithTimeout(10 * time.Second)
			defer cancel()
			if err := r.WaitSeq(ctx, last); err != nil {
				t.Fatalf("the reader never served seq %d: %v", last, err)
			}
			close(stop)
			wg.Wait()
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			for i := 1; i <= n; i++ {
				mustGet(t, r.Get, keyN(i), valN(i))
			}
		})
	}
}

func keyN(i int) string { return fmt.Sprintf("k%03d", i) }
func valN(i int) string { return fmt.Sprintf("v%d", i) }

// A seq a reader is brought by a manifest (a flushed tree) rather than by
// WAL rows wakes WaitSeq: a NoTail reader is served new writes only that
// way.
func TestWaitSeqWakesForASeqAManifestBrings(t *testing.T) {
	inner, db := writerWith(t, "k", "v1")
	r, err := slate.OpenReader(bg, inner, "db", slate.ReaderOptions{Mode: slate.ReaderFollowLatest, NoTail: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	h, err := db.Write(bg, batchOf("k", "v2"), slate.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- r.WaitSeq(ctx, h.Seq) }()
	time.Sleep(10 * time.Millisecond) // let WaitSeq block on the seq it lacks
	if err := db.FlushMemtable(bg); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if got := r.Seq(); got < h.Seq {
		t.Fatalf("after the flush and a Refresh the reader serves seq %d, want %d", got, h.Seq)
	}
	if err := <-waited; err != nil {
		t.Fatalf("WaitSeq(%d) with the reader serving seq %d: %v", h.Seq, r.Seq(), err)
	}
	mustGet(t, r.Get, "k", "v2")
}
