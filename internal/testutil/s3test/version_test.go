package s3test

import (
	"os"
	"testing"
)

// The harness reads the version a versitygw binary was built at, so a
// developer running another release is told so.
func TestVersitygwVersionIsReadFromTheBinary(t *testing.T) {
	bin, err := FindVersitygw()
	if err != nil {
		t.Fatal(err)
	}
	if v := versitygwVersion(bin); v != VersitygwVersion {
		t.Fatalf("%s is versitygw %s, want %s (what .ci/run installs)", bin, v, VersitygwVersion)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if v := versitygwVersion(self); v != "unknown" {
		t.Fatalf("the test binary reads as versitygw %s", v)
	}
	if v := versitygwVersion("/nonexistent/versitygw"); v != "unknown" {
		t.Fatalf("a missing binary reads as versitygw %s", v)
	}
}
