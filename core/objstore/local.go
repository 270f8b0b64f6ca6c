package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// LocalStore keeps objects as files under a root directory.
//
// Layout: a key is split at '/' into path components; every component but
// the last is a directory, the last is the file. Components are escaped so
// any byte string is a legal name: bytes outside [A-Za-z0-9._-] become %XX,
// a leading '.' becomes %2E, and an empty component is "%". Internal files
// live in directories whose names start with '.' (".tmp", ".locks"), which
// no escaped component can, so listings never show them.
//
// Conditional writes are atomic across processes on one host:
//   - PutIfAbsent writes a temp file, fsyncs it, link(2)s it to the final
//     name (link fails if the name exists) and fsyncs the directory.
//   - Put, PutIfMatch and Delete hold an flock(2) on a lock file striped by
//     key; PutIfMatch compares the current ETag under the lock and renames a
//     synced temp file over the object.
//
// ETags are derived from the file's inode, modification time and size, so
// they are stable across reopen and change on every write.
//
// Limits (differences from S3): one key cannot be both an object and a
// "directory" of other keys ("a" and "a/b"); an escaped component must fit
// in 255 bytes.
type LocalStore struct {
	root     string
	pageSize int
}

const lockStripes = 64

// NewLocal opens (creating if needed) a local store rooted at dir.
func NewLocal(dir string, pageSize int) (*LocalStore, error) {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, wrapError("open", dir, ErrInvalid, err)
	}
	for _, d := range []string{abs, filepath.Join(abs, ".tmp"), filepath.Join(abs, ".locks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, classifyOS("open", dir, err)
		}
	}
	l := &LocalStore{root: abs, pageSize: pageSize}
	l.sweepTemp(time.Hour)
	return l, nil
}

// Root returns the store's absolute directory.
func (l *LocalStore) Root() string { return l.root }

func (l *LocalStore) String() string { return "file://" + l.root }

func escapeComponent(c string) string {
	if c == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		ch := c[i]
		safe := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-' || ch == '.'
		if ch == '.' && i == 0 {
			safe = false
		}
		if safe {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

func unescapeComponent(s string) (string, bool) {
	if s == "%" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", false
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", false
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), true
}

// path maps a key to its file path.
func (l *LocalStore) path(op, key string) (string, error) {
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	parts := strings.Split(key, "/")
	for i, p := range parts {
		e := escapeComponent(p)
		if len(e) > 255 {
			return "", newErrorf(op, key, ErrInvalid, "key component %d is %d bytes once escaped; the local store allows 255", i, len(e))
		}
		parts[i] = e
	}
	return filepath.Join(append([]string{l.root}, parts...)...), nil
}

func classifyOS(op, key string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return wrapError(op, key, ErrNotFound, err)
	case errors.Is(err, fs.ErrExist):
		return wrapError(op, key, ErrExists, err)
	case errors.Is(err, fs.ErrPermission):
		return wrapError(op, key, ErrAccessDenied, err)
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EINVAL):
		return wrapError(op, key, ErrInvalid, err)
	default:
		return wrapError(op, key, ErrTransient, err)
	}
}

func etagOf(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixNano(), fi.Size())
	}
	return fmt.Sprintf(`"%x-%x-%x"`, st.Ino, fi.ModTime().UnixNano(), fi.Size())
}

func (l *LocalStore) infoOf(key string, fi os.FileInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: fi.Size(), ETag: etagOf(fi), LastModified: fi.ModTime()}
}

func (l *LocalStore) Get(ctx context.Context, key string) ([]byte, ObjectInfo, error) {
	p, err := l.path("get", key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, ctxError("get", key, err)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, ObjectInfo{}, classifyOS("get", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ObjectInfo{}, classifyOS("get", key, err)
	}
	if fi.IsDir() {
		return nil, ObjectInfo{}, newError("get", key, ErrNotFound, "")
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, ObjectInfo{}, classifyOS("get", key, err)
	}
	return data, l.infoOf(key, fi), nil
}

func (l *LocalStore) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	p, err := l.path("get-range", key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError("get-range", key, err)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, classifyOS("get-range", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, classifyOS("get-range", key, err)
	}
	if fi.IsDir() {
		return nil, newError("get-range", key, ErrNotFound, "")
	}
	start, end, err := clipRange(fi.Size(), off, length)
	if err != nil {
		return nil, err
	}
	data := make([]byte, end-start)
	if _, err := f.ReadAt(data, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, classifyOS("get-range", key, err)
	}
	return data, nil
}

func (l *LocalStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	p, err := l.path("head", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, ctxError("head", key, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return ObjectInfo{}, classifyOS("head", key, err)
	}
	if fi.IsDir() {
		return ObjectInfo{}, newError("head", key, ErrNotFound, "")
	}
	return l.infoOf(key, fi), nil
}

// ListPage walks the directory that holds the prefix's last '/' and returns
// the matching keys in order. Each page re-reads that subtree: listing is
// O(objects under that directory) per page, fine for the engine's layout.
func (l *LocalStore) ListPage(ctx context.Context, prefix, startAfter string) ([]ObjectInfo, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, ctxError("list", prefix, err)
	}
	dirKey := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirKey = prefix[:i]
	}
	base := l.root
	if dirKey != "" {
		p, err := l.path("list", dirKey)
		if err != nil {
			return nil, false, err
		}
		base = p
	}
	var all []ObjectInfo
	var walk func(dir, keyPrefix string, top bool) error
	walk = func(dir, keyPrefix string, top bool) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return classifyOS("list", prefix, err)
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue // internal files: .tmp, .locks
			}
			comp, ok := unescapeComponent(name)
			if !ok {
				continue // not ours
			}
			key := keyPrefix + comp
			if e.IsDir() {
				sub := key + "/"
				// Prune subtrees that cannot hold a match.
				if !strings.HasPrefix(sub, prefix) && !strings.HasPrefix(prefix, sub) {
					continue
				}
				if err := walk(filepath.Join(dir, name), sub, false); err != nil {
					return err
				}
				continue
			}
			if !strings.HasPrefix(key, prefix) || key <= startAfter {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // deleted while listing
				}
				return classifyOS("list", prefix, err)
			}
			all = append(all, l.infoOf(key, fi))
		}
		return nil
	}
	kp := ""
	if dirKey != "" {
		kp = dirKey + "/"
	}
	if err := walk(base, kp, true); err != nil {
		return nil, false, err
	}
	slices.SortFunc(all, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	if len(all) > l.pageSize {
		return all[:l.pageSize], true, nil
	}
	return all, false, nil
}

