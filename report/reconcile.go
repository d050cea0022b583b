package report

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/tender-grader/tender/report/junit"
)

// maxDetail caps a reason's text; maxTotalsReasons the totals reasons of one report.
const (
	maxDetail        = 500
	maxTotalsReasons = 5
)

// Outcome is what Reconcile concludes about one check.
type Outcome struct {
	Passed  bool
	Tests   map[string]TestStatus // every required ID
	Reasons []Reason
	// Unwritten is how many passes pytest counted without a <testcase> of their own
	// (passing subtests; junit.Report.Unwritten). It is recorded and decides nothing.
	Unwritten int
}

// Reconcile decides one check from its JUnit report. The check passes only when every
// required ID appears exactly once and passed, every total the report declares adds up to
// its cases, and the runner's exit code agrees with the cases (zero exactly when none failed
// or errored). Tests the report has beyond the required ones are allowed and still counted.
//
// Pass rep == nil with parseErr == nil, or a parseErr wrapping fs.ErrNotExist, when the
// runner wrote no report; any other parseErr is an unparsable report. Reconcile is pure.
func Reconcile(rep *junit.Report, parseErr error, required []string, exitCode int) Outcome {
	ids := uniqueSorted(required)
	if code, detail, bad := reportProblem(rep, parseErr); bad {
		return Outcome{Tests: allStatus(ids, TestMissing), Reasons: []Reason{{Code: code, Detail: detail}}}
	}
	out := Outcome{Tests: make(map[string]TestStatus, len(ids)), Unwritten: rep.Unwritten()}
	byID := indexCases(rep.Cases)
	for _, id := range ids {
		st, r := judgeTest(id, byID[id])
		out.Tests[id] = st
		if r != nil {
			out.Reasons = append(out.Reasons, *r)
		}
	}
	out.Reasons = append(out.Reasons, totalsReasons(rep)...)
	if r := exitReason(rep, exitCode); r != nil {
		out.Reasons = append(out.Reasons, *r)
	}
	out.Passed = len(out.Reasons) == 0
	return out
}

func uniqueSorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func allStatus(ids []string, st TestStatus) map[string]TestStatus {
	m := make(map[string]TestStatus, len(ids))
	for _, id := range ids {
		m[id] = st
	}
	return m
}

// reportProblem names what is wrong with the report in Tender's words only: a parse error
// can quote the report, which the candidate wrote.
func reportProblem(rep *junit.Report, err error) (code Code, detail string, bad bool) {
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist), err == nil && rep == nil:
		return CodeReportMissing, "the runner wrote no JUnit report", true
	case errors.Is(err, junit.ErrTooLarge):
		return CodeReportUnparsable, "the report is over its size or count caps", true
	case errors.Is(err, junit.ErrDoctype), errors.Is(err, junit.ErrEntity):
		return CodeReportUnparsable, "the report declares a DOCTYPE or entities", true
	case errors.Is(err, junit.ErrNotJUnit), errors.Is(err, junit.ErrEmpty):
		return CodeReportUnparsable, "the report is not a JUnit report", true
	case errors.Is(err, junit.ErrEncoding):
		return CodeReportUnparsable,
			"the report's character encoding is not one Tender reads (UTF-8, ISO-8859-1, US-ASCII)", true
	case errors.Is(err, junit.ErrTotals):
		return CodeReportUnparsable,
			"a suite's tests, failures, errors or skipped attribute is not a whole number", true
	case errors.Is(err, junit.ErrTooDeep):
		return CodeReportUnparsable, "the report nests its elements too deeply", true
	case err != nil:
		return CodeReportUnparsable, "the report is not well-formed XML", true
	}
	return "", "", false
}

func indexCases(cases []junit.Case) map[string][]junit.Case {
	m := make(map[string][]junit.Case, len(cases))
	for _, c := range cases {
		m[c.ID] = append(m[c.ID], c)
	}
	return m
}

// judgeTest decides one required ID from the cases reported under it.
func judgeTest(id string, cases []junit.Case) (TestStatus, *Reason) {
	switch len(cases) {
	case 0:
		return TestMissing, &Reason{Code: CodeTestMissing, Detail: id + ": not in the report"}
	case 1:
	default:
		return TestDuplicate, &Reason{Code: CodeTestDuplicate,
			Detail: fmt.Sprintf("%s: reported %d times", id, len(cases))}
	}
	c := cases[0]
	st, code := statusOf(c.Status)
	if code == "" {
		return st, nil
	}
	// The runner's message is not quoted: code the candidate controls can put anything in
	// it, hidden tests included. The operator's log has it.
	return st, &Reason{
		Code:   code,
		Detail: clipText(fmt.Sprintf("%s: %s", id, st), maxDetail),
		Path:   c.File,
		Line:   c.Line,
	}
}

// statusOf maps a case's status to the reconciled status and the reason code it costs.
// A strict xpass is a failure: pytest fails the run for it.
func statusOf(s junit.Status) (TestStatus, Code) {
	switch s {
	case junit.Passed:
		return TestPassed, ""
	case junit.Failed:
		return TestFailed, CodeTestFailed
	case junit.XPass:
		return TestXPass, CodeTestFailed
	case junit.Errored:
		return TestError, CodeTestError
	case junit.Skipped:
		return TestSkipped, CodeTestSkipped
	case junit.XFail:
		return TestXFail, CodeTestXFail
	}
	return TestError, CodeTestError
}

func totalsReasons(rep *junit.Report) []Reason {
	if !rep.DeclaresTests() {
		return []Reason{{Code: CodeTotalsMismatch, Detail: "the report declares no tests total in any suite"}}
	}
	var out []Reason
	mm := rep.Mismatches()
	for i, m := range mm {
		if i == maxTotalsReasons {
			out = append(
				out,
				Reason{
					Code:   CodeTotalsMismatch,
					Detail: fmt.Sprintf("and %d more suites whose totals disagree", len(mm)-i),
				},
			)
			break
		}
		out = append(out, Reason{Code: CodeTotalsMismatch, Detail: fmt.Sprintf(
			"suite %d of the report declares %s=%d but its cases add up to %d",
			m.Suite+1,
			m.Field,
			m.Declared,
			m.Counted,
		)})
	}
	return out
}

// exitReason compares the exit code with the cases: a runner exits zero exactly when no case
// failed or errored. Skips and xfails do not make a run fail.
func exitReason(rep *junit.Report, exitCode int) *Reason {
	bad := 0
	for _, c := range rep.Cases {
		if c.Status == junit.Failed || c.Status == junit.Errored || c.Status == junit.XPass {
			bad++
		}
	}
	switch {
	case exitCode == 0 && bad > 0:
		return &Reason{Code: CodeExitCodeMismatch,
			Detail: fmt.Sprintf("the runner exited 0 but %d test case(s) failed or errored", bad)}
	case exitCode != 0 && bad == 0:
		return &Reason{Code: CodeExitCodeMismatch,
			Detail: fmt.Sprintf("the runner exited %d but every test case passed or was skipped", exitCode)}
	}
	return nil
}
