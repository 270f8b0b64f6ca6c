package objstore

import (
	"context"
	"strings"
)

// PrefixedStore is the part of a store under one key prefix, seen as a
// store of its own: every key is the prefix plus the key the caller gives,
// and List returns keys with the prefix removed. Several catalogs share one
// bucket prefix this way, each under a prefix of its own, none seeing the
// others' keys.
type PrefixedStore struct {
	inner  Store
	prefix string
}

// WithPrefix returns the part of s under prefix. The prefix must end with
// '/' so that a key of s belongs to at most one part (a prefix "a" would
// also hold the keys of "ab/"): an empty prefix or one without a trailing
// '/' panics (a programming error, never user input).
func WithPrefix(s Store, prefix string) *PrefixedStore {
	if prefix == "" || !strings.HasSuffix(prefix, "/") {
		panic("objstore.WithPrefix: the prefix must be non-empty and end with '/', got " + prefix)
	}
	return &PrefixedStore{inner: s, prefix: prefix}
}

// Inner returns the wrapped store.
func (p *PrefixedStore) Inner() Store { return p.inner }

// Prefix returns the prefix every key of this store has in the inner store.
func (p *PrefixedStore) Prefix() string { return p.prefix }

func (p *PrefixedStore) key(op, key string) (string, error) {
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	return p.prefix + key, nil
}

// Get implements Reader.
func (p *PrefixedStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	k, err := p.key("get", key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	data, info, err := p.inner.Get(ctx, k)
	info.Key = key
	return data, info, err
}

// GetRange implements Reader.
func (p *PrefixedStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	k, err := p.key("get-range", key)
	if err != nil {
		return nil, err
	}
	return p.inner.GetRange(ctx, k, off, length)
}

// Head implements Reader.
func (p *PrefixedStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	k, err := p.key("head", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := p.inner.Head(ctx, k)
	info.Key = key
	return info, err
}

// ListPage implements Reader: the inner store's page under prefix+prefix,
// keys returned without this store's prefix. An object named by the prefix
// itself is skipped (a page of nothing else is followed by the next).
func (p *PrefixedStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	after := ""
	if startAfter != "" {
		after = p.prefix + startAfter
	}
	for {
		page, more, err := p.inner.ListPage(ctx, p.prefix+prefix, after)
		if err != nil {
			return nil, false, err
		}
		out := make([]ObjectInfo, 0, len(page))
		for _, o := range page {
			o.Key = strings.TrimPrefix(o.Key, p.prefix)
			if o.Key == "" {
				// An object named by the prefix itself (a "folder" an S3
				// console creates) is no key of this store.
				continue
			}
			out = append(out, o)
		}
		if len(out) > 0 || !more || len(page) == 0 {
			return out, more, nil
		}
		after = page[len(page)-1].Key // a page of only that object
	}
}

// Put implements Store.
func (p *PrefixedStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	k, err := p.key("put", key)
	if err != nil {
		return "", err
	}
	return p.inner.Put(ctx, k, data)
}

// PutIfAbsent implements Store.
func (p *PrefixedStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	k, err := p.key("put-if-absent", key)
	if err != nil {
		return "", err
	}
	return p.inner.PutIfAbsent(ctx, k, data)
}

// PutIfMatch implements Store.
func (p *PrefixedStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	k, err := p.key("put-if-match", key)
	if err != nil {
		return "", err
	}
	return p.inner.PutIfMatch(ctx, k, data, etag)
}

// Delete implements Store.
func (p *PrefixedStore) Delete(ctx context.Context, key string) error {
	k, err := p.key("delete", key)
	if err != nil {
		return err
	}
	return p.inner.Delete(ctx, k)
}

// String implements Store: the inner store's name joined with the prefix
// ("file:///data/lake/lakes/7331/").
func (p *PrefixedStore) String() string {
	s := p.inner.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s + p.prefix
}
