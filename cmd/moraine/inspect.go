package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/provider"
)

func runInspect(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	last := fs.Int("snapshots", 20, "how many recent snapshots to list (0: all)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: moraine inspect [flags] URI\n\nPrints a lake's format, head, tables and recent snapshots. It reads only:\nnothing is written to the store.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 1, "exactly one URI"); err != nil {
		return err
	}
	uri := fs.Arg(0)
	if err := checkLocalLake(uri); err != nil {
		return err
	}
	store, opts, err := sf.lake(ctx, uri)
	if err != nil {
		return err
	}
	opts.FollowLatest, opts.ReaderPollInterval = true, -1
	var named []string
	if sf.lakeName == "" {
		if named, err = core.Lakes(ctx, store); err != nil {
			return err
		}
		if len(named) > 0 {
			fmt.Fprintf(out, "named lakes  %s (inspect one with -lake NAME)\n", quoteAll(named))
		}
	}
	cat, err := core.OpenReadOnly(ctx, store, opts)
	if core.KindOf(err) == core.NotFound && len(named) > 0 {
		fmt.Fprintln(out, "the store holds no lake of its own (schema main), only the named lakes above")
		return nil
	}
	if core.NeedsCommitLog(err) {
		// A log-resident lake: read it through the in-tree commit log,
		// tailing it so the listing includes unfolded slots.
		opts.CommitLog, opts.CommitLogTail = provider.New(provider.Options{}), true
		cat, err = core.OpenReadOnly(ctx, store, opts)
		if err == nil {
			fmt.Fprintln(out, "(log-resident: read through the in-tree commit log)")
		}
	}
	if err != nil {
		return err
	}
	defer cat.Close(ctx)
	return printCatalog(ctx, out, uri, cat, *last)
}

// checkLocalLake refuses a local path that cannot hold a lake before the
// store is opened: opening a local store creates its directory (and the
// store's .tmp and .locks), and inspect must write nothing. Other URIs
// pass; their stores are not created by opening them.
func checkLocalLake(uri string) error {
	dir, ok := localPath(uri)
	if !ok {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no lake at %s: the directory does not exist", uri)
	}
	if err != nil {
		return fmt.Errorf("no lake at %s: %w", uri, err)
	}
	for _, e := range entries {
		if e.Name() != ".tmp" && e.Name() != ".locks" {
			return nil
		}
	}
	return fmt.Errorf("no lake at %s: the directory is empty", uri)
}

// localPath returns the directory of a local store URI (a plain path or
// file:///abs/dir), as objstore.Open reads it.
func localPath(uri string) (string, bool) {
	scheme, _, hasScheme := strings.Cut(uri, "://")
	if !hasScheme {
		if strings.Contains(uri, ":") && !strings.HasPrefix(uri, "/") && !strings.HasPrefix(uri, ".") {
			return "", false // not a store URI; Open refuses it
		}
		return uri, uri != ""
	}
	if !strings.EqualFold(scheme, "file") {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// printCatalog writes a human-readable summary of a catalog.
func printCatalog(ctx context.Context, out io.Writer, uri string, cat *core.Catalog, lastSnapshots int) error {
	snap, err := cat.View(ctx)
	if err != nil {
		return err
	}
	format, origin := cat.Format()
	fmt.Fprintf(out, "lake      %s\n", uri)
	fmt.Fprintf(out, "format    %d, commit-log origin: %s\n", format, originText(origin))
	h := snap.Head()
	fmt.Fprintf(out, "head      snapshot %d, batch %d, schema version %d\n", h.SnapshotID, h.BatchSeq, snap.Snapshot().SchemaVersion)
	if dp, ok := snap.Option(core.ScopeGlobal, 0, "data_path"); ok {
		fmt.Fprintf(out, "data path %s\n", dp)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tID\tCOLUMNS\tDATA FILES\tDELETE FILES\tINLINED ROWS\tRECORDS")
	for _, s := range snap.Schemas() {
		for _, t := range snap.Tables(s.ID) {
			var cols []string
			for _, c := range snap.Columns(t.ID) {
				if c.Parent == nil {
					cols = append(cols, c.Name+" "+c.Type)
				}
			}
			st, _ := snap.TableStats(t.ID)
			fmt.Fprintf(tw, "%s.%s\t%d\t%s\t%d\t%d\t%d\t%d\n", s.Name, t.Name, t.ID, strings.Join(cols, ", "),
				len(snap.DataFiles(t.ID)), len(snap.DeleteFiles(t.ID)), snap.InlinedRowCount(t.ID), st.RecordCount)
		}
	}
	tw.Flush()
	if views := snap.AllViews(); len(views) > 0 {
		fmt.Fprintln(out)
		for _, v := range views {
			fmt.Fprintf(out, "view %d %s: %s\n", v.ID, v.Name, v.SQL)
		}
	}
	snaps, err := cat.Snapshots(ctx, 0)
	if err != nil {
		return err
	}
	if lastSnapshots > 0 && len(snaps) > lastSnapshots {
		snaps = snaps[len(snaps)-lastSnapshots:]
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tTIME\tSCHEMA VERSION\tCHANGES\tAUTHOR / MESSAGE")
	for _, s := range snaps {
		note := ""
		if s.Author != nil {
			note = *s.Author
		}
		if s.CommitMessage != nil {
			note += " " + *s.CommitMessage
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", s.ID, s.Time.Format("2006-01-02 15:04:05.000"), s.SchemaVersion, s.ChangesMade, strings.TrimSpace(note))
	}
	return tw.Flush()
}

// quoteAll quotes each name and joins them with ", ".
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
