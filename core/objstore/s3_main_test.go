package objstore_test

import (
	"testing"

	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

// TestMain is the package's only TestMain (objstore and objstore_test share
// one test binary). s3test.Main runs the tests, then stops the versitygw
// server the S3 tests started, if any. If this package needs more setup,
// extend this function rather than adding another TestMain (or call
// s3test.Stop after m.Run).
func TestMain(m *testing.M) { s3test.Main(m) }
