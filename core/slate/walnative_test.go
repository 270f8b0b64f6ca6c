package slate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/base"
)

// walPutLog logs every PutIfAbsent in call order, as "start <key>" when it
// is sent and "done <key>" when it returned.
type walPutLog struct {
	objstore.Store
	mu  sync.Mutex
	log []string
}

func (p *walPutLog) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, s)
}

func (p *walPutLog) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	p.add("start " + key)
	etag, err := p.Store.PutIfAbsent(ctx, key, data)
	p.add("done " + key)
	return etag, err
}

// fixedManifest is a WriterManifest of a new database whose epoch nobody
// contests.
type fixedManifest struct{}

func (fixedManifest) ReplayAfterWalID() uint64        { return 0 }
func (fixedManifest) NextWalID() uint64               { return 1 }
func (fixedManifest) LastL0Seq() uint64               { return 0 }
func (fixedManifest) Epoch() uint64                   { return 1 }
func (fixedManifest) Refresh(_ context.Context) error { return nil }

// TestNativeWalFlushesOnSize: with no flush interval (manual mode) and no
// Flush call, the native WAL uploads a file each time its buffer reaches
// the size threshold. The files take contiguous ids after the fence, are
// uploaded one at a time in id order, each holds exactly the batches that
// filled it, and what is below the threshold stays buffered.
func TestNativeWalFlushesOnSize(t *testing.T) {
	stores := map[string]func(t *testing.T) objstore.Store{
		"memory": func(t *testing.T) objstore.Store { return objstore.NewMemory(0) },
		"local": func(t *testing.T) objstore.Store {
			s, err := objstore.NewLocal(t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := &walPutLog{Store: newStore(t)}
			settings := Settings{FlushInterval: FlushManual, L0SSTSizeBytes: 400}
			settings.fill()
			n := newNativeWAL(s, "db", settings, slog.Default())
			it, w, err := n.FenceAndInit(ctx, fixedManifest{})
			if err != nil {
				t.Fatal(err)
			}
			it.Close()
			defer w.Close(ctx)
			var mu sync.Mutex
			var events []uint64
			w.Subscribe(func(ev WalEvent) {
				if ev.Kind == WalFlushed {
					mu.Lock()
					events = append(events, ev.Status.LastFlushedWalID)
					mu.Unlock()
				}
			})
			// Each batch is one row of 1 + 100 + 16 = 117 bytes: the fourth
			// reaches 400, so files hold seqs 1-4, 5-8, ..., 17-20 and
			// batches 21 and 22 stay in the buffer.
			value := bytes.Repeat([]byte("v"), 100)
			for seq := uint64(1); seq <= 22; seq++ {
				if err := w.Append([]Row{{Key: []byte("k"), Value: value, Kind: base.KindPut, Seq: seq}}); err != nil {
					t.Fatal(err)
				}
			}
			nEvents := func() int { mu.Lock(); defer mu.Unlock(); return len(events) }
			deadline := time.Now().Add(10 * time.Second)
			for w.Status().LastFlushedWalID < 6 || nEvents() < 5 { // (events follow the status)
				if time.Now().After(deadline) {
					t.Fatalf("size-triggered uploads never reached WAL id 6: %+v", w.Status())
				}
				time.Sleep(2 * time.Millisecond)
			}
			st := w.Status()
			if st.LastFlushedWalID != 6 || st.LastFlushedSeq != 20 || st.EstimatedBytes != 2*117 {
				t.Fatalf("status after the size-triggered uploads: %+v, want id 6, seq 20, 234 bytes buffered", st)
			}
			infos, err := objstore.ListAll(ctx, s, "db/wal/", "")
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for i, o := range infos {
				id, ok := n.parseKey(o.Key)
				if !ok || id != uint64(i+1) || (id == 1) != (o.Size == 0) {
					t.Fatalf("wal/ listing %v: want ids 1..6, contiguous, only the fence (1) empty", infos)
				}
				listed = append(listed, o.Key)
			}
			if len(listed) != 6 {
				t.Fatalf("wal/ holds %d objects, want the fence and 5 files: %v", len(listed), listed)
			}
			s.mu.Lock()
			log := fmt.Sprint(s.log)
			s.mu.Unlock()
			var want []string
			for _, k := range listed {
				want = append(want, "start "+k, "done "+k)
			}
			if log != fmt.Sprint(want) {
				t.Fatalf("uploads, in call order:\n%s\nwant one at a time in id order:\n%v", log, want)
			}
			mu.Lock()
			if fmt.Sprint(events) != "[2 3 4 5 6]" {
				t.Fatalf("WalFlushed events for ids %v, want [2 3 4 5 6]", events)
			}
			mu.Unlock()
			rd, err := n.Iterator(ctx, WalRange{Start: 2, End: 7})
			if err != nil {
				t.Fatal(err)
			}
			for id := uint64(2); id <= 6; id++ {
				rows, err := rd.Next(ctx)
				if err != nil || rows == nil || rows.LastConsumedWalID != id {
					t.Fatalf("WAL %d: %+v %v", id, rows, err)
				}
				var seqs []uint64
				for _, r := range rows.Rows {
					seqs = append(seqs, r.Seq)
				}
				first := 4*(id-2) + 1
				if fmt.Sprint(seqs) != fmt.Sprint([]uint64{first, first + 1, first + 2, first + 3}) {
					t.Fatalf("WAL %d holds seqs %v, want %d..%d", id, seqs, first, first+3)
				}
			}
			// The rest goes on demand.
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if st := w.Status(); st.LastFlushedWalID != 7 || st.LastFlushedSeq != 22 || st.EstimatedBytes != 0 {
				t.Fatalf("after Flush: %+v", st)
			}
		})
	}
}
