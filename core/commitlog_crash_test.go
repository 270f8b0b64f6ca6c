package core_test

// commitlog_crash_test.go: crash sweeps over the commit log (ARCHITECTURE.md
// §9). Each sweep runs one operation against a store that accepts k writes
// and then fails every write, for k = 0, 1, 2, ... until the operation
// completes without reaching the crash point. Every sweep runs in two
// modes: "freeze" (objstore.FaultyStore.FreezeAfter: the process dies
// before write k+1 lands) and "lost-ack" (crashAckStore: write k+1 lands
// and its acknowledgement dies with the process). After every crash point
// it reopens the underlying store with a fresh provider and checks:
//
//   - nothing acknowledged is lost: every commit that returned success is
//     present, each of its files exactly once;
//   - nothing is torn: a commit (two files) is fully present or fully absent;
//   - snapshots are consecutive and the head counts exactly the commits
//     present;
//   - the log has no hole and truncation never passed the store's replay
//     point;
//   - the catalog opens read-write (a committer) and read-only, agreeing;
//   - a further commit succeeds and a new reader sees it.
//
// The sweeps: (a) catalog-level adoption, (b) a fold with truncation,
// (c) commits on a committer including the cadence fold the second one
// triggers (memory and local stores), (d) TakeStore, a peer's commit, and
// a holder's commits.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/provider"
)

// crashSweepLimit bounds every sweep: an operation that never completes
// unfrozen is a failure, not an endless test.
const crashSweepLimit = 300

// crashLogOpts: a fresh in-tree provider that truncates without a minimum
// age, no cadence fold unless asked, and a committer's reader that does
// not poll during a sweep (reads and commits refresh it themselves).
func crashLogOpts(extra ...func(*core.CatalogOptions)) core.CatalogOptions {
	return logOpts(append([]func(*core.CatalogOptions){func(o *core.CatalogOptions) {
		o.CommitLog = provider.New(provider.Options{Retention: -1})
		o.CommitLogRetention = -1
		o.CommitLogPollInterval = 4 * time.Minute // the reader's checkpoint lifetime (10 min) must be twice it
		o.Logger = crashQuiet
	}}, extra...)...)
}

// crashQuiet drops the sweeps' logs (a crash at every write warns a lot).
var crashQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func crashNoRetry(o *core.CatalogOptions) { o.DisableRetry = true }

// crashFault is a store a sweep crashes: FreezeAfter(k) arms it (k more
// writes land, then the process is dead to the store); Frozen reports that
// the operation reached the crash point.
type crashFault interface {
	objstore.Store
	FreezeAfter(k int)
	Frozen() bool
}

// crashAckStore dies right after a write lands: FreezeAfter(k) lets k
// writes through, lands the next one but reports it failed (its
// acknowledgement lost with the process), and fails every write after it
// without landing. Reads keep working, as with objstore.FaultyStore.
type crashAckStore struct {
	objstore.Store
	mu     sync.Mutex
	budget int // writes left before the lost one; < 0: no rule
	frozen bool
}

func (s *crashAckStore) FreezeAfter(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget, s.frozen = k, false
}

func (s *crashAckStore) Frozen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frozen
}

func (s *crashAckStore) write(op, key string, fn func() (string, error)) (string, error) {
	s.mu.Lock()
	land, ack := true, true
	switch {
	case s.frozen:
		land = false
	case s.budget == 0:
		s.frozen, ack = true, false
	case s.budget > 0:
		s.budget--
	}
	s.mu.Unlock()
	if !land {
		return "", &objstore.Error{Op: op, Key: key, Kind: objstore.ErrTransient, Msg: "injected crash (write not landed)", Err: objstore.ErrInjected}
	}
	etag, err := fn()
	if err != nil || ack {
		return etag, err
	}
	return "", &objstore.Error{Op: op, Key: key, Kind: objstore.ErrTransient, Msg: "injected crash (write landed, ack lost)", Err: objstore.ErrInjected}
}

func (s *crashAckStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	return s.write("put", key, func() (string, error) { return s.Store.Put(ctx, key, data) })
}

