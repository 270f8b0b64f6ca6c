// Command moraine is the operator tool for moraine lakes.
//
//	moraine demo [-dir DIR]          create a lake on local disk and show it working
//	moraine inspect [flags] URI      print a lake's format, head, tables and snapshots
//	moraine migrate [flags] URI      bring a lake's catalog to the newest format
//	moraine move-wal [flags] URI NEW-WAL-URI  move a lake's WAL to another store
//
// URIs: a local directory (or file:///abs/dir), memory://name, or
// s3://bucket/prefix (S3 settings from flags or the AWS environment).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: moraine <command> [flags]

commands:
  demo      create a lake under a local directory and show commits, a follower and the result
  inspect   print a lake's format, head, tables and recent snapshots
  migrate   bring a lake's catalog to the newest format (or finish an interrupted migration)
  adopt     make a lake log-resident with the in-tree commit log (many writers, no server)
  fold      fold a log-resident lake's commit log into its store once and truncate it
  move-wal  move a lake's write-ahead log to another object store (or back)

Run 'moraine <command> -h' for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(ctx, args[1:], stdout)
	case "inspect":
		err = runInspect(ctx, args[1:], stdout)
	case "migrate":
		err = runMigrate(ctx, args[1:], stdout)
	case "adopt":
		err = runAdopt(ctx, args[1:], stdout)
	case "fold":
		err = runFold(ctx, args[1:], stdout)
	case "move-wal":
		err = runMoveWal(ctx, args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "moraine: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "moraine %s: %v\n", args[0], err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError marks bad command-line input (exit status 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// parseArgs parses a command's flags and checks that exactly n arguments
// follow them; otherwise it prints the command's usage and returns a
// usageError saying what the command takes.
func parseArgs(fs *flag.FlagSet, args []string, n int, takes string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != n {
		fs.Usage()
		return usageError{fmt.Sprintf("%s takes %s", fs.Name(), takes)}
	}
	return nil
}
