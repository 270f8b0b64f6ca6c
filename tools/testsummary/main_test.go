package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummaryCountsAndExitStatus(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":0.1}`,
		`{"Action":"pass","Package":"p/a","Test":"TestS3Basics","Elapsed":0.1}`,
		`{"Action":"pass","Package":"p/a","Test":"TestEngine/s3/native","Elapsed":0.1}`,
		`{"Action":"pass","Package":"p/a","Test":"TestEngine/as3x","Elapsed":0.1}`,
		`{"Action":"output","Package":"p/a","Test":"TestSkipped","Output":"    x_test.go:3: needs a thing\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestSkipped","Elapsed":0}`,
		`{"Action":"pass","Package":"p/a","Elapsed":1.5}`,
	}, "\n")
	var out bytes.Buffer
	if code := run(strings.NewReader(in), &out); code != 0 {
		t.Fatalf("exit %d for a passing run:\n%s", code, out.String())
	}
	s := out.String()
	for _, want := range []string{"4 passed, 0 failed, 1 skipped, 2 against S3", "SKIPPED p/a TestSkipped", "needs a thing", "PASS"} {
		if !strings.Contains(s, want) {
			t.Fatalf("summary lacks %q:\n%s", want, s)
		}
	}
	failing := in + "\n" + `{"Action":"output","Package":"p/b","Test":"TestBad","Output":"boom\n"}` + "\n" +
		`{"Action":"fail","Package":"p/b","Test":"TestBad"}` + "\n" + `{"Action":"fail","Package":"p/b"}`
	out.Reset()
	if code := run(strings.NewReader(failing), &out); code != 1 {
		t.Fatalf("exit %d for a failing run", code)
	}
	if !strings.Contains(out.String(), "FAILED p/b TestBad") || !strings.Contains(out.String(), "boom") {
		t.Fatalf("failing test not reported:\n%s", out.String())
	}
	out.Reset()
	if code := run(strings.NewReader(`{"Action":"start","Package":"p/c"}`), &out); code != 1 {
		t.Fatalf("a package with no result must fail the run:\n%s", out.String())
	}
}
