package core_test

// RFC 0024 test obligations the other commit-log tests leave implicit: the
// session records every write it is handed, the slot a batch races comes
// from its prepared head, a won slot the holder cannot apply is an unknown
// outcome a reopen folds, and the unit-test binary registers no provider.
// The helpers here (a recording provider, a gate on the committer's
// reader, a failing plug) are shared with commitlog_test.go and
// commitlog_multiproc_test.go.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/provider"
)

// offerRecord is one Offer a committer made and how it ended.
type offerRecord struct {
	Batch  core.LogBatch
	Won    bool
	Landed []core.LogBatch
	Err    error
}

// offerLog collects the offers of every committer a recProvider hands out
// (across sessions). onOffer, when set, runs after each offer returns,
// before the catalog sees the result.
type offerLog struct {
	mu      sync.Mutex
	offers  []offerRecord
	onOffer func(offerRecord)
}

func (l *offerLog) all() []offerRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]offerRecord(nil), l.offers...)
}

func (l *offerLog) since(n int) []offerRecord { return l.all()[n:] }

// String is an offer in brief, for failure messages.
func (r offerRecord) String() string {
	out := fmt.Sprintf("{slot %d head %+v won %v", r.Batch.Slot, r.Batch.Head, r.Won)
	for _, lb := range r.Landed {
		out += fmt.Sprintf(" landed %d/%s", lb.Slot, lb.TxnID)
	}
	if r.Err != nil {
		out += fmt.Sprintf(" err %v", r.Err)
	}
	return out + "}"
}

func (l *offerLog) setHook(fn func(offerRecord)) {
	l.mu.Lock()
	l.onOffer = fn
	l.mu.Unlock()
}

// recProvider wraps the in-tree provider: it records every offer, and can
// wrap the reader (a gate) and the folder's plug (a failure).
type recProvider struct {
	inner      core.CommitLogProvider
	log        *offerLog
	wrapReader func(slate.WalReader) slate.WalReader
	wrapWriter func(slate.WriterInit) slate.WriterInit
}

func recording(log *offerLog) *recProvider {
	return &recProvider{inner: provider.New(provider.Options{}), log: log}
}

func (p *recProvider) WriterInit(s objstore.Store, path string) slate.WriterInit {
	w := p.inner.WriterInit(s, path)
	if p.wrapWriter != nil {
		return p.wrapWriter(w)
	}
	return w
}

func (p *recProvider) Reader(s objstore.Store, path string) slate.WalReader {
	r := p.inner.Reader(s, path)
	if p.wrapReader != nil {
		return p.wrapReader(r)
	}
	return r
}

func (p *recProvider) Committer(s objstore.Store, path string) core.Committer {
	c := p.inner.Committer(s, path)
	if c == nil {
		return nil
	}
	return &recCommitter{Committer: c, log: p.log}
}

func (p *recProvider) Session() core.CommitLogProvider {
	s := p.inner.Session()
	if s == nil {
		s = p.inner
	}
	cp := *p
	cp.inner = s
	return &cp
}

type recCommitter struct {
	core.Committer
	log *offerLog
}

func (c *recCommitter) Offer(ctx context.Context, b core.LogBatch) (core.OfferResult, error) {
	res, err := c.Committer.Offer(ctx, b)
	rec := offerRecord{Batch: b, Won: res.Won, Landed: res.Landed, Err: err}
	c.log.mu.Lock()
	c.log.offers = append(c.log.offers, rec)
	hook := c.log.onOffer
	c.log.mu.Unlock()
	if hook != nil {
		hook(rec)
	}
	return res, err
}

// readSlot decodes one slot of the log at the store's root through a fresh
// in-tree committer (the provider's envelope decoding).
func readSlot(t *testing.T, store objstore.Store, slot uint64) core.LogBatch {
	t.Helper()
	got, err := provider.New(provider.Options{}).Committer(store, "").Read(bg, slot, slot)
	if err != nil || len(got) != 1 || got[0].Slot != slot {
		t.Fatalf("reading slot %d: %+v %v", slot, got, err)
	}
	return got[0]
}

func logBase(t *testing.T, store objstore.Store) core.LogBase {
	t.Helper()
	b, ok, err := provider.New(provider.Options{}).Committer(store, "").Base(bg)
	if err != nil || !ok {
		t.Fatalf("the log's base: %v %v", ok, err)
	}
	return b
}

