// Package storage is the Go half of the DuckDB storage extension
// (cshim/storage): the transactions DuckDB opens on an attached lake, the
// tables each sees and the scans of their rows, free of cgo. Package main
// exports it through the C ABI (cshim/moraine.h); the C++ catalog is a thin
// adapter over it.
//
// A Lake wraps one attached catalog. A Txn pins the lake's head when it
// begins: every table list and scan of the transaction reads that one
// head, so a commit landing meanwhile is not seen until the next
// transaction. Views are cached by head stamp, so transactions on an
// unchanged head share one materialization and make no store request.
//
// The mapping between DuckLake's tables and the catalog model is package
// ducklake's; this package knows transactions, scans and filters.
package storage

import (
	"context"
	"sync"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/ducklake"
)

// Catalog is what a Lake needs of an open catalog.
type Catalog interface {
	HasLake() bool
	Head(ctx context.Context) (core.Head, error)
	Dump(ctx context.Context) (*core.Dump, error)
}

// Lake is one attached lake as the storage extension serves it.
type Lake struct {
	cat Catalog

	mu   sync.Mutex
	view *ducklake.View // the latest materialized head
}

// NewLake serves cat.
func NewLake(cat Catalog) *Lake { return &Lake{cat: cat} }

// empty is the view of a store that holds no lake.
var empty, _ = ducklake.NewView(nil)

// current returns the view at the catalog's head, materializing it only
// when the head moved since the last one.
func (l *Lake) current(ctx context.Context) (*ducklake.View, error) {
	if !l.cat.HasLake() {
		return empty, nil
	}
	head, err := l.cat.Head(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	v := l.view
	l.mu.Unlock()
	if v != nil && v.Head() == head {
		return v, nil
	}
	d, err := l.cat.Dump(ctx)
	if err != nil {
		return nil, err
	}
	if v, err = ducklake.NewView(d); err != nil {
		return nil, err
	}
	l.mu.Lock()
	// Keep the newest: a slower materialization of an older head must not
	// replace a newer one.
	if l.view == nil || l.view.Head().BatchSeq <= v.Head().BatchSeq {
		l.view = v
	}
	l.mu.Unlock()
	return v, nil
}

// Txn is one DuckDB transaction's pinned view of the lake.
type Txn struct {
	view *ducklake.View
}

// Begin pins the lake's current head.
func (l *Lake) Begin(ctx context.Context) (*Txn, error) {
	v, err := l.current(ctx)
	if err != nil {
		return nil, err
	}
	return &Txn{view: v}, nil
}

// View is the pinned view.
func (t *Txn) View() *ducklake.View { return t.view }

// Tables lists the tables the transaction sees.
func (t *Txn) Tables() []*ducklake.Table { return t.view.Tables() }
