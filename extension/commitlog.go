//go:build commitlog

package main

import (
	"log/slog"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/provider"
)

// The commit-log build (`make extension-commitlog`, build tag commitlog)
// registers the in-tree commit log when DuckDB loads the extension: every
// read-write moraine_attach is then a committer (any number of processes
// commit to one lake through create-if-absent slot objects, RFC 0024), a
// read-only attach a reader (COMMIT_LOG_TAIL: tailing the log). The
// default build registers nothing and stays on the single-writer path.
func init() {
	commitLogBuild = true
	if err := core.RegisterCommitLog(provider.New(provider.Options{})); err != nil {
		slog.Error("moraine: registering the in-tree commit log", "err", err)
	}
}
