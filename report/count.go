package report

// Tally is what a batch's pairs add up to.
type Tally struct {
	// Verdicts counts the pairs of each verdict; all four verdicts are keys, zero included.
	Verdicts map[Verdict]int
	// Missed are the pairs whose suite entry expected a verdict they did not get, in the
	// order given.
	Missed []PairResult
}

// Count is the one place a batch is counted: results.json's counts, a merged bundle's counts
// and the expect check of `tender grade` all come from it.
func Count(pairs []PairResult) Tally {
	t := Tally{Verdicts: map[Verdict]int{Resolved: 0, Unresolved: 0, IntegrityViolation: 0, Error: 0}}
	for _, p := range pairs {
		t.Verdicts[p.Verdict]++
		if p.MissedExpect() {
			t.Missed = append(t.Missed, p)
		}
	}
	return t
}

// MissedExpect reports whether the suite expected a verdict of the pair that it did not get.
func (p PairResult) MissedExpect() bool { return p.ExpectMet != nil && !*p.ExpectMet }
