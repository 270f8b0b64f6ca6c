package core

// migrate.go: explicit, operator-run, resumable format migration (RFC 0015
// as this project applies it to formats 9-13).
//
// A migration is a sequence of units, each one rung of the ladder
// (format.go). A rewriting unit runs as
//
//   - a start batch: the marker sys/migration {from, to, unit, cursor
//     empty};
//   - step batches: each processes up to StepEntries source entries (in key
//     order, after the cursor), writing new keys before deleting old ones,
//     and advances the marker's cursor in the same batch;
//   - a finish batch: sys/format flips to the unit's target and the marker
//     is deleted, together.
//
// Every batch is one engine write and also stamps the head (same snapshot,
// batch counter + 1), as every catalog batch does: a migration batch is a
// head-preserving batch, which keeps it a valid commit-log slot (exactly
// one head stamp each) for when migration runs through the log. A crash
// between batches leaves the marker, which makes every open refuse the
// catalog until Migrate runs again and resumes at the cursor; steps are
// idempotent, so replaying one is harmless. The format never flips while a
// marker remains, and a marker never survives its flip.
//
// Units today:
//
//	9->11   build the name directory from the live schemas, tables, views.
//	10->11  the same for a legacy log-resident catalog, which also gains
//	        commit_log_batch_origin (kept if it already has one).
//	11->12  build the delete-file target lookup from the live delete files.
//	12->13  additive: the format stamp alone (DuckLake 1.0's entities).
//
// Migration preserves the commit-log origin. It opens the store with the
// engine's writer, which fences any read-write open of the catalog (its
// next commit fails with Fenced; reopen after the migration). It opens the
// store without a commit-log provider, so it refuses log-resident
// catalogs through the format check (RFC 0024): on such a catalog the
// migration's batches must go through the authoritative log, which only the
// commit-log path can do. That is why the 10->11 unit, which exists only
// for log-resident catalogs, cannot be reached through Migrate in this
// build; the commit-log path runs it with migrateStore (and tests do).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// DefaultMigrationStep is the default bound on the source entries one
// migration step batch processes.
const DefaultMigrationStep = 256

// MigrateOptions configure Migrate.
type MigrateOptions struct {
	// Catalog says how to reach the catalog: Path, WalStore, Engine, Logger
	// and DisableRetry are used, the rest ignored.
	Catalog CatalogOptions
	// Target is the format to reach (0: FormatCurrent). Migration never
	// lowers a format; format 10 is reached only by commit-log adoption.
	Target uint64
	// StepEntries bounds the source entries one step batch processes
	// (default DefaultMigrationStep).
	StepEntries int
	// DryRun plans without writing: the store is opened read-only (nothing
	// is written, no writer is fenced) and the report lists the units that
	// would run.
	DryRun bool
}

// MigrationReport says what Migrate did (or, on a dry run, would do).
type MigrationReport struct {
	// From is the format the catalog was at; To the one it is at now.
	From, To uint64
	// Units run, in order (empty: the catalog was already at the target).
	Units []MigrationUnitReport
	// Resumed is true when an interrupted migration was found and finished.
	Resumed bool
	// Origin is the commit-log origin, preserved by migration (nil on a
	// single-writer catalog).
	Origin *uint64
	DryRun bool
}

// MigrationUnitReport describes one unit of a migration.
type MigrationUnitReport struct {
	Unit     string // "9->11"
	From, To uint64
	Builds   string // what the unit builds
	// Entries and Batches count the source entries processed and the step
	// batches written by this run (a resumed unit counts only what it did
	// after resuming).
	Entries, Batches int
	Resumed          bool
}

// migrationUnit is a rewriting unit: the source range it walks and what it
// stages for each entry.
type migrationUnit struct {
	builds     string
	start, end []byte
	apply      func(ctx context.Context, txn *slate.Txn, k keys.Key, v []byte) error
}

