package manifest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/moraine-go/moraine/core/objstore"
)

// ErrConflict: another process wrote the manifest id this one tried to
// create. Refresh and retry.
var ErrConflict = errors.New("manifest: version already exists")

// Store reads and creates manifest versions under <root>/manifest/. Every
// version is a full snapshot written once, create-if-absent, as id N+1 of
// the latest id N: the conditional PUT is the commit point.
type Store struct {
	os   objstore.Store
	root string
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
// caller has already read): one GET when nothing changed.
func (s *Store) Refresh(ctx context.Context, known uint64, cur *Manifest) (uint64, *Manifest, error) {
	id, m := known, cur
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

func (s *Store) probeFrom(ctx context.Context, id uint64) (uint64, *Manifest, error) {
	m, err := s.Get(ctx, id)
	if err != nil {
		return 0, nil, err
	}
	return s.Refresh(ctx, id, m)
}

// Create writes m as manifest id, failing with ErrConflict if it exists.
func (s *Store) Create(ctx context.Context, id uint64, m *Manifest) error {
	if err := m.Check(); err != nil {
		return err
	}
	_, err := s.os.PutIfAbsent(ctx, s.Key(id), Encode(m))
	if errors.Is(err, objstore.ErrExists) {
		return fmt.Errorf("%w (id %d)", ErrConflict, id)
	}
	return err
}

// Delete removes manifest id (GC).
func (s *Store) Delete(ctx context.Context, id uint64) error {
	return s.os.Delete(ctx, s.Key(id))
}