// writeTemp writes data to a fresh synced temp file and returns its path and
// info.
func (l *LocalStore) writeTemp(op, key string, data []byte) (string, os.FileInfo, error) {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(l.root, ".tmp", hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, classifyOS(op, key, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", nil, classifyOS(op, key, err)
	}
	if err := f.Sync(); err != nil {
		return "", nil, classifyOS(op, key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return "", nil, classifyOS(op, key, err)
	}
	if err := f.Close(); err != nil {
		return "", nil, classifyOS(op, key, err)
	}
	ok = true
	return tmp, fi, nil
}

// mkdirs creates the parent directories of p (syncing each new directory's
// parent so the entries survive a crash).
func (l *LocalStore) mkdirs(op, key, p string) error {
	dir := filepath.Dir(p)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return newErrorf(op, key, ErrInvalid, "the local store cannot hold a key under an existing object's name (%s is an object)", dir)
		}
		return nil
	}
	if err := l.mkdirs(op, key, dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, syscall.ENOTDIR) {
			return newErrorf(op, key, ErrInvalid, "the local store cannot hold a key under an existing object's name")
		}
		return classifyOS(op, key, err)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return newErrorf(op, key, ErrInvalid, "the local store cannot hold a key under an existing object's name (%s is an object)", dir)
	}
	return syncDir(filepath.Dir(dir))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return classifyOS("sync-dir", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return classifyOS("sync-dir", dir, err)
	}
	return nil
}

// lockKey takes the cross-process lock stripe that guards key.
func (l *LocalStore) lockKey(op, key string) (unlock func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	p := filepath.Join(l.root, ".locks", fmt.Sprintf("%02d", h.Sum32()%lockStripes))
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, classifyOS(op, key, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, classifyOS(op, key, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func (l *LocalStore) Put(ctx context.Context, key string, data []byte) (string, error) {
	return l.replace(ctx, "put", key, data, nil)
}

func (l *LocalStore) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return l.replace(ctx, "put-if-match", key, data, &etag)
}

// replace renames a synced temp file over the object under the key's lock;
// with want set it first checks the current ETag.
func (l *LocalStore) replace(ctx context.Context, op, key string, data []byte, want *string) (string, error) {
	p, err := l.path(op, key)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError(op, key, err)
	}
	if err := l.mkdirs(op, key, p); err != nil {
		return "", err
	}
	tmp, fi, err := l.writeTemp(op, key, data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	unlock, err := l.lockKey(op, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	if want != nil {
		cur, err := os.Stat(p)
		if err != nil {
			return "", classifyOS(op, key, err)
		}
		if cur.IsDir() {
			return "", newError(op, key, ErrNotFound, "")
		}
		if got := etagOf(cur); got != *want {
			return "", newErrorf(op, key, ErrPrecondition, "have %s, want %s", got, *want)
		}
	} else if cur, err := os.Stat(p); err == nil && cur.IsDir() {
		return "", newErrorf(op, key, ErrInvalid, "the local store already holds keys under %q/", key)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", classifyOS(op, key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return "", err
	}
	return etagOf(fi), nil
}

func (l *LocalStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	const op = "put-if-absent"
	p, err := l.path(op, key)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", ctxError(op, key, err)
	}
	if err := l.mkdirs(op, key, p); err != nil {
		return "", err
	}
	tmp, fi, err := l.writeTemp(op, key, data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", newError(op, key, ErrExists, "")
		}
		return "", classifyOS(op, key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return "", err
	}
	// The link shares the temp file's inode; its ctime changes but the
	// mtime and size, hence the ETag, do not.
	return etagOf(fi), nil
}

func (l *LocalStore) Delete(ctx context.Context, key string) error {
	const op = "delete"
	p, err := l.path(op, key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError(op, key, err)
	}
	unlock, err := l.lockKey(op, key)
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return nil // a "directory" of other keys is not an object
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return classifyOS(op, key, err)
	}
	return syncDir(filepath.Dir(p))
}

// sweepTemp removes temp files older than age (left by crashed writers).
func (l *LocalStore) sweepTemp(age time.Duration) {
	ents, err := os.ReadDir(filepath.Join(l.root, ".tmp"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(l.root, ".tmp", e.Name()))
		}
	}
}

var _ Store = (*LocalStore)(nil)