func unitFor(s formatStep) (migrationUnit, bool) {
	switch s.unit {
	case "9->11", "10->11":
		// Schemas (kind 02), tables (03) and views (04) are adjacent.
		return migrationUnit{builds: "name directory", start: keys.CurrentPrefix(keys.KindSchema),
			end: keys.PrefixEnd(keys.CurrentPrefix(keys.KindView)), apply: applyNameDir}, true
	case "11->12":
		start, end := keys.PrefixRange(keys.CurrentPrefix(keys.KindDeleteFile))
		return migrationUnit{builds: "delete-file target lookup", start: start, end: end, apply: applyDeleteTarget}, true
	}
	return migrationUnit{}, false
}

func stepByUnit(name string) (formatStep, bool) {
	for _, s := range formatLadder {
		if s.unit == name {
			return s, true
		}
	}
	return formatStep{}, false
}

// applyNameDir adds one live schema, table or view to its name-directory
// slot, merging with what the slot already lists (names hashing alike, or
// this entry from an interrupted step: re-adding it is a no-op).
func applyNameDir(ctx context.Context, txn *slate.Txn, k keys.Key, v []byte) error {
	var (
		kind   keys.NameKind
		parent uint64
		name   string
		id     uint64
	)
	switch k.Kind {
	case keys.KindSchema:
		s, err := decodeSchema(v)
		if err != nil {
			return err
		}
		kind, name, id = keys.NameSchema, s.Name, uint64(s.ID)
	case keys.KindTable:
		t, err := decodeTable(v)
		if err != nil {
			return err
		}
		kind, parent, name, id = keys.NameTable, uint64(t.SchemaID), t.Name, uint64(t.ID)
	case keys.KindView:
		w, err := decodeView(v)
		if err != nil {
			return err
		}
		kind, parent, name, id = keys.NameView, uint64(w.SchemaID), w.Name, uint64(w.ID)
	default:
		return nil
	}
	key := keys.NameDir(kind, parent, name)
	var entries []nameDirEntry
	old, ok, err := txn.Get(ctx, key)
	if err != nil {
		return storeErr(err, "reading name-directory slot %x", key)
	}
	if ok {
		if entries, err = decodeNameDir(old); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if e.Name == name {
			if e.ID != id {
				return errorf(Corruption, "two live %ss named %q under parent %d (ids %d and %d)", kind, name, parent, e.ID, id)
			}
			return nil
		}
	}
	entries = append(entries, nameDirEntry{Name: name, ID: id})
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	txn.Put(key, encodeNameDir(entries))
	return nil
}

// applyDeleteTarget adds one live delete file to the target lookup.
func applyDeleteTarget(ctx context.Context, txn *slate.Txn, k keys.Key, v []byte) error {
	d, err := decodeDeleteFile(v)
	if err != nil {
		return err
	}
	txn.Put(keys.DeleteTarget(uint64(d.TableID), uint64(d.DataFileID), uint64(d.ID)), encodeDeleteTarget())
	return nil
}

// migrateEnv is what the caller of migrateStore vouches for.
type migrateEnv struct {
	// logResidentOK lets migration run on a log-resident catalog. Only a
	// path that puts every batch through the authoritative commit log may
	// set it (the commit-log issue); in this build only tests set it, to
	// exercise the 10->11 unit.
	logResidentOK bool
}

func (o MigrateOptions) withDefaults() MigrateOptions {
	o.Catalog = o.Catalog.withDefaults()
	if o.Target == 0 {
		o.Target = FormatCurrent
	}
	if o.StepEntries <= 0 {
		o.StepEntries = DefaultMigrationStep
	}
	return o
}

