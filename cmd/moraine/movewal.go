package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

func runMoveWal(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("move-wal", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: moraine move-wal [flags] URI NEW-WAL-URI

Moves a lake's write-ahead log to another object store (for example a
low-latency bucket), or back into the lake's own store when NEW-WAL-URI is
URI itself. The WAL is flushed into the lake's tree, the new store is
fenced past the old store's last WAL id, and the lake records the new
store: from then on every open must name it (CatalogOptions.WalStore, the
WAL_STORE attach option, -wal-store of this and every other command), and
an open without it is refused. The old store keeps its WAL files.

The move takes the catalog's writer role: a running read-write open of the
lake is fenced (its next commit fails) and must reopen with the new WAL
store. A lake in the middle of a migration, at a format newer than this
build, or log-resident (its commit log lives in its WAL store) is refused.
The S3 flags apply to every s3:// store named.

flags:
`)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 2, "exactly two URIs: the lake and the new WAL store"); err != nil {
		return err
	}
	uri, toURI := fs.Arg(0), fs.Arg(1)
	store, err := sf.open(ctx, uri)
	if err != nil {
		return err
	}
	to, err := sf.open(ctx, toURI)
	if err != nil {
		return err
	}
	catOpts, err := sf.catalogOptions(ctx) // -wal-store: where the WAL is now
	if err != nil {
		return err
	}
	if sf.lakeName != "" {
		// A named lake's WAL moves to the same name in the new store.
		for _, s := range []*objstore.Store{&store, &to, &catOpts.WalStore} {
			if *s == nil {
				continue
			}
			if *s, err = core.LakeStore(*s, sf.lakeName); err != nil {
				return err
			}
		}
		catOpts.NamedLake = sf.lakeName
	}
	rep, err := core.MoveWalStore(ctx, store, to, core.MoveWalOptions{Catalog: catOpts})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lake      %s\n", uri)
	fmt.Fprintf(out, "wal       %s -> %s\n", walName(rep.From), walName(rep.To))
	fmt.Fprintf(out, "wal ids   the old store ends at %d, the new store starts at %d\n", rep.LastOldWalID, rep.FirstNewWalID)
	fmt.Fprintf(out, "catalog   format %d, head snapshot %d (batch %d), unchanged\n", rep.Format, rep.Head.SnapshotID, rep.Head.BatchSeq)
	if rep.To == "" {
		fmt.Fprintf(out, "open      without a WAL store from now on\n")
	} else {
		fmt.Fprintf(out, "open      with WAL store %s from now on\n", rep.To)
	}
	return nil
}

func walName(id string) string {
	if id == "" {
		return "the lake's own store"
	}
	return id
}
