// Package core is moraine's catalog: DuckLake's metadata model (snapshots,
// schemas, tables, columns, files, statistics, inlined rows, ...) kept in
// the core/slate engine on an object store, with DuckLake's snapshot
// semantics, time travel, the single-writer commit protocol, and the roles a
// catalog open takes on a commit log (commitlog.go, commitlog_roles.go).
//
// Layout: every record is one engine key (package core/keys) whose value is
// a framed protobuf message (codec.go). Live versions sit in the current
// subspace and ended ones in history, so loading the head reads only the
// live catalog. Every commit is exactly one engine write batch holding the
// new snapshot record, all entity changes and the head stamp sys/head =
// {snapshot id, batch seq}; on a commit log, one slot (claim.go's claim
// slots change the head stamp alone: {snapshot id, batch seq, claim}).
// Every landed batch increments batch seq, which orders heads.
//
// The package must not import the commit-log provider, the extension or
// anything above it; a commit-log provider plugs in through the interface
// this package defines (RFC 0024).
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// Format versions (sys/format). See ARCHITECTURE.md §5.
const (
	// FormatLegacy is the legacy base format.
	FormatLegacy uint64 = 9
	// FormatLegacyLog marks a legacy log-resident catalog.
	FormatLegacyLog uint64 = 10
	// FormatNameDirectory adds the persistent name directory and the
	// commit-log origin field.
	FormatNameDirectory uint64 = 11
	// FormatDeleteTargets adds the delete-file target lookup.
	FormatDeleteTargets uint64 = 12
	// FormatDuckLake10 adds the entities of DuckLake's catalog spec 1.0
	// (macros, the files' partial_max).
	FormatDuckLake10 uint64 = 13
	// FormatCurrent is what new catalogs are created at.
	FormatCurrent = FormatDuckLake10
	// MinFormat is the oldest format this build opens (after migration).
	MinFormat = FormatLegacy
)

// WriterVersion is recorded in the format record by every writer.
const WriterVersion = "moraine-go/0.1.0"

// Catalog is an open catalog: read-write or read-only (any number). Without
// a commit-log provider a read-write open is the single writer (one per
// store: a newer read-write open fences the older); with one it is a
// committer, any number of which commit through the log (Role).
type Catalog struct {
	store    objstore.Store
	opts     CatalogOptions
	log      *slog.Logger
	readOnly bool
	// db is the writable engine: the single writer's, or a holder's (set by
	// TakeStore, cleared when the holder gives the store up; read it under
	// mu, writerDB). nil for readers and for committers.
	db *slate.DB
	// reader is the engine reader of a read-only open and of a committer (a
	// holder keeps it); nil for the single writer.
	reader *slate.Reader
	format formatRecord
	clog   *commitLogOpen // commit-log machinery (nil without a provider)
	// fmtMu guards format: commits hold it shared while they prepare and
	// land (so they maintain the derived indexes of one format), RaiseFormat
	// exclusively while it rewrites the format record.
	fmtMu sync.RWMutex

	mu     sync.Mutex
	closed bool
	empty  bool // opened with LeaveEmpty on an empty store: no lake
	// headView is the head state: folded forward by commits (read-write),
	// cached by stamp (read-only). setHeadView is its only writer.
	headView *CatalogView
	// headFloor is the BatchSeq below which no view may be cached: a
	// commit whose outcome is unknown raises it to the head it would have
	// made (see setHeadView).
	headFloor uint64
	// afterLandForTest, when set, runs after a grouped commit landed and
	// before it caches its view (a test interleaves another commit there).
	afterLandForTest func()
	queue            []*commitReq
	leading          bool
	leaderW          sync.WaitGroup
}