// Migrate brings the catalog at opts.Catalog.Path in store to
// opts.Target (default FormatCurrent), or finishes a migration that was
// interrupted. It is explicit and never runs on open. It takes the
// catalog's writer role, fencing any read-write open (whose next commit
// fails with Fenced: reopen it afterwards). A log-resident catalog is
// refused (Migration): this build has no commit-log provider, and such a
// catalog's migration must commit through its log.
//
// Errors: NotFound (no catalog), Migration (a future format, a
// log-resident catalog), InvalidArgument (a target below the catalog's
// format or not reachable by migration), Store/Fenced/Interrupted while
// writing: every failure is safe to retry by running Migrate again.
func Migrate(ctx context.Context, store objstore.Store, opts MigrateOptions) (MigrationReport, error) {
	o := opts.withDefaults()
	es := engineStore(store, o.Catalog)
	if o.DryRun {
		r, err := slate.OpenReader(ctx, es, o.Catalog.Path, slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: -1}, engineOptions(o.Catalog)...)
		if err != nil {
			return MigrationReport{}, migrateOpenErr(err, store, o.Catalog.Path)
		}
		defer r.Close(ctx)
		p, err := planMigration(ctx, r, o.Target, migrateEnv{})
		if err != nil {
			return MigrationReport{}, err
		}
		rep := p.report()
		rep.DryRun = true
		for _, s := range p.steps {
			rep.Units = append(rep.Units, unitReport(s, p.marker != nil && s.unit == p.marker.Unit))
			rep.To = s.to
		}
		return rep, nil
	}
	// Probe first: opening the engine's writer would create an empty
	// database where there is none.
	if _, err := slate.ListCheckpoints(ctx, es, o.Catalog.Path); err != nil {
		return MigrationReport{}, migrateOpenErr(err, store, o.Catalog.Path)
	}
	db, err := slate.Open(ctx, es, o.Catalog.Path, engineOptions(o.Catalog)...)
	if err != nil {
		return MigrationReport{}, storeErr(err, "opening the catalog at %s (path %q) for migration", store, o.Catalog.Path)
	}
	rep, err := migrateStore(ctx, db, o, migrateEnv{})
	if cerr := db.Close(ctx); cerr != nil && err == nil && !errors.Is(cerr, slate.ErrFenced) {
		// Every batch was durable before it was acknowledged; a failed
		// close loses nothing the report claims.
		o.Catalog.Logger.Warn("moraine: closing the store after migration failed", "err", cerr)
	}
	return rep, err
}

func migrateOpenErr(err error, store objstore.Store, path string) error {
	if errors.Is(err, slate.ErrNotInitialized) {
		return errorf(NotFound, "no moraine catalog at %s (path %q): nothing to migrate", store, path)
	}
	return storeErr(err, "opening the catalog at %s (path %q) for migration", store, path)
}

// migrationPlan is what a migration will do from the state it found.
type migrationPlan struct {
	f      *formatRecord
	marker *migrationRecord // an interrupted unit to resume (steps[0])
	steps  []formatStep
}

func (p *migrationPlan) report() MigrationReport {
	return MigrationReport{From: p.f.Format, To: p.f.Format, Resumed: p.marker != nil, Origin: p.f.Origin}
}

func unitReport(s formatStep, resumed bool) MigrationUnitReport {
	u, _ := unitFor(s)
	b := u.builds
	if s.additive {
		b = "format stamp"
	}
	return MigrationUnitReport{Unit: s.unit, From: s.from, To: s.to, Builds: b, Resumed: resumed}
}

