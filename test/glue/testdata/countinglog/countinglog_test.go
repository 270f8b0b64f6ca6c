package countinglog

import (
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/commitlogtest"
)

// The library proves it keeps RFC 0024's contract with moraine's public
// acceptance suite, as any commit-log library would.
func TestCountingLogKeepsTheContract(t *testing.T) {
	commitlogtest.Run(t, func(t *testing.T) core.CommitLogProvider { return New() })
}
