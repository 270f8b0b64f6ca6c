package objstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
)

var bg = context.Background()

func fastRetry(s objstore.Store) *objstore.RetryingStore {
	return objstore.WithRetry(s, objstore.RetryOptions{BaseDelay: time.Microsecond, MaxDelay: time.Millisecond, MaxAttempts: 5})
}

func TestFaultyFailNthFailsExactlyThatCall(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	f.FailNth(objstore.OpPut, 2)
	if _, err := f.Put(bg, "a", []byte("1")); err != nil {
		t.Fatalf("1st put: %v", err)
	}
	_, err := f.Put(bg, "b", []byte("2"))
	if !errors.Is(err, objstore.ErrTransient) || !errors.Is(err, objstore.ErrInjected) {
		t.Fatalf("2nd put: %v, want an injected transient error", err)
	}
	if _, _, err := f.Inner().Get(bg, "b"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("failed put landed: %v", err)
	}
	if _, err := f.Put(bg, "c", []byte("3")); err != nil {
		t.Fatalf("3rd put: %v", err)
	}
	// Other kinds are unaffected by a rule on Put.
	f.FailNth(objstore.OpGet, 1)
	if _, err := f.Head(bg, "a"); err != nil {
		t.Fatalf("head: %v", err)
	}
	if _, _, err := f.Get(bg, "a"); !errors.Is(err, objstore.ErrInjected) {
		t.Fatalf("1st get after FailNth(get,1): %v", err)
	}
	if f.Injected() != 2 {
		t.Fatalf("Injected = %d, want 2", f.Injected())
	}
}

func TestFaultyFreezeAfterAcceptsKWritesThenNone(t *testing.T) {
	for k := 0; k < 4; k++ {
		inner := objstore.NewMemory(0)
		f := objstore.NewFaulty(inner)
		f.FreezeAfter(k)
		landed := 0
		for i := 0; i < 6; i++ {
			_, err := f.PutIfAbsent(bg, string(rune('a'+i)), []byte("x"))
			if err == nil {
				landed++
			} else if !errors.Is(err, objstore.ErrInjected) {
				t.Fatalf("k=%d write %d: %v", k, i, err)
			}
		}
		if landed != k || inner.Len() != k {
			t.Fatalf("k=%d: %d writes succeeded, %d objects; want %d", k, landed, inner.Len(), k)
		}
		if !f.Frozen() {
			t.Fatalf("k=%d: not frozen after the budget was spent", k)
		}
		if err := f.Delete(bg, "a"); !errors.Is(err, objstore.ErrInjected) {
			t.Fatalf("k=%d: delete while frozen: %v", k, err)
		}
		if _, _, err := f.Get(bg, "zz"); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("k=%d: reads must keep working while frozen: %v", k, err)
		}
		f.FreezeAfter(-1)
		if _, err := f.Put(bg, "after", nil); err != nil {
			t.Fatalf("k=%d: after unfreeze: %v", k, err)
		}
	}
}

func TestFaultyLostAckLandsButReportsFailure(t *testing.T) {
	inner := objstore.NewMemory(0)
	f := objstore.NewFaulty(inner)
	f.LoseAckNth(objstore.OpPutIfAbsent, 1)
	_, err := f.PutIfAbsent(bg, "k", []byte("v"))
	if !errors.Is(err, objstore.ErrTransient) {
		t.Fatalf("lost ack returned %v, want transient", err)
	}
	if data, _, err := inner.Get(bg, "k"); err != nil || string(data) != "v" {
		t.Fatalf("lost-ack write did not land: %q %v", data, err)
	}
}

func TestFaultyLatencyHonoursContext(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	f.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	_, _, err := f.Get(ctx, "x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get with latency past the deadline: %v", err)
	}
	if objstore.IsTransient(err) {
		t.Fatal("a context error must not be transient")
	}
}