// planMigration reads the format record and the marker and lists the
// steps from there to target.
func planMigration(ctx context.Context, kv kvReader, target uint64, env migrateEnv) (*migrationPlan, error) {
	f, ok, err := readFormat(ctx, kv)
	if err == nil && !ok {
		err = errorf(NotFound, "the store holds an engine but no moraine catalog (no format record): nothing to migrate")
	}
	if err != nil {
		return nil, err
	}
	if err := checkKnownFormat(f); err != nil {
		return nil, err
	}
	if f.logResident() && !env.logResidentOK {
		return nil, refuseLogResident(f, "its migration must commit through its commit log (migration opens stores without a provider), which needs")
	}
	if _, ok, err := readHead(ctx, kv); err != nil || !ok {
		if err == nil {
			err = errorf(Corruption, "the catalog has no head record")
		}
		return nil, err
	}
	if target > FormatCurrent {
		return nil, errorf(InvalidArgument, "target format %d is newer than this build knows (up to %d)", target, FormatCurrent)
	}
	p := &migrationPlan{f: f}
	cur := f.Format
	m, ok, err := readMigration(ctx, kv)
	if err != nil {
		return nil, err
	}
	if ok {
		s, found := stepByUnit(m.Unit)
		if !found || s.from != m.From || s.to != m.To || f.Format != m.From {
			return nil, errorf(Corruption, "the migration marker (%s) does not fit this build's units or the catalog's format %d", m.describe(), f.Format)
		}
		p.marker = m
		p.steps = append(p.steps, s)
		cur = s.to // an interrupted unit is always finished
	} else if target < cur {
		return nil, errorf(InvalidArgument, "the catalog is at format %d; migration never lowers a format (target %d)", cur, target)
	}
	for cur < target {
		s, ok := stepFrom(cur)
		if !ok {
			return nil, errorf(InvalidArgument, "no migration unit starts at format %d (target %d)", cur, target)
		}
		if s.to > target {
			return nil, errorf(InvalidArgument, "format %d cannot be reached by migration: the unit from format %d goes to %d (format 10 is reached only by commit-log adoption)", target, cur, s.to)
		}
		p.steps = append(p.steps, s)
		cur = s.to
	}
	return p, nil
}

// migrateStore runs a migration on a store held by db.
func migrateStore(ctx context.Context, db *slate.DB, o MigrateOptions, env migrateEnv) (MigrationReport, error) {
	o = o.withDefaults()
	p, err := planMigration(ctx, db, o.Target, env)
	if err != nil {
		return MigrationReport{}, err
	}
	rep := p.report()
	log := o.Catalog.Logger
	for i, s := range p.steps {
		var resume *migrationRecord
		if i == 0 {
			resume = p.marker
		}
		ur := unitReport(s, resume != nil)
		log.Debug("moraine: migration unit starting", "unit", s.unit, "resumed", resume != nil)
		err := runUnit(ctx, db, s, resume, o.StepEntries, &ur)
		rep.Units = append(rep.Units, ur)
		if err != nil {
			return rep, err
		}
		log.Debug("moraine: migration unit finished", "unit", s.unit, "entries", ur.Entries, "batches", ur.Batches)
	}
	f, _, err := readFormat(ctx, db)
	if err != nil {
		return rep, err
	}
	rep.To, rep.Origin = f.Format, f.Origin
	return rep, nil
}

// stampHead adds the head-preserving stamp (batch counter + 1) to txn.
func stampHead(ctx context.Context, txn *slate.Txn) error {
	h, ok, err := readHead(ctx, txn)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	if err != nil {
		return err
	}
	txn.Put(headStamp(Head{SnapshotID: h.SnapshotID, BatchSeq: h.BatchSeq + 1}))
	return nil
}

// migrationBatch runs fn in one engine transaction that also stamps the
// head, and commits it durably.
func migrationBatch(ctx context.Context, db *slate.DB, what string, fn func(txn *slate.Txn) error) error {
	txn, err := db.Begin()
	if err != nil {
		return storeErr(err, "starting the migration's %s batch", what)
	}
	defer txn.Rollback()
	if err := fn(txn); err != nil {
		return err
	}
	if err := stampHead(ctx, txn); err != nil {
		return err
	}
	if h, err := txn.Commit(ctx, slate.WriteOptions{}); err != nil {
		if h.Seq != 0 {
			return wrapf(OutcomeUnknown, err, "the migration's %s batch was written but not confirmed durable: run the migration again (it resumes either way)", what)
		}
		return storeErr(err, "writing the migration's %s batch", what)
	}
	return nil
}