func (s *crashAckStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.write("put-if-absent", key, func() (string, error) { return s.Store.PutIfAbsent(ctx, key, data) })
}

func (s *crashAckStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return s.write("put-if-match", key, func() (string, error) { return s.Store.PutIfMatch(ctx, key, data, etag) })
}

func (s *crashAckStore) Delete(ctx context.Context, key string) error {
	_, err := s.write("delete", key, func() (string, error) { return "", s.Store.Delete(ctx, key) })
	return err
}

// crashModes runs sweep once per crash mode, each handing out unarmed
// crashing wrappers of a store.
func crashModes(t *testing.T, sweep func(t *testing.T, wrap func(objstore.Store) crashFault)) {
	t.Run("freeze", func(t *testing.T) {
		sweep(t, func(s objstore.Store) crashFault { return objstore.NewFaulty(s) })
	})
	t.Run("lost-ack", func(t *testing.T) {
		sweep(t, func(s objstore.Store) crashFault { return &crashAckStore{Store: s, budget: -1} })
	})
}

// crashLake is the state a sweep starts from.
type crashLake struct {
	table core.TableID
	head  core.SnapshotID // the head after setup
	tags  []string        // commits setup made (each present, in full)
	tail  uint64          // the log's last slot after setup
}

// crashTail returns the log's last slot.
func crashTail(t *testing.T, store objstore.Store) uint64 {
	t.Helper()
	names := slots(t, store)
	if len(names) == 0 {
		t.Fatal("the log holds no slot")
	}
	var s uint64
	if _, err := fmt.Sscanf(names[len(names)-1], "%d", &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// crashCommitFn registers tag-a and tag-b in one commit, so a torn commit
// shows as one file without the other.
func crashCommitFn(table core.TableID, tag string) func(*core.Transaction) error {
	return func(tx *core.Transaction) error {
		for _, part := range []string{"a", "b"} {
			if _, err := tx.RegisterDataFile(core.DataFileDef{TableID: table, Path: tag + "-" + part + ".parquet", RecordCount: 1}); err != nil {
				return err
			}
		}
		return nil
	}
}

func crashTagOf(path string) (tag string, ok bool) {
	base, ok := strings.CutSuffix(path, ".parquet")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(base, '-')
	if i < 0 || (base[i+1:] != "a" && base[i+1:] != "b") {
		return "", false
	}
	return base[:i], true
}

// crashFiles returns the commits s holds (by tag). It fails on a file
// registered twice, a torn commit or a file of no known commit.
func crashFiles(t *testing.T, label string, s *core.CatalogView, table core.TableID, known map[string]bool) map[string]bool {
	t.Helper()
	seen := map[string]int{}
	parts := map[string]int{}
	for _, f := range s.DataFiles(table) {
		seen[f.Path]++
		if seen[f.Path] > 1 {
			t.Fatalf("%s: file %s is registered %d times", label, f.Path, seen[f.Path])
		}
		tag, ok := crashTagOf(f.Path)
		if !ok || !known[tag] {
			t.Fatalf("%s: file %s belongs to no commit this test made", label, f.Path)
		}
		parts[tag]++
	}
	present := map[string]bool{}
	for tag, n := range parts {
		if n != 2 {
			t.Fatalf("%s: commit %s is torn: %d of its 2 files present", label, tag, n)
		}
		present[tag] = true
	}
	return present
}

// crashCheck reopens store with a fresh provider and checks the sweep's
// invariants. attempted are the commits the crashed operation tried (in
// order), acked those it reported successful.
func crashCheck(t *testing.T, label string, store objstore.Store, lake crashLake, attempted []string, acked map[string]bool) {
	t.Helper()
	known := map[string]bool{"after": true}
	for _, tag := range lake.tags {
		known[tag] = true
	}
	for _, tag := range attempted {
		known[tag] = true
	}
	c, err := core.Open(bg, store, crashLogOpts())
	if err != nil {
		t.Fatalf("%s: read-write open after the crash: %v", label, err)
	}
	defer c.Close(bg)
	if f, origin := c.Format(); origin == nil && f != core.FormatLegacyLog {
		t.Fatalf("%s: the reopened catalog is not log-resident (format %d)", label, f)
	}
	s := snap(t, c)
	present := crashFiles(t, label, s, lake.table, known)
	for _, tag := range lake.tags {
		if !present[tag] {
			t.Fatalf("%s: commit %s, made before the crash, is missing", label, tag)
		}
	}
	landed := 0
	for _, tag := range attempted {
		switch {
		case present[tag]:
			landed++
		case acked[tag]:
			t.Fatalf("%s: acknowledged commit %s is missing after the crash", label, tag)
		}
	}
	if present["after"] {
		t.Fatalf("%s: a commit from the future is present", label)
	}
	wantHead := lake.head + core.SnapshotID(landed)
	if s.ID() != wantHead {
		t.Fatalf("%s: head %d with %d of the crashed operation's commits present, want %d", label, s.ID(), landed, wantHead)
	}
	crashConsecutive(t, label, c, wantHead)

	// A read-only open replays the log from the store's replay point and
	// agrees with the committer.
	ro, err := core.OpenReadOnly(bg, store, crashLogOpts())
	if err != nil {
		t.Fatalf("%s: read-only open after the crash: %v", label, err)
	}
	rs := snap(t, ro)
	if got := crashFiles(t, label+" (reader)", rs, lake.table, known); len(got) != len(present) || rs.ID() != wantHead {
		ro.Close(bg)
		t.Fatalf("%s: the reader sees head %d and %d commits, the committer head %d and %d", label, rs.ID(), len(got), wantHead, len(present))
	}
	ro.Close(bg)

	// The catalog keeps working: a commit lands and a new reader sees it.
	id, err := c.Commit(bg, crashCommitFn(lake.table, "after"))
	if err != nil {
		t.Fatalf("%s: commit after the crash: %v", label, err)
	}
	if id != wantHead+1 {
		t.Fatalf("%s: the commit after the crash minted snapshot %d, want %d", label, id, wantHead+1)
	}
	ro, err = core.OpenReadOnly(bg, store, crashLogOpts())
	if err != nil {
		t.Fatalf("%s: read-only open after the new commit: %v", label, err)
	}
	defer ro.Close(bg)
	rs = snap(t, ro)
	if got := crashFiles(t, label+" (new reader)", rs, lake.table, known); !got["after"] || len(got) != len(present)+1 || rs.ID() != wantHead+1 {
		t.Fatalf("%s: a new reader sees head %d with %d commits (after: %v), want head %d with %d", label, rs.ID(), len(got), got["after"], wantHead+1, len(present)+1)
	}
	crashConsecutive(t, label+" (new reader)", ro, wantHead+1)
}

// crashConsecutive checks that the snapshot records are 0..head.
func crashConsecutive(t *testing.T, label string, c *core.Catalog, head core.SnapshotID) {
	t.Helper()
	snaps, err := c.Snapshots(bg, 0)
	if err != nil {
		t.Fatalf("%s: Snapshots: %v", label, err)
	}
	if len(snaps) != int(head)+1 {
		t.Fatalf("%s: %d snapshot records for head %d", label, len(snaps), head)
	}
	for i, s := range snaps {
		if s.ID != core.SnapshotID(i) {
			t.Fatalf("%s: snapshot record %d has id %d (not consecutive)", label, i, s.ID)
		}
	}
}

// crashWantCrashKind: a crash may fail the operation, but never as
// corruption or a bad argument (that would be a protocol bug, not a dead
// process).
func crashWantCrashKind(t *testing.T, label string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, k := range []core.Kind{core.Corruption, core.InvalidArgument, core.Internal} {
		if errors.Is(err, k) {
			t.Fatalf("%s: the crash surfaced as %v: %v", label, k, err)
		}
	}
}

// crashSlotsContiguous checks the log after a crash: every slot from the
// store's replay point (the last folded slot, which truncation keeps) to
// the tail is present (with nothing folded, every slot from 0); the log
// reads without a hole from its first slot to its tail, and below that
// first slot reads as truncated, never as a hole. It returns the present
// slots.
func crashSlotsContiguous(t *testing.T, label string, store objstore.Store) []uint64 {
	t.Helper()
	base, ok, err := provider.New(provider.Options{}).Committer(store, "").Base(bg)
	if err != nil || !ok {
		t.Fatalf("%s: the log's base: ok=%v %v", label, ok, err)
	}
	mi, err := slate.DescribeManifest(bg, store, "")
	if err != nil {
		t.Fatal(err)
	}
	var present []uint64
	for _, name := range slots(t, store) {
		var s uint64
		if _, err := fmt.Sscanf(name, "%d", &s); err != nil {
			t.Fatalf("%s: slot object %q", label, name)
		}
		present = append(present, s)
	}
	if len(present) == 0 {
		t.Fatalf("%s: the log holds no slot", label)
	}
	from := uint64(0)
	if mi.ReplayAfterWalID >= base.WalBase {
		from = mi.ReplayAfterWalID - base.WalBase
	}
	tail := present[len(present)-1]
	if tail < from {
		t.Fatalf("%s: the store's replay point is slot %d, past the log's tail %d", label, from, tail)
	}
	have := map[uint64]bool{}
	for _, s := range present {
		have[s] = true
	}
	for s := from; s <= tail; s++ {
		if !have[s] {
			t.Fatalf("%s: slot %d is gone but the store's replay point is slot %d (slots %v): truncation deleted a slot the store lacks", label, s, from, present)
		}
	}
	rc := provider.New(provider.Options{}).Committer(store, "")
	got, err := rc.Read(bg, present[0], 0)
	if err != nil {
		t.Fatalf("%s: reading the log from its first slot %d (slots %v): %v", label, present[0], present, err)
	}
	if len(got) != len(present) || got[len(got)-1].Slot != tail {
		t.Fatalf("%s: reading the log from slot %d returned %d slots, %d are present", label, present[0], len(got), len(present))
	}
	if present[0] > 0 {
		if _, err := rc.Read(bg, 0, 0); !errors.Is(err, core.SnapshotExpired) {
			t.Fatalf("%s: reading below the log's first slot %d: %v, want SnapshotExpired (truncated below the floor, not a hole)", label, present[0], err)
		}
	}
	return present
}

// crashCopies hands out copies of a memory store (one per crash point).
func crashCopies(t *testing.T, seed objstore.Store) func() objstore.Store {
	return func() objstore.Store { return copyMemoryStore(t, seed) }
}

// crashAdoptedLake: an adopted log with a table and two commits, and a
// fold after the first, so the store's replay point is inside the log and
// the second commit's slot is unfolded. Setup truncates nothing (default
// retention): slots 0 (the stamp), 1 (the table), 2 (s0, the replay
// point), 3 (s1), for a sweep's fold to truncate below its replay point.
func crashAdoptedLake(t *testing.T, store objstore.Store) crashLake {
	t.Helper()
	c, err := core.Open(bg, store, logOpts(func(o *core.CatalogOptions) { o.Logger = crashQuiet }))
	if err != nil {
		t.Fatal(err)
	}
	lake := crashLake{table: createTable(t, c, "t")}
	for i, tag := range []string{"s0", "s1"} {
		lake.head = commit(t, c, crashCommitFn(lake.table, tag))
		lake.tags = append(lake.tags, tag)
		if i == 0 {
			if _, err := c.FoldSprint(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Close(bg)
	lake.tail = crashTail(t, store)
	if n := len(slots(t, store)); uint64(n) != lake.tail+1 {
		t.Fatalf("setup truncated the log: %d slots up to %d", n, lake.tail)
	}
	return lake
}

// TestCommitLogAdoptionCrashSweep: a read-write open with a provider on an
// unadopted native catalog (whose last writer crashed with commits only in
// its own WAL) adopts it: opens the store on its WAL, flushes, races the
// stamp as slot 0, folds, opens its reader. Crashed at every write, a new
// open either finds the log adopted with a base consistent with the
// catalog, or adopts it; nothing the native writer committed is lost; and
// from the moment the adoption's stamp reached the store (before slot 0 is
// raced) every provider-less open is refused, folded or not.
func TestCommitLogAdoptionCrashSweep(t *testing.T) {
	native := objstore.NewMemory(0)
	w, err := core.Open(bg, native, core.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lake := crashLake{table: createTable(t, w, "t")}
	for _, tag := range []string{"n0", "n1"} {
		lake.head = commit(t, w, crashCommitFn(lake.table, tag))
		lake.tags = append(lake.tags, tag)
	}
	h, err := w.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	// The writer "crashes": the seed is the store as it stands, with the
	// last commits durable only in the native WAL.
	seed := copyMemoryStore(t, native)
	w.Close(bg)
	fresh := crashCopies(t, seed)

	crashModes(t, func(t *testing.T, wrap func(objstore.Store) crashFault) {
		foundAdopted, adopted, interrupted, pendingRefused := 0, 0, 0, 0
		for k := 0; ; k++ {
			label := fmt.Sprintf("k=%d", k)
			inner := fresh()
			faulty := wrap(inner)
			faulty.FreezeAfter(k)
			c, err := core.Open(bg, faulty, crashLogOpts(crashNoRetry))
			completed := err == nil && !faulty.Frozen()
			crashWantCrashKind(t, label, err)
			if err == nil {
				c.Close(bg)
			}
			base, ok, berr := provider.New(provider.Options{}).Committer(inner, "").Base(bg)
			if berr != nil {
				t.Fatalf("%s: reading the base after the crash: %v", label, berr)
			}
			if err == nil && !ok {
				t.Fatalf("%s: the open succeeded but the log is not adopted", label)
			}
			if ok {
				foundAdopted++
				if base.OriginBatchSeq != h.BatchSeq {
					t.Fatalf("%s: the base's origin is %d, the catalog's batch counter %d", label, base.OriginBatchSeq, h.BatchSeq)
				}
				mi, err := slate.DescribeManifest(bg, inner, "")
				if err != nil {
					t.Fatal(err)
				}
				if mi.ReplayAfterWalID < base.WalBase {
					interrupted++ // the stamp landed, the fold did not
					if mi.LastL0Seq >= base.SeqBase || mi.NextWalID > base.WalBase {
						t.Fatalf("%s: unfolded store %+v reaches into the log's base %+v", label, mi, base)
					}
				}
			} else {
				adopted++
			}
			// Once slot 0 landed (and before it is folded, too), no
			// provider-less open may use the store: the stamp reached the
			// store before the slot did.
			if !ok {
				// Before slot 0: refused once the pending stamp reached the
				// store; otherwise a provider-less open finds the store as
				// the native writer left it (and writes nothing to it).
				c, err := core.OpenReadOnly(bg, inner, core.CatalogOptions{})
				switch {
				case core.NeedsCommitLog(err):
					pendingRefused++
				case err != nil:
					t.Fatalf("%s: a provider-less read-only open before slot 0: %v", label, err)
				default:
					c.Close(bg)
				}
			}
			if ok {
				if c, err := core.Open(bg, inner, core.CatalogOptions{}); !core.NeedsCommitLog(err) {
					if err == nil {
						c.Close(bg)
					}
					t.Fatalf("%s: a provider-less open after a crash with slot 0 landed: %v, want refused as needing the commit log", label, err)
				}
				if r, err := core.OpenReadOnly(bg, inner, core.CatalogOptions{}); !core.NeedsCommitLog(err) {
					if err == nil {
						r.Close(bg)
					}
					t.Fatalf("%s: a provider-less read-only open after a crash with slot 0 landed: %v, want refused", label, err)
				}
			}

			// The first open after the crash leaves the store adopted and
			// stamped (it adopts, or finishes an adoption whose stamp landed
			// but was never folded): from then on it needs a provider.
			c, err = core.Open(bg, inner, crashLogOpts())
			if err != nil {
				t.Fatalf("%s: reopen: %v", label, err)
			}
			f, origin := c.Format()
			c.Close(bg)
			if origin == nil || *origin != h.BatchSeq {
				t.Fatalf("%s: format %d origin %v after adoption, want origin %d", label, f, origin, h.BatchSeq)
			}
			if _, err := core.Open(bg, inner, core.CatalogOptions{}); !errors.Is(err, core.Migration) {
				t.Fatalf("%s: a provider-less open after a provider open of the adopted store: %v, want Migration", label, err)
			}

			crashCheck(t, label, inner, lake, nil, nil)

			if completed {
				if k < 3 || foundAdopted == 0 || adopted == 0 || interrupted == 0 || pendingRefused == 0 {
					t.Fatalf("the sweep covered %d writes (found adopted %d, %d of them unfolded; adopted on reopen %d; refused before slot 0 %d)", k, foundAdopted, interrupted, adopted, pendingRefused)
				}
				t.Logf("adoption: swept %d crash points (log found adopted after %d, %d of them with the stamp unfolded; adopted by the reopen after %d, %d of those already refusing provider-less opens)", k, foundAdopted, interrupted, adopted, pendingRefused)
				return
			}
			if k > crashSweepLimit {
				t.Fatal("the adoption never completed")
			}
		}
	})
}

// TestCommitLogFoldCrashSweep: FoldSprint on a log with unfolded slots and
// a previous fold's replay point, with no retention, so the fold replays,
// writes the store out, raises the floor and deletes slots. Crashed at
// every write: no slot the store lacks is deleted, and a fresh reader sees
// every commit.
func TestCommitLogFoldCrashSweep(t *testing.T) {
	seed := objstore.NewMemory(0)
	lake := crashAdoptedLake(t, seed)
	// Three more unfolded slots (4..6) for the sweep's fold to apply.
	c, err := core.Open(bg, seed, logOpts(func(o *core.CatalogOptions) { o.Logger = crashQuiet }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"s2", "s3", "s4"} {
		lake.head = commit(t, c, crashCommitFn(lake.table, tag))
		lake.tags = append(lake.tags, tag)
	}
	c.Close(bg)
	lake.tail = crashTail(t, seed)
	fresh := crashCopies(t, seed)

	crashModes(t, func(t *testing.T, wrap func(objstore.Store) crashFault) {
		for k := 0; ; k++ {
			label := fmt.Sprintf("k=%d", k)
			inner := fresh()
			faulty := wrap(inner)
			c, err := core.Open(bg, faulty, crashLogOpts(crashNoRetry))
			if err != nil {
				t.Fatalf("%s: open before the fold: %v", label, err)
			}
			faulty.FreezeAfter(k)
			rep, ferr := c.FoldSprint(bg)
			completed := ferr == nil && !faulty.Frozen()
			crashWantCrashKind(t, label, ferr)
			c.Close(bg)

			left := crashSlotsContiguous(t, label, inner)
			crashCheck(t, label, inner, lake, nil, nil)

			if completed {
				if rep.Applied == 0 || rep.Truncated == 0 || len(left) != 1 || left[0] != lake.tail {
					t.Fatalf("the unfrozen fold applied %d slots and truncated %d, leaving slots %v: want everything below the replay point (slot %d) truncated", rep.Applied, rep.Truncated, left, lake.tail)
				}
				if k < 3 {
					t.Fatalf("the sweep covered only %d writes", k)
				}
				t.Logf("fold: swept %d crash points (the complete fold applied %d slots, truncated %d)", k, rep.Applied, rep.Truncated)
				return
			}
			if k > crashSweepLimit {
				t.Fatal("the fold never completed")
			}
		}
	})
}

// crashCommitSweep: two commits on a committer, the second landing the
// slot that triggers the cadence fold (with truncation), then Close (which
// waits for the fold). With hold, TakeStore first, then a peer's commit
// that the holder's first commit loses to: the commits are a holder's,
// and it folds the peer's slot into the store it holds.
func crashCommitSweep(t *testing.T, what string, fresh func() objstore.Store, lake crashLake, hold bool) {
	crashModes(t, func(t *testing.T, wrap func(objstore.Store) crashFault) {
		for k := 0; ; k++ {
			label := fmt.Sprintf("%s k=%d", what, k)
			inner := fresh()
			faulty := wrap(inner)
			// Slots 4 and 5: the second is a multiple of the cadence.
			c, err := core.Open(bg, faulty, crashLogOpts(crashNoRetry, func(o *core.CatalogOptions) { o.CommitLogFoldSlots = 5 }))
			if err != nil {
				t.Fatalf("%s: open before the commits: %v", label, err)
			}
			var attempted []string
			acked := map[string]bool{}
			faulty.FreezeAfter(k)
			held := false
			if hold {
				err := c.TakeStore(bg)
				crashWantCrashKind(t, label, err)
				held = err == nil
				// A peer (another process, on the store itself) lands the
				// next slot: the holder's first commit loses it, applies
				// the peer's slot to the held store and lands after it.
				peer, err := core.Open(bg, inner, crashLogOpts())
				if err != nil {
					t.Fatalf("%s: the peer's open: %v", label, err)
				}
				_, err = peer.Commit(bg, crashCommitFn(lake.table, "p0"))
				peer.Close(bg)
				if err != nil {
					t.Fatalf("%s: the peer's commit: %v", label, err)
				}
				attempted = append(attempted, "p0")
				acked["p0"] = true
			}
			for _, tag := range []string{"x0", "x1"} {
				attempted = append(attempted, tag)
				_, err := c.Commit(bg, crashCommitFn(lake.table, tag))
				crashWantCrashKind(t, label, err)
				if err != nil {
					if !errors.Is(err, core.OutcomeUnknown) && !errors.Is(err, core.Store) && !errors.Is(err, core.Fenced) {
						t.Fatalf("%s: commit %s failed with an unexpected kind: %v", label, tag, err)
					}
					break
				}
				acked[tag] = true
			}
			role := c.Role()
			c.Close(bg)
			completed := !faulty.Frozen()
			if completed && (len(acked) != len(attempted) || len(acked) < 2 || held != hold || (hold && role != core.RoleHolder)) {
				t.Fatalf("%s: unfrozen, yet acked %v, held %v (role %s)", label, acked, held, role)
			}

			left := crashSlotsContiguous(t, label, inner)
			crashCheck(t, label, inner, lake, attempted, acked)

			if completed {
				if !hold && (len(left) != 1 || left[0] != lake.tail+2) {
					t.Fatalf("%s: after the cadence fold the log holds slots %v, want only slot %d (the replay point): the sweep did not cover truncation", label, left, lake.tail+2)
				}
				if k < 3 {
					t.Fatalf("%s: the sweep covered only %d writes", what, k)
				}
				t.Logf("%s: swept %d crash points", what, k)
				return
			}
			if k > crashSweepLimit {
				t.Fatalf("%s: the operation never completed", what)
			}
		}
	})
}

// TestCommitLogCommitCrashSweep: commits on a committer (a slot PUT each,
// then the cadence fold the second one triggers, then Close), crashed at
// every write. An acknowledged commit is never lost; an unacknowledged one
// is whole or absent.
func TestCommitLogCommitCrashSweep(t *testing.T) {
	seed := objstore.NewMemory(0)
	lake := crashAdoptedLake(t, seed)
	crashCommitSweep(t, "memory", crashCopies(t, seed), lake, false)
}

// TestCommitLogCommitCrashSweepLocal: the same on a local directory store.
func TestCommitLogCommitCrashSweepLocal(t *testing.T) {
	root := t.TempDir()
	seedDir := filepath.Join(root, "seed")
	seed, err := objstore.NewLocal(seedDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	lake := crashAdoptedLake(t, seed)
	n := 0
	fresh := func() objstore.Store {
		n++
		dir := filepath.Join(root, fmt.Sprint(n))
		if err := os.CopyFS(dir, os.DirFS(seedDir)); err != nil {
			t.Fatal(err)
		}
		s, err := objstore.NewLocal(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	crashCommitSweep(t, "local", fresh, lake, false)
}

// TestCommitLogTakeStoreCrashSweep: TakeStore (the store opened over the
// plug, replaying the unfolded slot), a peer's commit on the store itself,
// and two holder commits (a slot PUT each, applied to the held store; the
// first loses to the peer's slot and applies it first), then Close (which
// writes the held store out), crashed at every write of the holder.
func TestCommitLogTakeStoreCrashSweep(t *testing.T) {
	seed := objstore.NewMemory(0)
	lake := crashAdoptedLake(t, seed)
	crashCommitSweep(t, "holder", crashCopies(t, seed), lake, true)
}
