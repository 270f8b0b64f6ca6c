package core

// namedir.go: the name directory's writes (the slots a transaction touched,
// rewritten at finish), and lookups by name and by data file that read the
// derived indexes directly instead of materializing the catalog.
//
//   - Name directory (format 11+, index 07 04): one key per (kind, parent,
//     FNV-1a hash of the name) whose value lists every live {name, id}
//     hashing there. A lookup is one point read of the slot plus one of
//     the entity.
//   - Delete-file target lookup (format 12+, index 07 05): one empty-valued
//     key per live delete file, (table, data file, delete file). A lookup
//     is one scan of the (table, data file) prefix plus a point read per
//     delete file.
//
// Below those formats the indexes are absent or incomplete and the lookups
// fall back to a materialized view.

import (
	"context"
	"sort"

	"github.com/moraine-go/moraine/core/keys"
)

// consistentRead runs fn against one consistent cut of the catalog: an
// engine snapshot on a handle that holds the store, a pinned view of the
// reader otherwise (later polls do not change it).
func (c *Catalog) consistentRead(ctx context.Context, fn func(kv kvReader) error) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	if db := c.writerDB(); db != nil {
		snap := db.Snapshot()
		defer snap.Release()
		return fn(snap)
	}
	snap, err := c.reader.Snapshot(ctx)
	if err != nil {
		return storeErr(err, "pinning the reader's view")
	}
	return fn(snap)
}

// lookupName resolves name under parent in the name directory.
func lookupName(ctx context.Context, kv kvReader, kind keys.NameKind, parent uint64, name string) (uint64, bool, error) {
	v, ok, err := kv.Get(ctx, keys.NameDir(kind, parent, name))
	if err != nil || !ok {
		return 0, false, storeErr(err, "reading the name directory (%s %q)", kind, name)
	}
	entries, err := decodeNameDir(v)
	if err != nil {
		return 0, false, err
	}
	for _, e := range entries {
		if e.Name == name {
			return e.ID, true, nil
		}
	}
	return 0, false, nil
}

// readLive point-reads the current version of an entity the name
// directory named; its absence means the directory and the catalog
// disagree.
func readLive[T any](ctx context.Context, kv kvReader, key []byte, what string, name string, id uint64, decode func([]byte) (*T, error)) (*T, error) {
	v, ok, err := kv.Get(ctx, key)
	if err != nil {
		return nil, storeErr(err, "reading %s %d", what, id)
	}
	if !ok {
		return nil, errorf(Corruption, "the name directory maps %s %q to id %d, which is not live", what, name, id)
	}
	return decode(v)
}

func lookupSchemaIn(ctx context.Context, kv kvReader, name string) (*Schema, error) {
	id, ok, err := lookupName(ctx, kv, keys.NameSchema, 0, name)
	if err != nil || !ok {
		return nil, err
	}
	return readLive(ctx, kv, keys.CurrentSchema(id), "schema", name, id, decodeSchema)
}

// indexFormat is the format whose indexes this handle may trust.
func (c *Catalog) indexFormat() uint64 {
	f, _ := c.Format()
	return f
}

// LookupSchema finds a live schema by name at the head. At format 11 and
// later it reads the name directory (two point reads); below it
// materializes the head.
func (c *Catalog) LookupSchema(ctx context.Context, name string) (Schema, bool, error) {
	if !hasNameDirectory(c.indexFormat()) {
		s, err := c.View(ctx)
		if err != nil {
			return Schema{}, false, err
		}
		v, ok := s.SchemaByName(name)
		return v, ok, nil
	}
	var out *Schema
	err := c.consistentRead(ctx, func(kv kvReader) (err error) {
		out, err = lookupSchemaIn(ctx, kv, name)
		return err
	})
	if err != nil || out == nil {
		return Schema{}, false, err
	}
	return *out, true, nil
}

// lookupRelation resolves schema then name under it, of one kind.
func lookupRelation[T any](ctx context.Context, c *Catalog, kind keys.NameKind, schema, name string, current func(uint64) []byte, what string, decode func([]byte) (*T, error)) (*T, error) {
	var out *T
	err := c.consistentRead(ctx, func(kv kvReader) error {
		out = nil
		s, err := lookupSchemaIn(ctx, kv, schema)
		if err != nil || s == nil {
			return err
		}
		id, ok, err := lookupName(ctx, kv, kind, uint64(s.ID), name)
		if err != nil || !ok {
			return err
		}
		out, err = readLive(ctx, kv, current(id), what, schema+"."+name, id, decode)
		return err
	})
	return out, err
}

