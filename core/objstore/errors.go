package objstore

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error a Store returns matches at most one of the
// first five through errors.Is; ErrTransient may be combined with none of
// them (it marks failures worth retrying).
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrExists: PutIfAbsent found the key taken.
	ErrExists = errors.New("object already exists")
	// ErrPrecondition: PutIfMatch found a different ETag.
	ErrPrecondition = errors.New("object changed (etag precondition failed)")
	// ErrOutcomeUnknown: a conditional write may or may not have landed and
	// the retrying transport could not tell which.
	ErrOutcomeUnknown = errors.New("write outcome unknown")
	// ErrInvalid: the request itself is malformed (bad key, bad range, bad
	// URI or option). Retrying cannot help.
	ErrInvalid = errors.New("invalid request")
	// ErrTransient: a failure that may succeed if retried (5xx, throttling,
	// timeouts, connection resets).
	ErrTransient = errors.New("transient store failure")
	// ErrAccessDenied: credentials were refused.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoConditionalWrites: the store does not honour create-if-absent
	// (CheckConditionalPut): it let a second PutIfAbsent of one key
	// succeed.
	ErrNoConditionalWrites = errors.New("the store ignores conditional writes")
)

// Error is the one error type backends return. Kind is one of the sentinels
// above; Err, when set, is the underlying cause (an SDK or OS error).
type Error struct {
	Op   string // "get", "put-if-absent", ...
	Key  string
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := "objstore: " + e.Op
	if e.Key != "" {
		s += fmt.Sprintf(" %q", e.Key)
	}
	s += ": " + e.Kind.Error()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap exposes the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func newError(op, key string, kind error, msg string) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Msg: msg}
}

func newErrorf(op, key string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func wrapError(op, key string, kind error, cause error) *Error {
	return &Error{Op: op, Key: key, Kind: kind, Err: cause}
}

func errInvalidf(format string, args ...any) *Error {
	return &Error{Op: "request", Kind: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

// IsTransient reports whether err is worth retrying.
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }

// ctxError reports a cancelled or expired context; errors.Is matches
// context.Canceled / context.DeadlineExceeded. It is never transient.
func ctxError(op, key string, err error) *Error {
	return &Error{Op: op, Key: key, Kind: err}
}
