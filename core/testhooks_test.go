package core

// Test hooks for the format, migration and lookup tests (package core_test).

import (
	"context"
	"encoding/hex"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// MigrateLogResidentForTest runs migration units directly on the store,
// allowing a log-resident catalog, as the commit-log path will once it
// routes the batches through the log. It reaches the 10->11 unit, which
// Migrate refuses in this build.
func MigrateLogResidentForTest(ctx context.Context, store objstore.Store, opts MigrateOptions) (MigrationReport, error) {
	o := opts.withDefaults()
	db, err := slate.Open(ctx, engineStore(store, o.Catalog), o.Catalog.Path, engineOptions(o.Catalog)...)
	if err != nil {
		return MigrationReport{}, err
	}
	defer db.Close(ctx)
	return migrateStore(ctx, db, o, migrateEnv{logResidentOK: true})
}

// FormatState is what sys/format, sys/migration and sys/head hold.
type FormatState struct {
	Format        uint64
	WriterVersion string
	Origin        *uint64
	Marker        bool
	MarkerFrom    uint64
	MarkerTo      uint64
	MarkerUnit    string
	MarkerCursor  []byte
	Head          Head
}

func withReader(ctx context.Context, store objstore.Store, path string, fn func(kv kvReader) error) error {
	r, err := slate.OpenReader(ctx, store, path, slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: -1})
	if err != nil {
		return err
	}
	defer r.Close(ctx)
	return fn(r)
}

// FormatStateForTest reads the catalog's sys records, bypassing the
// format check (it writes nothing).
func FormatStateForTest(ctx context.Context, store objstore.Store, path string) (FormatState, error) {
	var st FormatState
	err := withReader(ctx, store, path, func(kv kvReader) error {
		f, _, err := readFormat(ctx, kv)
		if err != nil {
			return err
		}
		st.Format, st.WriterVersion, st.Origin = f.Format, f.WriterVersion, f.Origin
		m, ok, err := readMigration(ctx, kv)
		if err != nil {
			return err
		}
		if ok {
			st.Marker, st.MarkerFrom, st.MarkerTo, st.MarkerUnit, st.MarkerCursor = true, m.From, m.To, m.Unit, m.Cursor
		}
		st.Head, _, err = readHead(ctx, kv)
		return err
	})
	return st, err
}

// Materialized is a catalog's full history, read without the format check.
type Materialized struct {
	// Head is the head view with its batch counter zeroed (migration and
	// format batches move the counter, never the catalog).
	Head *CatalogView
	// At holds ViewAt(id) for every snapshot id, in order.
	At        []*CatalogView
	Snapshots []Snapshot
	Stamp     Head
}

// MaterializeForTest loads the head and every snapshot of the catalog.
func MaterializeForTest(ctx context.Context, store objstore.Store, path string) (Materialized, error) {
	var m Materialized
	err := withReader(ctx, store, path, func(kv kvReader) error {
		h, err := load(ctx, kv, nil)
		if err != nil {
			return err
		}
		m.Stamp = h.head
		n := *h
		n.head.BatchSeq = 0
		m.Head = &n
		err = scanPrefix(ctx, kv, keys.SubspacePrefix(keys.SubspaceSnapshot), func(k keys.Key, v []byte) error {
			s, err := decodeSnapshot(v)
			if err != nil {
				return err
			}
			m.Snapshots = append(m.Snapshots, *s)
			return nil
		})
		if err != nil {
			return err
		}
		for _, s := range m.Snapshots {
			id := s.ID
			at, err := load(ctx, kv, &id)
			if err != nil {
				return err
			}
			m.At = append(m.At, at)
		}
		return nil
	})
	return m, err
}

// IndexKeysForTest returns every key of the index subspace (hex) with its
// value.
func IndexKeysForTest(ctx context.Context, store objstore.Store, path string) (map[string]string, error) {
	out := map[string]string{}
	err := withReader(ctx, store, path, func(kv kvReader) error {
		start, end := keys.PrefixRange(keys.SubspacePrefix(keys.SubspaceIndex))
		it := kv.Scan(ctx, start, end)
		defer it.Close()
		for it.Next() {
			out[hex.EncodeToString(it.Key())] = string(it.Value())
		}
		return it.Err()
	})
	return out, err
}

