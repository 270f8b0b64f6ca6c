// Package storage is the Go half of the DuckDB storage extension
// (cshim/storage): the transactions DuckDB opens on an attached lake, the
// tables each sees and the scans of their rows, free of cgo. Package main
// exports it through the C ABI (cshim/moraine.h); the C++ catalog is a thin
// adapter over it.
//
// A Lake wraps one attached catalog. A Txn pins the lake's head when it
// begins: every table list and scan of the transaction reads that one
// head, so a commit landing meanwhile is not seen until the next
// transaction. Views are cached by head stamp, so transactions on an
// unchanged head share one materialization and make no store request.
//
// A Txn's writes (Insert, Update, Delete, CreateTable) go to its
// ducklake.Changes, an overlay over the pinned view: its table list and
// scans see them at once, no other transaction does, and Commit hands the
// whole change set to ducklake.Commit (one core commit against the pinned
// head). A transaction that ends without Commit leaves nothing behind.
//
// The mapping between DuckLake's tables and the catalog model is package
// ducklake's; this package knows transactions, scans and filters.
package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/ducklake"
)

// Catalog is what a Lake needs of an open catalog: reading its head, and
// what ducklake.Commit needs to commit to it.
type Catalog interface {
	ducklake.RowsCatalog
	HasLake() bool
	Head(ctx context.Context) (core.Head, error)
	Dump(ctx context.Context) (*core.Dump, error)
	// Claim favours the next commit (core.Catalog.Claim): a commit-log
	// committer lands a claim of the next slot and returns the head after
	// it, claimed true; any other handle returns the head.
	Claim(ctx context.Context, hold time.Duration) (head core.Head, claimed bool, err error)
}

// Lake is one attached lake as the storage extension serves it.
type Lake struct {
	cat       Catalog
	locations []string           // where its objects live (CheckDataPath)
	flight    singleflight.Group // materializations under way, by head

	mu   sync.Mutex
	view *ducklake.View // the latest materialized head
	// lost records the commits of this lake refused as conflicts since
	// one last landed (not counting refusals for a peer's claim, which
	// are turns given): how many in a row, when the last was, and how long
	// that transaction took from its Begin (materializing the head
	// included) to the refusal. Once
	// claimAfter are refused in a row, the next transaction to begin
	// (DuckLake's retry) claims the next slot first (see Begin).
	lost struct {
		count  int
		at     time.Time
		window time.Duration
	}

	commits, conflicts atomic.Uint64 // see Counts
	claims             atomic.Uint64 // see Claims
}

// Counts returns how many transactions committed changes through this
// lake and how many commits were refused as conflicts (each one a commit
// DuckLake retries, or gives up on after its last retry).
func (l *Lake) Counts() (commits, conflicts uint64) {
	return l.commits.Load(), l.conflicts.Load()
}

// Claims returns how many claims of the next slot this lake landed (see
// Begin).
func (l *Lake) Claims() uint64 { return l.claims.Load() }

// NewLake serves cat, whose objects live at locations (the URIs of its
// store and WAL store, for the DATA_PATH check; see CheckDataPath).
func NewLake(cat Catalog, locations ...string) *Lake {
	l := &Lake{cat: cat}
	for _, loc := range locations {
		if loc != "" {
			l.locations = append(l.locations, loc)
		}
	}
	return l
}

// CheckAttach checks an attach of the lake before DuckLake reads it: a
// lake whose DuckLake catalog version is newer than the host's DuckLake
// (SetDuckLakeVersion) is refused, naming both (DuckLake 0.3 would read a
// 1.0 lake as one below its own version); a read-write attach also checks
// CheckDataPath.
func (l *Lake) CheckAttach(ctx context.Context, readOnly bool) error {
	host := newLakeSpec()
	if host != ducklake.Spec03() {
		return nil // both checks guard DuckLake 0.3 only: no read at attach
	}
	v, err := l.current(ctx)
	if err != nil {
		return err
	}
	if v.HasLake() && v.Spec() == ducklake.Spec10() {
		return &core.Error{Kind: core.Unsupported, Msg: fmt.Sprintf("the lake's DuckLake catalog is version %s (DuckDB v1.5's DuckLake "+
			"created or migrated it); this DuckDB's DuckLake reads version %s and cannot read it: attach the lake with DuckDB v1.5 or later",
			v.Spec().Version, host.Version)}
	}
	if readOnly {
		return nil
	}
	return l.checkDataPath(ducklake.NewChanges(v).DataPath())
}

