package swebench

import (
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
		{"all pass", []string{"pass"}, []string{"pass2"}, ResolvedFull, sf([]string{"pass"}, nil), sf([]string{"pass2"}, nil)},
		{"both lists empty: rates are 1", nil, nil, ResolvedFull, sf(nil, nil), sf(nil, nil)},
		{"no f2p, p2p holds", nil, []string{"pass"}, ResolvedFull, sf(nil, nil), sf([]string{"pass"}, nil)},
		{"no f2p, p2p broken", nil, []string{"fail"}, ResolvedNo, sf(nil, nil), sf(nil, []string{"fail"})},
		{"no p2p", []string{"pass"}, nil, ResolvedFull, sf([]string{"pass"}, nil), sf(nil, nil)},
		{"partial", []string{"pass", "fail"}, []string{"pass2"}, ResolvedPartial, sf([]string{"pass"}, []string{"fail"}), sf([]string{"pass2"}, nil)},
		{"partial needs p2p whole", []string{"pass", "fail"}, []string{"err"}, ResolvedNo, sf([]string{"pass"}, []string{"fail"}), sf(nil, []string{"err"})},
		{"no f2p passing", []string{"fail", "err"}, []string{"pass"}, ResolvedNo, sf(nil, []string{"fail", "err"}), sf([]string{"pass"}, nil)},
		{"xfail counts as success in f2p", []string{"xfail"}, nil, ResolvedFull, sf([]string{"xfail"}, nil), sf(nil, nil)},
		{"skip fails f2p", []string{"skip"}, nil, ResolvedNo, sf(nil, []string{"skip"}), sf(nil, nil)},
		{"skip maintains p2p", []string{"pass"}, []string{"skip", "xfail"}, ResolvedFull, sf([]string{"pass"}, nil), sf([]string{"skip", "xfail"}, nil)},
		{"absent fails", []string{"missing", "nowhere"}, []string{"nowhere"}, ResolvedNo, sf(nil, []string{"missing", "nowhere"}), sf(nil, []string{"nowhere"})},
		{"xpass and duplicate are not in SWE-bench's map", []string{"xpass"}, []string{"dup"}, ResolvedNo, sf(nil, []string{"xpass"}), sf(nil, []string{"dup"})},
		{"duplicates in the list count twice", []string{"pass", "pass", "fail"}, nil, ResolvedPartial, sf([]string{"pass", "pass"}, []string{"fail"}), sf(nil, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ts := Resolution(tt.f2p, tt.p2p, st)
			if got != tt.want {
				t.Errorf("resolution = %s, want %s", got, tt.want)
			}
			want := TestsStatus{FailToPass: tt.wantF2P, PassToPass: tt.wantP2P, FailToFail: sf(nil, nil), PassToFail: sf(nil, nil)}
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
