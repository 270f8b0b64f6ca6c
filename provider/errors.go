package provider

import (
	"errors"
	"fmt"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/slate"
)

// Package sentinels. Errors the package returns match them with errors.Is.
var (
	// ErrCorrupt: stored log bytes failed to decode or checksum, or the log
	// is inconsistent (a hole above the truncation floor, a slot whose
	// envelope names another slot, a base copy that disagrees with slot 0).
	// Errors matching it also match slate.ErrCorrupt, and, from a
	// Committer, core.Corruption.
	ErrCorrupt = errors.New("provider: corrupt commit log")
	// ErrNotAdopted: the log has no slot 0 yet, and the operation needs an
	// adopted log (a writer over the log, an offer).
	ErrNotAdopted = errors.New("provider: the commit log is not adopted")
	// ErrNotLanded: the engine applied a slot the log does not hold. The
	// writer closes with it: the store may never get ahead of the log.
	ErrNotLanded = errors.New("provider: slot applied to the store has not landed in the log")
)

// corruptError is a corruption finding. It matches ErrCorrupt and
// slate.ErrCorrupt, so the engine treats it as its own corruption.
type corruptError struct{ msg string }

func (e *corruptError) Error() string { return ErrCorrupt.Error() + ": " + e.msg }

func (e *corruptError) Is(target error) bool {
	return target == ErrCorrupt || target == slate.ErrCorrupt
}

func corruptf(format string, args ...any) error {
	return &corruptError{msg: fmt.Sprintf(format, args...)}
}

// truncatedf reports slots the log truncated (below the floor): the folded
// store holds them. It matches slate.ErrWalTruncated.
func truncatedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", slate.ErrWalTruncated, fmt.Sprintf(format, args...))
}

// coreErr converts an error for the Committer boundary, where core expects
// *core.Error values: corruption is core.Corruption, truncation
// core.SnapshotExpired (the slots asked for are gone from the log; the
// folded store holds them), a missing base core.NotFound, an argument
// refusal core.InvalidArgument, and anything else (a store failure) passes
// through unchanged for core to classify. The cause stays reachable with
// errors.Is.
func coreErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	msg := fmt.Sprintf(format, args...)
	switch {
	case errors.Is(err, ErrCorrupt):
		return &core.Error{Kind: core.Corruption, Msg: msg, Err: err}
	case errors.Is(err, slate.ErrWalTruncated):
		return &core.Error{Kind: core.SnapshotExpired, Msg: msg, Err: err}
	case errors.Is(err, ErrNotAdopted):
		return &core.Error{Kind: core.NotFound, Msg: msg, Err: err}
	case errors.Is(err, slate.ErrInvalid):
		return &core.Error{Kind: core.InvalidArgument, Msg: msg, Err: err}
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// outcomeUnknown is the Committer's answer to a write it cannot resolve.
func outcomeUnknown(cause error, format string, args ...any) error {
	return &core.Error{Kind: core.OutcomeUnknown, Msg: fmt.Sprintf(format, args...), Err: cause}
}

func invalidf(format string, args ...any) error {
	return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}
