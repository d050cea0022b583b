package swebench

import "github.com/tender-grader/tender/report"

// SWE-bench's newer harness tells apart, among instances it could not grade, an infrastructure
// failure (the machine or the environment failed: grading again once it is fixed gives a grade)
// from an ambiguous one (the cause may lie with the instance's own data or with the patch).
// Tender's error verdicts map onto them by the reason code that decided the pair.

type failure string

const (
	infraFailure     failure = "infra"
	ambiguousFailure failure = "ambiguous"
)

// ambiguousCodes are the error codes whose cause may be the instance as given or the
// candidate: its test patch or test IDs, its base tree, or an evaluator file changed by code a
// setup command ran (which can be the candidate's). Every other code that leads to error is
// the machine's, the engine's, the environment's or Tender's own: an infrastructure failure.
var ambiguousCodes = map[report.Code]bool{
	report.CodeTestPatchInvalid: true,
	report.CodeTestPatchFailed:  true,
	report.CodeTestIDUnresolved: true,
	report.CodeUnsafeTree:       true,
	report.CodeEvalChanged:      true,
}

// failureKind says which of SWE-bench's failure lists an error code puts a pair in. A code the
// registry does not know is Tender's own failure: infra.
func failureKind(c report.Code) failure {
	if ambiguousCodes[c] {
		return ambiguousFailure
	}
	return infraFailure
}

// errorCode is the code that made an error pair's verdict: its first reason whose code leads to
// error (or that the registry does not know); internal_panic when it has none.
func errorCode(p report.PairResult) report.Code {
	for _, r := range p.Reasons {
		if ci, ok := report.Lookup(r.Code); !ok || ci.Verdict == report.Error {
			return r.Code
		}
	}
	return report.CodeInternalPanic
}
