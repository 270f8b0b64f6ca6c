// Package glue is the few lines an enterprise build adds: blank-imported
// into the extension's Go half (make extension-glue
// COMMIT_LOG_GLUE=<this directory>), it registers the counting commit log.
package glue

import (
	"log/slog"

	"example.com/countinglog"
	"github.com/moraine-go/moraine/core"
)

func init() {
	if err := core.RegisterCommitLog(countinglog.New()); err != nil {
		slog.Error("countinglog: registering the commit log", "err", err)
	}
}
