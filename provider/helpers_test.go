package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

var bg = context.Background()

// backend is one real object store the protocol tests run on.
type backend struct {
	name string
	new  func(t *testing.T) objstore.Store
}

func memBackend(t *testing.T) objstore.Store { return objstore.NewMemory(0) }

func localBackend(t *testing.T) objstore.Store {
	s, err := objstore.NewLocal(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func s3Backend(t *testing.T) objstore.Store {
	s, _ := s3test.NewStore(t)
	return s
}

// backends: memory and local always; with s3 also a real S3 server
// (versitygw, started by the harness; never skipped).
func backends(s3 bool) []backend {
	out := []backend{{"memory", memBackend}, {"local", localBackend}}
	if s3 {
		out = append(out, backend{"s3", s3Backend})
	}
	return out
}

func forBackends(t *testing.T, s3 bool, fn func(t *testing.T, st objstore.Store)) {
	for _, b := range backends(s3) {
		t.Run(b.name, func(t *testing.T) { fn(t, b.new(t)) })
	}
}

// testOpts: no retention (the collector may take any slot at once, and the
// committer therefore checks the floor after every win).
func testOpts() Options { return Options{Retention: -1, FlushSlots: -1} }

var testBase = core.LogBase{WalBase: 100, SeqBase: 1000, OriginBatchSeq: 5}

func stamp() core.LogBatch {
	return core.LogBatch{TxnID: uuid.New(), Slot: 0, Writes: []core.LogWrite{{Key: []byte("sys/format"), Value: []byte("stamp")}}}
}

// batchFor is slot's batch with one put of "k<slot>" and an overwrite of
// "last".
func batchFor(slot uint64) core.LogBatch {
	return core.LogBatch{
		TxnID:       uuid.New(),
		Slot:        slot,
		Head:        core.Head{SnapshotID: core.SnapshotID(slot), BatchSeq: testBase.OriginBatchSeq + slot - 1},
		ChangesMade: fmt.Sprintf("slot:%d", slot),
		Writes: []core.LogWrite{
			{Key: []byte(fmt.Sprintf("k%03d", slot)), Value: []byte(fmt.Sprintf("v%d", slot))},
			{Key: []byte("last"), Value: []byte(fmt.Sprint(slot))},
		},
	}
}

// adopt adopts the log at path with testBase (or base) and lands slots
// 1..n, returning the committer.
func adopt(t *testing.T, p *Provider, st objstore.Store, path string, base core.LogBase, n uint64) *Committer {
	t.Helper()
	c := p.Committer(st, path).(*Committer)
	if _, _, won, err := c.Adopt(bg, base, stamp()); err != nil || !won {
		t.Fatalf("adopt: won %v err %v", won, err)
	}
	for k := uint64(1); k <= n; k++ {
		mustWin(t, c, batchFor(k))
	}
	return c
}

func mustWin(t *testing.T, c *Committer, b core.LogBatch) {
	t.Helper()
	res, err := c.Offer(bg, b)
	if err != nil || !res.Won {
		t.Fatalf("offer slot %d: won %v err %v landed %d", b.Slot, res.Won, err, len(res.Landed))
	}
}

// slotsIn lists the slot objects present under path's log, ascending.
func slotsIn(t *testing.T, st objstore.Store, path string) []uint64 {
	t.Helper()
	l := newLogState(st, path, testOpts())
	objs, err := objstore.ListAll(bg, st, l.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, o := range objs {
		if s, ok := l.parseSlotKey(o.Key); ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// hookStore runs a hook before a PutIfAbsent of a key containing match
// (once), for interleaving a peer's write with ours.
type hookStore struct {
	objstore.Store
	match string
	once  sync.Once
	hook  func()
}

func (h *hookStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if strings.HasSuffix(key, h.match) {
		h.once.Do(h.hook)
	}
	return h.Store.PutIfAbsent(ctx, key, data)
}

// failingStore fails every PutIfAbsent and Get transiently (a store that
// went away mid-commit).
type failingStore struct{ objstore.Store }

func (f failingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return "", &objstore.Error{Op: "put-if-absent", Key: key, Kind: objstore.ErrTransient, Msg: "test: store unreachable"}
}

func (f failingStore) Get(ctx context.Context, key string) ([]byte, objstore.ObjectInfo, error) {
	if strings.HasSuffix(key, "/base") {
		return f.Store.Get(ctx, key)
	}
	return nil, objstore.ObjectInfo{}, &objstore.Error{Op: "get", Key: key, Kind: objstore.ErrTransient, Msg: "test: store unreachable"}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
