package objstore

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Op names a kind of store request.
type Op int

// The request kinds, in a fixed order (used as array indexes).
const (
	OpGet Op = iota
	OpGetRange
	OpHead
	OpList // one ListPage call = one LIST request
	OpPut
	OpPutIfAbsent
	OpPutIfMatch
	OpDelete
	numOps
)

var opNames = [numOps]string{"get", "get-range", "head", "list", "put", "put-if-absent", "put-if-match", "delete"}

func (o Op) String() string {
	if o < 0 || o >= numOps {
		return fmt.Sprintf("op(%d)", int(o))
	}
	return opNames[o]
}

// IsWrite reports whether the op changes the store.
func (o Op) IsWrite() bool { return o >= OpPut }

// Counts is a snapshot of a CountingStore's counters.
type Counts struct {
	Requests     [numOps]int64 // calls by kind
	Errors       [numOps]int64 // calls that returned an error, by kind
	BytesRead    int64
	BytesWritten int64
}

// Sub returns c - prev (for measuring one phase of a benchmark).
func (c Counts) Sub(prev Counts) Counts {
	out := c
	for i := range out.Requests {
		out.Requests[i] -= prev.Requests[i]
		out.Errors[i] -= prev.Errors[i]
	}
	out.BytesRead -= prev.BytesRead
	out.BytesWritten -= prev.BytesWritten
	return out
}

// Of returns the request count of one kind.
func (c Counts) Of(o Op) int64 { return c.Requests[o] }

// Reads is GETs (whole and ranged) plus HEADs.
func (c Counts) Reads() int64 { return c.Requests[OpGet] + c.Requests[OpGetRange] + c.Requests[OpHead] }

// Writes is every PUT kind plus DELETEs.
func (c Counts) Writes() int64 {
	return c.Requests[OpPut] + c.Requests[OpPutIfAbsent] + c.Requests[OpPutIfMatch] + c.Requests[OpDelete]
}

// Total is every request.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c.Requests {
		n += v
	}
	return n
}

func (c Counts) String() string {
	s := ""
	for i, n := range c.Requests {
		if n != 0 {
			s += fmt.Sprintf("%s=%d ", Op(i), n)
		}
	}
	return fmt.Sprintf("%sread=%dB written=%dB", s, c.BytesRead, c.BytesWritten)
}

// CountingStore counts requests and bytes by kind. It is safe for
// concurrent use; Snapshot is cheap.
type CountingStore struct {
	inner        Store
	requests     [numOps]atomic.Int64
	errors       [numOps]atomic.Int64
	bytesRead    atomic.Int64
	bytesWritten atomic.Int64
}

// WithCounting wraps s in a counting store.
func WithCounting(s Store) *CountingStore { return &CountingStore{inner: s} }

// Inner returns the wrapped store.
func (c *CountingStore) Inner() Store { return c.inner }

// Snapshot returns the counters as they are now.
func (c *CountingStore) Snapshot() Counts {
	var out Counts
	for i := range out.Requests {
		out.Requests[i] = c.requests[i].Load()
		out.Errors[i] = c.errors[i].Load()
	}
	out.BytesRead = c.bytesRead.Load()
	out.BytesWritten = c.bytesWritten.Load()
	return out
}

func (c *CountingStore) note(o Op, err error) {
	c.requests[o].Add(1)
	if err != nil {
		c.errors[o].Add(1)
	}
}

func (c *CountingStore) String() string { return c.inner.String() }

func (c *CountingStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	b, i, err := c.inner.Get(ctx, key)
	c.note(OpGet, err)
	c.bytesRead.Add(int64(len(b)))
	return b, i, err
}

func (c *CountingStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	b, err := c.inner.GetRange(ctx, key, off, length)
	c.note(OpGetRange, err)
	c.bytesRead.Add(int64(len(b)))
	return b, err
}

func (c *CountingStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	i, err := c.inner.Head(ctx, key)
	c.note(OpHead, err)
	return i, err
}

func (c *CountingStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	p, more, err := c.inner.ListPage(ctx, prefix, startAfter)
	c.note(OpList, err)
	return p, more, err
}

func (c *CountingStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	e, err := c.inner.Put(ctx, key, data)
	c.note(OpPut, err)
	c.bytesWritten.Add(int64(len(data)))
	return e, err
}

func (c *CountingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	e, err := c.inner.PutIfAbsent(ctx, key, data)
	c.note(OpPutIfAbsent, err)
	c.bytesWritten.Add(int64(len(data)))
	return e, err
}

func (c *CountingStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	e, err := c.inner.PutIfMatch(ctx, key, data, etag)
	c.note(OpPutIfMatch, err)
	c.bytesWritten.Add(int64(len(data)))
	return e, err
}

func (c *CountingStore) Delete(ctx context.Context, key string) error {
	err := c.inner.Delete(ctx, key)
	c.note(OpDelete, err)
	return err
}

var _ Store = (*CountingStore)(nil)
