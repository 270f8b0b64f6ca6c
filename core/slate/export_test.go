package slate

import (
	"context"
	"fmt"
	"strings"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate/internal/manifest"
)

// Test-only access to internals, for the external test package.

// SetCompactionHook makes the writer's compactor call fn after writing a
// compaction's outputs and before publishing them.
func SetCompactionHook(db *DB, fn func()) { db.compactor.hookBeforePublish = fn }

// SetCompactorHook is SetCompactionHook for a standalone compactor.
func SetCompactorHook(c *Compactor, fn func()) { c.hookBeforePublish = fn }

// DescribeLatest summarizes the latest manifest: its id and a line naming
// every field the engine's parties own.
func DescribeLatest(ctx context.Context, store objstore.Store, root string) (uint64, string, error) {
	id, m, err := manifest.NewStore(store, root).Latest(ctx)
	if err != nil || m == nil {
		return 0, "", fmt.Errorf("latest manifest: %v (%v)", err, m)
	}
	return id, describe(m), nil
}

func describe(m *manifest.Manifest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "writer=%d compactor=%d replay_after=%d next_wal=%d last_l0_seq=%d marker=%s running=%v l0=[",
		m.WriterEpoch, m.CompactorEpoch, m.ReplayAfterWalID, m.NextWalID, m.LastL0Seq, m.LastCompactedL0, m.RunningCompactions)
	for _, s := range m.L0 {
		fmt.Fprintf(&b, " %s", s.ID)
	}
	b.WriteString(" ] runs=[")
	for _, r := range m.Runs {
		fmt.Fprintf(&b, " %d:%d", r.ID, len(r.SSTs))
	}
	b.WriteString(" ]")
	return b.String()
}

// ManifestBoundary reads the GC boundary.
func ManifestBoundary(ctx context.Context, store objstore.Store, root string) (uint64, error) {
	return manifest.NewStore(store, root).Boundary(ctx)
}
