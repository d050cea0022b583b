package swebench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tender-grader/tender/report"
)

// The rules by which Tender's verdict of a pair and SWE-bench's grade of the same run can
// differ. Each is one of Tender's stated rules, stricter than SWE-bench's, or a policy of the
// suite that SWE-bench does not have.
const (
	RuleSkipped     = "skipped test" // Tender fails a skipped required test; SWE-bench passes a skipped p2p one
	RuleXFail       = "xfail"        // Tender fails an expected failure; SWE-bench counts XFAIL as a success
	RuleIntegrity   = "integrity"    // Tender judges the run as a whole; SWE-bench reads test statuses alone
	RuleFlaky       = "flaky"        // flaky: excluded drops a flaky test SWE-bench counts as failed
	RulePatchMethod = "patch method" // Tender refused a patch SWE-bench's apply chain takes
	RuleCutID       = "cut ID"       // a cut test ID that names several tests
	// RuleUnexplained marks a disagreement none of the rules above explains: a bug to report.
	RuleUnexplained = "unexplained"
)

// unexplained is the line of a disagreement no stated rule explains.
var unexplained = []report.RuleDifference{{Rule: RuleUnexplained, Detail: "no stated rule of Tender's explains " +
	"why the two grades differ; report.json has both readings of the run. Please report it as a bug"}}

// testCodes are the reasons that speak of one test; any other reason of a failed check is
// about the report or the run as a whole.
var testCodes = map[report.Code]bool{
	report.CodeTestMissing: true, report.CodeTestDuplicate: true, report.CodeTestSkipped: true,
	report.CodeTestXFail: true, report.CodeTestFailed: true, report.CodeTestError: true,
}

// Differences says which rules made the difference when Tender's verdict and SWE-bench's rule
// disagree on a pair: Tender resolved it and SWE-bench's grade is not FULL, or the other way
// round, or Tender gave no grade where SWE-bench's harness would have graded (a patch only its
// fallback chain applies, a cut ID that names several tests). nil when they agree.
func Differences(p report.PairResult) []report.RuleDifference {
	grade := Grade(p)
	switch {
	case grade == "":
		return ungraded(p)
	case (p.Verdict == report.Resolved) == (grade == "FULL"):
		return nil
	case p.Verdict == report.Resolved:
		return resolvedNotFull(p)
	}
	return fullNotResolved(p)
}

// ungraded names the rule that kept a pair from a grade SWE-bench's harness would give it.
func ungraded(p report.PairResult) []report.RuleDifference {
	var out []report.RuleDifference
	if p.SWEBenchApply != "" {
		out = append(out, report.RuleDifference{Rule: RulePatchMethod, Detail: fmt.Sprintf(
			"Tender refused the patch (patch_failed); SWE-bench's apply chain takes it (%s)", p.SWEBenchApply)})
	}
	for _, r := range p.Reasons {
		if r.Code == report.CodeTestIDUnresolved && strings.Contains(r.Detail, "ambiguous_ids: all") {
			out = append(out, report.RuleDifference{Rule: RuleCutID, Detail: "a cut test ID names several " +
				"collected tests: no verdict under ambiguous_ids: error, while SWE-bench keys them all under the " +
				"cut ID and grades the instance (ambiguous_ids: all does too)"})
			break
		}
	}
	return out
}

// resolvedNotFull: Tender resolved the pair and SWE-bench's rule does not. Only a test that
// flaky: excluded dropped can do that.
func resolvedNotFull(p report.PairResult) []report.RuleDifference {
	var excluded []string
	for _, c := range p.Checks {
		for id, st := range c.Tests {
			if st == report.TestExcluded && !slices.Contains(excluded, id) {
				excluded = append(excluded, id)
			}
		}
	}
	slices.Sort(excluded)
	if len(excluded) > 0 {
		return []report.RuleDifference{{Rule: RuleFlaky, Detail: fmt.Sprintf(
			"%s excluded as flaky (flaky: excluded), which SWE-bench's grading counts as failed", quoteSome(excluded))}}
	}
	return unexplained
}

