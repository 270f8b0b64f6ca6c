// Package codes holds the error codes of the extension's C ABI
// (cshim/moraine.h, MORAINE_*). Their numeric values are wire format,
// pinned to the original moraine's (reference-moraine §6.4): never
// renumber or reuse one.
package codes

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/moraine-go/moraine/core"
)

// Code is an ABI error code.
type Code int32

// The codes. 0 is success.
const (
	OK              Code = 0
	NotFound        Code = 1
	AlreadyExists   Code = 2
	Constraint      Code = 3
	CommitConflict  Code = 4
	Corruption      Code = 5
	Store           Code = 6
	InvalidArgument Code = 7
	Internal        Code = 8
	Interrupted     Code = 9
	RetryExhausted  Code = 10
	Fenced          Code = 11
	Migration       Code = 12
	SnapshotExpired Code = 13
	Unsupported     Code = 14
	OpenRaced       Code = 15
	OutcomeUnknown  Code = 16
)

var names = [...]string{
	OK: "OK", NotFound: "NOT_FOUND", AlreadyExists: "ALREADY_EXISTS", Constraint: "CONSTRAINT",
	CommitConflict: "COMMIT_CONFLICT", Corruption: "CORRUPTION", Store: "STORE", InvalidArgument: "INVALID_ARGUMENT",
	Internal: "INTERNAL", Interrupted: "INTERRUPTED", RetryExhausted: "RETRY_EXHAUSTED", Fenced: "FENCED",
	Migration: "MIGRATION", SnapshotExpired: "SNAPSHOT_EXPIRED", Unsupported: "UNSUPPORTED", OpenRaced: "OPEN_RACED",
	OutcomeUnknown: "OUTCOME_UNKNOWN",
}

// String is the code's name as moraine.h spells it without the MORAINE_
// prefix ("NOT_FOUND"); unknown codes are "UNKNOWN".
func (c Code) String() string {
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return "UNKNOWN"
}

// fromKind maps each core kind to its code. Configuration has no code of
// its own (STORE, as in the original); a commit whose outcome is unknown
// has its own (OUTCOME_UNKNOWN: it may have landed, so it is neither an
// interrupt, after which a user re-runs the statement, nor a conflict,
// which DuckLake retries).
var fromKind = map[core.Kind]Code{
	core.Internal:        Internal,
	core.NotFound:        NotFound,
	core.AlreadyExists:   AlreadyExists,
	core.Constraint:      Constraint,
	core.CommitConflict:  CommitConflict,
	core.RetryExhausted:  RetryExhausted,
	core.Corruption:      Corruption,
	core.Store:           Store,
	core.InvalidArgument: InvalidArgument,
	core.Interrupted:     Interrupted,
	core.Fenced:          Fenced,
	core.Migration:       Migration,
	core.SnapshotExpired: SnapshotExpired,
	core.Unsupported:     Unsupported,
	core.OpenRaced:       OpenRaced,
	core.Configuration:   Store,
	core.OutcomeUnknown:  OutcomeUnknown,
}

// Of returns err's code: OK for nil, the mapping of its core kind, STORE
// for a core kind this table does not know (a newer core), INTERNAL for an
// error that is not a *core.Error.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var ce *core.Error
	if !errors.As(err, &ce) {
		return Internal
	}
	if c, ok := fromKind[ce.Kind]; ok {
		return c
	}
	return Store
}

// Message is err's text as the C side gets it: NUL bytes (which would end
// a C string early) are replaced.
func Message(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "\x00", "\uFFFD")
}

// Recovered is the error an export returns for a value recovered from a
// panic: INTERNAL, its message naming the panic and carrying the stack.
func Recovered(r any) error {
	return &core.Error{Kind: core.Internal, Msg: fmt.Sprintf("panic in the moraine library: %v\n%s", r, debug.Stack())}
}

// Guard is the first statement of every export of the C ABI, deferred as
// itself (recover stops a panic only when the deferred function calls it
// directly, so Guard must not be wrapped in a closure):
//
//	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
//
// On a panic it recovers, so the panic never unwinds into the C caller, and
// hands set the Recovered error (an export without an error out-parameter
// passes a set that resets its results). Without a panic it does nothing.
func Guard(set func(error)) {
	if r := recover(); r != nil {
		set(Recovered(r))
	}
}
