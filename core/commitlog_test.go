package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/internal/testutil/quiet"
	"github.com/moraine-go/moraine/provider"
)

// logOpts returns catalog options carrying a fresh in-tree provider (tests
// never register one: see core/registrytest).
func logOpts(extra ...func(*core.CatalogOptions)) core.CatalogOptions {
	o := core.CatalogOptions{CommitLog: provider.New(provider.Options{}), CommitLogPollInterval: 10 * time.Millisecond,
		ReaderPollInterval: -1, CommitLogFoldSlots: -1}
	for _, f := range extra {
		f(&o)
	}
	return o
}

func openCommitter(t *testing.T, store objstore.Store, opts core.CatalogOptions) *core.Catalog {
	t.Helper()
	c, err := core.Open(bg, store, opts)
	if err != nil {
		t.Fatalf("open over the commit log: %v", err)
	}
	t.Cleanup(func() { c.Close(bg) })
	return c
}

func createTable(t *testing.T, c *core.Catalog, name string) core.TableID {
	t.Helper()
	var id core.TableID
	commit(t, c, func(tx *core.Transaction) error {
		var err error
		id, err = tx.CreateTable(mainSchema(t, tx), name, cols("a"))
		return err
	})
	return id
}

// slots lists the log's slot objects.
func slots(t *testing.T, store objstore.Store) []string {
	t.Helper()
	infos, err := objstore.ListAll(bg, store, "log/", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range infos {
		name := strings.TrimPrefix(o.Key, "log/")
		if len(name) == 20 {
			out = append(out, name)
		}
	}
	return out
}

func TestAdoptionLandsTheStampAsTheFirstSlotAndNeedsAProviderAfter(t *testing.T) {
	store := objstore.NewMemory(0)
	single := openRW(t, store)
	createTable(t, single, "before")
	h, _ := single.Head(bg)
	single.Close(bg)

	c := openCommitter(t, store, logOpts())
	f, origin := c.Format()
	if f != core.FormatCurrent || origin == nil || *origin != h.BatchSeq {
		t.Fatalf("after adoption: format %d origin %v, want %d with origin %d", f, origin, core.FormatCurrent, h.BatchSeq)
	}
	if got := slots(t, store); len(got) != 1 || got[0] != fmt.Sprintf("%020d", 0) {
		t.Fatalf("log after adoption = %v, want exactly slot 0 (the stamp)", got)
	}
	if _, ok := snap(t, c).TableByName("main", "before"); !ok {
		t.Fatal("the adopted catalog lost its table")
	}
	c.Close(bg)
	// The store now carries the stamp: a provider-less binary refuses it.
	if _, err := core.Open(bg, store, core.CatalogOptions{}); !errors.Is(err, core.Migration) {
		t.Fatalf("provider-less open of an adopted store: %v, want Migration", err)
	}
	if _, err := core.OpenReadOnly(bg, store, core.CatalogOptions{ReaderPollInterval: -1}); !errors.Is(err, core.Migration) {
		t.Fatalf("provider-less read-only open of an adopted store: %v, want Migration", err)
	}
}

func TestCommitRidesTheNextSlotAndATailingReaderServesItBeforeAnyFold(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts())
	id := createTable(t, c, "t")
	if got := slots(t, store); len(got) != 2 {
		t.Fatalf("slots after one commit: %v, want the stamp and one commit", got)
	}
	// The committer reads its own commit (read-your-writes through its reader).
	if _, ok := snap(t, c).Table(id); !ok {
		t.Fatal("the committer does not see its own commit")
	}
	ro, err := core.OpenReadOnly(bg, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogTail = true }))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close(bg)
	if _, ok := snap(t, ro).Table(id); !ok {
		t.Fatal("a tailing reader does not serve the unfolded slot")
	}
	commit(t, c, insertInto(id, "f.parquet"))
	if err := ro.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if n := len(snap(t, ro).DataFiles(id)); n != 1 {
		t.Fatalf("tailing reader after refresh sees %d files, want 1", n)
	}
}