func TestRetryRecoversFromTransientReadsAndWrites(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	r := fastRetry(f)
	f.FailNth(objstore.OpPut, 1)
	if _, err := r.Put(bg, "a", []byte("1")); err != nil {
		t.Fatalf("Put through one transient failure: %v", err)
	}
	f.FailNth(objstore.OpGet, 1)
	if data, _, err := r.Get(bg, "a"); err != nil || string(data) != "1" {
		t.Fatalf("Get through one transient failure: %q %v", data, err)
	}
	f.FailNth(objstore.OpList, 1)
	if l, err := objstore.ListAll(bg, r, "", ""); err != nil || len(l) != 1 {
		t.Fatalf("List through one transient failure: %v %v", l, err)
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	r := fastRetry(f)
	f.FreezeAfter(0)
	_, err := r.Put(bg, "a", []byte("1"))
	if !errors.Is(err, objstore.ErrTransient) {
		t.Fatalf("Put against a frozen store: %v", err)
	}
	_, err = r.PutIfAbsent(bg, "a", []byte("1"))
	if !errors.Is(err, objstore.ErrOutcomeUnknown) {
		t.Fatalf("PutIfAbsent with every try failing: %v, want ErrOutcomeUnknown", err)
	}
	_, err = r.PutIfMatch(bg, "a", []byte("1"), `"x"`)
	if !errors.Is(err, objstore.ErrOutcomeUnknown) {
		t.Fatalf("PutIfMatch with every try failing: %v, want ErrOutcomeUnknown", err)
	}
}

func TestRetryDoesNotRetryDefiniteErrors(t *testing.T) {
	c := objstore.WithCounting(objstore.NewMemory(0))
	r := fastRetry(c)
	if _, _, err := r.Get(bg, "missing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := r.PutIfAbsent(bg, "k", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PutIfAbsent(bg, "k", []byte("b")); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("PutIfAbsent on a taken key: %v", err)
	}
	if _, err := r.PutIfMatch(bg, "k", []byte("b"), `"stale"`); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("PutIfMatch stale: %v", err)
	}
	got := c.Snapshot()
	if got.Of(objstore.OpGet) != 1 || got.Of(objstore.OpPutIfAbsent) != 2 || got.Of(objstore.OpPutIfMatch) != 1 {
		t.Fatalf("definite errors were retried: %v", got)
	}
}

func TestRetryPutIfAbsentLostAckResolvesToSuccess(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	r := fastRetry(f)
	f.LoseAckNth(objstore.OpPutIfAbsent, 1)
	etag, err := r.PutIfAbsent(bg, "slot/1", []byte("txn-a"))
	if err != nil {
		t.Fatalf("ambiguous PutIfAbsent whose write landed: %v, want success", err)
	}
	_, info, _ := f.Inner().Get(bg, "slot/1")
	if etag != info.ETag {
		t.Fatalf("etag %s, stored %s", etag, info.ETag)
	}
}

func TestRetryPutIfAbsentAmbiguousButOtherWriterWon(t *testing.T) {
	inner := objstore.NewMemory(0)
	f := objstore.NewFaulty(inner)
	r := fastRetry(f)
	// The first try fails before landing; meanwhile another writer takes the key.
	f.FailNth(objstore.OpPutIfAbsent, 1)
	if _, err := inner.PutIfAbsent(bg, "slot/1", []byte("txn-b")); err != nil {
		t.Fatal(err)
	}
	_, err := r.PutIfAbsent(bg, "slot/1", []byte("txn-a"))
	if !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("got %v, want ErrExists (someone else's bytes)", err)
	}
}

func TestRetryPutIfAbsentEmptyPayloadIsNeverClaimed(t *testing.T) {
	// Zero-byte fences carry no identity: an ambiguous try that meets an
	// existing empty object must report ErrExists, never success.
	f := objstore.NewFaulty(objstore.NewMemory(0))
	r := fastRetry(f)
	f.LoseAckNth(objstore.OpPutIfAbsent, 1)
	_, err := r.PutIfAbsent(bg, "wal/00000000000000000003.sst", nil)
	if !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("got %v, want ErrExists", err)
	}
}

func TestRetryPutIfMatchLostAckResolves(t *testing.T) {
	inner := objstore.NewMemory(0)
	f := objstore.NewFaulty(inner)
	r := fastRetry(f)
	e1, _ := inner.Put(bg, "b", []byte("v1"))
	f.LoseAckNth(objstore.OpPutIfMatch, 1)
	e2, err := r.PutIfMatch(bg, "b", []byte("v2"), e1)
	if err != nil {
		t.Fatalf("lost-ack PutIfMatch: %v", err)
	}
	_, info, _ := inner.Get(bg, "b")
	if info.ETag != e2 {
		t.Fatalf("returned etag %s, stored %s", e2, info.ETag)
	}
}

func TestRetryPutIfMatchUnresolvableIsOutcomeUnknown(t *testing.T) {
	inner := objstore.NewMemory(0)
	f := objstore.NewFaulty(inner)
	r := fastRetry(f)
	e1, _ := inner.Put(bg, "b", []byte("v1"))
	f.FailNth(objstore.OpPutIfMatch, 1) // not landed, but the caller cannot know
	if _, err := inner.Put(bg, "b", []byte("other")); err != nil {
		t.Fatal(err)
	}
	_, err := r.PutIfMatch(bg, "b", []byte("v2"), e1)
	if !errors.Is(err, objstore.ErrOutcomeUnknown) {
		t.Fatalf("got %v, want ErrOutcomeUnknown", err)
	}
}

