package provider_test

import (
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/commitlogtest"
	"github.com/moraine-go/moraine/provider"
)

// The in-tree provider keeps the public contract: RFC 0024's acceptance
// suite, which any commit-log library runs the same way.
func TestTheInTreeProviderPassesTheAcceptanceSuite(t *testing.T) {
	commitlogtest.Run(t, func(t *testing.T) core.CommitLogProvider { return provider.New(provider.Options{}) })
}