func TestCommitterWritesNothingIntoTheStoreItReads(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts())
	createTable(t, c, "seed")
	if _, err := c.FoldSprint(bg); err != nil {
		t.Fatal(err)
	}
	storeObjects := func() string { return storeTree(t, store) }
	before := storeObjects()
	slotsBefore := len(slots(t, store))
	for i := 0; i < 5; i++ {
		commit(t, c, func(tx *core.Transaction) error { _, err := tx.CreateSchema(fmt.Sprintf("s%d", i)); return err })
	}
	if got := len(slots(t, store)); got != slotsBefore+5 {
		t.Fatalf("5 commits added %d slots", got-slotsBefore)
	}
	if after := storeObjects(); after != before {
		t.Fatalf("the committer wrote into the store's WAL or tables:\nbefore %s\nafter  %s", before, after)
	}
	// Read the store alone (no log): none of the five schemas is in it.
	r := storeAlone(t, store)
	v, ok, err := r.Get(bg, keys.NameDir(keys.NameSchema, 0, "s0"))
	if err != nil || ok {
		t.Fatalf("the store itself holds the committer's schema (%q, %v, %v)", v, ok, err)
	}
	if _, ok := snap(t, c).SchemaByName("s4"); !ok {
		t.Fatal("the committer does not serve its own commits")
	}
}

// RFC 0024: "a lost race folds the peer's slot before the retry lands
// after it". The holder's idle fold never runs (an hour away), so its store
// lacks the peer's slot when its commit is prepared: the loss is certain,
// and the test asserts it happened (the offer of the peer's slot lost, to
// the peer's txn), that the retry was re-prepared against a store that had
// folded that slot (its head is the peer's), and that it won the next slot.
func TestLostRaceFoldsThePeersSlotBeforeTheRetryLandsAfterIt(t *testing.T) {
	store := objstore.NewMemory(0)
	hrec, prec := &offerLog{}, &offerLog{}
	holder := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) {
		o.CommitLog = recording(hrec)
		o.CommitLogFoldPoll = time.Hour
	}))
	a := createTable(t, holder, "a")
	if err := holder.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	if holder.Role() != core.RoleHolder {
		t.Fatalf("role %q after TakeStore", holder.Role())
	}
	// (View, not Head: Head on a writer whose head view is unset
	// re-locks c.mu and hangs.)
	prepared := snap(t, holder).Head()
	base := logBase(t, store)
	peer := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLog = recording(prec) }))
	landed := commit(t, peer, insertInto(a, "peer.parquet"))
	po := prec.all()
	if len(po) != 1 || !po[0].Won {
		t.Fatalf("the peer's offers %+v, want one win", po)
	}
	peerSlot, peerTxn := po[0].Batch.Slot, po[0].Batch.TxnID
	if want := base.SlotFor(prepared); peerSlot != want {
		t.Fatalf("the peer won slot %d, the holder's head %+v implies %d: no race to lose", peerSlot, prepared, want)
	}

	n := len(hrec.all())
	mine := commit(t, holder, insertInto(a, "holder.parquet"))
	offers := hrec.since(n)
	if len(offers) != 2 {
		t.Fatalf("the holder made %d offers %+v, want a loss then a win", len(offers), offers)
	}
	lost, won := offers[0], offers[1]
	if lost.Won || lost.Err != nil || lost.Batch.Slot != peerSlot || lost.Batch.Head != prepared {
		t.Fatalf("first offer: slot %d won %v err %v head %+v; want a loss at the peer's slot %d prepared against %+v",
			lost.Batch.Slot, lost.Won, lost.Err, lost.Batch.Head, peerSlot, prepared)
	}
	if len(lost.Landed) != 1 || lost.Landed[0].Slot != peerSlot || lost.Landed[0].TxnID != peerTxn {
		t.Fatalf("the loss reports %+v, want exactly the peer's slot %d (txn %s)", lost.Landed, peerSlot, peerTxn)
	}
	// The retry was prepared against the held store after it folded the
	// peer's slot: its head is the one the peer's slot stamped.
	folded := core.Head{SnapshotID: landed, BatchSeq: prepared.BatchSeq + 1}
	if !won.Won || won.Batch.Slot != peerSlot+1 || won.Batch.Head != folded {
		t.Fatalf("retry: slot %d won %v head %+v; want slot %d won, prepared against the folded %+v",
			won.Batch.Slot, won.Won, won.Batch.Head, peerSlot+1, folded)
	}
	if mine != landed+1 {
		t.Fatalf("the holder's retry minted snapshot %d, want %d (right after the peer's)", mine, landed+1)
	}
	if got := readSlot(t, store, peerSlot).TxnID; got != peerTxn {
		t.Fatalf("slot %d holds %s, want the peer's %s", peerSlot, got, peerTxn)
	}
	if got := readSlot(t, store, peerSlot+1).TxnID; got != won.Batch.TxnID {
		t.Fatalf("slot %d holds %s, want the holder's retry %s", peerSlot+1, got, won.Batch.TxnID)
	}
	s := snap(t, holder)
	if n := len(s.DataFiles(a)); n != 2 || s.Head() != (core.Head{SnapshotID: mine, BatchSeq: folded.BatchSeq + 1}) {
		t.Fatalf("after the race the holder sees %d files at %+v, want both at snapshot %d", n, s.Head(), mine)
	}
	if err := peer.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	if n := len(snap(t, peer).DataFiles(a)); n != 2 {
		t.Fatalf("the peer is served %d files, want both", n)
	}
}

