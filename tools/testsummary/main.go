// Command testsummary reads `go test -json` on stdin and prints a compact
// per-package summary: pass/fail/skip counts, the output of every failing
// test, every skipped test with its reason, and how many S3 tests ran (the
// project's S3 tests must run, never skip). It exits non-zero if anything
// failed or a package reported no result.
//
//	go test -json ./... | go run ./tools/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type pkgState struct {
	name          string
	result        string // pass, fail, skip ("" = none yet)
	elapsed       float64
	passed        int
	failed        int
	skipped       int
	s3Passed      int
	output        []string            // package-level output
	testOutput    map[string][]string // per test
	failedTests   []string
	skippedTests  []string
	buildFailures []string
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	pkgs := map[string]*pkgState{}
	get := func(name string) *pkgState {
		p, ok := pkgs[name]
		if !ok {
			p = &pkgState{name: name, testOutput: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var stray []string
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			stray = append(stray, string(line))
			continue
		}
		if ev.Package == "" {
			if ev.Output != "" {
				stray = append(stray, strings.TrimRight(ev.Output, "\n"))
			}
			continue
		}
		p := get(ev.Package)
		switch ev.Action {
		case "build-output":
			p.buildFailures = append(p.buildFailures, strings.TrimRight(ev.Output, "\n"))
		case "build-fail":
			p.result = "fail"
		case "output":
			if ev.Test == "" {
				p.output = append(p.output, ev.Output)
			} else {
				p.testOutput[ev.Test] = append(p.testOutput[ev.Test], ev.Output)
			}
		case "pass", "fail", "skip":
			if ev.Test == "" {
				p.result = ev.Action
				p.elapsed = ev.Elapsed
				continue
			}
			switch ev.Action {
			case "pass":
				p.passed++
				if isS3Test(ev.Test) {
					p.s3Passed++
				}
			case "fail":
				p.failed++
				p.failedTests = append(p.failedTests, ev.Test)
			case "skip":
				p.skipped++
				p.skippedTests = append(p.skippedTests, ev.Test)
			}
		}
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	bad := false
	totalS3, total := 0, 0
	for _, n := range names {
		p := pkgs[n]
		total += p.passed
		totalS3 += p.s3Passed
		status := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "----", "": "????"}[p.result]
		if p.result == "fail" || p.result == "" {
			bad = true
		}
		extra := ""
		if p.s3Passed > 0 {
			extra = fmt.Sprintf(", %d against S3", p.s3Passed)
		}
		if p.passed+p.failed+p.skipped == 0 {
			fmt.Fprintf(out, "%s %-60s (no tests)\n", status, n)
		} else {
			fmt.Fprintf(out, "%s %-60s %6.1fs  %d passed, %d failed, %d skipped%s\n", status, n, p.elapsed, p.passed, p.failed, p.skipped, extra)
		}
	}
	for _, n := range names {
		p := pkgs[n]
		for _, t := range p.skippedTests {
			fmt.Fprintf(out, "\nSKIPPED %s %s:\n%s", n, t, indent(p.testOutput[t]))
		}
	}
	for _, n := range names {
		p := pkgs[n]
		if len(p.buildFailures) > 0 {
			fmt.Fprintf(out, "\nBUILD FAILED %s:\n%s\n", n, strings.Join(p.buildFailures, "\n"))
		}
		for _, t := range p.failedTests {
			fmt.Fprintf(out, "\nFAILED %s %s:\n%s", n, t, indent(p.testOutput[t]))
		}
		if p.result == "fail" && len(p.failedTests) == 0 && len(p.buildFailures) == 0 {
			fmt.Fprintf(out, "\nFAILED %s (outside any test):\n%s", n, indent(p.output))
		}
		if p.result == "" {
			fmt.Fprintf(out, "\nNO RESULT for %s (the test binary died?):\n%s", n, indent(p.output))
		}
	}
	if len(stray) > 0 {
		fmt.Fprintf(out, "\n%s\n", strings.Join(stray, "\n"))
		for _, s := range stray {
			if strings.HasPrefix(s, "FAIL") || strings.Contains(s, "build failed") || strings.Contains(s, "cannot find package") {
				bad = true
			}
		}
	}
	fmt.Fprintf(out, "\n%d tests passed, %d of them against S3.\n", total, totalS3)
	if bad {
		fmt.Fprintln(out, "FAIL")
		return 1
	}
	fmt.Fprintln(out, "PASS")
	return 0
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// isS3Test reports whether a test ran against S3: its name says S3
// (TestS3Basics) or one of its subtest segments is s3 (TestEngine/s3/native).
func isS3Test(name string) bool {
	if strings.Contains(name, "S3") {
		return true
	}
	for _, seg := range strings.Split(name, "/") {
		if strings.EqualFold(seg, "s3") {
			return true
		}
	}
	return false
}