func readFormatIn(ctx context.Context, kv kvReader) (*formatRecord, error) {
	f, ok, err := readFormat(ctx, kv)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog lost its format record during migration")
	}
	return f, err
}

// runUnit runs (or resumes at marker) one step of the ladder.
func runUnit(ctx context.Context, db *slate.DB, s formatStep, marker *migrationRecord, stepEntries int, ur *MigrationUnitReport) error {
	if s.additive {
		return migrationBatch(ctx, db, "format stamp", func(txn *slate.Txn) error {
			f, err := readFormatIn(ctx, txn)
			if err != nil {
				return err
			}
			txn.Put(keys.Format(), encodeFormat(&formatRecord{Format: s.to, WriterVersion: WriterVersion, Origin: f.Origin}))
			return nil
		})
	}
	u, ok := unitFor(s)
	if !ok {
		return errorf(Internal, "migration unit %s has no implementation", s.unit)
	}
	rec := migrationRecord{From: s.from, To: s.to, Unit: s.unit}
	if marker != nil {
		rec.Cursor = marker.Cursor
	} else {
		err := migrationBatch(ctx, db, "start", func(txn *slate.Txn) error {
			txn.Put(keys.Migration(), encodeMigration(&rec))
			if s.from != FormatLegacyLog {
				return nil
			}
			// A legacy log-resident catalog written before the origin field
			// gains one here: the head batch counter this migration stands on
			// (the start batch is the first batch after it). An origin it
			// already has (adoption of a format-9 catalog) is kept.
			f, err := readFormatIn(ctx, txn)
			if err != nil || f.Origin != nil {
				return err
			}
			h, _, err := readHead(ctx, txn)
			if err != nil {
				return err
			}
			origin := h.BatchSeq
			txn.Put(keys.Format(), encodeFormat(&formatRecord{Format: f.Format, WriterVersion: WriterVersion, Origin: &origin}))
			return nil
		})
		if err != nil {
			return err
		}
	}
	for {
		start := u.start
		if rec.Cursor != nil {
			// The smallest key after the cursor.
			start = append(slices.Clip(rec.Cursor), 0)
		}
		var n int
		done := false
		err := migrationBatch(ctx, db, "step", func(txn *slate.Txn) error {
			type entry struct{ k, v []byte }
			var batch []entry
			more := false
			it := txn.Scan(ctx, start, u.end)
			for it.Next() {
				if len(batch) == stepEntries {
					more = true
					break
				}
				batch = append(batch, entry{slices.Clone(it.Key()), slices.Clone(it.Value())})
			}
			err := it.Err()
			it.Close()
			if err != nil {
				return storeErr(err, "scanning for migration unit %s", s.unit)
			}
			for _, e := range batch {
				k, err := keys.Decode(e.k)
				if err != nil {
					return wrapf(Corruption, err, "decoding key %x", e.k)
				}
				if err := u.apply(ctx, txn, k, e.v); err != nil {
					return err
				}
			}
			n, done = len(batch), !more
			if n == 0 {
				return errNothingToStep
			}
			rec.Cursor = batch[n-1].k
			txn.Put(keys.Migration(), encodeMigration(&rec))
			return nil
		})
		if errors.Is(err, errNothingToStep) {
			break
		}
		if err != nil {
			return err
		}
		ur.Entries += n
		ur.Batches++
		if done {
			break
		}
	}
	return migrationBatch(ctx, db, "finish", func(txn *slate.Txn) error {
		f, err := readFormatIn(ctx, txn)
		if err != nil {
			return err
		}
		txn.Put(keys.Format(), encodeFormat(&formatRecord{Format: s.to, WriterVersion: WriterVersion, Origin: f.Origin}))
		txn.Delete(keys.Migration())
		return nil
	})
}

// errNothingToStep ends a unit's steps when the source range is exhausted
// (the step batch is dropped unwritten).
var errNothingToStep = fmt.Errorf("moraine: no entries left to migrate")
