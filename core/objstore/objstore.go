// Package objstore owns moraine's view of object storage: one small interface
// (Store) with real conditional writes, three backends (memory, local
// filesystem, S3), and decorators that stack on any backend (retrying
// transport, request counting, fault injection).
//
// Every byte the engine, the catalog and the commit log keep goes through a
// Store. The package knows nothing about LSMs, catalogs or logs: it moves
// opaque bytes under opaque keys.
//
// # Contract every backend keeps
//
//   - Read-after-write: a Get, Head or List that starts after a write
//     returned success observes that write.
//   - Keys are non-empty strings of at most MaxKeyLen bytes. Portable keys
//     are valid UTF-8 without control characters and without empty, "." or
//     ".." '/'-separated segments; S3 refuses other keys with ErrInvalid,
//     while memory and local accept any bytes. '/' has no special meaning to
//     the interface; the local backend maps it to directories. Every key the
//     engine and catalog write is portable.
//   - List returns keys in ascending byte order, only keys that start with
//     the prefix and sort strictly after startAfter. Pagination is the
//     backend's business: ListPage returns one page, List iterates pages.
//   - Get of a byte range: off must be >= 0; a range that starts at or past
//     the end returns zero bytes (not an error); a range that runs past the
//     end is cut at the end. length < 0 means "to the end".
//   - PutIfAbsent creates the object only if no object exists under the key;
//     otherwise it writes nothing and returns an error matching ErrExists.
//     Exactly one of any number of concurrent PutIfAbsent calls on one key
//     succeeds, across goroutines and (for local and S3) across processes.
//   - PutIfMatch replaces the object only if its current ETag equals the one
//     given; otherwise it writes nothing and returns ErrPrecondition. On a
//     missing key it returns ErrNotFound. Exactly one of any number of
//     concurrent PutIfMatch calls holding the same ETag succeeds.
//   - ETags are opaque strings: pass back exactly what the store returned.
//   - Delete is idempotent: deleting a missing key succeeds.
//   - Zero-byte objects are ordinary objects (the engine uses them as fences).
//
// Errors are classified at the backend boundary: callers test them with
// errors.Is against ErrNotFound, ErrExists, ErrPrecondition, ErrTransient,
// ErrOutcomeUnknown and ErrInvalid; no SDK error type leaks upward (the
// original error stays reachable through errors.As for debugging).
package objstore

import (
	"context"
	"iter"
	"time"
)

// MaxKeyLen is the longest key any backend accepts (S3's limit).
const MaxKeyLen = 1024

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
}

// Reader is the read half of a Store. Readers that must never write (a
// pinned catalog reader, listing tools) can be handed only this.
type Reader interface {
	// Get returns the whole object and its info.
	Get(ctx context.Context, key string) ([]byte, ObjectInfo, error)
	// GetRange returns length bytes from off (length < 0: to the end). See
	// the package doc for past-the-end ranges.
	GetRange(ctx context.Context, key string, off, length int64) ([]byte, error)
	// Head returns the object's info without its bytes.
	Head(ctx context.Context, key string) (ObjectInfo, error)
	// ListPage returns up to one page of objects whose keys start with prefix
	// and sort after startAfter, ascending, and whether more may follow. Use
	// List or ListAll rather than calling it directly.
	ListPage(ctx context.Context, prefix, startAfter string) (page []ObjectInfo, more bool, err error)
}

// Store is the full object-store interface.
type Store interface {
	Reader
	// Put writes the object unconditionally and returns its new ETag.
	Put(ctx context.Context, key string, data []byte) (etag string, err error)
	// PutIfAbsent creates the object if the key is free (ErrExists if not).
	PutIfAbsent(ctx context.Context, key string, data []byte) (etag string, err error)
	// PutIfMatch replaces the object if its ETag is still etag
	// (ErrPrecondition if not, ErrNotFound if it is gone).
	PutIfMatch(ctx context.Context, key string, data []byte, etag string) (newETag string, err error)
	// Delete removes the object; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// String names the store for messages and logs, without secrets
	// (for example "file:///data/lake" or "s3://bucket/prefix").
	String() string
}

// List iterates every object under prefix after startAfter, in key order,
// fetching pages as the loop advances. An error ends the iteration after it
// is yielded once.
func List(ctx context.Context, r Reader, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		after := startAfter
		for {
			page, more, err := r.ListPage(ctx, prefix, after)
			if err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			for _, o := range page {
				if !yield(o, nil) {
					return
				}
			}
			if !more || len(page) == 0 {
				return
			}
			after = page[len(page)-1].Key
		}
	}
}

// ListAll returns every object under prefix after startAfter, in key order.
func ListAll(ctx context.Context, r Reader, prefix, startAfter string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	for o, err := range List(ctx, r, prefix, startAfter) {
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// checkKey validates a key against the package contract.
func checkKey(op, key string) error {
	if key == "" {
		return newError(op, key, ErrInvalid, "empty key")
	}
	if len(key) > MaxKeyLen {
		return newErrorf(op, key, ErrInvalid, "key is %d bytes; the limit is %d", len(key), MaxKeyLen)
	}
	return nil
}

// clipRange applies the package's range rules to an object of size n.
func clipRange(n, off, length int64) (start, end int64, err error) {
	if off < 0 {
		return 0, 0, errInvalidf("range offset %d is negative", off)
	}
	if off >= n {
		return n, n, nil
	}
	end = n
	if length >= 0 && off+length < n {
		end = off + length
	}
	return off, end, nil
}
