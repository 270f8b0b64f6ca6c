package core

import (
	"context"
	"errors"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// legacyWriterVersion is what WriteLegacyLakeForTest records as the writer.
const legacyWriterVersion = "moraine-go/legacy-fixture"

// WriteLegacyLakeForTest creates, in a store holding no catalog at
// opts.Path, a catalog at an older format exactly as an older build would
// have left it. Only TestWriteLegacyLakes (built with the legacylakes tag) calls it, to write the lakes in
// internal/testutil/lakes/testdata/legacy once; tests open those copies.
//
// format is 9, 10 or 11. populate, if not nil, runs on a read-write handle
// whose commits maintain only that format's derived indexes: at 9 and 10
// no name directory and no delete-file targets, at 11 the name directory
// but no delete-file targets. At 10 the content is written as format 9 and
// stamped 10 at the end (a legacy log-resident catalog); origin, if set,
// is recorded as its commit_log_batch_origin (at 10 or 11: a log-resident
// catalog every open without a provider refuses). The handle is closed on
// return.
func WriteLegacyLakeForTest(ctx context.Context, store objstore.Store, opts CatalogOptions, format uint64, origin *uint64, populate func(*Catalog) error) error {
	switch format {
	case FormatLegacy, FormatLegacyLog, FormatNameDirectory:
	default:
		return errorf(InvalidArgument, "a legacy catalog is at format 9, 10 or 11, not %d", format)
	}
	if origin != nil && format == FormatLegacy {
		return errorf(InvalidArgument, "format 9 carries no commit-log origin (an adopted format-9 catalog is format 10)")
	}
	opts = opts.withDefaults()
	if _, err := slate.ListCheckpoints(ctx, engineStore(store, opts), opts.Path); !errors.Is(err, slate.ErrNotInitialized) {
		if err != nil {
			return storeErr(err, "probing %s (path %q)", store, opts.Path)
		}
		return errorf(AlreadyExists, "%s (path %q) already holds a catalog; a legacy fixture needs an empty store", store, opts.Path)
	}
	c, err := Open(ctx, store, opts)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	built := format
	if format == FormatLegacyLog {
		built = FormatLegacy
	}
	// Genesis as the older build wrote it: its format, and no name
	// directory entry for "main" below 11.
	b := slate.NewWriteBatch()
	rec := formatRecord{Format: built, WriterVersion: legacyWriterVersion}
	b.Put(keys.Format(), encodeFormat(&rec))
	if !hasNameDirectory(built) {
		b.Delete(keys.NameDir(keys.NameSchema, 0, "main"))
	}
	if _, err := c.db.Write(ctx, b, slate.WriteOptions{}); err != nil {
		return storeErr(err, "rewriting genesis at format %d", built)
	}
	c.fmtMu.Lock()
	c.format = rec
	c.fmtMu.Unlock()
	if populate != nil {
		if err := populate(c); err != nil {
			return err
		}
	}
	if format != built || origin != nil {
		if err := writeFormatRecord(ctx, c.db, &formatRecord{Format: format, WriterVersion: legacyWriterVersion, Origin: origin}); err != nil {
			return err
		}
	}
	return c.Close(ctx)
}
