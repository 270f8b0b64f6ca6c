package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/provider"
)

func runAdopt(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("adopt", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: moraine adopt [flags] URI\n\nMakes a lake log-resident with the in-tree commit log (RFC 0024): its\ncatalog is flushed, the adoption stamp is raced as the log's first slot and\nfolded in. From then on any number of processes commit through the log, and\nbuilds without a commit-log provider refuse the lake. A lake that is already\nadopted is left as it is. The open fences a running single writer.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 1, "exactly one URI"); err != nil {
		return err
	}
	store, opts, err := sf.lake(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	opts.CommitLog, opts.ReaderPollInterval = provider.New(provider.Options{}), -1
	cat, err := core.Open(ctx, store, opts)
	if err != nil {
		return err
	}
	defer cat.Close(ctx)
	format, origin := cat.Format()
	head, err := cat.Head(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lake %s is log-resident: format %d, commit-log origin %s, head snapshot %d (batch %d)\n",
		fs.Arg(0), format, originText(origin), head.SnapshotID, head.BatchSeq)
	return nil
}

func runFold(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fold", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: moraine fold [flags] URI\n\nFolds a log-resident lake's commit log into its store once (a scheduled\ndrain), compacts the store when a compaction is due, and truncates the log\nbelow the new replay point (slots younger than the retention stay). Committers keep committing meanwhile; a fold running\nelsewhere is fenced.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 1, "exactly one URI"); err != nil {
		return err
	}
	store, opts, err := sf.lake(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	opts.CommitLog, opts.ReaderPollInterval, opts.CommitLogFoldSlots = provider.New(provider.Options{}), -1, -1
	cat, err := core.Open(ctx, store, opts)
	if err != nil {
		return err
	}
	defer cat.Close(ctx)
	before, err := cat.UnfoldedSlots(ctx)
	if err != nil {
		return err
	}
	rep, err := cat.FoldSprint(ctx)
	if err != nil {
		return err
	}
	after, err := cat.UnfoldedSlots(ctx)
	if err != nil {
		return err
	}
	if rep.Applied == 0 {
		fmt.Fprintf(out, "nothing to fold: the store holds every slot through %d; %d tables compacted; %d log objects truncated; unfolded slots: %d\n", rep.ThroughSlot, rep.Compacted, rep.Truncated, after)
		return nil
	}
	fmt.Fprintf(out, "folded %d slots (%d..%d); %d tables compacted; %d log objects truncated; unfolded slots: %d before, %d after\n",
		rep.Applied, rep.FromSlot, rep.ThroughSlot, rep.Compacted, rep.Truncated, before, after)
	return nil
}
