package core

// movewal.go: the catalog's WAL-store move (move_wal_store; RFC 0004 lets
// the WAL live in another object store, RFC 0024 keeps the verb's meaning).
//
// The engine does the move (slate.MoveWalStore: fence every writer, flush
// the WAL into the tree, fence the new store past the old store's last WAL
// id, record the new store in the manifest). The catalog adds what the
// engine cannot know: the format check every path that opens a store runs,
// and the refusals RFC 0024 gives the move. Like migration, the move opens
// the store without consulting a commit-log provider, so a log-resident
// catalog reaches it only through the format check, which refuses it: such
// a catalog's log lives in its WAL store, and a move of the engine's native
// WAL would leave the log behind. A committer (a provider in the options)
// is refused outright.

import (
	"context"
	"errors"
	"fmt"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// MoveWalOptions configure MoveWalStore.
type MoveWalOptions struct {
	// Catalog says how to reach the catalog as it is now: Path, WalStore
	// (the store its WAL is in now; nil: the catalog store), Engine, Logger
	// and DisableRetry are used. CommitLog must be nil (the move refuses a
	// committer); the rest is ignored. A process-wide registered provider
	// is not consulted (RFC 0024).
	Catalog CatalogOptions
}

// WalMoveReport says what MoveWalStore did.
type WalMoveReport struct {
	// From and To name the WAL store before and after the move; "" is the
	// catalog's own store.
	From, To string
	// LastOldWalID is the highest WAL id used in the old store; FirstNewWalID
	// the fence written in the new one. WAL ids never move backwards.
	LastOldWalID, FirstNewWalID uint64
	// Format and Head are the catalog's, read back through the new WAL
	// store after the move (the move changes neither).
	Format uint64
	Head   Head
}

// MoveWalStore moves the WAL of the catalog at opts.Catalog.Path in store
// from opts.Catalog.WalStore (nil: the catalog store) to to (nil, or the
// catalog store itself: back into the catalog store). Afterwards every open
// of the catalog must set CatalogOptions.WalStore to to (or leave it nil
// when to is the catalog store); an open with the old setting is refused
// (Store, naming the store the catalog records and MoveWalStore).
//
// It is explicit and operator-run, like Migrate. It runs the format check
// of every open first: a future format is refused ("upgrade moraine"), a
// catalog in the middle of a migration is refused (finish the migration
// first), both with the messages an open gives, and a log-resident catalog
// (format 10, or 11/12 with a commit-log origin) is refused (Migration): its
// commit log lives in its WAL store and a move of the engine's WAL cannot
// carry it. A provider in opts.Catalog.CommitLog (a committer) is refused
// (Configuration) before the store is touched.
//
// The move takes the catalog's writer role: a running read-write open is
// fenced (its next commit fails with Fenced) and must reopen with the new
// WAL store. Run it with the lake's writers stopped. A failure before the
// manifest records the new store leaves the old one in charge; run the move
// again. The old store keeps its WAL files (a checkpoint pinned before the
// move still replays from it).
//
// Errors: Configuration (a committer; opts.Catalog.WalStore is not where the
// WAL is), NotFound (no catalog), Migration (the format check),
// InvalidArgument (the WAL is already in to; to already holds WAL files
// past the old store's), Fenced/Store/Interrupted while moving.
func MoveWalStore(ctx context.Context, store, to objstore.Store, opts MoveWalOptions) (WalMoveReport, error) {
	o := opts.Catalog.withDefaults()
	if o.CommitLog != nil {
		return WalMoveReport{}, errorf(Configuration, "moving the WAL store refuses a committer (CatalogOptions.CommitLog is set): the move opens the store without a commit-log provider and writes it directly (RFC 0024); run it without one")
	}
	if to == nil {
		to = store
	}
	rep := WalMoveReport{From: walStoreID(store, o.WalStore), To: walStoreID(store, to)}
	es := engineStore(store, o)
	// A reader first: it writes nothing, refuses a store with no catalog
	// (the engine's writer would create one) and runs the format check.
	if _, _, err := moveCheckFormat(ctx, es, store, o); err != nil {
		return rep, err
	}
	if rep.From == rep.To {
		return rep, errorf(InvalidArgument, "the WAL of the catalog at %s (path %q) is already in %s: nothing to move", store, o.Path, walStoreName(rep.From))
	}
	var from, dest objstore.Store // nil: the catalog store
	if rep.From != "" {
		from = engineStore(o.WalStore, o)
	}
	if rep.To != "" {
		dest = engineStore(to, o)
	}
	er, err := slate.MoveWalStore(ctx, es, o.Path, from, dest, slate.WithSettings(o.engineSettings()), slate.WithLogger(o.Logger))
	rep.LastOldWalID, rep.FirstNewWalID = er.LastOldID, er.FirstNewID
	if err != nil {
		switch {
		case errors.Is(err, slate.ErrWalStoreMismatch):
			return rep, wrapf(Configuration, err, "moving the WAL of the catalog at %s (path %q)", store, o.Path)
		case errors.Is(err, slate.ErrInvalid):
			return rep, wrapf(InvalidArgument, err, "moving the WAL of the catalog at %s (path %q) to %s", store, o.Path, walStoreName(rep.To))
		}
		return rep, storeErr(err, "moving the WAL of the catalog at %s (path %q) to %s", store, o.Path, walStoreName(rep.To))
	}
	// Read the catalog back through the new WAL store: it must open there
	// and still pass the format check.
	after := o
	after.WalStore = nil
	if rep.To != "" {
		after.WalStore = to
	}
	f, head, err := moveCheckFormat(ctx, es, store, after)
	if err != nil {
		return rep, fmt.Errorf("the WAL moved to %s, but reading the catalog back through it failed: %w", walStoreName(rep.To), err)
	}
	rep.Format, rep.Head = f.Format, head
	o.Logger.Debug("moraine: moved the WAL store", "catalog", store.String(), "path", o.Path,
		"from", walStoreName(rep.From), "to", walStoreName(rep.To), "first_wal_id", rep.FirstNewWalID)
	return rep, nil
}

// walStoreID identifies a WAL store as reports do: "" for the catalog's
// own store (or none), else the store's URI.
func walStoreID(store, wal objstore.Store) string {
	if wal == nil || wal.String() == store.String() {
		return ""
	}
	return wal.String()
}

func walStoreName(id string) string {
	if id == "" {
		return "the catalog's own store"
	}
	return id
}

func moveOpenErr(err error, store objstore.Store, o CatalogOptions, walStore string) error {
	switch {
	case errors.Is(err, slate.ErrNotInitialized):
		return errorf(NotFound, "no moraine catalog at %s (path %q): nothing to move", store, o.Path)
	case errors.Is(err, slate.ErrWalStoreMismatch):
		return wrapf(Configuration, err, "the WAL of the catalog at %s (path %q) is not where CatalogOptions.WalStore says (%s)", store, o.Path, walStoreName(walStore))
	}
	return storeErr(err, "opening the catalog at %s (path %q) to move its WAL store", store, o.Path)
}

// moveCheckFormat reads the catalog through a reader that writes nothing
// (over the WAL store o names) and runs the format check of the move: the
// checks of validate_format, with their messages, except that a
// log-resident catalog is refused whether or not a provider exists.
func moveCheckFormat(ctx context.Context, es, store objstore.Store, o CatalogOptions) (*formatRecord, Head, error) {
	r, err := slate.OpenReader(ctx, es, o.Path, slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: -1}, engineOptions(o)...)
	if err != nil {
		return nil, Head{}, moveOpenErr(err, store, o, walStoreID(store, o.WalStore))
	}
	defer r.Close(ctx)
	f, ok, err := readFormat(ctx, r)
	if err == nil && !ok {
		err = errorf(NotFound, "the store %s (path %q) holds an engine but no moraine catalog (no format record): nothing to move", store, o.Path)
	}
	if err != nil {
		return nil, Head{}, err
	}
	// An unknown future format, then a migration marker: exactly the
	// refusals (and messages) of every open. The provider check is ours.
	if err := validateFormat(ctx, r, f, true); err != nil {
		return nil, Head{}, err
	}
	if f.logResident() {
		return nil, Head{}, refuseMoveLogResident(f)
	}
	head, ok, err := readHead(ctx, r)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	return f, head, err
}

// refuseMoveLogResident names the catalog as validate_format's refusal
// does, and says why the move refuses it even where a provider exists.
func refuseMoveLogResident(f *formatRecord) error {
	return errorf(Migration, "the catalog is log-resident (%s): its commit log lives in its WAL store, and moving the WAL store opens the store without a commit-log provider (RFC 0024), which a log-resident catalog refuses: such a lake keeps the WAL store it was adopted with", f.logResidentKind())
}
