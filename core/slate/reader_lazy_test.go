package slate_test

import (
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
	"github.com/moraine-go/moraine/internal/testutil/quiet"
)

// A lazy reader nothing reads makes no requests, and the first read after
// an idle spell longer than the poll interval polls before it is served, so
// it is never staler than the interval.
func TestLazyReaderIdlesUntilReadAndServesFresh(t *testing.T) {
	inner := objstore.NewMemory(0)
	db := open(t, inner)
	defer db.Close(bg)
	if err := db.Put(bg, []byte("k"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	counting := objstore.WithCounting(inner)
	r, err := slate.OpenReader(bg, counting, "db", slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: 5 * time.Millisecond, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	mustGet(t, r.Get, "k", "v1")
	// The tick after that read polls once; then nothing reads it, and a
	// lazy reader goes quiet (an eager one would poll every 5ms).
	quiet.Wait(t, counting, 100*time.Millisecond, 10*time.Second)
	before := counting.Snapshot()
	if err := db.Put(bg, []byte("k"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	// The last poll is 100ms old, far past the 5ms interval: this read
	// polls first.
	mustGet(t, r.Get, "k", "v2")
	if n := counting.Snapshot().Sub(before).Total(); n == 0 {
		t.Fatal("the read after the idle spell was served without polling")
	}
	// The same holds for a pinned cut of the reader.
	time.Sleep(20 * time.Millisecond)
	if err := db.Put(bg, []byte("k"), []byte("v3")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	snap, err := r.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	mustGet(t, snap.Get, "k", "v3")
}

// A lazy reader read continuously polls on its ticks, not on every read.
func TestLazyReaderReadInALoopPollsPerTickNotPerRead(t *testing.T) {
	inner := objstore.NewMemory(0)
	db := open(t, inner)
	defer db.Close(bg)
	if err := db.Put(bg, []byte("k"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	counting := objstore.WithCounting(inner)
	r, err := slate.OpenReader(bg, counting, "db", slate.ReaderOptions{Mode: slate.ReaderFollowLatest, PollInterval: time.Hour, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(bg)
	before := counting.Snapshot()
	for i := 0; i < 200; i++ {
		mustGet(t, r.Get, "k", "v1")
	}
	if n := counting.Snapshot().Sub(before).Total(); n != 0 {
		t.Fatalf("200 reads within one poll interval made %d requests", n)
	}
}