// headStamps returns the head stamps a slot carries.
func headStamps(t *testing.T, lb core.LogBatch) []core.Head {
	t.Helper()
	var out []core.Head
	for _, w := range lb.Writes {
		if !bytes.Equal(w.Key, core.HeadKeyForTest()) {
			continue
		}
		if w.Delete {
			t.Fatalf("slot %d deletes the head", lb.Slot)
		}
		out = append(out, decodeHeadStamp(t, w.Value))
	}
	return out
}

func decodeHeadStamp(t *testing.T, v []byte) core.Head {
	t.Helper()
	h, err := core.DecodeHeadForTest(v)
	if err != nil {
		t.Fatalf("head stamp %x: %v", v, err)
	}
	return h
}

func writeText(w core.LogWrite) string {
	if w.Delete {
		return keys.Describe(w.Key) + " (delete)"
	}
	return fmt.Sprintf("%s = %x", keys.Describe(w.Key), w.Value)
}

// storeTree lists the store's own objects (its WAL and tables) with their
// ETags: what a committer must never change.
func storeTree(t *testing.T, store objstore.Store) string {
	t.Helper()
	var out []string
	for _, prefix := range []string{"wal/", "compacted/"} {
		infos, err := objstore.ListAll(bg, store, prefix, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range infos {
			out = append(out, o.Key+"@"+o.ETag)
		}
	}
	return strings.Join(out, "\n")
}

// writerManifest is the latest manifest minus what readers own (the
// checkpoints, and the version id their updates move).
func writerManifest(t *testing.T, store objstore.Store) slate.ManifestInfo {
	t.Helper()
	mi, err := slate.DescribeManifest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	mi.ID, mi.Checkpoints = 0, 0
	return mi
}

// RFC 0024: "A committer's session records every write it is handed and
// commits none of it into the store it reads." Both commit paths (an
// explicit transaction staging against the session, and a closure through
// the group committer) stage entity rows, name-directory entries (a put and
// a delete), a delete-file target and the snapshot record; the slot the
// commit becomes carries each of them byte for byte, in order, plus exactly
// one head stamp (the prepared head's counter + 1); the store's WAL, tables
// and writer manifest are untouched, and the store alone lacks every key.
func TestCommitterSessionRecordsEveryWriteItIsHandedAndCommitsNoneOfIt(t *testing.T) {
	stage := func(tx *core.Transaction, n int, table core.TableID, file core.DataFileID) error {
		sid, err := tx.CreateSchema(fmt.Sprintf("s%d", n))
		if err != nil {
			return err
		}
		nt, err := tx.CreateTable(sid, "t", cols("x", "y"))
		if err != nil {
			return err
		}
		if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: nt, Path: fmt.Sprintf("new%d.parquet", n), RecordCount: 3}); err != nil {
			return err
		}
		if _, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: table, DataFileID: file, Path: fmt.Sprintf("del%d.parquet", n), DeleteCount: 1}); err != nil {
			return err
		}
		// The old name's directory slot empties (a delete), the new one fills.
		return tx.RenameTable(table, fmt.Sprintf("renamed%d", n))
	}
	for _, path := range []string{"explicit transaction", "closure"} {
		t.Run(path, func(t *testing.T) {
			store := objstore.NewMemory(0)
			rec := &offerLog{}
			c := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = recording(rec) }))
			table := createTable(t, c, "orig")
			var file core.DataFileID
			commit(t, c, func(tx *core.Transaction) error {
				var err error
				file, err = tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: "old.parquet", RecordCount: 5})
				return err
			})
			if _, err := c.FoldSprint(bg); err != nil {
				t.Fatal(err)
			}
			format, _ := c.Format()
			if format < core.FormatCurrent {
				t.Fatalf("format %d: the name directory and delete targets need the current format", format)
			}
			tree, manifest := storeTree(t, store), writerManifest(t, store)
			prepared, err := c.Head(bg)
			if err != nil {
				t.Fatal(err)
			}
			offersBefore := len(rec.all())

			var tx *core.Transaction
			var id core.SnapshotID
			switch path {
			case "explicit transaction":
				tx, err = c.Begin(bg)
				if err != nil {
					t.Fatal(err)
				}
				if err := stage(tx, 1, table, file); err != nil {
					t.Fatal(err)
				}
				if id, err = tx.Commit(bg); err != nil {
					t.Fatal(err)
				}
			case "closure":
				id = commit(t, c, func(t2 *core.Transaction) error { tx = t2; return stage(t2, 1, table, file) })
			}
			handed := core.StagedWritesForTest(tx)

			offers := rec.since(offersBefore)
			if len(offers) != 1 || !offers[0].Won {
				t.Fatalf("the commit made offers %+v, want one won offer", offers)
			}
			base := logBase(t, store)
			slot := base.SlotFor(prepared)
			if offers[0].Batch.Slot != slot {
				t.Fatalf("the commit raced slot %d, its prepared head %+v implies %d", offers[0].Batch.Slot, prepared, slot)
			}
			lb := readSlot(t, store, slot)
			if lb.TxnID != offers[0].Batch.TxnID {
				t.Fatalf("slot %d holds txn %s, the commit offered %s", slot, lb.TxnID, offers[0].Batch.TxnID)
			}

			// Every handed write, in order, byte for byte; the head stamp is
			// the one write the session adds.
			var body []core.LogWrite
			var stamps int
			for _, w := range lb.Writes {
				if bytes.Equal(w.Key, core.HeadKeyForTest()) {
					stamps++
					continue
				}
				body = append(body, w)
			}
			if stamps != 1 {
				t.Fatalf("slot %d carries %d head stamps, want exactly 1", slot, stamps)
			}
			if h := headStamps(t, lb); h[0] != (core.Head{SnapshotID: id, BatchSeq: prepared.BatchSeq + 1}) {
				t.Fatalf("slot %d's head stamp %+v, want snapshot %d at batch %d", slot, h[0], id, prepared.BatchSeq+1)
			}
			if len(body) != len(handed) {
				var got, want []string
				for _, w := range body {
					got = append(got, writeText(w))
				}
				for _, w := range handed {
					want = append(want, writeText(w))
				}
				t.Fatalf("slot %d carries %d writes besides the stamp, the session was handed %d:\nslot:\n  %s\nhanded:\n  %s",
					slot, len(body), len(handed), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			for i := range handed {
				if !bytes.Equal(body[i].Key, handed[i].Key) || !bytes.Equal(body[i].Value, handed[i].Value) || body[i].Delete != handed[i].Delete {
					t.Fatalf("slot write %d is %s, the session was handed %s", i, writeText(body[i]), writeText(handed[i]))
				}
			}

			// What was handed is what the verbs imply: entity rows, the name
			// directory (a put and a delete), a delete-file target.
			s := snap(t, c)
			newSchema, ok := s.SchemaByName("s1")
			if !ok {
				t.Fatal("the committer does not serve its own schema")
			}
			newTable, ok := s.TableByName("s1", "t")
			if !ok {
				t.Fatal("the committer does not serve its own table")
			}
			if len(s.DeleteFiles(table)) != 1 {
				t.Fatalf("the committer serves %d delete files, want 1", len(s.DeleteFiles(table)))
			}
			del := s.DeleteFiles(table)[0]
			newFiles := s.DataFiles(newTable.ID)
			if len(newFiles) != 1 {
				t.Fatalf("the new table has %d files", len(newFiles))
			}
			want := map[string]bool{ // key -> is a delete
				string(keys.CurrentSchema(uint64(newSchema.ID))):                             false,
				string(keys.CurrentTable(uint64(newTable.ID))):                               false,
				string(keys.CurrentDataFile(uint64(newTable.ID), uint64(newFiles[0].ID))):    false,
				string(keys.CurrentDeleteFile(uint64(table), uint64(del.ID))):                false,
				string(keys.DeleteTarget(uint64(table), uint64(file), uint64(del.ID))):       false,
				string(keys.NameDir(keys.NameSchema, 0, "s1")):                               false,
				string(keys.NameDir(keys.NameTable, uint64(newSchema.ID), "t")):              false,
				string(keys.NameDir(keys.NameTable, uint64(mainSchemaOf(t, s)), "renamed1")): false,
				string(keys.NameDir(keys.NameTable, uint64(mainSchemaOf(t, s)), "orig")):     true,
				string(keys.Snapshot(uint64(id))):                                            false,
			}
			for _, col := range s.Columns(newTable.ID) {
				want[string(keys.CurrentColumn(uint64(newTable.ID), uint64(col.ID)))] = false
			}
			got := map[string]bool{}
			for _, w := range body {
				got[string(w.Key)] = w.Delete
			}
			for k, isDel := range want {
				d, ok := got[k]
				if !ok {
					t.Errorf("slot %d lacks %s", slot, keys.Describe([]byte(k)))
				} else if d != isDel {
					t.Errorf("slot %d: %s delete=%v, want %v", slot, keys.Describe([]byte(k)), d, isDel)
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			// None of it went into the store the committer reads.
			if after := storeTree(t, store); after != tree {
				t.Fatalf("the committer wrote into the store's WAL or tables:\nbefore %s\nafter  %s", tree, after)
			}
			if after := writerManifest(t, store); after != manifest {
				t.Fatalf("the store's manifest moved under a committer: %+v -> %+v", manifest, after)
			}
			r := storeAlone(t, store)
			for k, isDel := range want {
				// What the slot puts is not in the store; what it deletes is
				// still there.
				if _, ok, err := r.Get(bg, []byte(k)); err != nil || ok != isDel {
					t.Fatalf("the store itself: %s present %v (%v); the committer's slot delete=%v", keys.Describe([]byte(k)), ok, err, isDel)
				}
			}
			if v, _, err := r.Get(bg, core.HeadKeyForTest()); err != nil || bytes.Equal(v, core.EncodeHeadForTest(id, prepared.BatchSeq+1)) {
				t.Fatalf("the store's own head is the committer's stamp (%v)", err)
			}
		})
	}
}