func TestTrueConflictThroughTheLogIsCommitConflict(t *testing.T) {
	store := objstore.NewMemory(0)
	c1 := openCommitter(t, store, logOpts())
	a := createTable(t, c1, "a")
	c2 := openCommitter(t, store, logOpts())
	tx, err := c1.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := insertInto(a, "x.parquet")(tx); err != nil {
		t.Fatal(err)
	}
	commit(t, c2, func(tx *core.Transaction) error { return tx.DropTable(a) })
	_, err = tx.Commit(bg)
	wantKind(t, err, core.CommitConflict)
	if !strings.Contains(err.Error(), "dropped table") {
		t.Fatalf("the conflict does not name what it lost to: %v", err)
	}
}

func TestCommitterArrivingAtALongTailFoldsAtOpen(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts())
	a := createTable(t, c, "a")
	for i := 0; i < 12; i++ {
		commit(t, c, insertInto(a, fmt.Sprintf("%d.parquet", i)))
	}
	c.Close(bg)
	late := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) { o.CommitLogFoldSlots = 4 }))
	n, err := late.UnfoldedSlots(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n > 4 {
		t.Fatalf("%d slots unfolded after an open at a long tail; the open should have folded", n)
	}
	if got := len(snap(t, late).DataFiles(a)); got != 12 {
		t.Fatalf("after the open's fold the catalog has %d files, want 12", got)
	}
}

func TestFoldCadenceAndTruncation(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) {
		o.CommitLog = provider.New(provider.Options{Retention: -1})
		o.CommitLogFoldSlots = 3
		o.CommitLogRetention = -1
	}))
	a := createTable(t, c, "a")
	for i := 0; i < 9; i++ {
		commit(t, c, insertInto(a, fmt.Sprintf("%d.parquet", i)))
	}
	rep, err := c.FoldSprint(bg)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.UnfoldedSlots(bg)
	if err != nil || n != 0 {
		t.Fatalf("after a sprint: %d unfolded slots (%v), report %+v", n, err, rep)
	}
	if left := slots(t, store); len(left) > 3 {
		t.Fatalf("%d slots left after folding and truncating with no retention: %v", len(left), left)
	}
	// Everything is still there for a fresh, non-tailing reader.
	ro, err := core.OpenReadOnly(bg, store, logOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close(bg)
	if got := len(snap(t, ro).DataFiles(a)); got != 9 {
		t.Fatalf("a reader of the folded store sees %d files, want 9", got)
	}
}

