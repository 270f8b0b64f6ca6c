package core

import (
	"errors"
	"fmt"
)

// Kind classifies every error the catalog returns. Test with errors.Is
// against a Kind (errors.Is(err, core.CommitConflict)) or use KindOf.
type Kind int

// The error kinds (ARCHITECTURE.md §5). Their numeric values are not a wire
// format; the extension maps them to its own pinned codes.
const (
	Internal Kind = iota
	NotFound
	AlreadyExists
	Constraint
	CommitConflict
	RetryExhausted
	Corruption
	Store
	InvalidArgument
	Interrupted
	Fenced
	Migration
	SnapshotExpired
	Unsupported
	OpenRaced
	Configuration
	OutcomeUnknown
)

var kindNames = map[Kind]string{
	Internal:        "internal error",
	NotFound:        "not found",
	AlreadyExists:   "already exists",
	Constraint:      "constraint violation",
	CommitConflict:  "commit conflict",
	RetryExhausted:  "retry budget exhausted",
	Corruption:      "corruption",
	Store:           "store error",
	InvalidArgument: "invalid argument",
	Interrupted:     "interrupted",
	Fenced:          "writer fenced",
	Migration:       "migration required",
	SnapshotExpired: "snapshot expired",
	Unsupported:     "unsupported",
	OpenRaced:       "open raced",
	Configuration:   "configuration",
	OutcomeUnknown:  "outcome unknown",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error implements error so a Kind can be an errors.Is target.
func (k Kind) Error() string { return k.String() }

// Error is the catalog's one error type.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // cause, if any

	needsLog bool // a log-resident catalog refused for want of a provider
	claimed  bool // an explicit commit refused for a peer's claim (claim.go)
}

// NeedsCommitLog reports whether err is the refusal a log-resident catalog
// gives an open without a commit-log provider (kind Migration): opening it
// again with a provider (CatalogOptions.CommitLog) is the way in.
func NeedsCommitLog(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.needsLog
}

// ClaimRefused reports whether err is a CommitConflict caused by a peer's
// claim (claim.go): an explicit commit prepared on the claim (refused with
// nothing written), or one whose head moved by the claim slot alone, or
// whose slot the claim slot took. It is a turn given, not a race lost: the
// committer that retries need not claim for it.
func ClaimRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.claimed
}

func (e *Error) Error() string {
	s := e.Kind.String() + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches the error's Kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Unwrap exposes the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns err's kind (Internal for foreign errors, and for nil).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// errorf builds an *Error.
func errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// wrapf builds an *Error with a cause.
func wrapf(k Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: cause}
}
