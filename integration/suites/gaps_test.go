package suites

import (
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/report"
)

// gapPairs are the pairs of fixtures/gaps, with the verdict Tender gives each today
// (fixtures/gen's gapPairs): resolved where a forger who has read Tender still wins.
var gapPairs = map[string]report.Verdict{
	"gap-decoy-center": report.Resolved,
	"gap-fuzzy-equal":  report.Resolved,
}

// TestGradeGaps grades fixtures/gaps, what the threat model says a forger who has read Tender can
// still do, in real verifiers: every pair gives the verdict its expect names, which is the
// verdict Tender gives today. A pair that no longer meets its expect is news either way: a gap
// closed (move the pair to fixtures/attacks with the verdict it must give, and correct the
// threat model), or a claim of the threat model that stopped being true.
func TestGradeGaps(t *testing.T) {
	results, out := gradeExpecting(t, e2e.RepoRoot+"/fixtures/gaps", "--concurrency", "2")
	if len(results) != len(gapPairs) {
		t.Errorf("%d results, want the %d pairs of fixtures/gaps", len(results), len(gapPairs))
	}
	for _, r := range results {
		want, ok := gapPairs[r.ID]
		switch {
		case !ok:
			t.Errorf("%s: a pair of fixtures/gaps this test does not know", r.ID)
		case r.ExpectMet == nil || !*r.ExpectMet:
			t.Errorf("%s: %s, expect %s: %+v", r.ID, r.Verdict, r.Expect, r.Reasons)
		case r.Verdict != want:
			t.Errorf("%s: %s, want %s (the suite's expect and this test disagree)", r.ID, r.Verdict, want)
		}
	}
	assertBundleSmall(t, out)
}