// Open opens the catalog at opts.Path in store for reading and writing,
// creating it (snapshot 0 with schema "main") when the store is empty.
// Without a commit-log provider it is the single writer and fences any other
// read-write open of the same catalog; with one it is a committer
// (commitlog_roles.go), and any number of committers commit side by side.
func Open(ctx context.Context, store objstore.Store, opts CatalogOptions) (*Catalog, error) {
	opts = opts.withDefaults()
	if opts.Checkpoint != "" {
		return nil, errorf(Configuration, "a checkpoint (%s) pins a read-only open; a read-write open cannot use one", opts.Checkpoint)
	}
	if p := providerFor(opts); p != nil {
		return openCommitter(ctx, store, opts, p)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, err := openWriter(ctx, store, opts)
		if err == nil {
			return c, nil
		}
		lastErr = err
		// Only a genesis that lost to a concurrent first open is retried.
		if !errors.Is(err, OpenRaced) {
			return nil, err
		}
	}
	return nil, lastErr
}

func engineStore(store objstore.Store, opts CatalogOptions) objstore.Store {
	if opts.DisableRetry {
		return store
	}
	return objstore.WithRetry(store, objstore.RetryOptions{Logger: opts.Logger})
}

func engineOptions(opts CatalogOptions) []slate.Option {
	eo := []slate.Option{slate.WithSettings(opts.engineSettings()), slate.WithLogger(opts.Logger)}
	if opts.WalStore != nil {
		eo = append(eo, slate.WithWalStore(engineStore(opts.WalStore, opts)))
	}
	return eo
}

func openWriter(ctx context.Context, store objstore.Store, opts CatalogOptions) (*Catalog, error) {
	es := engineStore(store, opts)
	db, err := slate.Open(ctx, es, opts.Path, engineOptions(opts)...)
	if err != nil {
		return nil, storeErr(err, "opening the catalog at %s (path %q)", store, opts.Path)
	}
	c := &Catalog{store: es, opts: opts, log: opts.Logger, db: db}
	f, ok, err := readFormat(ctx, db)
	if err != nil {
		db.Close(ctx)
		return nil, err
	}
	if !ok && opts.LeaveEmpty {
		c.empty = true
		return c, nil
	}
	if !ok {
		if err := bootstrap(ctx, c.db, c.opts); err != nil {
			db.Close(ctx)
			return nil, err
		}
		f, _, err = readFormat(ctx, db)
		if err != nil {
			db.Close(ctx)
			return nil, err
		}
	}
	if err := validateFormat(ctx, db, f, false); err != nil { // a single writer: a log-resident catalog needs the provider path (Open's openCommitter)
		db.Close(ctx)
		return nil, err
	}
	c.format = *f
	hv, err := load(ctx, db, nil)
	if err != nil {
		db.Close(ctx)
		return nil, err
	}
	c.setHeadView(hv, Head{})
	return c, nil
}

