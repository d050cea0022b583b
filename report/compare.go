package report

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Change is how a pair's verdict moved between a baseline batch and this one.
type Change string

// The changes, in the order summaries list them. Resolution decides the direction: a pair
// that was resolved and is not (whatever it is now, an error included) regressed; one that
// was not and is, improved; any other move between verdicts (unresolved to error, say) is
// changed. A pair only in this batch is new; one only in the baseline is gone.
const (
	Regressed Change = "regressed"
	Improved  Change = "improved"
	Changed   Change = "changed"
	New       Change = "new"
	Gone      Change = "gone"
)

var changeOrder = []Change{Regressed, Improved, Changed, New, Gone}

// PairChange is one pair whose verdict moved, appeared or went.
type PairChange struct {
	ID     string  `json:"id"`
	Change Change  `json:"change"`
	Before Verdict `json:"before,omitempty"` // the baseline's verdict; empty for a new pair
	After  Verdict `json:"after,omitempty"`  // this batch's verdict; empty for a gone pair
	// PatchChanged: the candidate patch differs from the baseline's (its digest), which tells a
	// changed submission from the same patch graded differently.
	PatchChanged bool `json:"patch_changed,omitempty"`
}

// BaselineRef names the batch a comparison was made against.
type BaselineRef struct {
	Suite        string    `json:"suite"`
	SuiteVersion string    `json:"suite_version"`
	Tool         string    `json:"tool"`
	Finished     time.Time `json:"finished"`
	Pairs        int       `json:"pairs"`
	// BundleSHA256 is the sha256 of the baseline's bundle.dsse.json, which pins every file
	// of it; empty when the caller did not give it.
	BundleSHA256 string `json:"bundle_sha256,omitempty"`
}

// Comparison is a batch compared with a baseline batch, pair by pair (matched by id). It is
// results.json's optional "comparison" and the source of every "what changed" view:
// summary.md, the check run's text, the PR comment and the Action's json output.
type Comparison struct {
	Baseline  BaselineRef    `json:"baseline"`
	Counts    map[Change]int `json:"counts"`    // every change, zero included
	Unchanged int            `json:"unchanged"` // pairs in both batches with the same verdict
	Pairs     []PairChange   `json:"pairs"`     // every pair that is not unchanged, in changeOrder, then by id
}

// Compare compares current with baseline. bundleDigest is the baseline envelope's sha256, or "".
func Compare(baseline, current Results, bundleDigest string) *Comparison {
	c := &Comparison{Counts: map[Change]int{}, Pairs: []PairChange{}, Baseline: BaselineRef{Suite: baseline.Suite,
		SuiteVersion: baseline.SuiteVersion, Tool: baseline.Tool, Finished: baseline.Finished.UTC(),
		Pairs: len(baseline.Pairs), BundleSHA256: bundleDigest}}
	for _, ch := range changeOrder {
		c.Counts[ch] = 0
	}
	before := map[string]PairResult{}
	for _, p := range baseline.Pairs {
		before[p.ID] = p
	}
	for _, p := range current.Pairs {
		b, ok := before[p.ID]
		delete(before, p.ID)
		pc := PairChange{ID: p.ID, Change: New, After: p.Verdict}
		if ok {
			pc = PairChange{ID: p.ID, Change: verdictChange(b.Verdict, p.Verdict), Before: b.Verdict,
				After: p.Verdict, PatchChanged: b.Digests.Patch != p.Digests.Patch}
		}
		c.add(pc)
	}
	for _, b := range before {
		c.add(PairChange{ID: b.ID, Change: Gone, Before: b.Verdict})
	}
	slices.SortFunc(c.Pairs, func(a, b PairChange) int {
		return cmp.Or(cmp.Compare(slices.Index(changeOrder, a.Change), slices.Index(changeOrder, b.Change)),
			strings.Compare(a.ID, b.ID))
	})
	return c
}

func (c *Comparison) add(pc PairChange) {
	if pc.Change == "" {
		c.Unchanged++
		return
	}
	c.Counts[pc.Change]++
	c.Pairs = append(c.Pairs, pc)
}

// verdictChange is the change from before to after, "" when the verdict is the same.
func verdictChange(before, after Verdict) Change {
	switch {
	case before == after:
		return ""
	case before == Resolved:
		return Regressed
	case after == Resolved:
		return Improved
	}
	return Changed
}

// Of returns the pairs of one kind of change, in id order.
func (c *Comparison) Of(ch Change) []PairChange {
	if c == nil {
		return nil
	}
	var out []PairChange
	for _, p := range c.Pairs {
		if p.Change == ch {
			out = append(out, p)
		}
	}
	return out
}