// An idle committer and an idle tailing reader make no request of the
// store; the first read after an idle spell lists before it is served, so
// it sees what landed meanwhile.
func TestIdleCommitterAndTailingReaderMakeNoRequests(t *testing.T) {
	inner := objstore.NewMemory(0)
	seed := openCommitter(t, inner, logOpts())
	id := createTable(t, seed, "t")
	counting := objstore.WithCounting(inner)
	c := openCommitter(t, counting, logOpts(func(o *core.CatalogOptions) { o.CommitLogPollInterval = 5 * time.Millisecond }))
	r, err := core.OpenReadOnly(bg, counting, logOpts(func(o *core.CatalogOptions) {
		o.CommitLogTail = true
		o.ReaderPollInterval = 5 * time.Millisecond
		o.FollowLatest = true
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	snap(t, c)
	snap(t, r)
	// The ticks after those reads list once; then both go quiet (a poll
	// every 5ms would never be quiet for 100ms).
	quiet.Wait(t, counting, 100*time.Millisecond, 10*time.Second)
	// A commit from elsewhere reaches the tailing reader's next read: its
	// last listing is older than its poll interval, so the read lists.
	commit(t, seed, insertInto(id, "x.parquet"))
	if len(snap(t, r).DataFiles(id)) != 1 {
		t.Fatal("the tailing reader's first read after an idle spell was not served the peer's slot")
	}
	// A committer's read is served a fresh listing of the log at once.
	if len(snap(t, c).DataFiles(id)) != 1 {
		t.Fatal("the committer's read was not served the peer's slot")
	}
}

// storeAlone reads the store by itself (an empty log plugged in): what the
// store holds without any slot.
func storeAlone(t *testing.T, store objstore.Store) *slate.Reader {
	t.Helper()
	r, err := slate.OpenReader(bg, store, "", slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: -1},
		slate.WithWalReader(&emptyLog{spy: &spyProvider{}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(bg) })
	return r
}

// A cadence fold truncates the log only once an eighth of the retention
// has passed since this open last truncated it (a slot is deleted only
// once older than the retention, so truncating at every fold finds
// nothing new); with the retention off, at every fold. Either way every
// commit is kept.
func TestCadenceFoldTruncatesWhenDue(t *testing.T) {
	run := func(retention time.Duration) int {
		store := objstore.NewMemory(0)
		c := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) {
			o.CommitLogFoldSlots = 4
			o.CommitLogRetention = retention
		}))
		tb := createTables(t, c, 1)[0]
		atOpen := c.TruncationsForTest()
		for i := 0; i < 24; i++ {
			if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("f%d.parquet", i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(bg); err != nil { // waits for the cadence folds
			t.Fatal(err)
		}
		requireDataFiles(t, store, tb, 24)
		return c.TruncationsForTest() - atOpen
	}
	if n := run(time.Hour); n != 0 {
		t.Fatalf("an hour's retention: %d cadence folds truncated, want none (the open's fold just did)", n)
	}
	if n := run(-1); n < 5 {
		t.Fatalf("no retention: %d cadence folds truncated, want every one (at least 5 of the 24 slots' folds)", n)
	}
}

// Every fold writes an L0 table; folds compact too, so a store written
// through the commit log keeps a bounded L0 however many folds ran, and
// nothing is lost in the merges.
func TestFoldsCompactTheStore(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts())
	tb := createTables(t, c, 1)[0]
	const folds, per = 20, 5
	for f := 0; f < folds; f++ {
		for i := 0; i < per; i++ {
			if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("f%d-%d.parquet", f, i))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.FoldSprint(bg); err != nil {
			t.Fatal(err)
		}
	}
	mi, err := slate.DescribeManifest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	// Each fold added a table (20 without compaction); one is due at 4.
	if mi.L0 >= 4 || mi.SortedRuns == 0 {
		t.Fatalf("after %d folds: %d L0 tables and %d sorted runs, want fewer than 4 in L0", folds, mi.L0, mi.SortedRuns)
	}
	requireDataFiles(t, store, tb, folds*per)
}

// A holder (TakeStore) writes an L0 table every FlushSlots slots for as
// long as it holds the store; it compacts in the background, so L0 stays
// bounded (the engine's backpressure at 8 tables waits for it).
func TestHeldStoreCompacts(t *testing.T) {
	store := objstore.NewMemory(0)
	c := openCommitter(t, store, logOpts(func(o *core.CatalogOptions) {
		o.CommitLog = provider.New(provider.Options{FlushSlots: 2})
	}))
	if err := c.TakeStore(bg); err != nil {
		t.Fatal(err)
	}
	tb := createTables(t, c, 1)[0]
	const commits = 60 // 30 tables flushed
	for i := 0; i < commits; i++ {
		if _, err := c.Commit(bg, insertInto(tb, fmt.Sprintf("h%d.parquet", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(bg); err != nil {
		t.Fatal(err)
	}
	mi, err := slate.DescribeManifest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	if mi.L0 > 8 || mi.SortedRuns == 0 {
		t.Fatalf("a holder after %d commits flushed every 2 slots: %d L0 tables, %d sorted runs; want L0 kept at 8 or fewer by compaction", commits, mi.L0, mi.SortedRuns)
	}
	requireDataFiles(t, store, tb, commits)
}

// requireDataFiles checks that a fresh committer over store reads table tb
// with n data files.
func requireDataFiles(t *testing.T, store objstore.Store, tb core.TableID, n int) {
	t.Helper()
	v, err := openCommitter(t, store, logOpts()).View(bg)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(v.DataFiles(tb)); got != n {
		t.Fatalf("%d data files in table %d, want %d", got, tb, n)
	}
}
