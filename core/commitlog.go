package core

// commitlog.go: the commit-log plug boundary (RFC 0024, ARCHITECTURE.md §6).
//
// A commit-log provider lives outside this package (the in-tree one is
// package provider; a private library may supply another). The catalog
// reaches it only through the interfaces below, chosen per open from
// CatalogOptions.CommitLog, else the process-wide registration, else none.
// Without a provider the catalog is complete on the single-writer path and
// refuses log-resident stores.

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// CommitLogProvider hands the catalog the engine's WAL plugs over a commit
// log, and a protocol-free committer.
//
// Both plug methods receive the object store the catalog records as its log
// store (CatalogOptions.WalStore when set, else the catalog store), wrapped
// in the catalog's retrying transport, and the catalog's path within it.
type CommitLogProvider interface {
	// WriterInit returns a fresh WAL plug for an engine writer that folds
	// the log into the store (the engine consumes it at open). Its writer
	// acknowledges every append at once and writes nothing: the slot object
	// is the durable record. A row appended with seq Base.SeqBase+k belongs
	// to slot k, whose WAL id is Base.WalBase+k.
	WriterInit(logStore objstore.Store, path string) slate.WriterInit
	// Reader returns the WAL reader over the log (shared by every read
	// session of one open): WAL id Base.WalBase+k is slot k, its rows carry
	// seq Base.SeqBase+k.
	Reader(logStore objstore.Store, path string) slate.WalReader
	// Committer returns the committer, or nil for a reader-only provider.
	Committer(logStore objstore.Store, path string) Committer
	// Session returns a provider scoped to one open (fresh state for a
	// stateful provider), or nil to keep using this one. A catalog obtains
	// its reader and committer from the same session.
	Session() CommitLogProvider
}

// LogBase fixes how slots map onto the engine. It is chosen at adoption
// and never changes.
type LogBase struct {
	// WalBase is the WAL id of slot 0: just past every WAL id the store's
	// own WAL used (the engine's WAL ids may never move backwards).
	WalBase uint64
	// SeqBase is the engine seq of slot 0's rows: above every seq the store
	// held at adoption.
	SeqBase uint64
	// OriginBatchSeq is the head batch counter slot 0 stands on (the
	// catalog's commit_log_batch_origin).
	OriginBatchSeq uint64
}

// WalID returns slot's WAL id.
func (b LogBase) WalID(slot uint64) uint64 { return b.WalBase + slot }

// Seq returns the engine seq of slot's rows.
func (b LogBase) Seq(slot uint64) uint64 { return b.SeqBase + slot }

// SlotFor returns the slot a batch prepared against head races: every slot
// past the first carries exactly one head stamp and the batch counter
// advances by one per slot, so a batch whose stamp will be head.BatchSeq+1
// races slot head.BatchSeq+1-OriginBatchSeq. A stale head names a taken
// slot and loses, which re-prepares correctly.
func (b LogBase) SlotFor(head Head) uint64 { return head.BatchSeq + 1 - b.OriginBatchSeq }

// LogWrite is one staged write a slot carries: opaque key and value bytes,
// or a delete.
type LogWrite struct {
	Key    []byte
	Value  []byte
	Delete bool
}

// LogBatch is one batch as the committer offers it and as a slot holds it.
type LogBatch struct {
	TxnID       uuid.UUID
	Slot        uint64
	Head        Head   // the head the batch was prepared against (zero for the adoption stamp)
	ChangesMade string // for lost-race classification
	// DeletedDataFiles carries the snapshot's delete targets (classification).
	DeletedDataFiles []DataFileID
	Writes           []LogWrite
	// Committer identifies the catalog open that offered the batch (the
	// contention policy takes turns by it); zero in slots written before
	// it was recorded.
	Committer uuid.UUID
}

// OfferResult answers Committer.Offer.
type OfferResult struct {
	// Won is true when the batch holds its slot.
	Won bool
	// Landed lists, on a loss, every slot from the raced one to the tail
	// (the winners to fold, or to wait for, before the retry); it starts at
	// the truncation floor when the raced slot was already truncated.
	Landed []LogBatch
}

// Committer is the protocol-free face of a commit log (RFC 0024: "takes a
// transaction id, the validated head, the changes_made string, and the
// staged writes as opaque key and value bytes; answers won at sequence or
// lost, with every slot landed from the raced sequence on"). Envelopes, the
// race and hole detection are the provider's.
type Committer interface {
	// Base returns the log's base; ok is false while the log is unadopted.
	Base(ctx context.Context) (base LogBase, ok bool, err error)
	// Adopt races stamp as slot 0 with base. It returns slot 0's base and
	// stamp: ours when won is true, a peer's otherwise.
	Adopt(ctx context.Context, base LogBase, stamp LogBatch) (slot0Base LogBase, slot0Stamp LogBatch, won bool, err error)
	// Offer races batch.Slot. A write whose outcome cannot be resolved is
	// an error matching OutcomeUnknown.
	Offer(ctx context.Context, batch LogBatch) (OfferResult, error)
	// Read returns the slots in [from, through] (through 0: to the tail)
	// in order. A hole (a missing slot below a present one, above the
	// truncation floor) is a Corruption error, never an end of log; reading
	// below the floor is SnapshotExpired (wrapping slate.ErrWalTruncated).
	Read(ctx context.Context, from, through uint64) ([]LogBatch, error)
	// Tail returns the highest landed slot (ok false: none past the floor).
	Tail(ctx context.Context) (slot uint64, ok bool, err error)
}

// SlotProber is an optional Committer method the contention policy uses
// (contention.go): a committer waiting its turn asks whether peers took
// the slot before offering it.
type SlotProber interface {
	// Probe returns the slots landed from slot to the tail, in order, read
	// without a listing where it can; none when slot has not landed. It
	// says nothing about truncation.
	Probe(ctx context.Context, slot uint64) ([]LogBatch, error)
}

var (
	registryMu sync.Mutex
	registered CommitLogProvider
)

// RegisterCommitLog registers the process's commit-log provider. It may be
// called once per process; a second call fails with Configuration (one
// process, one library). An open whose CatalogOptions.CommitLog is set uses
// that provider instead.
func RegisterCommitLog(p CommitLogProvider) error {
	if p == nil {
		return errorf(InvalidArgument, "RegisterCommitLog: nil provider")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if registered != nil {
		return errorf(Configuration, "a commit-log provider is already registered in this process (one process, one library); pass CatalogOptions.CommitLog to use another for one open")
	}
	registered = p
	return nil
}

// CommitLogRegistered reports whether a commit-log provider is registered
// in this process (RegisterCommitLog): a program built with a commit log's
// glue has one, the single-writer build none.
func CommitLogRegistered() bool { return registeredCommitLog() != nil }

// registeredCommitLog returns the registered provider, if any.
func registeredCommitLog() CommitLogProvider {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registered
}

// providerFor picks an open's provider: the option, else the registry,
// else none. A stateful provider's Session scopes it to this open.
func providerFor(opts CatalogOptions) CommitLogProvider {
	p := opts.CommitLog
	if p == nil {
		p = registeredCommitLog()
	}
	if p == nil {
		return nil
	}
	if s := p.Session(); s != nil {
		return s
	}
	return p
}