// ScanForTest calls fn with every key of the catalog, described
// (keys.Describe).
func ScanForTest(ctx context.Context, store objstore.Store, fn func(key string)) error {
	return withReader(ctx, store, "", func(kv kvReader) error {
		it := kv.Scan(ctx, nil, nil)
		defer it.Close()
		for it.Next() {
			fn(keys.Describe(it.Key()))
		}
		return it.Err()
	})
}

// ExpectedIndexForTest derives, from a head materialization, the index
// entries a catalog at format keeps: the name directory (11+) and the
// delete-file targets (12+).
func ExpectedIndexForTest(s *CatalogView, format uint64) map[string]string {
	out := map[string]string{}
	if hasNameDirectory(format) {
		slots := map[nameSlot]bool{}
		for name := range s.schemaByName {
			slots[nameSlot{keys.NameSchema, 0, keys.NameHash(name)}] = true
		}
		for sid, m := range s.tableByName {
			for name := range m {
				slots[nameSlot{keys.NameTable, uint64(sid), keys.NameHash(name)}] = true
			}
		}
		for sid, m := range s.viewByName {
			for name := range m {
				slots[nameSlot{keys.NameView, uint64(sid), keys.NameHash(name)}] = true
			}
		}
		for sl := range slots {
			if e := s.nameEntries(sl); len(e) > 0 {
				out[hex.EncodeToString(keys.NameDirHash(sl.kind, sl.parent, sl.hash))] = string(encodeNameDir(e))
			}
		}
	}
	if hasDeleteTargets(format) {
		for _, dels := range s.deleteFiles {
			for _, d := range dels {
				out[hex.EncodeToString(keys.DeleteTarget(uint64(d.TableID), uint64(d.DataFileID), uint64(d.ID)))] = string(encodeDeleteTarget())
			}
		}
	}
	return out
}

func withWriter(ctx context.Context, store objstore.Store, path string, fn func(db *slate.DB) error) error {
	db, err := slate.Open(ctx, store, path)
	if err != nil {
		return err
	}
	if err := fn(db); err != nil {
		db.Close(ctx)
		return err
	}
	return db.Close(ctx)
}

// AdoptForTest writes the adoption stamp directly (no log).
func AdoptForTest(ctx context.Context, store objstore.Store, path string) (format uint64, origin *uint64, err error) {
	err = withWriter(ctx, store, path, func(db *slate.DB) error {
		f, err := adoptStore(ctx, db)
		format, origin = f.Format, f.Origin
		return err
	})
	return format, origin, err
}

// DemoteForTest writes the demotion stamp directly.
func DemoteForTest(ctx context.Context, store objstore.Store, path string) (format uint64, origin *uint64, err error) {
	err = withWriter(ctx, store, path, func(db *slate.DB) error {
		f, err := demoteStore(ctx, db)
		format, origin = f.Format, f.Origin
		return err
	})
	return format, origin, err
}

// DropIndexesForTest deletes every index-subspace key (to show which
// lookups read the indexes).
func DropIndexesForTest(ctx context.Context, store objstore.Store, path string) error {
	return withWriter(ctx, store, path, func(db *slate.DB) error {
		b := slate.NewWriteBatch()
		start, end := keys.PrefixRange(keys.SubspacePrefix(keys.SubspaceIndex))
		it := db.Scan(ctx, start, end)
		for it.Next() {
			b.Delete(append([]byte(nil), it.Key()...))
		}
		it.Close()
		if err := it.Err(); err != nil {
			return err
		}
		if b.Len() == 0 {
			return nil
		}
		_, err := db.Write(ctx, b, slate.WriteOptions{})
		return err
	})
}

// MakeStepAdditiveForTest pretends the 11->12 step is additive (so
// RaiseFormat has something to raise) until restore is called.
func MakeStepAdditiveForTest() (restore func()) {
	saved := formatLadder
	formatLadder = []formatStep{saved[0], saved[1], {from: FormatNameDirectory, to: FormatDeleteTargets, unit: "11->12", additive: true}}
	return func() { formatLadder = saved }
}
