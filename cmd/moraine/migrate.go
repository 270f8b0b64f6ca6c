package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/moraine-go/moraine/core"
)

func runMigrate(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	to := fs.Uint64("to", 0, fmt.Sprintf("the format to reach (0: the newest this build knows, %d)", core.FormatCurrent))
	step := fs.Int("step", core.DefaultMigrationStep, "source entries per step batch")
	dry := fs.Bool("dry-run", false, "print what would run; write nothing and fence no writer")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: moraine migrate [flags] URI

Brings a lake's catalog to a newer structural format (or finishes a
migration that was interrupted: run it again after any failure). Formats:
9 legacy base, 10 legacy log-resident, 11 adds the name directory and the
commit-log origin field, 12 adds the delete-file target lookup, 13 adds
DuckLake 1.0's entities (macros, partial_max; a stamp, nothing rewritten).

Migration takes the catalog's writer role: a running read-write open of
the lake is fenced (its next commit fails) and must reopen afterwards.
Readers already open keep working; new opens are refused while a
migration is unfinished. A log-resident lake is refused: its migration
must go through the commit-log library.

flags:
`)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 1, "exactly one URI"); err != nil {
		return err
	}
	if *step < 1 {
		return usageError{fmt.Sprintf("-step %d: must be at least 1", *step)}
	}
	uri := fs.Arg(0)
	store, catOpts, err := sf.lake(ctx, uri)
	if err != nil {
		return err
	}
	rep, err := core.Migrate(ctx, store, core.MigrateOptions{
		Catalog:     catOpts,
		Target:      *to,
		StepEntries: *step,
		DryRun:      *dry,
	})
	if err != nil {
		if len(rep.Units) > 0 {
			printMigration(out, uri, rep)
		}
		return err
	}
	printMigration(out, uri, rep)
	return nil
}

// printMigration writes a migration report.
func printMigration(out io.Writer, uri string, rep core.MigrationReport) {
	fmt.Fprintf(out, "lake      %s\n", uri)
	if len(rep.Units) == 0 {
		fmt.Fprintf(out, "format    %d: nothing to do (the newest format this build knows is %d)\n", rep.From, core.FormatCurrent)
		fmt.Fprintf(out, "origin    %s\n", originText(rep.Origin))
		return
	}
	switch {
	case rep.DryRun:
		fmt.Fprintf(out, "format    %d -> %d (dry run: would migrate; nothing was written)\n", rep.From, rep.To)
	case rep.Resumed:
		fmt.Fprintf(out, "format    %d -> %d, migrated (resumed an interrupted migration)\n", rep.From, rep.To)
	default:
		fmt.Fprintf(out, "format    %d -> %d, migrated\n", rep.From, rep.To)
	}
	var units []string
	for _, u := range rep.Units {
		s := fmt.Sprintf("%s (%s", u.Unit, u.Builds)
		if !rep.DryRun {
			s += fmt.Sprintf(": %d entries in %d step batches", u.Entries, u.Batches)
		}
		if u.Resumed {
			s += ", resumed"
		}
		units = append(units, s+")")
	}
	fmt.Fprintf(out, "units     %s\n", strings.Join(units, ", "))
	fmt.Fprintf(out, "origin    %s\n", originText(rep.Origin))
}

func originText(origin *uint64) string {
	if origin == nil {
		return "none (single-writer catalog)"
	}
	return fmt.Sprintf("%d (log-resident)", *origin)
}
