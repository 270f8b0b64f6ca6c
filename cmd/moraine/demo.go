package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/provider"
)

// demoSchemaPrefix names the schema each demo run works in: run_1, run_2, ...
const demoSchemaPrefix = "run_"

func runDemo(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	dir := fs.String("dir", "moraine-demo", "local directory for the lake (created if missing; kept afterwards)")
	writers := fs.Int("writers", 4, "concurrent committing goroutines")
	commits := fs.Int("commits", 5, "commits per goroutine")
	pace := fs.Duration("pace", 30*time.Millisecond, "pause between one goroutine's commits (so the follower visibly follows)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: moraine demo [flags]

Creates a lake in a local directory, or reuses the one a previous run left
there, and adds one run to it: a new schema run_N (run_1 on a new lake,
then run_2, ...) with tables events and users, data-file registrations and
inlined rows committed from several goroutines while a read-only handle
follows along, then a schema change and a time-travel read. It prints each
step and the final catalog and leaves the lake on disk for 'moraine
inspect'; earlier runs' schemas and snapshots stay as they were.

flags:
`)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, 0, "no arguments"); err != nil {
		return err
	}
	if *writers < 1 || *commits < 1 {
		return usageError{fmt.Sprintf("-writers (%d) and -commits (%d) must be at least 1", *writers, *commits)}
	}
	if *pace < 0 {
		return usageError{fmt.Sprintf("-pace (%s) must not be negative", *pace)}
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	store, err := objstore.NewLocal(abs, 0)
	if err != nil {
		return err
	}
	var outMu sync.Mutex
	say := func(format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	step := func(format string, a ...any) { say("==> "+format, a...) }

	step("opening the lake at %s (read-write; created if empty)", abs)
	opts := core.CatalogOptions{DataPath: filepath.Join(abs, "data") + "/"}
	// Look first with a reader that writes nothing: a provider-less
	// read-write open of an adopted lake would claim the writer epoch (and
	// fence a process holding the store) before being refused.
	if probe, err := core.OpenReadOnly(ctx, store, core.CatalogOptions{FollowLatest: true, ReaderPollInterval: -1}); err == nil {
		probe.Close(ctx)
	} else if core.NeedsCommitLog(err) {
		// An adopted (log-resident) lake: commit through the in-tree
		// commit log, as any number of processes may.
		opts.CommitLog = provider.New(provider.Options{})
		step("the lake is log-resident (adopted): committing through the in-tree commit log")
	}
	cat, err := core.Open(ctx, store, opts)
	if err != nil {
		return err
	}
	defer cat.Close(ctx)
	start, err := cat.View(ctx)
	if err != nil {
		return err
	}
	startHead := start.Head()
	earlier := demoRuns(start)
	if startHead.SnapshotID == 0 && len(start.AllTables()) == 0 {
		step("a new lake: genesis snapshot 0 holds schema main")
	} else {
		what := "no earlier demo runs"
		if len(earlier) > 0 {
			what = "earlier demo runs left schemas " + strings.Join(earlier, ", ")
		}
		step("an existing lake: head is snapshot %d (batch %d), %d tables; %s", startHead.SnapshotID, startHead.BatchSeq, len(start.AllTables()), what)
	}

	step("opening a read-only follower that polls every 50ms")
	fopts := core.CatalogOptions{ReaderPollInterval: 50 * time.Millisecond}
	if opts.CommitLog != nil {
		fopts.CommitLog, fopts.CommitLogTail = provider.New(provider.Options{}), true
	}
	follower, err := core.OpenReadOnly(ctx, store, fopts)
	if err != nil {
		return err
	}
	defer follower.Close(ctx)
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		var seen core.SnapshotID
		if s, err := follower.View(followCtx); err == nil {
			seen = s.ID()
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-followCtx.Done():
				return
			case <-tick.C:
			}
			s, err := follower.View(followCtx)
			if err != nil || s.ID() == seen {
				continue
			}
			say("    follower: now at snapshot %d (lake: %d tables, %d data files)", s.ID(), len(s.AllTables()), countFiles(s))
			seen = s.ID()
		}
	}()

	// The closure may re-run, so it derives the run number from the
	// transaction's view of the catalog.
	var schema string
	var eventsID, usersID core.TableID
	created, err := cat.Commit(ctx, func(t *core.Transaction) error {
		schema = demoRunName(nextDemoRun(t.View()))
		sid, err := t.CreateSchema(schema)
		if err != nil {
			return err
		}
		if eventsID, err = t.CreateTable(sid, "events", []core.ColumnDef{{Name: "id", Type: "int64", NullsAllowed: ptrTo(false)}, {Name: "kind", Type: "varchar"}, {Name: "at", Type: "timestamp"}}); err != nil {
			return err
		}
		if usersID, err = t.CreateTable(sid, "users", []core.ColumnDef{{Name: "id", Type: "int64", NullsAllowed: ptrTo(false)}, {Name: "name", Type: "varchar"}}); err != nil {
			return err
		}
		t.SetAuthor("moraine demo")
		t.SetCommitMessage("create schema " + schema)
		return nil
	})
	if err != nil {
		return err
	}
	step("snapshot %d: created schema %s with tables %s.events (id, kind, at) and %s.users (id, name)", created, schema, schema, schema)

	step("%d goroutines commit %d times each: data-file registrations into %s.events, inlined rows into %s.users", *writers, *commits, schema, schema)
	var wg sync.WaitGroup
	errs := make(chan error, *writers)
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < *commits; i++ {
				var what string
				id, err := cat.Commit(ctx, func(t *core.Transaction) error {
					if i%2 == 0 {
						// Relative to the table's path: data/<schema>/events/.
						path := fmt.Sprintf("part-%d-%d.parquet", w, i)
						_, err := t.RegisterDataFile(core.DataFileDef{TableID: eventsID, Path: path, PathIsRelative: true,
							RecordCount: uint64(100 * (i + 1)), FileSizeBytes: uint64(4096 * (i + 1)), FooterSize: 512})
						what = "registered data file events/" + path
						return err
					}
					name := fmt.Sprintf("user-%d-%d", w, i)
					uid := int64(w*1000 + i)
					_, err := t.InlineInsert(usersID, [][]core.Value{{{Int: &uid}, {String: &name}}})
					what = "inlined user " + name
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				say("    writer %d: snapshot %d %s", w, id, what)
				if *pace > 0 {
					time.Sleep(*pace)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}

	altered, err := cat.Commit(ctx, func(t *core.Transaction) error {
		if _, err := t.AddColumn(usersID, core.ColumnDef{Name: "email", Type: "varchar"}); err != nil {
			return err
		}
		return t.RenameTable(eventsID, "event_log")
	})
	if err != nil {
		return err
	}
	step("snapshot %d: added column %s.users.email, renamed %s.events to %s.event_log", altered, schema, schema, schema)
	inlined, err := cat.Commit(ctx, func(t *core.Transaction) error {
		uid, name, email := int64(-1), "late-user", "late@example.com"
		_, err := t.InlineInsert(usersID, [][]core.Value{{{Int: &uid}, {String: &name}, {String: &email}}})
		return err
	})
	if err != nil {
		return err
	}
	step("snapshot %d: inlined a user with an email (the new shape)", inlined)

	step("waiting for the follower to catch up")
	final, err := cat.Head(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := follower.Refresh(ctx); err != nil {
			return err
		}
		s, err := follower.View(ctx)
		if err != nil {
			return err
		}
		if s.ID() >= final.SnapshotID {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the follower did not reach snapshot %d", final.SnapshotID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopFollow()
	<-followed
	step("the follower serves snapshot %d", final.SnapshotID)

	old, err := cat.ViewAt(ctx, created)
	if err != nil {
		return err
	}
	now, err := cat.View(ctx)
	if err != nil {
		return err
	}
	oldEvents, _ := old.Table(eventsID)
	step("time travel: at snapshot %d %s.%s had %d data files and %s.users %d columns; now %s.event_log has %d data files and %s.users %d columns, %d inlined rows",
		created, schema, oldEvents.Name, len(old.DataFiles(eventsID)), schema, topLevel(old, usersID),
		schema, len(now.DataFiles(eventsID)), schema, topLevel(now, usersID), now.InlinedRowCount(usersID))

	// A new lake lists every snapshot; a rerun lists its own and the one
	// before them.
	last := 0
	if startHead.SnapshotID > 0 {
		last = int(final.SnapshotID-startHead.SnapshotID) + 1
	}
	fmt.Fprintln(out)
	if err := printCatalog(ctx, out, abs, cat, last); err != nil {
		return err
	}
	if last > 0 {
		fmt.Fprintf(out, "(snapshots %d..%d; 'moraine inspect -snapshots 0' lists all %d)\n", startHead.SnapshotID, final.SnapshotID, final.SnapshotID+1)
	}
	fmt.Fprintf(out, "\nThe lake stays in %s. Inspect it with\n  go run ./cmd/moraine inspect %s\nand run the demo again to add %s next to %s.\n",
		abs, abs, demoRunName(nextDemoRun(now)), schema)
	return nil
}

// demoRuns lists the schemas earlier demo runs created, in run order.
func demoRuns(s *core.CatalogView) []string {
	var out []string
	for n := 1; n < nextDemoRun(s); n++ {
		if _, ok := s.SchemaByName(demoRunName(n)); ok {
			out = append(out, demoRunName(n))
		}
	}
	return out
}

// nextDemoRun is one more than the highest run_N schema (1 on a new lake).
func nextDemoRun(s *core.CatalogView) int {
	n := 0
	for _, sc := range s.Schemas() {
		if k, err := strconv.Atoi(strings.TrimPrefix(sc.Name, demoSchemaPrefix)); err == nil && strings.HasPrefix(sc.Name, demoSchemaPrefix) && k > n {
			n = k
		}
	}
	return n + 1
}

func demoRunName(n int) string { return demoSchemaPrefix + strconv.Itoa(n) }

func topLevel(s *core.CatalogView, table core.TableID) int {
	n := 0
	for _, c := range s.Columns(table) {
		if c.Parent == nil {
			n++
		}
	}
	return n
}

func countFiles(s *core.CatalogView) int {
	n := 0
	for _, t := range s.AllTables() {
		n += len(s.DataFiles(t.ID))
	}
	return n
}

func ptrTo[T any](v T) *T { return &v }
