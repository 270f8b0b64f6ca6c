// Package quiet holds a test helper that waits for a store to go quiet:
// the way tests assert "an idle reader makes no requests" without guessing
// how long its last poll takes on a loaded machine.
package quiet

import (
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
)

// Wait returns once a whole window passes in which store sees no request,
// and fails the test if that has not happened within deadline. Something
// that keeps polling never goes quiet, so the wait itself is the
// assertion; a window of many poll intervals keeps a tick merely delayed
// by a busy machine from passing for quiet.
func Wait(t testing.TB, store *objstore.CountingStore, window, deadline time.Duration) {
	t.Helper()
	give := time.Now().Add(deadline)
	for {
		before := store.Snapshot()
		time.Sleep(window)
		if n := store.Snapshot().Sub(before).Total(); n == 0 {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("%s never went quiet for %v within %v: still making requests", store, window, deadline)
		}
	}
}
