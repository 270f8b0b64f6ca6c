// Package countinglog is a commit log built outside moraine's module
// against its public API only: moraine's in-tree commit log, wrapped so
// that every slot it offers is counted. The count goes to the file named
// by MORAINE_COUNTING_LOG (one line per Offer: the process id and whether
// the slot was won), which is how test/glue tells that an extension built
// from this library's glue used it.
package countinglog

import (
	"context"
	"fmt"
	"os"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/provider"
)

// New returns the counting commit log.
func New() core.CommitLogProvider { return &counting{inner: provider.New(provider.Options{})} }

type counting struct{ inner core.CommitLogProvider }

func (p *counting) WriterInit(s objstore.Store, path string) slate.WriterInit {
	return p.inner.WriterInit(s, path)
}

func (p *counting) Reader(s objstore.Store, path string) slate.WalReader {
	return p.inner.Reader(s, path)
}

func (p *counting) Committer(s objstore.Store, path string) core.Committer {
	c := p.inner.Committer(s, path)
	if c == nil {
		return nil
	}
	return &committer{Committer: c}
}

func (p *counting) Session() core.CommitLogProvider {
	s := p.inner.Session()
	if s == nil {
		return nil
	}
	return &counting{inner: s}
}

type committer struct{ core.Committer }

func (c *committer) Offer(ctx context.Context, batch core.LogBatch) (core.OfferResult, error) {
	res, err := c.Committer.Offer(ctx, batch)
	if name := os.Getenv("MORAINE_COUNTING_LOG"); name != "" && err == nil {
		if f, ferr := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); ferr == nil {
			fmt.Fprintf(f, "%d %v\n", os.Getpid(), res.Won)
			f.Close()
		}
	}
	return res, err
}

// Probe passes the contention policy's look through (core.SlotProber).
func (c *committer) Probe(ctx context.Context, slot uint64) ([]core.LogBatch, error) {
	if p, ok := c.Committer.(core.SlotProber); ok {
		return p.Probe(ctx, slot)
	}
	return nil, nil
}
