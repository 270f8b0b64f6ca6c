package slate_test

import (
	"context"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(bg, d)
}

func s3Store(t *testing.T) objstore.Store {
	s, _ := s3test.NewStore(t)
	return s
}

// extraEnvs adds S3 (a real versitygw, started by the harness when
// MORAINE_S3_ENDPOINT is not set; never skipped).
func extraEnvs() []*env {
	return []*env{{name: "s3/native", store: s3Store}}
}
