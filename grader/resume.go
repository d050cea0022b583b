package grader

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// Resume picks, from the records of an earlier run (results.jsonl, in file order), those a
// resumed run may keep: one per pair of this shard, the last that passes Resumable. dropped
// says why each other record was set aside; those pairs are graded again.
func Resume(s *suite.Suite, shard Shard, records []report.PairResult) (keep []report.PairResult, dropped []string) {
	pairs := map[string]*suite.Pair{}
	for _, p := range shard.Select(s.Pairs) {
		pairs[p.ID] = p
	}
	last := map[string]report.PairResult{}
	for i, r := range records {
		p, ok := pairs[r.ID]
		if !ok {
			dropped = append(dropped, fmt.Sprintf("record %d (%q): not a pair of this suite and shard", i+1, r.ID))
			continue
		}
		if err := Resumable(p, r); err != nil {
			dropped = append(dropped, fmt.Sprintf("record %d (%s): %v", i+1, r.ID, err))
			continue
		}
		if _, dup := last[r.ID]; dup {
			dropped = append(dropped, fmt.Sprintf("an earlier record of %s: a later one replaces it", r.ID))
		}
		last[r.ID] = r
	}
	for _, p := range shard.Select(s.Pairs) {
		if r, ok := last[p.ID]; ok {
			keep = append(keep, r)
		}
	}
	return keep, dropped
}

// Resumable says why r cannot stand as pair p's result in a resumed run, or nil. A record is
// kept only when everything in it that can be derived again agrees: the inputs (their
// digests, the commit, the required tests, the expectation) and the verdict, which must
// follow from the record's own checks and reasons. An error verdict is never kept: it is
// graded again. This catches stale, foreign and hand-edited records; it cannot catch a
// record rewritten consistently throughout, which only a signature over the records could.
func Resumable(p *suite.Pair, r report.PairResult) error {
	switch {
	case r.Schema != report.SchemaVersion:
		return fmt.Errorf("schema %q, not %q", r.Schema, report.SchemaVersion)
	case r.InputDigest != p.InputDigest:
		return errors.New("its inputs changed (input digest)")
	case r.Repository != p.Repository || r.RequestedCommit != p.BaseCommit || r.Digests != p.Digests:
		return errors.New("its repository, commit or input digests are not the pair's")
	case !slices.Equal(r.FailToPass, p.FailToPass) || !slices.Equal(r.PassToPass, p.PassToPass):
		return errors.New("its required tests are not the pair's")
	case r.Verdict == report.Error:
		return errors.New("an error verdict is graded again")
	case !r.Verdict.Valid():
		return fmt.Errorf("%q is not a verdict", r.Verdict)
	case r.Expect != p.Expect || !sameExpectMet(r.ExpectMet, expectMet(p.Expect, r.Verdict)):
		return errors.New("its expectation does not follow from the verdict")
	}
	if err := checkFiles(r); err != nil {
		return err
	}
	if want := derivedVerdict(p, r); want != r.Verdict {
		return fmt.Errorf("verdict %s does not follow from its checks and reasons (%s would)", r.Verdict, want)
	}
	return nil
}

func sameExpectMet(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// checkFiles: a check names only its own files, where the layout puts them.
func checkFiles(r report.PairResult) error {
	for _, c := range r.Checks {
		if c.LogFile != "" && c.LogFile != report.CheckLog(r.ID, c.Name) ||
			c.JUnitFile != "" && c.JUnitFile != report.CheckJUnit(r.ID, c.Name) {
			return fmt.Errorf("check %q names files outside its place in the bundle", c.Name)
		}
	}
	return nil
}

// derivedVerdict is the verdict a record's reasons and checks support: the verdict the
// registry gives its reasons (reasonsVerdict: an error over an integrity violation over
// unresolved; notes decide nothing), and when they decide nothing, resolved only with every
// check it needs run and passed, with every required test in it passed. A code the registry
// does not know makes the record one resume cannot stand behind (Error, never kept).
func derivedVerdict(p *suite.Pair, r report.PairResult) report.Verdict {
	decided := reasonsVerdict(r.Reasons)
	if decided == report.Resolved && !allPassed(p, r.Checks) {
		return report.Unresolved
	}
	return decided
}

func allPassed(p *suite.Pair, checks []report.Check) bool {
	want := map[string][]string{"target": p.FailToPass}
	if len(p.PassToPass) > 0 {
		want["regression"] = p.PassToPass
	}
	if len(checks) != len(want) {
		return false
	}
	for _, c := range checks {
		ids, ok := want[c.Name]
		if !ok || !c.Passed || !slices.Equal(slices.Sorted(maps.Keys(c.Tests)), slices.Sorted(slices.Values(ids))) {
			return false
		}
		kept := 0
		for _, st := range c.Tests {
			switch {
			case st == report.TestPassed:
				kept++
			case st != report.TestExcluded || c.Name != "regression":
				return false // only a flaky pass_to_pass test is ever excluded (flaky: excluded)
			}
		}
		if kept == 0 && len(p.FailToPass) == 0 {
			return false // every required test excluded: never resolved
		}
		delete(want, c.Name)
	}
	return true
}
