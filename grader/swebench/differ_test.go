package swebench

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
)

// TestDifferences: a pair whose verdict and SWE-bench's grade of the same run disagree names
// the rule that made the difference, one case per rule; pairs on which they agree name none.
func TestDifferences(t *testing.T) {
	const (
		f2p = "t.py::test_fix"
		p2p = "t.py::test_old"
		cut = "t.py::test_x[a"
	)
	passed, skipped := report.TestPassed, report.TestSkipped
	check := func(name string, ok bool, tests map[string]report.TestStatus, rs ...report.Reason) report.Check {
		return report.Check{Name: name, Passed: ok, Tests: tests, Reasons: rs}
	}
	target := check("target", true, map[string]report.TestStatus{f2p: passed})
	pair := func(v report.Verdict, checks ...report.Check) report.PairResult {
		return report.PairResult{ID: "p", Verdict: v, FailToPass: []string{f2p}, PassToPass: []string{p2p},
			Checks: checks}
	}
	withCut := func(p report.PairResult, standIns map[string]report.TestStatus) report.PairResult {
		p.PassToPass = []string{cut}
		p.StandInTestIDs = map[string][]string{cut: {cut + " b]", cut + " c]"}}
		p.Checks = append(p.Checks[:1], check("regression", false, standIns))
		return p
	}
	tests := []struct {
		name string
		p    report.PairResult
		rule string // "" when the two agree
		says string
	}{
		{name: "agree: resolved and FULL",
			p: pair(report.Resolved, target, check("regression", true, map[string]report.TestStatus{p2p: passed}))},
		{name: "agree: unresolved and NO",
			p: pair(report.Unresolved, check("target", false, map[string]report.TestStatus{f2p: report.TestFailed},
				report.Reason{Code: report.CodeTestFailed}))},
		{name: "skipped test", p: pair(report.Unresolved, target,
			check("regression", false, map[string]report.TestStatus{p2p: skipped},
				report.Reason{Code: report.CodeTestSkipped})),
			rule: RuleSkipped, says: "t.py::test_old skipped: Tender fails a skipped required test"},
		{name: "xfail", p: pair(report.Unresolved, check("target", false,
			map[string]report.TestStatus{f2p: report.TestXFail}, report.Reason{Code: report.CodeTestXFail}),
			check("regression", true, map[string]report.TestStatus{p2p: passed})),
			rule: RuleXFail, says: "t.py::test_fix an expected failure (xfail)"},
		{name: "integrity: a violation over passing tests", p: func() report.PairResult {
			p := pair(report.IntegrityViolation, target, check("regression", true,
				map[string]report.TestStatus{p2p: passed}))
			p.Reasons = []report.Reason{{Code: report.CodeReportForged}}
			return p
		}(), rule: RuleIntegrity, says: "integrity violation (report_forged)"},
		{name: "integrity: the exit code disagrees with passing tests", p: pair(report.Unresolved, target,
			check("regression", false, map[string]report.TestStatus{p2p: passed},
				report.Reason{Code: report.CodeExitCodeMismatch}, report.Reason{Code: report.CodeTripwire})),
			rule: RuleIntegrity, says: "as a whole (exit_code_mismatch)"},
		{name: "flaky: excluded under flaky: excluded", p: pair(report.Resolved, target,
			check("regression", true, map[string]report.TestStatus{p2p: report.TestExcluded})),
			rule: RuleFlaky, says: "t.py::test_old excluded as flaky"},
		{name: "patch method: refused by Tender, taken by SWE-bench's chain", p: func() report.PairResult {
			p := pair(report.Unresolved)
			p.Reasons, p.SWEBenchApply = []report.Reason{{Code: report.CodePatchFailed}}, "fuzz"
			return p
		}(), rule: RulePatchMethod, says: "SWE-bench's apply chain takes it (fuzz)"},
		{name: "cut ID: several tests, no verdict under ambiguous_ids: error", p: func() report.PairResult {
			p := pair(report.Error)
			p.Reasons = []report.Reason{{Code: report.CodeTestIDUnresolved, Detail: `test ID "t.py::test_x[a" ` +
				`looks truncated and names 2 collected tests (...); write the full ID, or require them all with ` +
				`ambiguous_ids: all`}}
			return p
		}(), rule: RuleCutID, says: "no verdict under ambiguous_ids: error"},
		{name: "agree: a cut ID that names no test has no grade either way", p: func() report.PairResult {
			p := pair(report.Error)
			p.Reasons = []report.Reason{{Code: report.CodeTestIDUnresolved, Detail: `test ID "t.py::test_x[a" ` +
				`looks truncated and names no test collected on the base commit with the test patch; ` +
				`write the full ID`}}
			return p
		}()},
		{name: "cut ID: a stand-in missing under ambiguous_ids: all", p: withCut(pair(report.Unresolved, target),
			map[string]report.TestStatus{cut + " b]": report.TestMissing, cut + " c]": passed}),
			rule: RuleCutID, says: "stand-in t.py::test_x[a b] of t.py::test_x[a (missing)"},
		{name: "unexplained: resolved, with a required test SWE-bench does not see passed",
			p:    pair(report.Resolved, target, check("regression", true, map[string]report.TestStatus{})),
			rule: RuleUnexplained, says: "Please report it as a bug"},
		{name: "agree: a failing stand-in fails the cut ID in SWE-bench's log too",
			p: withCut(pair(report.Unresolved, target),
				map[string]report.TestStatus{cut + " b]": report.TestFailed, cut + " c]": passed})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := Differences(tt.p)
			t.Logf("%s (SWE-bench %q): %+v", tt.p.Verdict, Grade(tt.p), ds)
			if tt.rule == "" {
				if ds != nil {
					t.Errorf("the rules agree, yet %+v", ds)
				}
				return
			}
			if len(ds) != 1 || ds[0].Rule != tt.rule || !strings.Contains(ds[0].Detail, tt.says) {
				t.Errorf("differences %+v, want one %q saying %q", ds, tt.rule, tt.says)
			}
		})
	}
}