func mainSchemaOf(t *testing.T, s *core.CatalogView) core.SchemaID {
	t.Helper()
	m, ok := s.SchemaByName("main")
	if !ok {
		t.Fatal("no schema main")
	}
	return m.ID
}

// gate holds back the rows the committer's plug hands its reader: once
// armed, the first non-empty batch the plug serves is reported on served
// and handed to the engine only after open (the window in which the plug
// has served a slot the reader's state does not show yet).
type gate struct {
	armed   atomic.Bool
	served  chan uint64 // the seq of the held batch
	release chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{served: make(chan uint64, 1), release: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

type gatedReader struct {
	slate.WalReader
	g *gate
}

func (r gatedReader) Iterator(ctx context.Context, rng slate.WalRange) (slate.WalIterator, error) {
	it, err := r.WalReader.Iterator(ctx, rng)
	if err != nil {
		return nil, err
	}
	return gatedIter{WalIterator: it, g: r.g}, nil
}

type gatedIter struct {
	slate.WalIterator
	g *gate
}

func (it gatedIter) Next(ctx context.Context) (*slate.WalRows, error) {
	rows, err := it.WalIterator.Next(ctx)
	if err != nil || rows == nil || len(rows.Rows) == 0 {
		return rows, err
	}
	if it.g.armed.CompareAndSwap(true, false) {
		it.g.served <- rows.Rows[0].Seq
		select {
		case <-it.g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return rows, nil
}

// RFC 0024, "The sequence a committer races": a batch races the slot its
// prepared head implies (origin slot + prepared batch counter + 1 - origin
// counter), never one derived from what the reader was served.
func TestSlotToRaceComesFromThePreparedHead(t *testing.T) {
	// A native catalog with history: its head's batch counter is past 0,
	// so adoption records a non-zero origin and slot numbers and batch
	// counters differ.
	store := objstore.NewMemory(0)
	native := openRW(t, store)
	table := createTable(t, native, "a")
	for i := 0; i < 4; i++ {
		commit(t, native, insertInto(table, fmt.Sprintf("native%d.parquet", i)))
	}
	nh, err := native.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	native.Close(bg)
	if nh.BatchSeq < 5 {
		t.Fatalf("native head %+v: want a batch counter of at least 5", nh)
	}

	g := newGate()
	crec, prec := &offerLog{}, &offerLog{}
	cp := recording(crec)
	cp.wrapReader = func(r slate.WalReader) slate.WalReader { return gatedReader{WalReader: r, g: g} }
	t.Cleanup(g.open)
	// The committer's reader is never refreshed by time (a 4-minute poll):
	// only the test's refresh and the commit's own waits move it.
	c := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = cp; o.CommitLogPollInterval = 4 * time.Minute }))
	_, origin := c.Format()
	base := logBase(t, store)
	if origin == nil || *origin != nh.BatchSeq || base.OriginBatchSeq != nh.BatchSeq {
		t.Fatalf("adoption origin %v, base %+v; want the native head's counter %d", origin, base, nh.BatchSeq)
	}

	t.Run("non-zero origin", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			h, err := c.Head(bg)
			if err != nil {
				t.Fatal(err)
			}
			n := len(crec.all())
			commit(t, c, insertInto(table, fmt.Sprintf("c%d.parquet", i)))
			offers := crec.since(n)
			want := uint64(i + 1)
			if len(offers) != 1 || !offers[0].Won || offers[0].Batch.Slot != want || offers[0].Batch.Head != h {
				t.Fatalf("commit %d: offers %+v; want one won offer of slot %d prepared against %+v", i, offers, want, h)
			}
			if h.BatchSeq+1 == want {
				t.Fatalf("the test needs slot numbers that differ from batch counters (head %+v)", h)
			}
			if got := base.SlotFor(h); got != want || h.BatchSeq+1-base.OriginBatchSeq != want {
				t.Fatalf("SlotFor(%+v) = %d, want %d", h, got, want)
			}
			stamp := headStamps(t, readSlot(t, store, want))
			if len(stamp) != 1 || stamp[0].BatchSeq != base.OriginBatchSeq+want {
				t.Fatalf("slot %d's stamps %+v, want one at batch %d", want, stamp, base.OriginBatchSeq+want)
			}
		}
	})

	t.Run("served ahead of the prepared head", func(t *testing.T) {
		prepared, err := c.Head(bg)
		if err != nil {
			t.Fatal(err)
		}
		k := base.SlotFor(prepared)
		// A peer lands slot k.
		peer := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = recording(prec) }))
		peerSnap := commit(t, peer, insertInto(table, "peer.parquet"))
		po := prec.all()
		if len(po) != 1 || !po[0].Won || po[0].Batch.Slot != k {
			t.Fatalf("the peer's offers %+v, want one won offer of slot %d", po, k)
		}
		peerTxn := po[0].Batch.TxnID

		// The committer's plug serves slot k; the reader has not applied it.
		g.armed.Store(true)
		refreshed := make(chan error, 1)
		go func() { refreshed <- c.Refresh(bg) }()
		select {
		case seq := <-g.served:
			if seq != base.Seq(k) {
				t.Fatalf("the plug served seq %d, want slot %d's (%d)", seq, k, base.Seq(k))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the committer's plug never served the peer's slot")
		}
		// Released once the commit has made its first offer, whatever its
		// outcome (a loss waits for the reader to be served the winners,
		// and a win for its own slot: both need the held rows).
		crec.setHook(func(offerRecord) { g.open() })
		defer crec.setHook(nil)
		n := len(crec.all())
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		mine, err := c.Commit(ctx, insertInto(table, "mine.parquet"))
		g.open()
		if err != nil {
			t.Fatal(err)
		}
		if err := <-refreshed; err != nil {
			t.Fatal(err)
		}
		offers := crec.since(n)
		if len(offers) != 2 {
			t.Fatalf("the commit made %d offers %+v, want a lost one and a won one", len(offers), offers)
		}
		lost, won := offers[0], offers[1]
		if lost.Won || lost.Err != nil || lost.Batch.Slot != k || lost.Batch.Head != prepared {
			t.Fatalf("first offer: slot %d won %v err %v head %+v; want a loss at slot %d (its head %+v implies it)", lost.Batch.Slot, lost.Won, lost.Err, lost.Batch.Head, k, prepared)
		}
		if len(lost.Landed) == 0 || lost.Landed[0].Slot != k || lost.Landed[0].TxnID != peerTxn {
			t.Fatalf("the loss reports %+v, want slot %d held by the peer's txn %s", lost.Landed, k, peerTxn)
		}
		wantHead := core.Head{SnapshotID: peerSnap, BatchSeq: prepared.BatchSeq + 1}
		if !won.Won || won.Batch.Slot != k+1 || won.Batch.Head != wantHead {
			t.Fatalf("retry: slot %d won %v head %+v; want slot %d won, re-prepared against %+v", won.Batch.Slot, won.Won, won.Batch.Head, k+1, wantHead)
		}
		if mine != peerSnap+1 {
			t.Fatalf("the retry minted snapshot %d, want %d (after the peer's)", mine, peerSnap+1)
		}
		if got := readSlot(t, store, k+1).TxnID; got != won.Batch.TxnID {
			t.Fatalf("slot %d holds %s, not the retry's txn", k+1, got)
		}
		files := map[string]int{}
		for _, f := range snap(t, c).DataFiles(table) {
			files[f.Path]++
		}
		if files["peer.parquet"] != 1 || files["mine.parquet"] != 1 {
			t.Fatalf("after the retry the committer serves %v", files)
		}
	})
}

