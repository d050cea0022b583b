package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCount(t *testing.T) {
	met, notMet := true, false
	pairs := []PairResult{
		{ID: "b", Verdict: Resolved, Expect: Resolved, ExpectMet: &met},
		{ID: "a", Verdict: Unresolved, Expect: Resolved, ExpectMet: &notMet},
		{ID: "c", Verdict: Resolved},
		{ID: "d", Verdict: Error, Expect: IntegrityViolation, ExpectMet: &notMet},
	}
	got := Count(pairs)
	want := map[Verdict]int{Resolved: 2, Unresolved: 1, IntegrityViolation: 0, Error: 1}
	if d := cmp.Diff(want, got.Verdicts); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	var missed []string
	for _, p := range got.Missed {
		missed = append(missed, p.ID)
	}
	if d := cmp.Diff([]string{"a", "d"}, missed); d != "" {
		t.Errorf("missed expects, in the order given (-want +got):\n%s", d)
	}
	empty := Count(nil)
	if d := cmp.Diff(map[Verdict]int{Resolved: 0, Unresolved: 0, IntegrityViolation: 0, Error: 0},
		empty.Verdicts); d != "" || empty.Missed != nil {
		t.Errorf("an empty batch counts (-want +got):\n%s\nmissed %v", d, empty.Missed)
	}
}
