package slate

import (
	"context"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// Test-only access for the upkeep tests (external test package).

// ManifestWalRange reads manifest id and returns its WAL replay point and
// next WAL id: a checkpoint pinning it needs WAL ids in
// (replayAfter, next).
func ManifestWalRange(ctx context.Context, store objstore.Store, root string, id uint64) (replayAfter, next uint64, err error) {
	m, err := manifest.NewStore(store, root).Get(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	return m.ReplayAfterWalID, m.NextWalID, nil
}
