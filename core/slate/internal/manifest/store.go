package manifest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/moraine-go/moraine/core/objstore"
)

// ErrConflict: another process wrote the manifest id this one tried to
// create. Refresh and retry.
var ErrConflict = errors.New("manifest: version already exists")

// Store reads and creates manifest versions under <root>/manifest/. Every
// version is a full snapshot written once, create-if-absent, as id N+1 of
// the latest id N: the conditional PUT is the commit point.
//
// # The GC boundary
//
// Garbage collection deletes old manifest versions. A process holding a
// stale latest id K could then "create" K+1 after GC deleted it, and take a
// write that lands below the real latest for a commit. The boundary
// (<root>/gc/manifest.boundary, an ASCII decimal u64; missing means 0)
// closes that hole, as in SlateDB (RFC-0026):
//
//   - GC raises the boundary to the largest id it will delete before it
//     deletes anything (AdvanceBoundary; it never moves backwards).
//   - Create treats a version it wrote at an id at or below the boundary as
//     a conflict: the id was GC's, so the write is not the latest. The
//     caller refreshes and re-applies its mutation, so every mutation must
//     be idempotent (a version whose write was legitimate but whose id GC
//     passed right after gets its mutation applied again on top of
//     itself).
//   - Refresh from a known id K trusts a forward probe only when K+1 is
//     above the boundary; otherwise versions after K may be missing or
//     stale, and it lists instead. A LIST's largest id is always the real
//     latest: GC never deletes the latest, and a stale write lands only at
//     an id GC passed, which is below it.
type Store struct {
	os   objstore.Store
	root string

	mu       sync.Mutex
	boundary uint64 // highest boundary seen (it only grows)
}

// NewStore returns the manifest store of the database at root ("" or a
// path like "lake/db"; no trailing slash needed).
func NewStore(os objstore.Store, root string) *Store {
	return &Store{os: os, root: strings.TrimSuffix(root, "/")}
}

// Dir is the object-key prefix of manifest versions.
func (s *Store) Dir() string { return join(s.root, "manifest/") }

func join(root, rest string) string {
	if root == "" {
		return rest
	}
	return root + "/" + rest
}

// Key returns the object key of manifest id.
func (s *Store) Key(id uint64) string { return fmt.Sprintf("%s%020d.manifest", s.Dir(), id) }

// ParseKey extracts the id from a manifest object key.
func (s *Store) ParseKey(key string) (uint64, bool) {
	name, ok := strings.CutPrefix(key, s.Dir())
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(name, ".manifest")
	if !ok || len(num) != 20 {
		return 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	return id, err == nil
}

// Get reads manifest id.
func (s *Store) Get(ctx context.Context, id uint64) (*Manifest, error) {
	data, _, err := s.os.Get(ctx, s.Key(id))
	if err != nil {
		return nil, err
	}
	m, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("manifest %d: %w", id, err)
	}
	return m, nil
}

// List returns every manifest id present, ascending.
func (s *Store) List(ctx context.Context) ([]objstore.ObjectInfo, []uint64, error) {
	infos, err := objstore.ListAll(ctx, s.os, s.Dir(), "")
	if err != nil {
		return nil, nil, err
	}
	var ids []uint64
	var keep []objstore.ObjectInfo
	for _, o := range infos {
		if id, ok := s.ParseKey(o.Key); ok {
			ids = append(ids, id)
			keep = append(keep, o)
		}
	}
	return keep, ids, nil
}

// Latest returns the newest manifest, or (0, nil, nil) if there is none.
// A version listed but gone on read (deleted by GC) triggers a relist.
func (s *Store) Latest(ctx context.Context) (uint64, *Manifest, error) {
	for attempt := 0; ; attempt++ {
		_, ids, err := s.List(ctx)
		if err != nil {
			return 0, nil, err
		}
		if len(ids) == 0 {
			return 0, nil, nil
		}
		id := ids[len(ids)-1]
		// Newer versions may have landed since the LIST: probe forward.
		id, m, err := s.probeFrom(ctx, id)
		if errors.Is(err, objstore.ErrNotFound) && attempt < 5 {
			continue
		}
		return id, m, err
	}
}

// Refresh returns the newest manifest at or after known id (which the
// caller has already read). When nothing changed it costs one GET of id+1
// and one of the GC boundary; when GC has passed known+1 it lists.
func (s *Store) Refresh(ctx context.Context, known uint64, cur *Manifest) (uint64, *Manifest, error) {
	if known+1 <= s.cachedBoundary() {
		return s.latestAtLeast(ctx, known, cur)
	}
	id, m := known, cur
	for {
		next, err := s.Get(ctx, id+1)
		if errors.Is(err, objstore.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, nil, err
		}
		id, m = id+1, next
	}
	b, err := s.Boundary(ctx)
	if err != nil {
		return 0, nil, err
	}
	if known+1 <= b {
		return s.latestAtLeast(ctx, known, cur)
	}
	return id, m, nil
}

