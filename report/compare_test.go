package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/golden"
)

func TestVerdictChange(t *testing.T) {
	for _, tc := range []struct {
		before, after Verdict
		want          Change
	}{
		{Resolved, Resolved, ""},
		{Unresolved, Unresolved, ""},
		{Resolved, Unresolved, Regressed},
		{Resolved, IntegrityViolation, Regressed},
		{Resolved, Error, Regressed}, // no verdict now: it can no longer be counted resolved
		{Unresolved, Resolved, Improved},
		{Error, Resolved, Improved},
		{IntegrityViolation, Resolved, Improved},
		{Unresolved, Error, Changed},
		{Error, IntegrityViolation, Changed},
	} {
		if got := verdictChange(tc.before, tc.after); got != tc.want {
			t.Errorf("%s -> %s: got %q, want %q", tc.before, tc.after, got, tc.want)
		}
	}
}

// comparedBatches is a baseline and a batch with one pair of each change, and one unchanged.
func comparedBatches() (Results, Results) {
	pair := func(id string, v Verdict, patch string) PairResult {
		return PairResult{ID: id, Verdict: v, Digests: Digests{Patch: strings.Repeat(patch, 64)}}
	}
	base := Results{Suite: "demo", SuiteVersion: "1", Tool: "tender v1",
		Finished: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC), Pairs: []PairResult{
			pair("add-ok", Resolved, "a"), pair("div-fix", Resolved, "b"), pair("mul-fix", Unresolved, "c"),
			pair("sub-err", Unresolved, "d"), pair("old-pair", Resolved, "e"),
		}}
	cur := Results{Suite: "demo", SuiteVersion: "1", Pairs: []PairResult{
		pair("add-ok", Resolved, "a"), pair("div-fix", Unresolved, "f"), pair("mul-fix", Resolved, "c"),
		pair("sub-err", Error, "d"), pair("new-pair", Resolved, "9"),
	}}
	return base, cur
}

func TestCompare(t *testing.T) {
	base, cur := comparedBatches()
	got := Compare(base, cur, strings.Repeat("b", 64))
	want := []PairChange{
		{ID: "div-fix", Change: Regressed, Before: Resolved, After: Unresolved, PatchChanged: true},
		{ID: "mul-fix", Change: Improved, Before: Unresolved, After: Resolved},
		{ID: "sub-err", Change: Changed, Before: Unresolved, After: Error},
		{ID: "new-pair", Change: New, After: Resolved},
		{ID: "old-pair", Change: Gone, Before: Resolved},
	}
	if d := cmp.Diff(want, got.Pairs); d != "" {
		t.Errorf("pairs (-want +got):\n%s", d)
	}
	wantCounts := map[Change]int{Regressed: 1, Improved: 1, Changed: 1, New: 1, Gone: 1}
	if d := cmp.Diff(wantCounts, got.Counts); d != "" || got.Unchanged != 1 {
		t.Errorf("counts (-want +got):\n%s\nunchanged %d, want 1", d, got.Unchanged)
	}
	if r := got.Of(Regressed); len(r) != 1 || r[0].ID != "div-fix" {
		t.Errorf("Of(Regressed) = %v", r)
	}
	if got.Baseline.Pairs != 5 || got.Baseline.Tool != "tender v1" || got.Baseline.BundleSHA256 == "" {
		t.Errorf("baseline ref %+v", got.Baseline)
	}
	same := Compare(base, base, "")
	if len(same.Pairs) != 0 || same.Unchanged != 5 || same.Counts[Regressed] != 0 {
		t.Errorf("a batch compared with itself: %+v", same)
	}
}

// TestComparisonMarkdown pins the section summary.md, the check run and the PR comment show.
func TestComparisonMarkdown(t *testing.T) {
	base, cur := comparedBatches()
	c := Compare(base, cur, strings.Repeat("b", 64))
	golden.Check(t, "comparison.md.golden", []byte(ComparisonMarkdown(c, "## Compared with the baseline", 1<<20)))

	cut := ComparisonMarkdown(c, "## Compared", 600)
	if len(cut) > 600 || !strings.Contains(cut, "of 5 changed pairs are shown") || !strings.Contains(cut, "div") {
		t.Errorf("cut to 600 bytes (%d), the regression first and a note:\n%s", len(cut), cut)
	}
	if s := ComparisonMarkdown(Compare(base, base, ""), "## C", 1<<20); !strings.Contains(s, "No pair changed") {
		t.Errorf("no change:\n%s", s)
	}
	if ComparisonMarkdown(nil, "## C", 1<<20) != "" {
		t.Error("a nil comparison renders something")
	}
}

// TestSummaryShowsTheComparison: summary.md holds the comparison before the table of pairs,
// and results.json carries it.
func TestSummaryShowsTheComparison(t *testing.T) {
	base, cur := comparedBatches()
	cur.Comparison = Compare(base, cur, "")
	md := string(summaryMarkdown(normalized(cur), SummaryMaxBytes, sweView{}))
	at, pairs := strings.Index(md, "## Compared with the baseline"), strings.Index(md, "## Pairs")
	if at < 0 || pairs < at || !strings.Contains(md[at:pairs], "div\\-fix | **regressed**") {
		t.Errorf("summary.md does not show the comparison before the pairs:\n%s", md)
	}
	b, err := resultsJSON(cur)
	if err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cur.Comparison, back.Comparison); d != "" {
		t.Errorf("results.json does not carry the comparison (-want +got):\n%s", d)
	}
}
