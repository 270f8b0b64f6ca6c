package core

// slotcheck.go: the head-stamp rule of the commit log (RFC 0024, "The
// sequence a committer races"). A batch races the slot its own head stamp
// implies, so every slot past the first must carry exactly one sys/head
// stamp whose batch counter is the origin plus the slot number; slot 0 (the
// adoption stamp) carries none. A slot breaking the rule would make every
// later commit race a taken slot (its prepared head one behind), which
// looks like endless contention, so whatever folds slots or serves them to
// a committer refuses it as Corruption instead, naming the slot. (A
// read-only open never commits: its reader is not checked.)

import (
	"bytes"
	"context"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/slate"
)

// checkSlotStamps checks the head stamps one slot carries (the values of
// its writes to sys/head; nil for a delete of it).
func checkSlotStamps(base LogBase, slot uint64, stamps [][]byte) error {
	if slot == 0 {
		if len(stamps) != 0 {
			return errorf(Corruption, "commit-log slot 0 (the adoption stamp) carries %d head stamps, want none", len(stamps))
		}
		return nil
	}
	if len(stamps) != 1 {
		return errorf(Corruption, "commit-log slot %d carries %d head stamps, want exactly 1: the log cannot be folded past it", slot, len(stamps))
	}
	if stamps[0] == nil {
		return errorf(Corruption, "commit-log slot %d deletes the head stamp", slot)
	}
	h, err := decodeHead(stamps[0])
	if err != nil {
		return wrapf(Corruption, err, "commit-log slot %d: its head stamp does not decode", slot)
	}
	if want := base.OriginBatchSeq + slot; h.BatchSeq != want {
		return errorf(Corruption, "commit-log slot %d's head stamp says batch %d, want %d (origin %d + slot): the log cannot be folded past it", slot, h.BatchSeq, want, base.OriginBatchSeq)
	}
	return nil
}

// checkLogBatch applies the rule to a slot as the committer hands it.
func checkLogBatch(base LogBase, lb LogBatch) error {
	var stamps [][]byte
	for _, w := range lb.Writes {
		if bytes.Equal(w.Key, keys.Head()) {
			if w.Delete {
				stamps = append(stamps, nil)
			} else {
				stamps = append(stamps, w.Value)
			}
		}
	}
	return checkSlotStamps(base, lb.Slot, stamps)
}

// checkSlotRows applies the rule to WAL rows from the log plug: rows of
// one slot share the seq base.SeqBase+slot. Rows below SeqBase are not
// slots and are left alone. A plug hands the engine one row per key and
// slot (the last write wins), so this checks the stamp that takes effect;
// checkLogBatch, on slots as the committer hands them, sees every stamp.
func checkSlotRows(base LogBase, rows []slate.Row) error {
	head := keys.Head()
	for i := 0; i < len(rows); {
		seq := rows[i].Seq
		j := i
		var stamps [][]byte
		for ; j < len(rows) && rows[j].Seq == seq; j++ {
			if bytes.Equal(rows[j].Key, head) {
				if rows[j].IsTombstone() {
					stamps = append(stamps, nil)
				} else {
					stamps = append(stamps, rows[j].Value)
				}
			}
		}
		if seq >= base.SeqBase {
			if err := checkSlotStamps(base, seq-base.SeqBase, stamps); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// checkedWalReader checks every slot a log reader serves.
type checkedWalReader struct {
	slate.WalReader
	base LogBase
}

func (r checkedWalReader) Iterator(ctx context.Context, rng slate.WalRange) (slate.WalIterator, error) {
	it, err := r.WalReader.Iterator(ctx, rng)
	if err != nil {
		return nil, err
	}
	return &checkedWalIter{WalIterator: it, base: r.base}, nil
}

// checkedWriterInit checks every slot a fold replays.
type checkedWriterInit struct {
	slate.WriterInit
	base LogBase
}

func (w checkedWriterInit) FenceAndInit(ctx context.Context, m slate.WriterManifest) (slate.WalIterator, slate.WalWriter, error) {
	it, ww, err := w.WriterInit.FenceAndInit(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	return &checkedWalIter{WalIterator: it, base: w.base}, ww, nil
}

// checkedWalIter refuses a bad slot for good: the iterator beneath has
// moved past it, so continuing would silently skip it.
type checkedWalIter struct {
	slate.WalIterator
	base LogBase
	bad  error
}

func (it *checkedWalIter) Next(ctx context.Context) (*slate.WalRows, error) {
	if it.bad != nil {
		return nil, it.bad
	}
	rows, err := it.WalIterator.Next(ctx)
	if err != nil || rows == nil {
		return rows, err
	}
	if err := checkSlotRows(it.base, rows.Rows); err != nil {
		it.bad = err
		return nil, err
	}
	return rows, nil
}
