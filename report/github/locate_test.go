package github

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

const tenderYAML = `name: demo
version: "1"
repositories:
  calc: {fast_export: repos/calc.fi}
pairs:
  - id: gold-fix
    repository: calc
    patch: pairs/gold-fix/patch.diff
  - id: evil
    repository: calc
    patch: pairs/evil/patch.diff
  - repository: calc
    id: late-id
`

func TestLocate(t *testing.T) {
	l, err := NewLocator("./fixtures/demo/", []byte(tenderYAML))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		pair report.PairResult
		want Location
	}{
		{"integrity: the hunk in the patch file", report.PairResult{ID: "evil", Verdict: report.IntegrityViolation,
			Reasons: []report.Reason{{Code: "protected_path", Path: ".tender/x", Line: 12}}}, Location{"fixtures/demo/pairs/evil/patch.diff", 12}},
		{"integrity without a line: the entry", report.PairResult{ID: "evil", Verdict: report.IntegrityViolation,
			Reasons: []report.Reason{{Code: "protected_path", Path: ".tender/x"}}}, Location{"fixtures/demo/tender.yaml", 9}},
		{"unresolved with a test location", report.PairResult{ID: "gold-fix", Verdict: report.Unresolved,
			Checks: []report.Check{{Reasons: []report.Reason{{Code: "test_failed", Path: "tests/test_calc.py", Line: 7}}}}}, Location{"tests/test_calc.py", 7}},
		{"unresolved: the entry", report.PairResult{ID: "gold-fix", Verdict: report.Unresolved}, Location{"fixtures/demo/tender.yaml", 6}},
		{"id not first in its entry", report.PairResult{ID: "late-id", Verdict: report.Error}, Location{"fixtures/demo/tender.yaml", 12}},
		{"unknown pair", report.PairResult{ID: "nope", Verdict: report.Error}, Location{"fixtures/demo/tender.yaml", 1}},
		{"unknown pair, grader's record", report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "suites/x/tender.yaml", Line: 30}, Location{"suites/x/tender.yaml", 30}},
		{"unknown pair, absolute record", report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "/github/workspace/tender.yaml", Line: 30}, Location{"fixtures/demo/tender.yaml", 30}},
		{"unknown pair, escaping record", report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "../../etc/tender.yaml", Line: 3}, Location{"fixtures/demo/tender.yaml", 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, l.Locate(tc.pair)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	var nilLocator *Locator
	if got := nilLocator.Locate(report.PairResult{ID: "x"}); got != (Location{"tender.yaml", 1}) {
		t.Errorf("nil locator: %v", got)
	}
}

func TestLevelsAndConclusion(t *testing.T) {
	met := func(v, e report.Verdict) report.PairResult {
		return report.PairResult{ID: string(v), Verdict: v, Expect: e}
	}
	cases := []struct {
		name  string
		pairs []report.PairResult
		want  string
	}{
		{"all resolved", []report.PairResult{met(report.Resolved, "")}, "success"},
		{"one unresolved", []report.PairResult{met(report.Resolved, ""), met(report.Unresolved, "")}, "failure"},
		{"expectations met", []report.PairResult{met(report.Resolved, report.Resolved), met(report.IntegrityViolation, report.IntegrityViolation)}, "success"},
		{"expectation missed", []report.PairResult{met(report.Unresolved, report.Resolved)}, "failure"},
		{"an error even when expected", []report.PairResult{met(report.Error, report.Error)}, "failure"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Conclusion(report.Results{Pairs: tc.pairs}); got != tc.want {
				t.Errorf("Conclusion = %s, want %s", got, tc.want)
			}
		})
	}
	levels := map[report.Verdict]string{report.IntegrityViolation: LevelFailure, report.Error: LevelFailure, report.Unresolved: LevelWarning, report.Resolved: ""}
	for v, want := range levels {
		if got := Level(report.PairResult{Verdict: v}); got != want {
			t.Errorf("Level(%s) = %q, want %q", v, got, want)
		}
	}
	if got := Level(report.PairResult{Verdict: report.Resolved, Reasons: []report.Reason{{Code: "flaky_test"}}}); got != LevelNotice {
		t.Errorf("flaky resolved pair: level %q, want notice", got)
	}
}
