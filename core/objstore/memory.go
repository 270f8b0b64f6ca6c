package objstore

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/google/btree"
)

// DefaultPageSize is the number of objects a ListPage returns when a backend
// is not told otherwise (S3's page size).
const DefaultPageSize = 1000

type memObject struct {
	key  string
	data []byte
	etag string
	mod  time.Time
}

// MemoryStore is an in-process store. Conditional writes happen under one
// mutex, so they are atomic across goroutines. It is the fastest backend and
// the one the engine's unit tests use.
type MemoryStore struct {
	name     string
	pageSize int

	mu   sync.RWMutex
	objs *btree.BTreeG[*memObject]
	seq  uint64 // ETag counter: every write gets a fresh, never-reused ETag
}

var (
	memRegistryMu sync.Mutex
	memRegistry   = map[string]*MemoryStore{}
)

// NewMemory returns a fresh, unnamed in-memory store. pageSize <= 0 means
// DefaultPageSize.
func NewMemory(pageSize int) *MemoryStore {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	return &MemoryStore{
		pageSize: pageSize,
		objs:     btree.NewG(16, func(a, b *memObject) bool { return a.key < b.key }),
	}
}

// OpenMemory returns the in-memory store registered under name in this
// process, creating it on first use: the same name is the same store. The
// page size only applies when the store is created.
func OpenMemory(name string, pageSize int) *MemoryStore {
	memRegistryMu.Lock()
	defer memRegistryMu.Unlock()
	if s, ok := memRegistry[name]; ok {
		return s
	}
	s := NewMemory(pageSize)
	s.name = name
	memRegistry[name] = s
	return s
}

func (m *MemoryStore) String() string {
	if m.name == "" {
		return "memory://"
	}
	return "memory://" + m.name
}

func (m *MemoryStore) info(o *memObject) ObjectInfo {
	return ObjectInfo{Key: o.key, Size: int64(len(o.data)), ETag: o.etag, LastModified: o.mod}
}

func (m *MemoryStore) lookup(key string) (*memObject, bool) {
	return m.objs.Get(&memObject{key: key})
}

func (m *MemoryStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	if err := checkKey("get", key); err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, ctxError("get", key, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.lookup(key)
	if !ok {
		return nil, ObjectInfo{}, newError("get", key, ErrNotFound, "")
	}
	return append([]byte(nil), o.data...), m.info(o), nil
}

func (m *MemoryStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := checkKey("get-range", key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError("get-range", key, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.lookup(key)
	if !ok {
		return nil, newError("get-range", key, ErrNotFound, "")
	}
	start, end, err := clipRange(int64(len(o.data)), off, length)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), o.data[start:end]...), nil
}

func (m *MemoryStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := checkKey("head", key); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, ctxError("head", key, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.lookup(key)
	if !ok {
		return ObjectInfo{}, newError("head", key, ErrNotFound, "")
	}
	return m.info(o), nil
}

func (m *MemoryStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, ctxError("list", prefix, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	from := prefix
	if startAfter >= from {
		from = startAfter + "\x00"
	}
	var page []ObjectInfo
	more := false
	m.objs.AscendGreaterOrEqual(&memObject{key: from}, func(o *memObject) bool {
		if len(o.key) < len(prefix) || o.key[:len(prefix)] != prefix {
			return false
		}
		if len(page) == m.pageSize {
			more = true
			return false
		}
		page = append(page, m.info(o))
		return true
	})
	return page, more, nil
}

func (m *MemoryStore) write(key string, data []byte) *memObject {
	m.seq++
	o := &memObject{key: key, data: append([]byte(nil), data...), etag: `"m` + strconv.FormatUint(m.seq, 10) + `"`, mod: time.Now()}
	m.objs.ReplaceOrInsert(o)
	return o
}

func (m *MemoryStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	if err := checkKey("put", key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError("put", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(key, data).etag, nil
}

func (m *MemoryStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	if err := checkKey("put-if-absent", key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError("put-if-absent", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.lookup(key); ok {
		return "", newError("put-if-absent", key, ErrExists, "")
	}
	return m.write(key, data).etag, nil
}

func (m *MemoryStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if err := checkKey("put-if-match", key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError("put-if-match", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.lookup(key)
	if !ok {
		return "", newError("put-if-match", key, ErrNotFound, "")
	}
	if o.etag != etag {
		return "", newErrorf("put-if-match", key, ErrPrecondition, "have %s, want %s", o.etag, etag)
	}
	return m.write(key, data).etag, nil
}

func (m *MemoryStore) Delete(ctx context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError("delete", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs.Delete(&memObject{key: key})
	return nil
}

// Len reports how many objects the store holds (tests and benchmarks).
func (m *MemoryStore) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.objs.Len()
}

var _ Store = (*MemoryStore)(nil)
