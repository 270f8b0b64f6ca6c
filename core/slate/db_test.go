package slate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/slate"
)

var bg = context.Background()

// fast settings keep tests quick: WAL flushes every 5ms.
func fast() slate.Settings {
	return slate.Settings{FlushInterval: 5 * time.Millisecond, ManifestPollInterval: 20 * time.Millisecond}
}

func open(t *testing.T, s objstore.Store, opts ...slate.Option) *slate.DB {
	t.Helper()
	opts = append([]slate.Option{slate.WithSettings(fast())}, opts...)
	db, err := slate.Open(bg, s, "db", opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func mustGet(t *testing.T, get func(context.Context, []byte) ([]byte, bool, error), key, want string) {
	t.Helper()
	v, ok, err := get(bg, []byte(key))
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	if want == "" {
		if ok {
			t.Fatalf("Get(%s) = %q, want absent", key, v)
		}
		return
	}
	if !ok || string(v) != want {
		t.Fatalf("Get(%s) = %q (found %v), want %q", key, v, ok, want)
	}
}

func scanAll(t *testing.T, it *slate.Iterator) []string {
	t.Helper()
	defer it.Close()
	var out []string
	for it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func TestPutGetDeleteScanSurviveReopen(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s)
	for i := 0; i < 20; i++ {
		if err := db.Put(bg, []byte(fmt.Sprintf("k%02d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete(bg, []byte("k05")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, db.Get, "k04", "v4")
	mustGet(t, db.Get, "k05", "")
	got := scanAll(t, db.Scan(bg, []byte("k03"), []byte("k08")))
	want := "k03=v3 k04=v4 k06=v6 k07=v7"
	if fmt.Sprint(got) != "["+want+"]" {
		t.Fatalf("scan = %v, want [%s]", got, want)
	}
	if err := db.Close(bg); err != nil {
		t.Fatal(err)
	}
	db2 := open(t, s)
	defer db2.Close(bg)
	mustGet(t, db2.Get, "k19", "v19")
	mustGet(t, db2.Get, "k05", "")
	if n := len(scanAll(t, db2.Scan(bg, nil, nil))); n != 19 {
		t.Fatalf("after reopen scan has %d keys, want 19", n)
	}
	st := db2.Stats()
	if st.L0 == 0 {
		t.Fatalf("Close did not flush the memtable to L0: %+v", st)
	}
}

func TestUnclosedWriterIsReplayedFromWAL(t *testing.T) {
	s := objstore.NewMemory(0)
	db := open(t, s)
	for i := 0; i < 10; i++ {
		if err := db.Put(bg, []byte(fmt.Sprintf("k%d", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// No Close: a crash. The next writer fences it and replays the WAL.
	db2 := open(t, s)
	defer db2.Close(bg)
	for i := 0; i < 10; i++ {
		mustGet(t, db2.Get, fmt.Sprintf("k%d", i), "x")
	}
	if err := db.Put(bg, []byte("late"), []byte("y")); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("older writer's write after fencing: %v, want ErrFenced", err)
	}
	if err := db.Put(bg, []byte("later"), []byte("y")); !errors.Is(err, slate.ErrFenced) {
		t.Fatalf("older writer stays closed with ErrFenced: %v", err)
	}
	db.Close(bg)
	mustGet(t, db2.Get, "late", "")
}