// bootstrap writes genesis: the format record, snapshot 0, schema "main",
// the global options and the head, in one batch. Concurrent first opens
// fence each other, so exactly one genesis lands.
func bootstrap(ctx context.Context, db *slate.DB, opts CatalogOptions) error {
	txn, err := db.Begin()
	if err != nil {
		return storeErr(err, "bootstrapping")
	}
	defer txn.Rollback()
	if _, ok, err := readHead(ctx, txn); err != nil || ok {
		return err // someone else's genesis is already here
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	main := &Schema{ID: 0, Versioned: Versioned{Begin: 0}, UUID: uuid.New(), Name: "main", Path: "main/", PathIsRelative: true}
	snap := &Snapshot{ID: 0, Time: now, SchemaVersion: 0, NextCatalogID: 1, NextFileID: 0,
		ChangesMade: formatChanges([]change{{Kind: chCreatedSchema, Name: []string{"main"}}})}
	global := &Options{Scope: ScopeGlobal, ScopeID: 0, Values: map[string]string{"encrypted": fmt.Sprint(opts.Encrypted)}}
	if opts.DataPath != "" {
		global.Values["data_path"] = opts.DataPath
	}
	f := currentFormat()
	txn.Put(keys.Format(), encodeFormat(&f))
	txn.Put(keys.Snapshot(0), encodeSnapshot(snap))
	txn.Put(keys.CurrentSchema(0), encodeSchema(main))
	txn.Put(keys.NameDir(keys.NameSchema, 0, "main"), encodeNameDir([]nameDirEntry{{Name: "main", ID: 0}}))
	txn.Put(keys.CurrentOption(uint64(ScopeGlobal), 0), encodeOptions(global))
	txn.Put(headStamp(Head{}))
	if _, err := txn.Commit(ctx, slate.WriteOptions{}); err != nil {
		if errors.Is(err, slate.ErrFenced) {
			return wrapf(OpenRaced, err, "a concurrent open created or took this catalog first; open again")
		}
		return storeErr(err, "writing genesis")
	}
	return nil
}

// OpenReadOnly opens the catalog for reading. It never creates one: an
// empty store is refused. With opts.Checkpoint set it reads exactly the
// state that checkpoint pins and writes nothing; otherwise it follows new
// commits every opts.ReaderPollInterval.
func OpenReadOnly(ctx context.Context, store objstore.Store, opts CatalogOptions) (*Catalog, error) {
	opts = opts.withDefaults()
	if p := providerFor(opts); p != nil && opts.Checkpoint == "" {
		return openLogReader(ctx, store, opts, p)
	}
	ro := opts.readerOptions()
	if opts.Checkpoint != "" {
		id, err := uuid.Parse(opts.Checkpoint)
		if err != nil {
			return nil, errorf(InvalidArgument, "checkpoint %q is not a UUID", opts.Checkpoint)
		}
		ro.Mode = slate.ReaderPinned
		ro.Checkpoint = id
	}
	es := engineStore(store, opts)
	r, err := slate.OpenReader(ctx, es, opts.Path, ro, engineOptions(opts)...)
	if err != nil {
		switch {
		case errors.Is(err, slate.ErrNotInitialized):
			if c, ok, lerr := openEmptyOfLakes(ctx, store, opts); lerr != nil || ok {
				return c, lerr
			}
			return nil, errorf(NotFound, "no moraine catalog at %s (path %q): open it read-write once to create it", store, opts.Path)
		case errors.Is(err, slate.ErrCheckpointMissing):
			return nil, wrapf(NotFound, err, "checkpoint %s does not exist in the catalog at %s", opts.Checkpoint, store)
		}
		return nil, storeErr(err, "opening the catalog at %s (path %q) read-only", store, opts.Path)
	}
	c := &Catalog{store: es, opts: opts, log: opts.Logger, readOnly: true, reader: r}
	// No provider here (OpenReadOnly takes openLogReader when there is one).
	if err := c.loadFormat(ctx, r, false); err != nil {
		r.Close(ctx)
		if KindOf(err) == NotFound {
			if c, ok, lerr := openEmptyOfLakes(ctx, store, opts); lerr != nil || ok {
				return c, lerr
			}
		}
		return nil, err
	}
	return c, nil
}

// openEmptyOfLakes is a read-only open with LeaveEmpty of a store without
// a catalog that is part of a store of lakes (lakes.go): a named lake
// (opts.NamedLake), or a store that holds named lakes but no lake of its
// own. It gives a handle holding no lake, as a read-write open with
// LeaveEmpty does. ok is false for any other store (its read-only open is
// refused).
func openEmptyOfLakes(ctx context.Context, store objstore.Store, opts CatalogOptions) (*Catalog, bool, error) {
	if !opts.LeaveEmpty || opts.Checkpoint != "" {
		return nil, false, nil
	}
	if opts.NamedLake == "" {
		names, err := Lakes(ctx, store)
		if err != nil || len(names) == 0 {
			return nil, false, err
		}
	}
	return &Catalog{store: engineStore(store, opts), opts: opts, log: opts.Logger, readOnly: true, empty: true}, true, nil
}

// ReadOnly reports whether the handle was opened read-only.
func (c *Catalog) ReadOnly() bool { return c.readOnly }

// Format returns the catalog's format and commit-log origin as of open
// (or as this handle's last RaiseFormat left them).
func (c *Catalog) Format() (format uint64, origin *uint64) {
	c.fmtMu.RLock()
	defer c.fmtMu.RUnlock()
	return c.format.Format, c.format.Origin
}

// writerDB returns the engine writer this handle holds: a single writer's,
// or a commit-log holder's. Readers and plain committers hold none.
func (c *Catalog) writerDB() *slate.DB {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db
}

func (c *Catalog) kv() kvReader {
	if db := c.writerDB(); db != nil {
		return db
	}
	return c.reader
}

// Head returns the catalog's head stamp.
func (c *Catalog) Head(ctx context.Context) (Head, error) {
	if err := c.checkOpen(); err != nil {
		return Head{}, err
	}
	if c.writerDB() != nil {
		c.mu.Lock()
		hv := c.headView
		c.mu.Unlock() // kv() below takes c.mu again
		if hv != nil {
			return hv.head, nil
		}
	}
	if err := c.clog.tailIfBehind(ctx); err != nil {
		return Head{}, err
	}
	h, ok, err := readHead(ctx, c.kv())
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	return h, err
}

func (c *Catalog) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.openErr()
}