// failingPlug makes the folder's WAL plug refuse appends once fail is set:
// a held store whose local apply of a won slot fails.
type failingPlug struct {
	slate.WriterInit
	fail *atomic.Bool
}

var errApplyInjected = errors.New("test: injected failure applying a slot to the held store")

func (p failingPlug) FenceAndInit(ctx context.Context, m slate.WriterManifest) (slate.WalIterator, slate.WalWriter, error) {
	it, w, err := p.WriterInit.FenceAndInit(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	return it, failingWal{WalWriter: w, fail: p.fail}, nil
}

type failingWal struct {
	slate.WalWriter
	fail *atomic.Bool
}

func (w failingWal) Append(rows []slate.Row) error {
	if w.fail.Load() {
		return errApplyInjected
	}
	return w.WalWriter.Append(rows)
}

// RFC 0024, "The committer": "A local failure after a won slot is reported
// as an unknown outcome: the slot is committed, and a reopen folds it." A
// holder wins its slot, then applying it to the held store fails.
func TestHolderWhoseWonSlotFailsToApplyReportsOutcomeUnknownAndAReopenFoldsIt(t *testing.T) {
	store := objstore.NewMemory(0)
	rec := &offerLog{}
	var fail atomic.Bool
	p := recording(rec)
	p.wrapWriter = func(w slate.WriterInit) slate.WriterInit { return failingPlug{WriterInit: w, fail: &fail} }
	h, err := core.Open(bg, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = p; o.CommitLogFoldPoll = time.Hour }))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(bg)
	table := createTable(t, h, "a")
	if err := h.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	commit(t, h, insertInto(table, "applied.parquet"))
	if h.Role() != core.RoleHolder {
		t.Fatalf("role %q, want holder", h.Role())
	}
	fail.Store(true)
	n := len(rec.all())
	_, err = h.Commit(bg, insertInto(table, "unknown.parquet"))
	if !errors.Is(err, core.OutcomeUnknown) || !strings.Contains(err.Error(), "reopen folds it") {
		t.Fatalf("commit whose slot the holder could not apply: %v, want OutcomeUnknown", err)
	}
	offers := rec.since(n)
	if len(offers) != 1 || !offers[0].Won {
		t.Fatalf("offers %+v, want one won offer", offers)
	}
	slot := offers[0].Batch.Slot
	if lb := readSlot(t, store, slot); lb.TxnID != offers[0].Batch.TxnID {
		t.Fatalf("slot %d holds %s, not the commit's txn", slot, lb.TxnID)
	}
	h.Close(bg)

	// A reopen is served the slot, and folds it into the store.
	c := openCommitter(t, store, logOpts())
	paths := func(s *core.CatalogView) map[string]int {
		m := map[string]int{}
		for _, f := range s.DataFiles(table) {
			m[f.Path]++
		}
		return m
	}
	if got := paths(snap(t, c)); got["unknown.parquet"] != 1 || got["applied.parquet"] != 1 {
		t.Fatalf("a reopened committer serves %v, want the unknown-outcome commit once", got)
	}
	if _, err := c.FoldSprint(bg); err != nil {
		t.Fatal(err)
	}
	if n, err := c.UnfoldedSlots(bg); err != nil || n != 0 {
		t.Fatalf("after the reopen's fold: %d unfolded (%v)", n, err)
	}
	m, err := core.MaterializeForTest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(m.Head); got["unknown.parquet"] != 1 {
		t.Fatalf("the folded store holds %v, want the unknown-outcome commit", got)
	}
	if m.Stamp.BatchSeq != logBase(t, store).OriginBatchSeq+slot {
		t.Fatalf("the folded store's head %+v is not slot %d's", m.Stamp, slot)
	}
}

// RFC 0024: "No test in the unit-test binary registers a provider, since
// every other test's reader would inherit it." Two guards: no source file
// of this binary calls RegisterCommitLog, and (running after every
// sequential test, being parallel) the process has no provider registered,
// so a provider-less open is the single writer.
func TestNoCommitLogProviderIsRegisteredInTheUnitTestBinary(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing this package's test files: %v %v", files, err)
	}
	call := regexp.MustCompile(`\bRegisterCommitLog\s*\(`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if call.MatchString(code) {
				t.Errorf("%s:%d registers a commit-log provider in the unit-test binary (put registry tests in core/registrytest): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	t.Parallel()
	if core.CommitLogRegisteredForTest() {
		t.Fatal("a commit-log provider is registered in the unit-test binary")
	}
	c, err := core.Open(bg, objstore.NewMemory(0), core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(bg)
	if c.Role() != core.RoleWriter {
		t.Fatalf("a provider-less open is a %q, want the single writer", c.Role())
	}
}
