package grader

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

const (
	p, f = report.TestPassed, report.TestFailed
)

func runOfTests(tests map[string]report.TestStatus) run { return run{tests: tests, testsOnly: true} }

// TestFlakyDecisions: which tests are flaky, when the reruns have nothing more to tell, and
// whether a check passes with the excluded tests dropped.
func TestFlakyDecisions(t *testing.T) {
	first := runOfTests(map[string]report.TestStatus{"a": f, "b": p, "c": f})
	flip := runOfTests(map[string]report.TestStatus{"a": p, "b": f, "c": f})
	same := runOfTests(map[string]report.TestStatus{"a": f, "b": p, "c": f})
	cFixed := runOfTests(map[string]report.TestStatus{"a": f, "b": p, "c": p})
	forged := run{tests: map[string]report.TestStatus{"a": p, "b": p, "c": p}}

	if got := flakyTests([]run{first, same}); len(got) != 0 {
		t.Errorf("the same outcomes twice are flaky: %v", got)
	}
	if got, want := flakyTests([]run{first, flip}), []string{"a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("flaky = %v, want %v", got, want)
	}
	if learned([]run{first, flip}) {
		t.Error("c failed in every run, yet the reruns stopped")
	}
	if !learned([]run{first, flip, cFixed}) {
		t.Error("every test that failed first has passed since, yet the reruns go on")
	}

	for _, tt := range []struct {
		name     string
		runs     []run
		excluded []string
		pass     bool
		left     int
	}{
		{"nothing excluded", []run{first, flip}, nil, false, 3},
		{"a stable failure stays", []run{first, flip}, []string{"a", "b"}, false, 0},
		{"a test outside the excluded set failed", []run{first, flip, cFixed}[1:2], []string{"b"}, false, 0},
		{"flaky only", []run{runOfTests(map[string]report.TestStatus{"a": f, "b": p}), runOfTests(map[string]report.TestStatus{"a": p, "b": p})}, []string{"a"}, true, 1},
		{"every test excluded", []run{runOfTests(map[string]report.TestStatus{"a": f}), runOfTests(map[string]report.TestStatus{"a": p})}, []string{"a"}, true, 0},
		{"a run whose failure was not a test's", []run{runOfTests(map[string]report.TestStatus{"a": f}), forged}, []string{"a"}, false, 0},
	} {
		pass, left := passesWithout(tt.runs, tt.excluded, keys(tt.runs[0].tests))
		if pass != tt.pass || left != tt.left {
			t.Errorf("%s: passesWithout = %v, %d; want %v, %d", tt.name, pass, left, tt.pass, tt.left)
		}
	}
}

func keys(m map[string]report.TestStatus) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestResumeKeepsExcludedRecords: a record whose regression check passed with a flaky test
// excluded still stands on resume; an excluded fail_to_pass test, or a pair with nothing
// left, does not.
func TestResumeKeepsExcludedRecords(t *testing.T) {
	pair := &suite.Pair{FailToPass: []string{"t"}, PassToPass: []string{"a", "b"}}
	target := report.Check{Name: "target", Passed: true, Tests: map[string]report.TestStatus{"t": p}}
	reg := func(a, b report.TestStatus) report.Check {
		return report.Check{Name: "regression", Passed: true, Tests: map[string]report.TestStatus{"a": a, "b": b}}
	}
	ex := report.TestExcluded
	if !allPassed(pair, []report.Check{target, reg(p, ex)}) {
		t.Error("a regression check with one flaky test excluded does not stand")
	}
	if !allPassed(pair, []report.Check{target, reg(ex, ex)}) {
		t.Error("every pass_to_pass test excluded, with a passing fail_to_pass test, does not stand")
	}
	exTarget := target
	exTarget.Tests = map[string]report.TestStatus{"t": ex}
	if allPassed(pair, []report.Check{exTarget, reg(p, p)}) {
		t.Error("an excluded fail_to_pass test stands")
	}
	noF2P := &suite.Pair{PassToPass: []string{"a", "b"}}
	if allPassed(
		noF2P,
		[]report.Check{{Name: "target", Passed: true, Tests: map[string]report.TestStatus{}}, reg(ex, ex)},
	) {
		t.Error("a pair with every required test excluded stands as resolved")
	}
}
