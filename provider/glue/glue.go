// Package glue links the in-tree commit log into a program: importing it
// (blank) registers provider.New's commit log in the process's registry
// (core.RegisterCommitLog), so every read-write open without a per-open
// provider is a committer. It is the glue of the moraine_commitlog
// extension (MORAINE_GO_GLUE=provider/glue, `make extension-commitlog`),
// and the example of what an out-of-tree commit log's glue holds.
package glue

import (
	"log/slog"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/provider"
)

func init() {
	if err := core.RegisterCommitLog(provider.New(provider.Options{})); err != nil {
		slog.Error("moraine: registering the in-tree commit log", "err", err)
	}
}
