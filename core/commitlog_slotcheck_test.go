package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/provider"
)

// RFC 0024: every slot past the first carries exactly one sys/head stamp
// whose batch counter is the origin plus the slot; a slot breaking that is
// refused as corruption by the fold, by a committer's reads and by its next
// commit, rather than wedging every commit in lost races. A foreign
// committer (the provider used directly) lands the bad slot.
func TestSlotBreakingTheHeadStampRuleIsCorruption(t *testing.T) {
	junk := core.LogWrite{Key: []byte("zz/junk"), Value: []byte("x")}
	cases := []struct {
		name   string
		writes func(h core.Head) []core.LogWrite
		want   string
	}{
		{"no head stamp", func(core.Head) []core.LogWrite { return []core.LogWrite{junk} }, "carries 0 head stamps"},
		// The engine sees the stamp that takes effect (the last); the
		// committer's check on landed slots sees both.
		{"two head stamps, the last off by one", func(h core.Head) []core.LogWrite {
			return []core.LogWrite{junk,
				{Key: core.HeadKeyForTest(), Value: core.EncodeHeadForTest(h.SnapshotID+1, h.BatchSeq+1)},
				{Key: core.HeadKeyForTest(), Value: core.EncodeHeadForTest(h.SnapshotID+1, h.BatchSeq+2)}}
		}, "head stamp"},
		{"a stamp off by one", func(h core.Head) []core.LogWrite {
			return []core.LogWrite{junk, {Key: core.HeadKeyForTest(), Value: core.EncodeHeadForTest(h.SnapshotID+1, h.BatchSeq+2)}}
		}, "head stamp says batch"},
		{"a deleted head", func(core.Head) []core.LogWrite {
			return []core.LogWrite{junk, {Key: core.HeadKeyForTest(), Delete: true}}
		}, "deletes the head stamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := objstore.NewMemory(0)
			c := openCommitter(t, store, logOpts())
			createTable(t, c, "a")
			h, err := c.Head(bg)
			if err != nil {
				t.Fatal(err)
			}
			pc := provider.New(provider.Options{}).Committer(store, "")
			base, _, err := pc.Base(bg)
			if err != nil {
				t.Fatal(err)
			}
			slot := base.SlotFor(h)
			res, err := pc.Offer(bg, core.LogBatch{TxnID: uuid.New(), Slot: slot, Head: h, Writes: tc.writes(h)})
			if err != nil || !res.Won {
				t.Fatalf("landing the bad slot: %+v %v", res, err)
			}
			wantCorrupt := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, core.Corruption) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("slot %d", slot)) {
					t.Fatalf("%s: %v, want Corruption naming slot %d (%q)", what, err, slot, tc.want)
				}
			}
			_, err = c.FoldSprint(bg)
			wantCorrupt("fold", err)
			_, err = c.View(bg)
			wantCorrupt("the committer's read", err)
			_, err = c.Commit(bg, func(tx *core.Transaction) error { _, err := tx.CreateSchema("s"); return err })
			wantCorrupt("the next commit", err)
			if errors.Is(err, core.RetryExhausted) {
				t.Fatalf("the next commit reports contention: %v", err)
			}
			// A fresh committer refuses too (its reader meets the slot).
			if c2, err := core.Open(bg, store, logOpts()); err == nil {
				_, err = c2.View(bg)
				c2.Close(bg)
				wantCorrupt("a fresh committer's read", err)
			} else {
				wantCorrupt("a fresh committer's open", err)
			}
		})
	}
}