// fullNotResolved: SWE-bench's rule gives FULL and Tender did not resolve the pair.
func fullNotResolved(p report.PairResult) []report.RuleDifference {
	found := map[string][]string{}
	tender := MergedTests(p)
	for _, id := range slices.Concat(p.FailToPass, p.PassToPass) {
		for _, t := range testsOf(p, id) {
			rule := ""
			switch st := tender[t]; {
			case st == report.TestPassed:
				continue
			case len(p.StandInTestIDs[id]) > 0:
				rule, t = RuleCutID, fmt.Sprintf("%s of %s (%s)", t, id, statusWord(st))
			case st == report.TestSkipped:
				rule = RuleSkipped
			case st == report.TestXFail:
				rule = RuleXFail
			}
			if rule != "" && !slices.Contains(found[rule], t) {
				found[rule] = append(found[rule], t)
			}
		}
	}
	var out []report.RuleDifference
	if p.Verdict == report.IntegrityViolation || len(runCodes(p)) > 0 {
		out = append(out, integrityDifference(p))
	}
	for _, rule := range []string{RuleSkipped, RuleXFail, RuleCutID} {
		if tests := found[rule]; len(tests) > 0 {
			out = append(out, report.RuleDifference{Rule: rule, Detail: ruleDetail(rule, tests)})
		}
	}
	if len(out) == 0 {
		return unexplained
	}
	return out
}

// testsOf are the tests Tender required for a required ID as the suite lists it.
func testsOf(p report.PairResult, id string) []string {
	if tests := p.StandInTestIDs[id]; len(tests) > 0 {
		return tests
	}
	if full, ok := p.ResolvedTestIDs[id]; ok {
		return []string{full}
	}
	return []string{id}
}

// runCodes are the codes of a failed check's reasons that judge the report or the run as a
// whole (exit_code_mismatch, totals_mismatch, a limit), not one test.
func runCodes(p report.PairResult) []string {
	var codes []string
	for _, c := range p.Checks {
		for _, r := range c.Reasons {
			ci, ok := report.Lookup(r.Code)
			if !c.Passed && !testCodes[r.Code] && (!ok || !ci.IsNote()) && !slices.Contains(codes, string(r.Code)) {
				codes = append(codes, string(r.Code))
			}
		}
	}
	return codes
}

func integrityDifference(p report.PairResult) report.RuleDifference {
	if p.Verdict == report.IntegrityViolation {
		return report.RuleDifference{Rule: RuleIntegrity, Detail: fmt.Sprintf(
			"Tender found an integrity violation (%s); SWE-bench's grading reads the test statuses alone",
			strings.Join(report.DistinctCodes(p.Reasons), ", "))}
	}
	return report.RuleDifference{Rule: RuleIntegrity, Detail: fmt.Sprintf(
		"Tender also judges the report and the run as a whole (%s); SWE-bench's grading reads the test statuses alone",
		strings.Join(runCodes(p), ", "))}
}

func ruleDetail(rule string, tests []string) string {
	switch rule {
	case RuleSkipped:
		return quoteSome(tests) + " skipped: Tender fails a skipped required test, SWE-bench's grading counts a " +
			"skipped pass_to_pass test as passed"
	case RuleXFail:
		return quoteSome(tests) + " an expected failure (xfail): Tender fails it, SWE-bench's grading counts XFAIL " +
			"as passed"
	}
	return "stand-in " + strings.Join(tests[:min(3, len(tests))], "; ") + moreOf(tests) +
		": Tender requires every test a cut ID names to pass (ambiguous_ids: all), SWE-bench's grading reads the " +
		"last line its log keeps under the cut ID"
}

// quoteSome names the first three tests and counts the rest.
func quoteSome(tests []string) string {
	return strings.Join(tests[:min(3, len(tests))], ", ") + moreOf(tests)
}

func moreOf(tests []string) string {
	if n := len(tests) - 3; n > 0 {
		return fmt.Sprintf(" and %d more", n)
	}
	return ""
}

func statusWord(st report.TestStatus) string {
	if st == "" {
		return string(report.TestMissing)
	}
	return string(st)
}
