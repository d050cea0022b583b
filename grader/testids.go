package grader

import (
	"context"
	"fmt"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// Truncated test IDs are marked when the suite loads (testid_shape.go, SuspectIDs); this is
// the pipeline's half: before any check, each is resolved against the baseline collection.

// resolution is what the baseline collection makes of a pair's truncated IDs.
type resolution struct {
	one map[string]string   // ID -> the one collected test it names
	all map[string][]string // ID -> every test that stands in for it (ambiguous_ids: all)
}

// resolveIDs maps each suspect ID to the one collected test it names by prefix. When several
// tests start with the ID, the ones whose full ID continues with a space (where SWE-bench cut
// it) are preferred. An ID that still names several tests is an error under `ambiguous_ids:
// error`; under `all`, every one of them stands in for it: those that continue with a space
// (the tests SWE-bench's log parser keys under the cut ID), or, when none does, every test the
// ID names. The result holds every ID that resolved; the error names the first that matches
// no test, or several under `error`.
func resolveIDs(suspect, collected []string, policy string) (resolution, error) {
	res := resolution{one: map[string]string{}, all: map[string][]string{}}
	var firstErr error
	for _, id := range suspect {
		match, cut := namedBy(id, collected)
		if len(match) > 1 && len(cut) == 1 {
			match = cut
		}
		switch {
		case len(match) == 1:
			res.one[id] = match[0]
		case len(match) > 1 && policy == suite.AmbiguousAll:
			res.all[id] = match
			if len(cut) > 1 {
				res.all[id] = cut
			}
		case firstErr != nil:
		case len(match) == 0:
			firstErr = fmt.Errorf(
				"test ID %q looks truncated and names no test collected on the base commit with the test patch; write the full ID",
				id,
			)
		default:
			firstErr = fmt.Errorf(
				"test ID %q looks truncated and names %d collected tests (%s); write the full ID, "+
					"or require them all with ambiguous_ids: all",
				id,
				len(match),
				listSome(match, 3),
			)
		}
	}
	return res, firstErr
}

// namedBy lists the collected tests id is a proper prefix of, in collection order, and those
// of them that continue with a space after it.
func namedBy(id string, collected []string) (match, cut []string) {
	for _, c := range collected {
		if len(c) > len(id) && strings.HasPrefix(c, id) {
			match = append(match, c)
			if c[len(id)] == ' ' {
				cut = append(cut, c)
			}
		}
	}
	return match, cut
}

// applyResolved puts the resolved tests in place of their IDs in a list, keeping its order: a
// resolved ID is replaced by its test, an ID with stand-ins by each stand-in that the list
// does not hold already.
func applyResolved(ids []string, res resolution) []string {
	if len(res.one)+len(res.all) == 0 || ids == nil {
		return ids
	}
	held := map[string]bool{}
	for _, id := range ids {
		held[id] = true
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if full, ok := res.one[id]; ok {
			out = append(out, full)
			continue
		}
		tests, ok := res.all[id]
		if !ok {
			out = append(out, id)
			continue
		}
		for _, t := range tests {
			if !held[t] {
				held[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// listSome quotes the first n items (each cut at 120 characters) and counts the rest.
func listSome(items []string, n int) string {
	quoted := make([]string, 0, min(n, len(items)))
	for _, s := range items[:min(n, len(items))] {
		if r := []rune(s); len(r) > 120 {
			s = string(r[:120]) + "…"
		}
		quoted = append(quoted, fmt.Sprintf("%q", s))
	}
	return joinSome(quoted, len(items), ", ")
}

// joinSome joins the first items of a list of total and says how many more there are.
func joinSome(first []string, total int, sep string) string {
	s := strings.Join(first, sep)
	if more := total - len(first); more > 0 {
		s += fmt.Sprintf("%sand %d more", sep, more)
	}
	return s
}

// resolveTestIDs resolves the pair's truncated test IDs against the baseline before any check
// runs, and from then on the pipeline requires the full IDs. The result keeps the IDs as the
// suite gives them, plus the mapping. A baseline that cannot collect the tests ends the pair
// as environment_broken; an ID that names no test (or several, under ambiguous_ids: error), as
// test_id_unresolved.
func (pl *pipeline) resolveTestIDs(ctx context.Context, r *report.PairResult) error {
	suspect := pl.pair.SuspectIDs()
	if len(suspect) == 0 || pl.verifier().Runner != suite.RunnerPytest {
		return nil
	}
	b, err := pl.healthyBaseline(ctx)
	if err != nil {
		return err
	}
	res, err := resolveIDs(suspect, b.Collected, pl.suite.AmbiguousIDs)
	if len(res.one) > 0 {
		r.ResolvedTestIDs = res.one // what did resolve, even when another ID did not
	}
	if len(res.all) > 0 {
		r.StandInTestIDs = res.all
	}
	if err != nil {
		return stop(report.CodeTestIDUnresolved, err.Error())
	}
	p := *pl.pair
	p.FailToPass, p.PassToPass = applyResolved(p.FailToPass, res), applyResolved(p.PassToPass, res)
	pl.pair = &p
	for _, id := range suspect {
		note := report.Reason{Code: report.CodeTestIDResolved, Detail: fmt.Sprintf("%q is %q", id, res.one[id])}
		if tests, ok := res.all[id]; ok {
			note = report.Reason{Code: report.CodeTestIDExpanded, Detail: fmt.Sprintf(
				"%q names %d collected tests, all required in its place (ambiguous_ids: all): %s",
				id, len(tests), listSome(tests, 3))}
		}
		pl.notes = append(pl.notes, note)
	}
	return nil
}
