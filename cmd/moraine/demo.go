package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

func runDemo(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	dir := fs.String("dir", "moraine-demo", "local directory for the lake (created if missing; kept afterwards)")
	writers := fs.Int("writers", 4, "concurrent committing goroutines")
	commits := fs.Int("commits", 5, "commits per goroutine")
	pace := fs.Duration("pace", 30*time.Millisecond, "pause between one goroutine's commits (so the follower visibly follows)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: moraine demo [flags]\n\nCreates (or reuses) a lake in a local directory, commits schemas, tables,\ndata-file registrations and inlined rows from several goroutines while a\nread-only handle follows along, prints the result and leaves the lake on\ndisk for 'moraine inspect'.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return usageError{"demo takes no arguments"}
	}
	if *writers < 1 || *commits < 1 {
		return usageError{fmt.Sprintf("-writers (%d) and -commits (%d) must be at least 1", *writers, *commits)}
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	store, err := objstore.NewLocal(abs, 0)
	if err != nil {
		return err
	}
	step := func(format string, a ...any) { fmt.Fprintf(out, "==> "+format+"\n", a...) }

	step("opening the lake at %s (read-write; created if empty)", abs)
	cat, err := core.Open(ctx, store, core.CatalogOptions{DataPath: filepath.Join(abs, "data") + "/"})
	if err != nil {
		return err
	}
	defer cat.Close(ctx)
	head, err := cat.Head(ctx)
	if err != nil {
		return err
	}
	step("head is snapshot %d (batch %d)", head.SnapshotID, head.BatchSeq)

	step("opening a read-only follower that polls every 50ms")
	follower, err := core.OpenReadOnly(ctx, store, core.CatalogOptions{ReaderPollInterval: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	defer follower.Close(ctx)
	var outMu sync.Mutex
	say := func(format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		var seen core.SnapshotID
		if s, err := follower.Snapshot(followCtx); err == nil {
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
			s, err := follower.Snapshot(followCtx)
			if err != nil || s.ID() == seen {
				continue
			}
			say("    follower: now at snapshot %d (%d tables, %d data files)", s.ID(), len(s.AllTables()), countFiles(s))
			seen = s.ID()
		}
	}()

	step("creating tables events and users in schema main")
	id, err := cat.Commit(ctx, func(t *core.Transaction) error {
		main, ok := t.Snapshot().SchemaByName("main")
		if !ok {
			return fmt.Errorf("schema main is missing")
		}
		if _, ok := t.Snapshot().TableByName("main", "events"); !ok {
			if _, err := t.CreateTable(main.ID, "events", []core.ColumnDef{{Name: "id", Type: "int64"}, {Name: "kind", Type: "varchar"}, {Name: "at", Type: "timestamp"}}); err != nil {
				return err
			}
		}
		if _, ok := t.Snapshot().TableByName("main", "users"); !ok {
			if _, err := t.CreateTable(main.ID, "users", []core.ColumnDef{{Name: "id", Type: "int64"}, {Name: "name", Type: "varchar"}}); err != nil {
				return err
			}
		}
		t.SetAuthor("demo")
		t.SetCommitMessage("create tables")
		return nil
	})
	if err != nil {
		return err
	}
	step("snapshot %d: tables ready", id)
	created := id

	step("%d goroutines commit %d times each: data-file registrations into events, inlined rows into users", *writers, *commits)
	var wg sync.WaitGroup
	errs := make(chan error, *writers)
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < *commits; i++ {
				var what string
				id, err := cat.Commit(ctx, func(t *core.Transaction) error {
					s := t.Snapshot()
					if i%2 == 0 {
						ev, _ := s.TableByName("main", "events")
						path := fmt.Sprintf("events/part-%d-%d.parquet", w, i)
						_, err := t.RegisterDataFile(core.DataFileDef{TableID: ev.ID, Path: path, PathIsRelative: true,
							RecordCount: uint64(100 * (i + 1)), FileSizeBytes: uint64(4096 * (i + 1)), FooterSize: 512})
						what = "registered data file " + path
						return err
					}
					users, _ := s.TableByName("main", "users")
					name := fmt.Sprintf("user-%d-%d", w, i)
					uid := int64(w*1000 + i)
					_, err := t.InlineInsert(users.ID, [][]core.Value{{{Int: &uid}, {String: &name}}})
					what = "inlined user " + name
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				say("    writer %d: snapshot %d %s", w, id, what)
				time.Sleep(*pace)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}

	step("altering: add column users.email, rename events to event_log")
	if _, err := cat.Commit(ctx, func(t *core.Transaction) error {
		s := t.Snapshot()
		users, _ := s.TableByName("main", "users")
		if _, err := t.AddColumn(users.ID, core.ColumnDef{Name: "email", Type: "varchar"}); err != nil {
			return err
		}
		ev, _ := s.TableByName("main", "events")
		return t.RenameTable(ev.ID, "event_log")
	}); err != nil {
		return err
	}

	step("waiting for the follower to catch up")
	final, err := cat.Head(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := follower.Refresh(ctx); err != nil {
			return err
		}
		s, err := follower.Snapshot(ctx)
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

	old, err := cat.SnapshotAt(ctx, created)
	if err != nil {
		return err
	}
	ev, _ := old.TableByName("main", "events")
	step("time travel: at snapshot %d table events had %d data files (now event_log has %d)", created, len(old.DataFiles(ev.ID)), countFiles(mustSnap(ctx, cat)))

	fmt.Fprintln(out)
	if err := printCatalog(ctx, out, abs, cat, 0); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe lake stays in %s. Inspect it again with:\n  go run ./cmd/moraine inspect %s\n", abs, abs)
	return nil
}

func countFiles(s *core.CatalogSnapshot) int {
	n := 0
	for _, t := range s.AllTables() {
		n += len(s.DataFiles(t.ID))
	}
	return n
}

func mustSnap(ctx context.Context, c *core.Catalog) *core.CatalogSnapshot {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return &core.CatalogSnapshot{}
	}
	return s
}
