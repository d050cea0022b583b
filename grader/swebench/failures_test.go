package swebench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/golden"
	"github.com/tender-grader/tender/report"
)

// TestEveryErrorCodeHasAFailureKind: each code that leads to error is placed, on purpose, in
// SWE-bench's infra or ambiguous failure list. A new error code fails here until it has a row.
func TestEveryErrorCodeHasAFailureKind(t *testing.T) {
	want := map[report.Code]failure{
		report.CodeBootstrap:         infraFailure,
		report.CodeRepositoryRefused: infraFailure,
		report.CodeBaseMissing:       infraFailure,
		report.CodeSourceDirty:       infraFailure,
		report.CodeHeadMismatch:      infraFailure,
		report.CodeEnvironmentBroken: infraFailure,
		report.CodeVerifierFailed:    infraFailure,
		report.CodeVerifierKilled:    infraFailure,
		report.CodeWorkspaceFailed:   infraFailure,
		report.CodeHostDiskFull:      infraFailure,
		report.CodeInternalPanic:     infraFailure,
		report.CodeInterrupted:       infraFailure,
		report.CodeEvalChanged:       ambiguousFailure,
		report.CodeUnsafeTree:        ambiguousFailure,
		report.CodeTestPatchInvalid:  ambiguousFailure,
		report.CodeTestPatchFailed:   ambiguousFailure,
		report.CodeTestIDUnresolved:  ambiguousFailure,
	}
	got := map[report.Code]failure{}
	for _, ci := range report.Codes() {
		if ci.Verdict == report.Error {
			got[ci.Code] = failureKind(ci.Code)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failure kinds of the error codes (-want +got):\n%s", diff)
	}
	for c := range ambiguousCodes {
		if ci, ok := report.Lookup(c); !ok || ci.Verdict != report.Error {
			t.Errorf("%s is an ambiguous failure but does not lead to error", c)
		}
	}
}

// TestRunReportFailuresGolden: a run with error pairs of both kinds (the environment cannot
// collect the tests; a cut test ID names several tests) beside graded pairs. Each error pair is
// in error_ids and in one failure list, with the code that decided it in failure_reasons; the
// code is the first that leads to error, after any note.
func TestRunReportFailuresGolden(t *testing.T) {
	pair := func(id string, v report.Verdict, codes ...report.Code) report.PairResult {
		p := report.PairResult{ID: id, Verdict: v}
		for _, c := range codes {
			p.Reasons = append(p.Reasons, report.Reason{Code: c})
		}
		if v == report.Resolved || v == report.Unresolved {
			p.Checks = []report.Check{{Name: "target"}}
		}
		return p
	}
	r := report.Results{Pairs: []report.PairResult{
		pair("astropy-1", report.Resolved),
		pair("astropy-2", report.Unresolved, report.CodeTestFailed),
		pair("javaproperties-80", report.Error, report.CodeTestIDResolved, report.CodeTestIDUnresolved),
		pair("tabulate-1", report.Error, report.CodeEnvironmentBroken),
		pair("clikit-1", report.Error, report.CodeVerifierKilled, report.CodeInterrupted),
	}, NotImported: []string{"broken-record"}}
	rep := MakeRunReport(r)
	want := map[string]string{"javaproperties-80": "test_id_unresolved", "tabulate-1": "environment_broken",
		"clikit-1": "verifier_killed"}
	if diff := cmp.Diff(want, rep.FailureReasons); diff != "" {
		t.Errorf("failure_reasons (-want +got):\n%s", diff)
	}
	if rep.ErrorInstances != 4 || rep.InfraFailureInstances != 2 || rep.AmbiguousFailureInstances != 1 {
		t.Errorf("error %d, infra %d, ambiguous %d; want 4, 2, 1", rep.ErrorInstances, rep.InfraFailureInstances,
			rep.AmbiguousFailureInstances)
	}
	b, err := encodeReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "failures/swebench-summary.json.golden", b)
}
