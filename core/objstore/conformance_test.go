package objstore_test

import (
	"context"
	"testing"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/core/objstore/objstoretest"
)

func memoryFactory(t *testing.T, pageSize int) objstore.Store {
	return objstore.NewMemory(pageSize)
}

func localFactory(t *testing.T, pageSize int) objstore.Store {
	s, err := objstore.NewLocal(t.TempDir(), pageSize)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMemoryConformance(t *testing.T) { objstoretest.Run(t, memoryFactory) }

func TestLocalConformance(t *testing.T) { objstoretest.Run(t, localFactory) }

func TestRetryingMemoryConformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T, pageSize int) objstore.Store {
		return objstore.WithRetry(memoryFactory(t, pageSize), objstore.RetryOptions{})
	})
}

func TestRetryingLocalConformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T, pageSize int) objstore.Store {
		return objstore.WithRetry(localFactory(t, pageSize), objstore.RetryOptions{})
	})
}

func TestCountingFaultyConformance(t *testing.T) {
	// Wrappers with no rules set must be transparent.
	objstoretest.Run(t, func(t *testing.T, pageSize int) objstore.Store {
		return objstore.WithCounting(objstore.NewFaulty(memoryFactory(t, pageSize)))
	})
}

func TestPrefixedConformance(t *testing.T) {
	// Keys beside the part (before, after and around its prefix) must stay
	// invisible to it: the suite expects each store to start empty.
	objstoretest.Run(t, func(t *testing.T, pageSize int) objstore.Store {
		inner := memoryFactory(t, pageSize)
		for _, k := range []string{"lakes/6", "lakes/61/x", "lakes/60", "lakes/6/", "lakes/7/y", "m", "a"} {
			if _, err := inner.Put(context.Background(), k, []byte("neighbour")); err != nil {
				t.Fatal(err)
			}
		}
		return objstore.WithPrefix(inner, "lakes/6/")
	})
}
