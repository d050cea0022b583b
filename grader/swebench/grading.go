package swebench

import "github.com/tender-grader/tender/report"

// ResolutionStatus is SWE-bench's grade of one instance.
type ResolutionStatus string

// The values are SWE-bench's own strings.
const (
	ResolvedFull    ResolutionStatus = "RESOLVED_FULL"
	ResolvedPartial ResolutionStatus = "RESOLVED_PARTIAL"
	ResolvedNo      ResolutionStatus = "RESOLVED_NO"
)

// SuccessFailure splits a list of test IDs the way SWE-bench's report does.
type SuccessFailure struct {
	Success []string `json:"success"`
	Failure []string `json:"failure"`
}

// TestsStatus is the tests_status object of SWE-bench's per-instance report.json.
type TestsStatus struct {
	FailToPass SuccessFailure `json:"FAIL_TO_PASS"`
	PassToPass SuccessFailure `json:"PASS_TO_PASS"`
	FailToFail SuccessFailure `json:"FAIL_TO_FAIL"`
	PassToFail SuccessFailure `json:"PASS_TO_FAIL"`
}

// sweStatus is a test's status in SWE-bench's vocabulary; "" means absent from its status map.
type sweStatus string

const (
	swePassed  sweStatus = "PASSED"
	sweFailed  sweStatus = "FAILED"
	sweSkipped sweStatus = "SKIPPED"
	sweError   sweStatus = "ERROR"
	sweXFail   sweStatus = "XFAIL"
)

// toSWE maps a reconciled status to SWE-bench's. SWE-bench's log parsers record only its five
// statuses, so xpass, missing and duplicate are absent from its map, as they would be there.
func toSWE(s report.TestStatus) sweStatus {
	switch s {
	case report.TestPassed:
		return swePassed
	case report.TestFailed:
		return sweFailed
	case report.TestSkipped:
		return sweSkipped
	case report.TestError:
		return sweError
	case report.TestXFail:
		return sweXFail
	}
	return ""
}

// Resolution grades an instance by SWE-bench's rules (harness/grading.py,
// get_eval_tests_report with PASS_AND_FAIL and get_resolution_status), for comparison with
// Tender's stricter verdict:
//   - a FAIL_TO_PASS test succeeds when PASSED or XFAIL, and fails when absent, FAILED,
//     ERROR or SKIPPED;
//   - a PASS_TO_PASS test succeeds when PASSED, XFAIL or SKIPPED, and fails when absent,
//     FAILED or ERROR;
//   - a rate over an empty list is 1, so an instance with no FAIL_TO_PASS tests is FULL when
//     its PASS_TO_PASS tests hold;
//   - FULL when both rates are 1, PARTIAL when 0 < FAIL_TO_PASS < 1 and PASS_TO_PASS is 1,
//     NO otherwise.
//
// The lists are walked as given, duplicates included, as SWE-bench does.
func Resolution(f2p, p2p []string, status map[string]report.TestStatus) (ResolutionStatus, TestsStatus) {
	ts := TestsStatus{
		FailToPass: split(f2p, status, failToPassOK),
		PassToPass: split(p2p, status, passToPassOK),
		FailToFail: SuccessFailure{Success: []string{}, Failure: []string{}},
		PassToFail: SuccessFailure{Success: []string{}, Failure: []string{}},
	}
	return statusOf(ts), ts
}

func failToPassOK(s sweStatus) bool { return s == swePassed || s == sweXFail }

func passToPassOK(s sweStatus) bool { return failToPassOK(s) || s == sweSkipped }

// failedSWE is SWE-bench's test_failed: absent, FAILED, ERROR or SKIPPED. A test that is
// neither ok nor failed lands in no list; with toSWE's mapping that cannot happen, but the
// rule is kept as SWE-bench has it.
func failedSWE(s sweStatus) bool {
	return s == "" || s == sweFailed || s == sweError || s == sweSkipped
}

func split(ids []string, status map[string]report.TestStatus, ok func(sweStatus) bool) SuccessFailure {
	sf := SuccessFailure{Success: []string{}, Failure: []string{}}
	for _, id := range ids {
		s := toSWE(status[id])
		switch {
		case ok(s):
			sf.Success = append(sf.Success, id)
		case failedSWE(s):
			sf.Failure = append(sf.Failure, id)
		}
	}
	return sf
}

func statusOf(ts TestsStatus) ResolutionStatus {
	f2pOK, f2pN := len(ts.FailToPass.Success), len(ts.FailToPass.Success)+len(ts.FailToPass.Failure)
	p2pOK, p2pN := len(ts.PassToPass.Success), len(ts.PassToPass.Success)+len(ts.PassToPass.Failure)
	f2pFull := f2pN == 0 || f2pOK == f2pN
	p2pFull := p2pN == 0 || p2pOK == p2pN
	switch {
	case f2pFull && p2pFull:
		return ResolvedFull
	case f2pOK > 0 && f2pOK < f2pN && p2pFull:
		return ResolvedPartial
	}
	return ResolvedNo
}