// LookupTable finds a live table by schema and table name at the head. At
// format 11 and later it reads the name directory (four point reads);
// below it materializes the head.
func (c *Catalog) LookupTable(ctx context.Context, schema, table string) (Table, bool, error) {
	if !hasNameDirectory(c.indexFormat()) {
		s, err := c.View(ctx)
		if err != nil {
			return Table{}, false, err
		}
		v, ok := s.TableByName(schema, table)
		return v, ok, nil
	}
	out, err := lookupRelation(ctx, c, keys.NameTable, schema, table, keys.CurrentTable, "table", decodeTable)
	if err != nil || out == nil {
		return Table{}, false, err
	}
	return *out, true, nil
}

// LookupView finds a live view by schema and view name at the head, like
// LookupTable.
func (c *Catalog) LookupView(ctx context.Context, schema, view string) (View, bool, error) {
	if !hasNameDirectory(c.indexFormat()) {
		s, err := c.View(ctx)
		if err != nil {
			return View{}, false, err
		}
		v, ok := s.ViewByName(schema, view)
		return v, ok, nil
	}
	out, err := lookupRelation(ctx, c, keys.NameView, schema, view, keys.CurrentView, "view", decodeView)
	if err != nil || out == nil {
		return View{}, false, err
	}
	return *out, true, nil
}

// DeleteFilesOf lists the live delete files that target one data file of
// a table at the head, by id (nil when there are none). At format 12 it
// reads the delete-file target lookup (one prefix scan, then a point read
// per delete file); below it materializes the head.
func (c *Catalog) DeleteFilesOf(ctx context.Context, table TableID, file DataFileID) ([]DeleteFile, error) {
	if !hasDeleteTargets(c.indexFormat()) {
		s, err := c.View(ctx)
		if err != nil {
			return nil, err
		}
		return s.DeleteFilesOf(table, file), nil
	}
	var out []DeleteFile
	err := c.consistentRead(ctx, func(kv kvReader) error {
		out = nil
		var ids []uint64
		err := scanPrefix(ctx, kv, keys.DeleteTargetPrefix(uint64(table), uint64(file)), func(k keys.Key, v []byte) error {
			if err := decodeDeleteTarget(v); err != nil {
				return err
			}
			ids = append(ids, k.Comps[2])
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			v, ok, err := kv.Get(ctx, keys.CurrentDeleteFile(uint64(table), id))
			if err != nil {
				return storeErr(err, "reading delete file %d of table %d", id, table)
			}
			if !ok {
				return errorf(Corruption, "the delete-file target lookup lists delete file %d for data file %d of table %d, but it is not live", id, file, table)
			}
			d, err := decodeDeleteFile(v)
			if err != nil {
				return err
			}
			out = append(out, *d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// finishNames rewrites the name-directory slots the transaction touched.
func (t *Transaction) finishNames() {
	if t.format >= FormatNameDirectory {
		slots := make([]nameSlot, 0, len(t.nameSlots))
		for s := range t.nameSlots {
			slots = append(slots, s)
		}
		sort.Slice(slots, func(i, j int) bool {
			a, b := slots[i], slots[j]
			if a.kind != b.kind {
				return a.kind < b.kind
			}
			if a.parent != b.parent {
				return a.parent < b.parent
			}
			return a.hash < b.hash
		})
		for _, s := range slots {
			entries := t.next.nameEntries(s)
			key := keys.NameDirHash(s.kind, s.parent, s.hash)
			if len(entries) == 0 {
				t.del(key)
			} else {
				t.put(key, encodeNameDir(entries))
			}
		}
	}
}

// touchName marks a name-directory slot for rewriting at finish.
func (t *Transaction) touchName(kind keys.NameKind, parent uint64, name string) {
	t.nameSlots[nameSlot{kind: kind, parent: parent, hash: keys.NameHash(name)}] = true
}

// nameEntries lists the live names (and ids) that hash into slot.
func (s *CatalogView) nameEntries(slot nameSlot) []nameDirEntry {
	var out []nameDirEntry
	add := func(name string, id uint64) {
		if keys.NameHash(name) == slot.hash {
			out = append(out, nameDirEntry{Name: name, ID: id})
		}
	}
	switch slot.kind {
	case keys.NameSchema:
		for name, id := range s.schemaByName {
			add(name, uint64(id))
		}
	case keys.NameTable:
		for name, id := range s.tableByName[SchemaID(slot.parent)] {
			add(name, uint64(id))
		}
	case keys.NameView:
		for name, id := range s.viewByName[SchemaID(slot.parent)] {
			add(name, uint64(id))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
