package swebench

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

// TestSWEBenchResolution follows harness/grading.py: get_eval_tests_report (PASS_AND_FAIL)
// and get_resolution_status.
func TestSWEBenchResolution(t *testing.T) {
	st := map[string]report.TestStatus{
		"pass": report.TestPassed, "pass2": report.TestPassed, "fail": report.TestFailed, "err": report.TestError,
		"skip": report.TestSkipped, "xfail": report.TestXFail, "xpass": report.TestXPass, "dup": report.TestDuplicate,
		"missing": report.TestMissing,
	}
	sf := func(s, f []string) SuccessFailure {
		if s == nil {
			s = []string{}
		}
		if f == nil {
			f = []string{}
		}
		return SuccessFailure{Success: s, Failure: f}
	}
	tests := []struct {
		name     string
		f2p, p2p []string
		want     ResolutionStatus
		wantF2P  SuccessFailure
		wantP2P  SuccessFailure
	}{
		{
			"all pass",
			[]string{"pass"},
			[]string{"pass2"},
			ResolvedFull,
			sf([]string{"pass"}, nil),
			sf([]string{"pass2"}, nil),
		},
		{"both lists empty: rates are 1", nil, nil, ResolvedFull, sf(nil, nil), sf(nil, nil)},
		{"no f2p, p2p holds", nil, []string{"pass"}, ResolvedFull, sf(nil, nil), sf([]string{"pass"}, nil)},
		{"no f2p, p2p broken", nil, []string{"fail"}, ResolvedNo, sf(nil, nil), sf(nil, []string{"fail"})},
		{"no p2p", []string{"pass"}, nil, ResolvedFull, sf([]string{"pass"}, nil), sf(nil, nil)},
		{
			"partial",
			[]string{"pass", "fail"},
			[]string{"pass2"},
			ResolvedPartial,
			sf([]string{"pass"}, []string{"fail"}),
			sf([]string{"pass2"}, nil),
		},
		{
			"partial needs p2p whole",
			[]string{"pass", "fail"},
			[]string{"err"},
			ResolvedNo,
			sf([]string{"pass"}, []string{"fail"}),
			sf(nil, []string{"err"}),
		},
		{
			"no f2p passing",
			[]string{"fail", "err"},
			[]string{"pass"},
			ResolvedNo,
			sf(nil, []string{"fail", "err"}),
			sf([]string{"pass"}, nil),
		},
		{
			"xfail counts as success in f2p",
			[]string{"xfail"},
			nil,
			ResolvedFull,
			sf([]string{"xfail"}, nil),
			sf(nil, nil),
		},
		{"skip fails f2p", []string{"skip"}, nil, ResolvedNo, sf(nil, []string{"skip"}), sf(nil, nil)},
		{
			"skip maintains p2p",
			[]string{"pass"},
			[]string{"skip", "xfail"},
			ResolvedFull,
			sf([]string{"pass"}, nil),
			sf([]string{"skip", "xfail"}, nil),
		},
		{
			"absent fails",
			[]string{"missing", "nowhere"},
			[]string{"nowhere"},
			ResolvedNo,
			sf(nil, []string{"missing", "nowhere"}),
			sf(nil, []string{"nowhere"}),
		},
		{
			"xpass and duplicate are not in SWE-bench's map",
			[]string{"xpass"},
			[]string{"dup"},
			ResolvedNo,
			sf(nil, []string{"xpass"}),
			sf(nil, []string{"dup"}),
		},
		{
			"duplicates in the list count twice",
			[]string{"pass", "pass", "fail"},
			nil,
			ResolvedPartial,
			sf([]string{"pass", "pass"}, []string{"fail"}),
			sf(nil, nil),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ts := Resolution(tt.f2p, tt.p2p, st)
			if got != tt.want {
				t.Errorf("resolution = %s, want %s", got, tt.want)
			}
			want := TestsStatus{
				FailToPass: tt.wantF2P,
				PassToPass: tt.wantP2P,
				FailToFail: sf(nil, nil),
				PassToFail: sf(nil, nil),
			}
			if diff := cmp.Diff(want, ts); diff != "" {
				t.Errorf("tests_status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergedTests(t *testing.T) {
	p := report.PairResult{Checks: []report.Check{
		{Tests: map[string]report.TestStatus{"a": report.TestPassed, "b": report.TestFailed, "c": report.TestPassed}},
		{Tests: map[string]report.TestStatus{"a": report.TestSkipped, "b": report.TestPassed, "d": report.TestPassed}},
	}}
	want := map[string]report.TestStatus{"a": report.TestSkipped, "b": report.TestFailed, "c": report.TestPassed,
		"d": report.TestPassed}
	if diff := cmp.Diff(want, MergedTests(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCutIDsGradedByTheirTests: the SWE-bench column reads a cut ID by the test Tender resolved
// it to, as SWE-bench's log parser keys that test's line under the cut ID, so a cut-ID instance
// Tender resolves is RESOLVED_FULL there too (boltons-formatargspec's two cut IDs). The report
// lists the IDs as the instance gives them.
func TestCutIDsGradedByTheirTests(t *testing.T) {
	const (
		cut1  = "tests/test_funcutils_fb.py::test_get_invocation_sig_str[args0-None-None-None-a,"
		full1 = cut1 + " b-(a, b)]"
		cut2  = "tests/test_funcutils_fb.py::test_get_invocation_sig_str[None-args-kwargs-None-*args,"
		full2 = cut2 + " **kwargs-(*args, **kwargs)]"
		p2p   = "tests/test_funcutils_fb.py::test_wraps_basic"
	)
	p := report.PairResult{ID: "mahmoud__boltons-formatargspec", Verdict: report.Resolved,
		FailToPass: []string{cut1, cut2}, PassToPass: []string{p2p},
		ResolvedTestIDs: map[string]string{cut1: full1, cut2: full2},
		Checks: []report.Check{
			{Name: "target", Passed: true, Tests: map[string]report.TestStatus{full1: report.TestPassed,
				full2: report.TestPassed}},
			{Name: "regression", Passed: true, Tests: map[string]report.TestStatus{p2p: report.TestPassed}},
		}}
	rep := MakeInstanceReport(p)
	if rep.Resolution != ResolvedFull || !rep.Resolved {
		t.Errorf("swebench_resolution %s, resolved %v; want RESOLVED_FULL beside Tender's resolved", rep.Resolution,
			rep.Resolved)
	}
	if diff := cmp.Diff([]string{cut1, cut2}, rep.TestsStatus.FailToPass.Success); diff != "" {
		t.Errorf("FAIL_TO_PASS success (-want +got):\n%s", diff)
	}
	if g := Grade(p); g != "FULL" {
		t.Errorf("summary column %q, want FULL", g)
	}
}

// TestStandInsGradedAsSWEBenchsLog: a cut ID with several stand-ins (ambiguous_ids: all) has,
// in SWE-bench's terms, the status of its tests' last line in pytest -rA's summary (passed,
// skipped, xfailed, errors, failed, in that order).
func TestStandInsGradedAsSWEBenchsLog(t *testing.T) {
	const cut = "t.py::test_x[a"
	for _, tt := range []struct {
		name     string
		statuses []report.TestStatus
		want     report.TestStatus
		present  bool
	}{
		{"all passed", []report.TestStatus{report.TestPassed, report.TestPassed}, report.TestPassed, true},
		{"a skip comes after the passes", []report.TestStatus{report.TestSkipped, report.TestPassed},
			report.TestSkipped, true},
		{"a failure comes last", []report.TestStatus{report.TestFailed, report.TestError, report.TestXFail},
			report.TestFailed, true},
		{"an error after an xfail", []report.TestStatus{report.TestXFail, report.TestError}, report.TestError, true},
		{"one missing: the others' lines stand", []report.TestStatus{report.TestMissing, report.TestPassed},
			report.TestPassed, true},
		{"no line at all", []report.TestStatus{report.TestMissing, report.TestXPass}, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tests := map[string]report.TestStatus{}
			var standIns []string
			for i, st := range tt.statuses {
				id := fmt.Sprintf("%s b%d]", cut, i)
				standIns = append(standIns, id)
				tests[id] = st
			}
			p := report.PairResult{FailToPass: []string{cut}, StandInTestIDs: map[string][]string{cut: standIns},
				Checks: []report.Check{{Name: "target", Tests: tests}}}
			got, ok := Statuses(p)[cut]
			if got != tt.want || ok != tt.present {
				t.Errorf("status %q (present %v), want %q (%v)", got, ok, tt.want, tt.present)
			}
		})
	}
}