// checkDataPath refuses, under DuckLake 0.3 (the host's DuckLake), a lake
// whose objects lie inside the DATA_PATH it records: 0.3's
// ducklake_delete_orphaned_files deletes every file under DATA_PATH its
// catalog does not list, the lake's own objects included (1.0's deletes
// Parquet files only). A read-write attach checks it (CheckAttach; a
// read-only one can still read the lake, to move it); so does the commit
// that creates a lake (Commit).
func (l *Lake) checkDataPath(dataPath string) error {
	if dataPath == "" || newLakeSpec() != ducklake.Spec03() {
		return nil
	}
	for _, loc := range l.locations {
		if within(loc, dataPath) {
			return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("the lake's objects at %s lie inside its DATA_PATH %s: "+
				"DuckLake %s's ducklake_delete_orphaned_files deletes every file under DATA_PATH that its catalog does not list, "+
				"moraine's own objects included. Keep the lake beside its data, not inside it (for example ATTACH "+
				"'ducklake:moraine:<dir>/lake' with DATA_PATH '<dir>/data/'); attach this one READ_ONLY to read it", loc, dataPath, ducklake.Spec03().Version)}
		}
	}
	return nil
}

// within reports whether location lies inside dir (both store URIs or
// local paths, compared after cleaning; a location equal to dir is
// inside).
func within(location, dir string) bool {
	norm := func(p string) string {
		p = strings.TrimPrefix(p, "file://")
		if strings.Contains(p, "://") {
			return strings.TrimRight(p, "/")
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return filepath.Clean(p)
	}
	l, d := norm(location), norm(dir)
	return l == d || strings.HasPrefix(l, strings.TrimRight(d, "/")+"/")
}

// newLakes is the DuckLake spec a store holding no lake and a lake that
// records no version are served as (SetDuckLakeVersion): set once when the
// extension loads, read by every view built after.
var newLakes atomic.Pointer[ducklake.Spec]

// SetDuckLakeVersion sets the DuckLake catalog version ("0.3", "1.0") the
// host's DuckLake writes: what a store holding no lake, and a lake that
// records none, are served as.
func SetDuckLakeVersion(version string) error {
	s, err := ducklake.SpecOf(version)
	if err != nil {
		return err
	}
	newLakes.Store(s)
	return nil
}

// newLakeSpec is the spec of SetDuckLakeVersion, DuckLake 0.3 before it.
func newLakeSpec() *ducklake.Spec {
	if s := newLakes.Load(); s != nil {
		return s
	}
	return ducklake.Spec03()
}

// current returns the view at the catalog's head, materializing it only
// when the head moved since the last one. Concurrent callers that find the
// same new head share one materialization (run with the first caller's
// ctx).
func (l *Lake) current(ctx context.Context) (*ducklake.View, error) {
	if !l.cat.HasLake() {
		return ducklake.NewViewAs(nil, newLakeSpec())
	}
	head, err := l.cat.Head(ctx)
	if err != nil {
		return nil, err
	}
	if v := l.cached(head); v != nil {
		return v, nil
	}
	key := fmt.Sprintf("%d/%d", head.SnapshotID, head.BatchSeq)
	v, err, _ := l.flight.Do(key, func() (any, error) {
		// A materialization of this head may have ended between the
		// look-up above and this flight's start.
		if v := l.cached(head); v != nil {
			return v, nil
		}
		d, err := l.cat.Dump(ctx)
		if err != nil {
			return nil, err
		}
		v, err := ducklake.NewViewAs(d, newLakeSpec())
		if err != nil {
			return nil, err
		}
		l.keep(v)
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*ducklake.View), nil
}

// cached is the cached view if it is at head, else nil.
func (l *Lake) cached(head core.Head) *ducklake.View {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.view != nil && l.view.Head() == head {
		return l.view
	}
	return nil
}

// keep caches v as the lake's latest view unless a newer one is cached: a
// slower materialization of an older head must not replace a newer one. A
// commit keeps the view it leaves, so the committer's next transaction
// reads its own commit without reading the store.
func (l *Lake) keep(v *ducklake.View) {
	if v == nil || !v.HasLake() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.view == nil || l.view.Head().BatchSeq <= v.Head().BatchSeq {
		l.view = v
	}
}

// Txn is one DuckDB transaction's pinned view of the lake and its own
// uncommitted changes. Safe for concurrent use.
type Txn struct {
	lake    *Lake
	view    *ducklake.View
	changes *ducklake.Changes

	mu        sync.Mutex
	committed bool
	began     time.Time // when Begin started (a claim and the materialization included)
}

const (
	// claimAfter: the retry of a commit refused this many times in a row
	// (refusals caused by a peer's claim not counted) claims. Among
	// committers racing evenly a refusal is routine and the retry mostly
	// lands; several in a row is how starvation starts. Every claim costs
	// the peers in flight a retry, so claiming sooner costs throughput:
	// at 8 busy DuckDB processes, claiming after every refusal left half
	// the commits/s of no claims, after three in a row 0.85-0.95 of it,
	// with no statement refused where 5-7 of 800 were before.
	claimAfter = 3
	// claimWithin: a transaction beginning this long after a refused
	// commit of its lake is taken for DuckLake's retry of it (DuckLake
	// waits at most a few seconds between retries by default).
	claimWithin = 30 * time.Second
)

// Begin pins the lake's current head. The first transaction to begin
// after claimAfter commits of the lake were refused in a row as conflicts
// (DuckLake's retry, which re-reads the lake and commits again) first
// claims the next slot (core.Catalog.Claim; on a commit log only), so that
// peers committing more often than the retry's window is long cannot take
// every slot from under it. The claim holds peers for twice the refused
// transaction's window and a little more. (Other transactions do not wait
// for a peer's claim before they read: every waiter then read the
// claimant's commit at once and raced the next slot together, and the
// losses of that herd made claims of their own.)
//
// A claim is a favour, not a need: when one fails (a store error, or a
// claim that may or may not have landed) the transaction goes ahead
// unfavoured, and only a cancelled ctx fails Begin.
func (l *Lake) Begin(ctx context.Context) (*Txn, error) {
	began := time.Now()
	if hold, ok := l.takeLost(); ok {
		_, claimed, err := l.cat.Claim(ctx, hold)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if claimed {
			l.claims.Add(1)
		}
	}
	v, err := l.current(ctx)
	if err != nil {
		return nil, err
	}
	return &Txn{lake: l, view: v, changes: ducklake.NewChanges(v), began: began}, nil
}

// takeLost consumes the record of the last refused commit and returns the
// hold a claim for its retry asks for, when it should claim.
func (l *Lake) takeLost() (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, window := l.lost.at, l.lost.window
	l.lost.at = time.Time{}
	if at.IsZero() || l.lost.count < claimAfter || time.Since(at) > claimWithin {
		return 0, false
	}
	return 2*window + 20*time.Millisecond, true
}

// View is the pinned view.
func (t *Txn) View() *ducklake.View { return t.view }

// Changes is the transaction's change set.
func (t *Txn) Changes() *ducklake.Changes { return t.changes }

// Tables lists the tables the transaction sees: the pinned view's and
// those it created.
func (t *Txn) Tables() []*ducklake.Table { return t.changes.Tables() }

// write runs do, a write to t.changes, unless the transaction committed
// (or tried to). It holds t.mu throughout, and Commit takes t.mu to mark
// the transaction committed before it reads the changes: a write that
// returns OK is in the commit, a later one is refused.
func (t *Txn) write(what string, do func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.committed {
		return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%s: the transaction has committed", what)}
	}
	return do()
}

// Insert adds rows (every column, in the table's order) to the named
// table; see ducklake.Changes.Insert.
func (t *Txn) Insert(table string, rows [][]any) error {
	return t.write("INSERT into "+table, func() error { return t.changes.Insert(table, rows) })
}

// Delete deletes rows by rowid and returns how many it deleted; see
// ducklake.Changes.Delete.
func (t *Txn) Delete(table string, rowids []int64) (int, error) {
	var n int
	err := t.write("DELETE from "+table, func() (err error) {
		n, err = t.changes.Delete(table, rowids)
		return err
	})
	return n, err
}

// Update sets columns cols of the rows with these rowids; see
// ducklake.Changes.Update.
func (t *Txn) Update(table string, rowids []int64, cols []int, rows [][]any) error {
	return t.write("UPDATE of "+table, func() error { return t.changes.Update(table, rowids, cols, rows) })
}

// CreateTable creates a table in the transaction; see
// ducklake.Changes.CreateTable.
func (t *Txn) CreateTable(def *ducklake.Table, ifNotExists bool) (bool, error) {
	var created bool
	err := t.write("CREATE TABLE "+def.Name, func() (err error) {
		created, err = t.changes.CreateTable(def, ifNotExists)
		return err
	})
	return created, err
}

// DropTable drops a table in the transaction; see
// ducklake.Changes.DropTable.
func (t *Txn) DropTable(name string, ifExists bool) (bool, error) {
	var dropped bool
	err := t.write("DROP TABLE "+name, func() (err error) {
		dropped, err = t.changes.DropTable(name, ifExists)
		return err
	})
	return dropped, err
}

// AddColumn adds a column to a metadata table in the transaction; see
// ducklake.Changes.AddColumn.
func (t *Txn) AddColumn(table string, col ducklake.Column, def *string, ifNotExists bool) (bool, error) {
	var added bool
	err := t.write("ALTER TABLE "+table, func() (err error) {
		added, err = t.changes.AddColumn(table, col, def, ifNotExists)
		return err
	})
	return added, err
}

// DropColumn drops a column of a metadata table in the transaction; see
// ducklake.Changes.DropColumn.
func (t *Txn) DropColumn(table, column string, ifExists bool) (bool, error) {
	var dropped bool
	err := t.write("ALTER TABLE "+table, func() (err error) {
		dropped, err = t.changes.DropColumn(table, column, ifExists)
		return err
	})
	return dropped, err
}

// Commit hands the transaction's changes to ducklake.Commit: one core
// commit prepared against the pinned head, or nothing for a transaction
// that wrote nothing. It runs once: afterwards (whatever its outcome) the
// transaction takes no more writes and no second Commit; end it. Writes
// racing it either return OK and are in the commit, or are refused.
func (t *Txn) Commit(ctx context.Context) error {
	t.mu.Lock()
	if t.committed {
		t.mu.Unlock()
		return &core.Error{Kind: core.InvalidArgument, Msg: "COMMIT: the transaction has committed already"}
	}
	t.committed = true
	t.mu.Unlock()
	if !t.changes.View().HasLake() {
		// The commit that creates the lake records its DATA_PATH.
		if err := t.lake.checkDataPath(t.changes.DataPath()); err != nil {
			return err
		}
	}
	v, err := ducklake.Commit(ctx, t.lake.cat, t.changes)
	if err != nil {
		if core.KindOf(err) == core.OutcomeUnknown {
			// Not a conflict (DuckLake would retry it) nor an interrupt
			// (a user would re-run it): it may have landed.
			return &core.Error{Kind: core.OutcomeUnknown, Err: err, Msg: "COMMIT: the commit may or may not have landed " +
				"(the store did not confirm it); before running it again, check whether it did: DuckLake's snapshot list " +
				"(FROM <lake>.snapshots()), or head_snapshot of moraine_info('<metadata database>')"}
		}
		if core.KindOf(err) == core.CommitConflict {
			t.lake.conflicts.Add(1)
		}
		// A refusal for a peer's claim is a turn given, not a race lost:
		// it does not count towards this lake's own claim.
		if core.KindOf(err) == core.CommitConflict && !core.ClaimRefused(err) {
			t.lake.mu.Lock()
			t.lake.lost.count++
			t.lake.lost.at, t.lake.lost.window = time.Now(), time.Since(t.began)
			t.lake.mu.Unlock()
		}
		return err
	}
	if !t.changes.Empty() {
		t.lake.commits.Add(1)
		t.lake.mu.Lock()
		t.lake.lost.count = 0
		t.lake.mu.Unlock()
	}
	t.lake.keep(v)
	return nil
}
