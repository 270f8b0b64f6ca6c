package cabi

import (
	"fmt"
	"runtime/cgo"
	"sync"

	"github.com/moraine-go/moraine/core"
)

// handles are the runtime/cgo handles given to C. The set of live ones lets
// a stale or foreign handle be refused instead of panicking inside
// cgo.Handle.Value.
var handles struct {
	mu   sync.Mutex
	live map[uintptr]bool
}

// countHandles counts the live handles by class in one pass under the
// lock (one consistent snapshot): counts[class(v)] for each handle's value
// v; a class outside counts is not counted.
func countHandles(counts []uint64, class func(any) int) {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	for h := range handles.live {
		if c := class(cgo.Handle(h).Value()); c >= 0 && c < len(counts) {
			counts[c]++
		}
	}
}

func newHandle(v any) uint64 {
	h := cgo.NewHandle(v)
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if handles.live == nil {
		handles.live = map[uintptr]bool{}
	}
	handles.live[uintptr(h)] = true
	return uint64(h)
}

// lookupHandle returns the value behind h if h is live and holds a T.
func lookupHandle[T any](h uint64, what string) (T, error) {
	var zero T
	handles.mu.Lock()
	ok := handles.live[uintptr(h)]
	handles.mu.Unlock()
	if !ok {
		return zero, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%d is not a live %s handle", h, what)}
	}
	v, ok := cgo.Handle(h).Value().(T)
	if !ok {
		return zero, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%d is not a %s handle", h, what)}
	}
	return v, nil
}

// releaseHandle releases h if it is a live handle holding a T; anything
// else (0, a stale or foreign handle, one of another kind) is ignored.
func releaseHandle[T any](h uint64, what string) {
	if _, err := lookupHandle[T](h, what); err == nil {
		deleteHandle(h)
	}
}

// deleteHandle releases h; it reports false for a handle that is not live.
func deleteHandle(h uint64) bool {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if !handles.live[uintptr(h)] {
		return false
	}
	delete(handles.live, uintptr(h))
	cgo.Handle(h).Delete()
	return true
}
