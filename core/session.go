package core

import (
	"context"
	"errors"

	"github.com/moraine-go/moraine/core/slate"
)

// session is where one batch is prepared and landed. It reads the catalog
// at the head the batch is prepared against and lands the batch's writes
// (plus the head stamp) all-or-none.
//
//   - engineSession: the single-writer path: an engine transaction; the
//     head CAS is the engine's write-write conflict check on sys/head.
//   - logSession (commitlog_session.go): a commit-log committer or holder:
//     the batch becomes one slot.
type session interface {
	kvReader
	// land writes the batch as prepared against prepared, with newHead as
	// its stamp. On a lost head race it returns the change sets that
	// landed since prepared (lost != nil) and writes nothing.
	land(ctx context.Context, b *preparedBatch) (lost *lostRace, err error)
	release()
}

// preparedBatch is what land needs.
type preparedBatch struct {
	prepared Head
	newHead  Head
	writes   []kvWrite
	changes  changeSet // every member's changes (for the log's classification record)
	// explicit: an explicit transaction's batch, which a lost race fails
	// (it is never re-run); it offers at once instead of waiting for a turn,
	// since every slot a turn lets a peer take first makes it lose.
	explicit bool
	// claim: a claim slot's claim (claim.go); its newHead keeps the
	// snapshot and it writes nothing but the stamp.
	claim *slotClaim
}

// lostRace describes what a batch lost to.
type lostRace struct {
	theirs  []changeSet
	resolve schemaNameOf
	// view is the committer's view advanced over the winners' slots (nil
	// when it could not be: the retry loads).
	view *CatalogView
	// toClaim: the only winner is a peer's claim slot (claim.go).
	toClaim bool
}

// newSession opens the session for this handle's role.
func (c *Catalog) newSession(ctx context.Context) (session, error) {
	if c.clog != nil {
		return c.clog.newSession(ctx)
	}
	return c.newEngineSession()
}

// engineSession is the single-writer session.
type engineSession struct {
	c    *Catalog
	etxn *slate.Txn
}

func (c *Catalog) newEngineSession() (*engineSession, error) {
	etxn, err := c.db.Begin()
	if err != nil {
		return nil, storeErr(err, "starting a commit")
	}
	return &engineSession{c: c, etxn: etxn}, nil
}

func (s *engineSession) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return s.etxn.Get(ctx, key)
}

func (s *engineSession) Scan(ctx context.Context, start, end []byte) *slate.Iterator {
	return s.etxn.Scan(ctx, start, end)
}

func (s *engineSession) release() { s.etxn.Rollback() }

func (s *engineSession) land(ctx context.Context, b *preparedBatch) (*lostRace, error) {
	for _, w := range b.writes {
		if w.value == nil {
			s.etxn.Delete(w.key)
		} else {
			s.etxn.Put(w.key, w.value)
		}
	}
	s.etxn.Put(headStamp(b.newHead))
	h, err := s.etxn.Commit(ctx, slate.WriteOptions{})
	if err == nil {
		return nil, nil
	}
	if errors.Is(err, slate.ErrTxnConflict) {
		theirs, resolve, ierr := s.c.intervening(ctx, b.prepared.SnapshotID)
		if ierr != nil {
			return nil, ierr
		}
		return &lostRace{theirs: theirs, resolve: resolve}, nil
	}
	if h.Seq != 0 {
		return nil, wrapf(OutcomeUnknown, err, "the commit was written but not confirmed durable; it may or may not have landed: re-read the head before retrying")
	}
	return nil, storeErr(err, "committing snapshot %d", b.newHead.SnapshotID)
}

// batchWrites flattens landed transactions' writes in staging order.
func batchWrites(txns []*Transaction) []kvWrite {
	var out []kvWrite
	for _, t := range txns {
		for _, k := range t.order {
			out = append(out, t.writes[k])
		}
	}
	return out
}

// unionChanges merges member change sets (a slot's classification record).
func unionChanges(txns []*Transaction) changeSet {
	var cs changeSet
	for _, t := range txns {
		cs.Snapshot = t.id
		cs.Changes = append(cs.Changes, t.changes...)
		cs.DeletedFiles = append(cs.DeletedFiles, t.deletedFiles...)
	}
	return cs
}
