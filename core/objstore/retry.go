package objstore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryOptions configure WithRetry. Zero values take the defaults.
type RetryOptions struct {
	// MaxAttempts bounds the tries of one call (default 8).
	MaxAttempts int
	// BaseDelay is the first backoff (default 10ms); each further try
	// doubles it up to MaxDelay (default 1s). The actual sleep is drawn
	// uniformly from [0, delay] ("full jitter").
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Logger receives one debug line per retry (default slog.Default()).
	Logger *slog.Logger
}

// RetryingStore retries transient failures with bounded, jittered
// exponential backoff, and resolves ambiguous conditional writes:
//
//   - Reads, Put and Delete are idempotent and are simply retried.
//   - PutIfAbsent: when a try failed transiently (it may have landed) and a
//     later try meets ErrExists, the object is read back; if it holds exactly
//     the bytes being written, the earlier try landed and the call succeeds.
//     Zero-byte payloads cannot be told apart from another writer's, so for
//     them ErrExists is returned (the conservative answer: the key is taken,
//     perhaps by us). If every try fails transiently the result is
//     ErrOutcomeUnknown.
//   - PutIfMatch: when a try failed transiently and a later try meets
//     ErrPrecondition, the object is read back; our bytes mean our write
//     landed (success, with the current ETag); anything else cannot be
//     resolved and is ErrOutcomeUnknown, as is exhausting the tries.
//
// Non-transient errors (not found, exists, precondition, invalid, access
// denied, a cancelled context) are returned at once.
type RetryingStore struct {
	inner Store
	opts  RetryOptions
}

// WithRetry wraps s in the retrying transport.
func WithRetry(s Store, opts RetryOptions) *RetryingStore {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 10 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &RetryingStore{inner: s, opts: opts}
}

// Inner returns the wrapped store.
func (r *RetryingStore) Inner() Store { return r.inner }

func (r *RetryingStore) String() string { return r.inner.String() }

// backoff sleeps before try number attempt (1-based, > 0).
func (r *RetryingStore) backoff(ctx context.Context, op, key string, attempt int, cause error) error {
	d := r.opts.BaseDelay << (attempt - 1)
	if d > r.opts.MaxDelay || d <= 0 {
		d = r.opts.MaxDelay
	}
	sleep := time.Duration(rand.Int64N(int64(d) + 1))
	r.opts.Logger.Debug("objstore retry", "op", op, "key", key, "attempt", attempt+1, "sleep", sleep, "cause", cause)
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctxError(op, key, ctx.Err())
	case <-t.C:
		return nil
	}
}

// do retries fn while it fails transiently.
func do[T any](r *RetryingStore, ctx context.Context, op, key string, fn func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for attempt := 0; attempt < r.opts.MaxAttempts; attempt++ {
		if attempt > 0 {
			if berr := r.backoff(ctx, op, key, attempt, err); berr != nil {
				return v, berr
			}
		}
		v, err = fn()
		if err == nil || !IsTransient(err) {
			return v, err
		}
	}
	return v, err
}

func (r *RetryingStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	type res struct {
		b []byte
		i ObjectInfo
	}
	v, err := do(r, ctx, "get", key, func() (res, error) {
		b, i, err := r.inner.Get(ctx, key)
		return res{b, i}, err
	})
	return v.b, v.i, err
}

func (r *RetryingStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	return do(r, ctx, "get-range", key, func() ([]byte, error) { return r.inner.GetRange(ctx, key, off, length) })
}

func (r *RetryingStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	return do(r, ctx, "head", key, func() (ObjectInfo, error) { return r.inner.Head(ctx, key) })
}

func (r *RetryingStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	type res struct {
		p    []ObjectInfo
		more bool
	}
	v, err := do(r, ctx, "list", prefix, func() (res, error) {
		p, more, err := r.inner.ListPage(ctx, prefix, startAfter)
		return res{p, more}, err
	})
	return v.p, v.more, err
}

func (r *RetryingStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	return do(r, ctx, "put", key, func() (string, error) { return r.inner.Put(ctx, key, data) })
}

func (r *RetryingStore) Delete(ctx context.Context, key string) error {
	_, err := do(r, ctx, "delete", key, func() (struct{}, error) { return struct{}{}, r.inner.Delete(ctx, key) })
	return err
}

// readBack fetches key and reports whether it holds data (with its ETag).
func (r *RetryingStore) readBack(ctx context.Context, op, key string, data []byte) (bool, string, error) {
	got, info, err := r.Get(ctx, key)
	if err != nil {
		return false, "", err
	}
	return bytes.Equal(got, data), info.ETag, nil
}

func (r *RetryingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	const op = "put-if-absent"
	var lastErr error
	ambiguous := false
	for attempt := 0; attempt < r.opts.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := r.backoff(ctx, op, key, attempt, lastErr); err != nil {
				return "", err
			}
		}
		etag, err := r.inner.PutIfAbsent(ctx, key, data)
		switch {
		case err == nil:
			return etag, nil
		case errors.Is(err, ErrExists) && ambiguous && len(data) > 0:
			ours, etag, rerr := r.readBack(ctx, op, key, data)
			if rerr != nil {
				if errors.Is(rerr, ErrNotFound) {
					// Taken, then deleted before we could look: not ours to claim.
					return "", err
				}
				return "", &Error{Op: op, Key: key, Kind: ErrOutcomeUnknown, Msg: "could not read back after an ambiguous try", Err: rerr}
			}
			if ours {
				return etag, nil
			}
			return "", err
		case IsTransient(err):
			ambiguous = true
			lastErr = err
		default:
			return "", err
		}
	}
	return "", &Error{Op: op, Key: key, Kind: ErrOutcomeUnknown, Msg: "every try failed transiently; the object may or may not have been created", Err: lastErr}
}

func (r *RetryingStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	const op = "put-if-match"
	var lastErr error
	ambiguous := false
	for attempt := 0; attempt < r.opts.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := r.backoff(ctx, op, key, attempt, lastErr); err != nil {
				return "", err
			}
		}
		newTag, err := r.inner.PutIfMatch(ctx, key, data, etag)
		switch {
		case err == nil:
			return newTag, nil
		case ambiguous && (errors.Is(err, ErrPrecondition) || errors.Is(err, ErrNotFound)):
			ours, cur, rerr := r.readBack(ctx, op, key, data)
			if rerr == nil && ours {
				return cur, nil
			}
			return "", &Error{Op: op, Key: key, Kind: ErrOutcomeUnknown,
				Msg: "an earlier try may have landed and been overwritten since; re-read the object before deciding", Err: err}
		case IsTransient(err):
			ambiguous = true
			lastErr = err
		default:
			return "", err
		}
	}
	return "", &Error{Op: op, Key: key, Kind: ErrOutcomeUnknown, Msg: "every try failed transiently; the write may or may not have landed", Err: lastErr}
}

var _ Store = (*RetryingStore)(nil)