// latestAtLeast lists for the latest version; it never goes below known.
func (s *Store) latestAtLeast(ctx context.Context, known uint64, cur *Manifest) (uint64, *Manifest, error) {
	id, m, err := s.Latest(ctx)
	if err != nil {
		return 0, nil, err
	}
	if m == nil || id < known {
		return 0, nil, fmt.Errorf("%w: latest manifest %d is older than known %d", ErrCorrupt, id, known)
	}
	if id == known {
		return known, cur, nil
	}
	return id, m, nil
}

func (s *Store) probeFrom(ctx context.Context, id uint64) (uint64, *Manifest, error) {
	m, err := s.Get(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	// id came from a LIST, so it is above the boundary (see Store): probe
	// forward without the boundary check.
	for {
		next, err := s.Get(ctx, id+1)
		if errors.Is(err, objstore.ErrNotFound) {
			return id, m, nil
		}
		if err != nil {
			return 0, nil, err
		}
		id, m = id+1, next
	}
}

// Create writes m as manifest id, failing with ErrConflict if it exists or
// if id is at or below the GC boundary (checked after the write: see
// Store).
func (s *Store) Create(ctx context.Context, id uint64, m *Manifest) error {
	if err := m.Check(); err != nil {
		return err
	}
	if b := s.cachedBoundary(); id <= b {
		return fmt.Errorf("%w (id %d is at or below the GC boundary %d)", ErrConflict, id, b)
	}
	_, err := s.os.PutIfAbsent(ctx, s.Key(id), Encode(m))
	if errors.Is(err, objstore.ErrExists) {
		return fmt.Errorf("%w (id %d)", ErrConflict, id)
	}
	if err != nil {
		return err
	}
	b, err := s.Boundary(ctx)
	if err != nil {
		return fmt.Errorf("manifest %d written, but reading the GC boundary failed: %w", id, err)
	}
	if id <= b {
		return fmt.Errorf("%w (id %d was written after GC passed it: boundary %d)", ErrConflict, id, b)
	}
	return nil
}

// Delete removes manifest id (GC). Call AdvanceBoundary past id first.
func (s *Store) Delete(ctx context.Context, id uint64) error {
	return s.os.Delete(ctx, s.Key(id))
}

// BoundaryKey is the object key of the GC boundary.
func (s *Store) BoundaryKey() string { return join(s.root, "gc/manifest.boundary") }

func (s *Store) cachedBoundary() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.boundary
}

func (s *Store) noteBoundary(b uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.boundary = max(s.boundary, b)
}

// readBoundary returns the stored boundary and its ETag ("" when missing).
func (s *Store) readBoundary(ctx context.Context) (uint64, string, error) {
	data, info, err := s.os.Get(ctx, s.BoundaryKey())
	if errors.Is(err, objstore.ErrNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	b, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: GC boundary %q: %v", ErrCorrupt, data, err)
	}
	s.noteBoundary(b)
	return b, info.ETag, nil
}

// Boundary returns the GC boundary: ids at or below it may have been
// deleted by GC (0: none).
func (s *Store) Boundary(ctx context.Context) (uint64, error) {
	b, _, err := s.readBoundary(ctx)
	return b, err
}

// AdvanceBoundary raises the GC boundary to at least to (create-if-absent
// the first time, then compare-and-swap on the ETag, so it never moves
// backwards) and returns the stored value.
func (s *Store) AdvanceBoundary(ctx context.Context, to uint64) (uint64, error) {
	for {
		b, etag, err := s.readBoundary(ctx)
		if err != nil {
			return 0, err
		}
		if b >= to {
			return b, nil
		}
		body := []byte(strconv.FormatUint(to, 10))
		if etag == "" {
			_, err = s.os.PutIfAbsent(ctx, s.BoundaryKey(), body)
		} else {
			_, err = s.os.PutIfMatch(ctx, s.BoundaryKey(), body, etag)
		}
		switch {
		case err == nil:
			s.noteBoundary(to)
			return to, nil
		case errors.Is(err, objstore.ErrExists), errors.Is(err, objstore.ErrPrecondition), errors.Is(err, objstore.ErrNotFound):
			continue // another GC moved it: read again
		default:
			return 0, err
		}
	}
}
