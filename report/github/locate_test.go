package github

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

func TestLocate(t *testing.T) {
	l := NewLocator("./fixtures/demo/")
	entry := func(id string, v report.Verdict, line int) report.PairResult {
		return report.PairResult{
			ID:        id,
			Verdict:   v,
			SuiteFile: "tender.yaml",
			Line:      line,
			PatchFile: "pairs/" + id + "/patch.diff",
		}
	}
	withReasons := func(p report.PairResult, rs ...report.Reason) report.PairResult { p.Reasons = rs; return p }
	withChecks := func(p report.PairResult, cs ...report.Check) report.PairResult { p.Checks = cs; return p }
	cases := []struct {
		name string
		pair report.PairResult
		want Location
	}{
		{
			"integrity: the hunk in the patch file",
			withReasons(
				entry("evil", report.IntegrityViolation, 9),
				report.Reason{Code: "protected_path", Path: ".tender/x", Line: 12},
			),
			Location{"fixtures/demo/pairs/evil/patch.diff", 12},
		},
		{
			"integrity without a line: the entry",
			withReasons(
				entry("evil", report.IntegrityViolation, 9),
				report.Reason{Code: "protected_path", Path: ".tender/x"},
			),
			Location{"fixtures/demo/tender.yaml", 9},
		},
		{
			"integrity, no patch recorded: the reason's path",
			report.PairResult{
				ID:      "x",
				Verdict: report.IntegrityViolation,
				Reasons: []report.Reason{{Code: "git_path", Path: ".git/hooks/x", Line: 4}},
			},
			Location{".git/hooks/x", 4},
		},
		{
			"unresolved with a test location",
			withChecks(
				entry("gold-fix", report.Unresolved, 6),
				report.Check{Reasons: []report.Reason{{Code: "test_failed", Path: "tests/test_calc.py", Line: 7}}},
			),
			Location{"tests/test_calc.py", 7},
		},
		{"unresolved: the entry", entry("gold-fix", report.Unresolved, 6), Location{"fixtures/demo/tender.yaml", 6}},
		{"error: the entry", entry("late-id", report.Error, 12), Location{"fixtures/demo/tender.yaml", 12}},
		{
			"nothing recorded",
			report.PairResult{ID: "nope", Verdict: report.Error},
			Location{"fixtures/demo/tender.yaml", 1},
		},
		{
			"another suite file",
			report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "more/tender.yaml", Line: 30},
			Location{"fixtures/demo/more/tender.yaml", 30},
		},
		{
			"absolute suite file",
			report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "/github/workspace/tender.yaml", Line: 30},
			Location{"fixtures/demo/tender.yaml", 30},
		},
		{
			"escaping suite file",
			report.PairResult{ID: "nope", Verdict: report.Error, SuiteFile: "../../etc/tender.yaml", Line: 3},
			Location{"fixtures/demo/tender.yaml", 3},
		},
		{
			"escaping patch file",
			withReasons(
				report.PairResult{ID: "e", Verdict: report.IntegrityViolation, PatchFile: "../../x.diff", Reasons: nil},
				report.Reason{Code: "protected_path", Path: ".tender/x", Line: 2},
			),
			Location{".tender/x", 2},
		},
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
	if got := NewLocator("").Locate(entry("a", report.Error, 3)); got != (Location{"tender.yaml", 3}) {
		t.Errorf("suite at the root: %v", got)
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
		{
			"expectations met",
			[]report.PairResult{
				met(report.Resolved, report.Resolved),
				met(report.IntegrityViolation, report.IntegrityViolation),
			},
			"success",
		},
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
	levels := map[report.Verdict]string{
		report.IntegrityViolation: LevelFailure,
		report.Error:              LevelFailure,
		report.Unresolved:         LevelWarning,
		report.Resolved:           "",
	}
	for v, want := range levels {
		if got := Level(report.PairResult{Verdict: v}); got != want {
			t.Errorf("Level(%s) = %q, want %q", v, got, want)
		}
	}
	if got := Level(report.PairResult{Verdict: report.Resolved, Reasons: []report.Reason{{Code: report.CodeFlaky}}}); got != LevelNotice {
		t.Errorf("flaky resolved pair: level %q, want notice", got)
	}
}
