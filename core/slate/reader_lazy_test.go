package slate_test

import (
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

// A lazy reader nothing reads makes no requests; a read makes the next
// tick refresh.
func TestLazyReaderIdlesUntilRead(t *testing.T) {
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
	time.Sleep(50 * time.Millisecond) // the tick after that read refreshes once
	before := counting.Snapshot()
	time.Sleep(100 * time.Millisecond) // 20 ticks, no reads
	if n := counting.Snapshot().Sub(before).Total(); n != 0 {
		t.Fatalf("an idle lazy reader made %d requests", n)
	}
	if err := db.Put(bg, []byte("k"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, r.Get, "k", "v1") // the read that sets the flag
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _, _ := r.Get(bg, []byte("k"))
		if string(v) == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lazy reader never refreshed after being read")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
