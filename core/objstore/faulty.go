package objstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrInjected is the cause of every failure a FaultyStore injects; the
// returned error's kind is ErrTransient, so errors.Is matches both.
var ErrInjected = errors.New("injected fault")

// FaultyStore injects failures for tests. All rules are safe to change
// while the store is in use.
//
//   - FailNth(op, n): the n-th call (1-based, counted from when the rule is
//     set) of that kind fails before reaching the inner store.
//   - LoseAckNth(op, n): the n-th write call of that kind reaches the inner
//     store and lands, then reports a transient error ("lost ack").
//   - FreezeAfter(k): the next k write calls reach the inner store; every
//     write after them fails without landing, as if the process died. Reads
//     keep working. Used by crash sweeps: run an operation with k = 0, 1, 2,
//     ... and reopen on the inner store each time.
//   - SetLatency(d): every call sleeps d first (honouring ctx).
type FaultyStore struct {
	inner Store

	mu       sync.Mutex
	calls    [numOps]int64 // calls seen since the op's rule was set
	failAt   [numOps]int64 // 0: no rule
	loseAt   [numOps]int64
	frozen   bool
	budget   int64 // writes left before freezing; < 0: no freeze rule
	writes   int64 // write calls that reached the inner store
	latency  time.Duration
	injected int64
}

// NewFaulty wraps s; with no rules set it passes everything through.
func NewFaulty(s Store) *FaultyStore { return &FaultyStore{inner: s, budget: -1} }

// Inner returns the wrapped store.
func (f *FaultyStore) Inner() Store { return f.inner }

// FailNth makes the n-th call of op (from now) fail with a transient error.
func (f *FaultyStore) FailNth(op Op, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op] = 0
	f.failAt[op] = int64(n)
}

// LoseAckNth makes the n-th call of the write op (from now) land and then
// report a transient error.
func (f *FaultyStore) LoseAckNth(op Op, n int) {
	if !op.IsWrite() {
		panic("objstore: LoseAckNth on a read op")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op] = 0
	f.loseAt[op] = int64(n)
}

// FreezeAfter lets k more write calls through, then fails every write.
// k < 0 removes the rule and unfreezes.
func (f *FaultyStore) FreezeAfter(k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.budget = int64(k)
	f.frozen = k == 0
	if k < 0 {
		f.frozen = false
	}
}

// Frozen reports whether writes are failing because of FreezeAfter.
func (f *FaultyStore) Frozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

// Writes returns how many write calls reached the inner store.
func (f *FaultyStore) Writes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// Injected returns how many faults were injected so far.
func (f *FaultyStore) Injected() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// SetLatency adds d before every call.
func (f *FaultyStore) SetLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

// Reset removes every rule.
func (f *FaultyStore) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failAt = [numOps]int64{}
	f.loseAt = [numOps]int64{}
	f.frozen = false
	f.budget = -1
	f.latency = 0
}

type verdict int

const (
	pass verdict = iota
	fail
	loseAck
)

// admit decides the fate of one call.
func (f *FaultyStore) admit(ctx context.Context, op Op) (verdict, error) {
	f.mu.Lock()
	lat := f.latency
	f.calls[op]++
	n := f.calls[op]
	v := pass
	switch {
	case f.failAt[op] != 0 && n == f.failAt[op]:
		v = fail
		f.failAt[op] = 0
	case op.IsWrite() && f.frozen:
		v = fail
	case op.IsWrite() && f.loseAt[op] != 0 && n == f.loseAt[op]:
		v = loseAck
		f.loseAt[op] = 0
	}
	if op.IsWrite() && v != fail {
		if f.budget == 0 {
			f.frozen = true
			v = fail
		} else {
			if f.budget > 0 {
				f.budget--
			}
			f.writes++
		}
	}
	if v != pass {
		f.injected++
	}
	f.mu.Unlock()
	if lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-ctx.Done():
			t.Stop()
			return fail, ctxError(op.String(), "", ctx.Err())
		case <-t.C:
		}
	}
	return v, nil
}

func injected(op Op, key, what string) error {
	return &Error{Op: op.String(), Key: key, Kind: ErrTransient, Msg: what, Err: ErrInjected}
}

func (f *FaultyStore) String() string { return f.inner.String() }

func (f *FaultyStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	if v, err := f.admit(ctx, OpGet); err != nil || v == fail {
		return nil, ObjectInfo{}, orInjected(err, OpGet, key)
	}
	return f.inner.Get(ctx, key)
}

func (f *FaultyStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if v, err := f.admit(ctx, OpGetRange); err != nil || v == fail {
		return nil, orInjected(err, OpGetRange, key)
	}
	return f.inner.GetRange(ctx, key, off, length)
}

func (f *FaultyStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if v, err := f.admit(ctx, OpHead); err != nil || v == fail {
		return ObjectInfo{}, orInjected(err, OpHead, key)
	}
	return f.inner.Head(ctx, key)
}

func (f *FaultyStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	if v, err := f.admit(ctx, OpList); err != nil || v == fail {
		return nil, false, orInjected(err, OpList, prefix)
	}
	return f.inner.ListPage(ctx, prefix, startAfter)
}

func orInjected(err error, op Op, key string) error {
	if err != nil {
		return err
	}
	return injected(op, key, "injected failure")
}

// write runs one write call under the rules.
func (f *FaultyStore) write(ctx context.Context, op Op, key string, fn func() (string, error)) (string, error) {
	v, err := f.admit(ctx, op)
	if err != nil {
		return "", err
	}
	switch v {
	case fail:
		return "", injected(op, key, "injected failure (write not landed)")
	case loseAck:
		if _, err := fn(); err != nil {
			return "", err
		}
		return "", injected(op, key, "injected lost ack (write landed)")
	}
	return fn()
}

func (f *FaultyStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	return f.write(ctx, OpPut, key, func() (string, error) { return f.inner.Put(ctx, key, data) })
}

func (f *FaultyStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return f.write(ctx, OpPutIfAbsent, key, func() (string, error) { return f.inner.PutIfAbsent(ctx, key, data) })
}

func (f *FaultyStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return f.write(ctx, OpPutIfMatch, key, func() (string, error) { return f.inner.PutIfMatch(ctx, key, data, etag) })
}

func (f *FaultyStore) Delete(ctx context.Context, key string) error {
	_, err := f.write(ctx, OpDelete, key, func() (string, error) { return "", f.inner.Delete(ctx, key) })
	return err
}

var _ Store = (*FaultyStore)(nil)