// openErr is checkOpen's test, for a caller that holds c.mu.
func (c *Catalog) openErr() error {
	if c.closed {
		return errorf(InvalidArgument, "the catalog handle is closed")
	}
	if c.empty {
		return errorf(NotFound, "the store holds no lake yet (opened with LeaveEmpty)")
	}
	return nil
}

// HasLake reports whether the handle holds a lake: false only for a
// read-write open with LeaveEmpty of a store that was empty, or for any
// open of a commit log adopted empty, until a slot creates the lake.
func (c *Catalog) HasLake() bool {
	c.mu.Lock()
	empty, r := c.empty, c.reader
	c.mu.Unlock()
	if !empty {
		return true
	}
	if c.clog == nil || r == nil {
		return false
	}
	// On a commit log a peer's slot may have created the lake since.
	if _, ok, err := readHead(context.Background(), r); err != nil || !ok {
		return false
	}
	c.mu.Lock()
	c.empty = false
	c.mu.Unlock()
	return true
}

// View returns the catalog at its head. A read-write handle serves its
// own latest commit; a read-only handle serves what it has polled, read at
// one pinned cut of the reader, so a poll landing mid-read cannot tear it.
func (c *Catalog) View(ctx context.Context) (*CatalogView, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	if db := c.writerDB(); db != nil {
		c.mu.Lock()
		hv := c.headView
		c.mu.Unlock()
		if hv != nil {
			return hv, nil
		}
		s, err := load(ctx, db, nil)
		if err != nil {
			return nil, err
		}
		c.setHeadView(s, Head{})
		return s, nil
	}
	if c.clog != nil && c.clog.committer != nil {
		// A committer's read is served what a listing of the log finds now.
		if err := c.reader.Tail(ctx); err != nil {
			return nil, storeErr(err, "reading the commit log's tail")
		}
	}
	return c.stableLoad(ctx, nil)
}

// stableLoad materializes through the reader at one pinned cut. The head
// view is cached by its stamp, so repeated reads between polls cost one key
// read.
func (c *Catalog) stableLoad(ctx context.Context, at *SnapshotID) (*CatalogView, error) {
	var out *CatalogView
	err := c.consistentRead(ctx, func(kv kvReader) error {
		head, _, err := readHead(ctx, kv)
		if err != nil {
			return err
		}
		if at == nil {
			c.mu.Lock()
			cached := c.headView
			c.mu.Unlock()
			if cached != nil && cached.head == head {
				out = cached
				return nil
			}
		}
		s, err := load(ctx, kv, at)
		if err != nil {
			return err
		}
		if at == nil {
			s.head = head
			c.setHeadView(s, Head{})
		}
		out = s
		return nil
	})
	return out, err
}

