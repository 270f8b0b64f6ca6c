package core

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// SetFormatForTest overwrites sys/format of the catalog at path (tests only:
// simulate a catalog written by a newer or older build).
func SetFormatForTest(ctx context.Context, store objstore.Store, path string, format uint64, origin *uint64) error {
	db, err := slate.Open(ctx, store, path)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	b := slate.NewWriteBatch()
	b.Put(keys.Format(), encodeFormat(&formatRecord{Format: format, WriterVersion: "test", Origin: origin}))
	_, err = db.Write(ctx, b, slate.WriteOptions{})
	return err
}

// SetMigrationMarkerForTest writes a migration marker.
func SetMigrationMarkerForTest(ctx context.Context, store objstore.Store, path string) error {
	db, err := slate.Open(ctx, store, path)
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	b := slate.NewWriteBatch()
	b.Put(keys.Migration(), encodeMigration(&migrationRecord{From: 11, To: 12}))
	_, err = db.Write(ctx, b, slate.WriteOptions{})
	return err
}

// EncodeHeadForTest encodes a sys/head stamp (tests that land slots by
// hand).
func EncodeHeadForTest(id SnapshotID, batchSeq uint64) []byte {
	return encodeHead(&headRecord{SnapshotID: id, BatchSeq: batchSeq})
}

// HeadKeyForTest is sys/head's key.
func HeadKeyForTest() []byte { return keys.Head() }

// Every test compares each view advanced over a lost race's winning slots
// with a full load (advance.go); a benchmark run, and a benchmark's writer
// process, do not (the full load would be what it measures).
func init() {
	checkAdvance = os.Getenv("MORAINE_LOG_CHILD") != "bench-writer"
	args := os.Args[1:]
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-") // -test.bench or --test.bench
		bench := strings.HasPrefix(a, "-test.bench=") && a != "-test.bench=" ||
			a == "-test.bench" && i+1 < len(args) && args[i+1] != ""
		if bench {
			checkAdvance = false
		}
	}
}

// AdvancedViewsForTest counts lost races whose retry base was advanced
// over the winners' slots instead of loaded.
func AdvancedViewsForTest() int64 { return advancedViews.Load() }

// TruncationsForTest counts the folds of this open that truncated the
// commit log.
func (c *Catalog) TruncationsForTest() int {
	c.clog.foldMu.Lock()
	defer c.clog.foldMu.Unlock()
	return c.clog.truncations
}

// HeadClaimForTest returns the claim the handle's head stamp carries
// (claim.go): the claiming committer and the hold; ok false when none.
func (c *Catalog) HeadClaimForTest(ctx context.Context) (committer uuid.UUID, hold time.Duration, ok bool, err error) {
	var cl *slotClaim
	err = c.consistentRead(ctx, func(kv kvReader) error {
		var err error
		cl, err = readHeadClaim(ctx, kv)
		return err
	})
	if err != nil || cl == nil {
		return uuid.Nil, 0, false, err
	}
	return cl.Committer, cl.Hold, true, nil
}

// CommitterIDForTest is the committer id a commit-log open offers its
// slots under.
func (c *Catalog) CommitterIDForTest() uuid.UUID { return c.clog.race.ident() }
