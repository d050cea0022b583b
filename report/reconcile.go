package report

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/tender-grader/tender/report/junit"
)

// maxDetail caps the text a reason quotes from the report.
const maxDetail = 500

// Outcome is what Reconcile concludes about one check.
type Outcome struct {
	Passed  bool
	Tests   map[string]TestStatus // every required ID
	Reasons []Reason
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
	out := Outcome{Tests: make(map[string]TestStatus, len(ids))}
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

func reportProblem(rep *junit.Report, err error) (code Code, detail string, bad bool) {
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return CodeReportMissing, clipText(err.Error(), maxDetail), true
	case err != nil:
		return CodeReportUnparsable, clipText(err.Error(), maxDetail), true
	case rep == nil:
		return CodeReportMissing, "the runner wrote no JUnit report", true
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
	detail := fmt.Sprintf("%s: %s", id, st)
	if c.Message != "" {
		detail += ": " + c.Message
	}
	return st, &Reason{Code: code, Detail: clipText(detail, maxDetail), Path: c.File, Line: c.Line}
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
	for _, m := range rep.Mismatches() {
		s := rep.Suites[m.Suite]
		out = append(out, Reason{Code: CodeTotalsMismatch, Detail: clipText(fmt.Sprintf(
			"<%s name=%q> declares %s=%d but its cases add up to %d", s.Kind, s.Name, m.Field, m.Declared, m.Counted),
			maxDetail)})
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
