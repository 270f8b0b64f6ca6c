package core

import (
	"log/slog"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// CatalogOptions configure Open and OpenReadOnly. The zero value is a
// sensible single-writer configuration.
type CatalogOptions struct {
	// Path is the catalog's prefix inside the store ("" = the store's root).
	Path string

	// FlushInterval paces the writer's WAL uploads. 0 (the default) uploads
	// as soon as a commit is waiting (one upload in flight; commits that
	// arrive meanwhile share the next one); a positive interval batches
	// uploads on that cadence, trading commit latency for fewer PUTs.
	FlushInterval time.Duration

	// ReaderPollInterval is the freshness bound of a read-only handle: how
	// often it looks for new commits (default 10 s). A read arriving when
	// the last poll is overdue (a tick half an interval late; a lazy commit-
	// log reader's idle spell) polls first, so reads stay within it. It also
	// applies to the commit log's readers.
	ReaderPollInterval time.Duration

	// Checkpoint pins a read-only open to an engine checkpoint (UUID). A
	// read-write open refuses it. The handle never polls and writes nothing.
	Checkpoint string

	// FollowLatest makes a read-only open write nothing to the store (no
	// managed checkpoint): inspection tools use it. Such a reader can fail
	// if garbage collection removes files under it; retry the read.
	FollowLatest bool

	// DataPath and Encrypted are recorded in the catalog's global options
	// when the catalog is created (ducklake_metadata data_path, encrypted);
	// later opens ignore them.
	DataPath  string
	Encrypted bool

	// LeaveEmpty makes a read-write open of an empty store leave it empty
	// instead of writing genesis: the handle holds no lake (HasLake is
	// false) and every read or commit is refused with NotFound. The DuckDB
	// storage extension opens this way, because DuckLake decides whether to
	// create a lake by looking at the store. On the commit-log path too: an
	// empty store is adopted empty, and the first slot after the adoption
	// stamp is the commit that creates the lake (commitlog_roles.go). A
	// read-only open with LeaveEmpty of a store without a catalog that is a
	// named lake (NamedLake) or holds named lakes (lakes.go) holds no lake
	// either, instead of being refused.
	LeaveEmpty bool

	// NamedLake is the name of the named lake the store is (LakeStore), ""
	// for a store's own lake.
	NamedLake string

	// WalStore keeps the engine's WAL (or the commit log) in another object
	// store, for example a low-latency bucket. It must stay the same for the
	// catalog's lifetime unless moved with MoveWalStore.
	WalStore objstore.Store

	// CommitLog is this open's commit-log provider; it wins over the one
	// registered with RegisterCommitLog. There is no way to ignore the
	// registration for one open (RFC 0024).
	CommitLog CommitLogProvider

	// CommitLogTail makes a read-only open tail the commit log, and
	// CommitLogPollInterval sets a committer's poll. Both are ignored when
	// no commit-log provider is present (RFC 0024).
	CommitLogTail         bool
	CommitLogPollInterval time.Duration

	// Library-only commit-log knobs (RFC 0024), all defaulted:
	// CommitLogFoldSlots: every this many slots the committer that lands
	// one folds the log into the store (default 64; negative: never).
	// CommitLogRetention: truncation keeps slots younger than this (default
	// 10 min). CommitLogFoldPoll: a holder (TakeStore) folds peers' slots
	// this often (default 1 s).
	CommitLogFoldSlots int
	CommitLogRetention time.Duration
	CommitLogFoldPoll  time.Duration

	// MaxCommitAttempts bounds how often Commit re-runs a closure after
	// benign lost races (default 10 for a single writer). On a commit log,
	// where races between committers are routine, the default bound is in
	// time instead (CommitLogRetryBudget); an explicit MaxCommitAttempts
	// applies there too.
	MaxCommitAttempts int
	// CommitLogRetryBudget: on a commit log, how long Commit keeps re-running
	// a closure that loses slots to other committers before it gives up with
	// RetryExhausted naming the races it lost (default 2 minutes; negative:
	// no bound in time).
	CommitLogRetryBudget time.Duration

	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger

	// Engine overrides engine tunables (tests, benchmarks). Its
	// FlushInterval is taken from FlushInterval above.
	Engine slate.Settings

	// DisableRetry hands the engine the store as given instead of wrapped
	// in the retrying transport (the default), e.g. for fault-injection
	// tests.
	DisableRetry bool
}

const (
	defaultReaderPoll     = DefaultReaderPollInterval
	defaultCommitAttempts = 10
	defaultLogRetryBudget = 2 * time.Minute
	defaultFoldSlots      = 64
	defaultLogRetention   = 10 * time.Minute
	defaultFoldPoll       = time.Second
	defaultCommitLogPoll  = time.Second
	maxGroupMembers       = 64
)

// withDefaults fills every unset option. MaxCommitAttempts stays unset
// (0) when it was: its default depends on the open (attemptBound).
func (o CatalogOptions) withDefaults() CatalogOptions {
	if o.ReaderPollInterval == 0 {
		o.ReaderPollInterval = defaultReaderPoll
	}
	if o.MaxCommitAttempts < 0 {
		o.MaxCommitAttempts = 0
	}
	if o.CommitLogRetryBudget == 0 {
		o.CommitLogRetryBudget = defaultLogRetryBudget
	}
	if o.CommitLogPollInterval == 0 {
		o.CommitLogPollInterval = defaultCommitLogPoll
	}
	if o.CommitLogFoldSlots == 0 {
		o.CommitLogFoldSlots = defaultFoldSlots
	}
	if o.CommitLogRetention == 0 {
		o.CommitLogRetention = defaultLogRetention
	}
	if o.CommitLogFoldPoll == 0 {
		o.CommitLogFoldPoll = defaultFoldPoll
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// attemptBound is how many benign lost races a commit may re-run after:
// MaxCommitAttempts when set, else 10 on the single-writer path; a
// commit-log committer without one is bounded in time only
// (CommitLogRetryBudget), ok false.
func (o CatalogOptions) attemptBound(commitLog bool) (n int, ok bool) {
	switch {
	case o.MaxCommitAttempts > 0:
		return o.MaxCommitAttempts, true
	case commitLog:
		return 0, false
	}
	return defaultCommitAttempts, true
}

// foldSlots is the fold cadence in slots (0: never).
func (o CatalogOptions) foldSlots() uint64 {
	if o.CommitLogFoldSlots < 0 {
		return 0
	}
	return uint64(o.CommitLogFoldSlots)
}

// readerOptions are a read-only open's engine reader options: the poll,
// FollowLatest, and a checkpoint lifetime of at least twice the poll.
func (o CatalogOptions) readerOptions() slate.ReaderOptions {
	ro := slate.ReaderOptions{PollInterval: o.ReaderPollInterval}
	if lifetime := 3 * o.ReaderPollInterval; lifetime > 10*time.Minute {
		ro.CheckpointLifetime = lifetime // the engine wants at least twice the poll
	}
	if o.FollowLatest {
		ro.Mode = slate.ReaderFollowLatest
	}
	return ro
}

// engineSettings derives the engine's settings.
func (o CatalogOptions) engineSettings() slate.Settings {
	s := o.Engine
	switch {
	case o.FlushInterval > 0:
		s.FlushInterval = o.FlushInterval
	default:
		s.FlushInterval = slate.FlushContinuous
	}
	return s
}

// DefaultReaderPollInterval is ReaderPollInterval when it is not set.
const DefaultReaderPollInterval = 10 * time.Second