// ViewAt returns the catalog as it was at snapshot id (time travel).
func (c *Catalog) ViewAt(ctx context.Context, id SnapshotID) (*CatalogView, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	db := c.writerDB()
	if db == nil {
		return c.stableLoad(ctx, &id)
	}
	snap := db.Snapshot()
	defer snap.Release()
	return load(ctx, snap, &id)
}

// Snapshots lists snapshot records from (inclusive) to the head.
func (c *Catalog) Snapshots(ctx context.Context, from SnapshotID) ([]Snapshot, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	var out []Snapshot
	err := scanPrefix(ctx, c.kv(), keys.SubspacePrefix(keys.SubspaceSnapshot), func(k keys.Key, v []byte) error {
		if SnapshotID(k.Comps[0]) < from {
			return nil
		}
		s, err := decodeSnapshot(v)
		if err != nil {
			return err
		}
		out = append(out, *s)
		return nil
	})
	return out, err
}

// Refresh makes the handle look for new commits now: a holder first folds
// what peers landed; a reader, a committer or a holder then polls its
// engine reader. A single writer is always current.
func (c *Catalog) Refresh(ctx context.Context) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	if c.Role() == RoleHolder {
		c.clog.foldPeers(ctx) // fold what peers landed
		c.setHeadView(nil, Head{})
	}
	if c.reader == nil {
		return nil // a single writer is always current
	}
	return storeErr(c.reader.Refresh(ctx), "refreshing")
}

// Close releases the handle. A read-write handle first waits for commits
// in flight and flushes the engine.
func (c *Catalog) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.leaderW.Wait()
	if c.clog != nil {
		c.clog.close(ctx)
	}
	var err error
	if c.reader != nil {
		err = c.reader.Close(ctx)
	}
	if db := c.writerDB(); db != nil {
		if derr := db.Close(ctx); derr != nil && !errors.Is(derr, slate.ErrFenced) && err == nil {
			err = derr // a fenced writer: the newer one holds everything we committed
		}
	}
	return storeErr(err, "closing")
}

// Role is what this handle is: RoleWriter (the single writer), RoleReader,
// RoleTailingReader (a read-only open tailing a commit log), RoleCommitter
// (a read-write open on a commit log) or RoleHolder (a committer holding the
// store after TakeStore).
func (c *Catalog) Role() Role {
	switch {
	case c.clog == nil && c.readOnly:
		return RoleReader
	case c.clog == nil:
		return RoleWriter
	case c.readOnly && c.opts.CommitLogTail:
		return RoleTailingReader
	case c.readOnly:
		return RoleReader
	case c.writerDB() != nil:
		return RoleHolder
	}
	return RoleCommitter
}

// CreateCheckpoint pins the catalog's current state for read-only opens
// (CatalogOptions.Checkpoint) and returns its id. A single writer (or a
// holder) flushes first, so the checkpoint holds every commit so far; a
// committer first folds the log into the store, so it holds the slots
// landed by then; a reader's pins the store's latest durable state.
// lifetime 0 never expires.
func (c *Catalog) CreateCheckpoint(ctx context.Context, lifetime time.Duration) (string, error) {
	if err := c.checkOpen(); err != nil {
		return "", err
	}
	var info slate.CheckpointInfo
	var err error
	if db := c.writerDB(); db != nil {
		info, err = db.CreateCheckpoint(ctx, slate.CheckpointOptions{Lifetime: lifetime, Name: "catalog"})
	} else {
		if c.clog != nil && c.clog.committer != nil {
			// Slots past the last fold are not in the store yet.
			if _, ferr := c.clog.fold(ctx); ferr != nil {
				return "", ferr
			}
		}
		info, err = slate.CreateDetachedCheckpoint(ctx, c.store, c.opts.Path, slate.CheckpointOptions{Lifetime: lifetime, Name: "catalog"})
	}
	if err != nil {
		return "", storeErr(err, "creating a checkpoint")
	}
	return info.ID.String(), nil
}