func TestRetryStopsOnCancelledContext(t *testing.T) {
	f := objstore.NewFaulty(objstore.NewMemory(0))
	r := objstore.WithRetry(f, objstore.RetryOptions{BaseDelay: time.Hour, MaxDelay: time.Hour})
	f.FreezeAfter(0)
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Put(ctx, "a", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("retry slept past the context deadline")
	}
}

func TestCountingCountsRequestsAndBytes(t *testing.T) {
	c := objstore.WithCounting(objstore.NewMemory(2))
	before := c.Snapshot()
	c.Put(bg, "a", []byte("12345"))
	c.PutIfAbsent(bg, "b", []byte("12"))
	c.PutIfAbsent(bg, "b", []byte("12")) // error, still a request
	c.Get(bg, "a")
	c.GetRange(bg, "a", 1, 2)
	c.Head(bg, "a")
	c.Put(bg, "c", nil)
	objstore.ListAll(bg, c, "", "") // 3 objects at page size 2: 2 pages
	c.Delete(bg, "c")
	d := c.Snapshot().Sub(before)
	want := map[objstore.Op]int64{objstore.OpPut: 2, objstore.OpPutIfAbsent: 2, objstore.OpGet: 1, objstore.OpGetRange: 1,
		objstore.OpHead: 1, objstore.OpList: 2, objstore.OpDelete: 1, objstore.OpPutIfMatch: 0}
	for op, n := range want {
		if d.Of(op) != n {
			t.Errorf("%s = %d, want %d (all: %v)", op, d.Of(op), n, d)
		}
	}
	if d.Errors[objstore.OpPutIfAbsent] != 1 {
		t.Errorf("errors for put-if-absent = %d, want 1", d.Errors[objstore.OpPutIfAbsent])
	}
	if d.BytesWritten != 9 || d.BytesRead != 7 {
		t.Errorf("bytes written %d read %d, want 9 and 7", d.BytesWritten, d.BytesRead)
	}
	if d.Reads() != 3 || d.Writes() != 5 || d.Total() != 10 {
		t.Errorf("reads %d writes %d total %d", d.Reads(), d.Writes(), d.Total())
	}
}

func TestPrefixedKeysLiveUnderThePrefix(t *testing.T) {
	inner := objstore.NewMemory(0)
	a := objstore.WithPrefix(inner, "lakes/a/")
	b := objstore.WithPrefix(inner, "lakes/b/")
	if _, err := a.Put(bg, "wal/1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := inner.Get(bg, "lakes/a/wal/1"); err != nil {
		t.Fatalf("inner key: %v", err)
	}
	if _, err := b.Head(bg, "wal/1"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("b sees a's key: %v", err)
	}
	// A conditional create in one part does not collide with the other's.
	if _, err := b.PutIfAbsent(bg, "wal/1", []byte("y")); err != nil {
		t.Fatalf("b's create: %v", err)
	}
	if _, err := a.PutIfAbsent(bg, "wal/1", []byte("z")); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("a's second create: %v, want ErrExists", err)
	}
	got, err := objstore.ListAll(bg, a, "", "")
	if err != nil || len(got) != 1 || got[0].Key != "wal/1" {
		t.Fatalf("a lists %v, %v; want [wal/1]", got, err)
	}
	if s := a.String(); s != "memory://lakes/a/" && s != inner.String()+"/lakes/a/" && s != inner.String()+"lakes/a/" {
		t.Fatalf("String() = %q", s)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("WithPrefix accepted a prefix without a trailing '/'")
		}
	}()
	objstore.WithPrefix(inner, "lakes/a")
}

// ignoringStore is a store whose PutIfAbsent ignores the condition, as an
// S3-compatible server that drops If-None-Match does.
type ignoringStore struct{ objstore.Store }

func (s ignoringStore) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.Store.Put(ctx, key, data)
}

func TestCheckConditionalPut(t *testing.T) {
	good := objstore.NewMemory(0)
	for i := range 2 { // a probed store passes again (one refused create)
		if err := objstore.CheckConditionalPut(bg, good); err != nil {
			t.Fatalf("check %d of a memory store: %v", i, err)
		}
	}
	if _, err := good.Head(bg, objstore.ProbeKey); err != nil {
		t.Fatalf("the probe object of a store that passed: %v", err)
	}
	inner := objstore.NewMemory(0)
	err := objstore.CheckConditionalPut(bg, ignoringStore{inner})
	if !errors.Is(err, objstore.ErrNoConditionalWrites) || !strings.Contains(err.Error(), "If-None-Match") {
		t.Fatalf("check of a store ignoring the condition: %v, want ErrNoConditionalWrites naming If-None-Match", err)
	}
	if objs, _ := objstore.ListAll(bg, inner, "", ""); len(objs) != 0 {
		t.Fatalf("the failed check left %d objects", len(objs))
	}
}
