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

// resolveIDs maps each suspect ID to the one collected test it names by prefix. When several
// tests start with the ID, the ones whose full ID continues with a space (where SWE-bench cut
// it) are preferred. The map holds every ID that resolved; the error names the first that
// matches no test or several.
func resolveIDs(suspect, collected []string) (map[string]string, error) {
	out := map[string]string{}
	var firstErr error
	for _, id := range suspect {
		var match, cut []string
		for _, c := range collected {
			if len(c) > len(id) && strings.HasPrefix(c, id) {
				match = append(match, c)
				if c[len(id)] == ' ' {
					cut = append(cut, c)
				}
			}
		}
		if len(match) > 1 && len(cut) == 1 {
			match = cut
		}
		switch {
		case len(match) == 1:
			out[id] = match[0]
		case firstErr != nil:
		case len(match) == 0:
			firstErr = fmt.Errorf("test ID %q looks truncated and names no test collected on the base commit with the test patch; write the full ID", id)
		default:
			firstErr = fmt.Errorf("test ID %q looks truncated and names %d collected tests (%s); write the full ID", id, len(match), listSome(match, 3))
		}
	}
	return out, firstErr
}

// applyResolved replaces resolved IDs in a list, keeping its order.
func applyResolved(ids []string, resolved map[string]string) []string {
	if len(resolved) == 0 || ids == nil {
		return ids
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if full, ok := resolved[id]; ok {
			out[i] = full
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
// as environment_broken; an ID that names no test or several, as test_id_unresolved.
func (pl *pipeline) resolveTestIDs(ctx context.Context, r *report.PairResult) error {
	suspect := pl.pair.SuspectIDs()
	if len(suspect) == 0 || pl.verifier().Runner != suite.RunnerPytest {
		return nil
	}
	b, err := pl.healthyBaseline(ctx)
	if err != nil {
		return err
	}
	resolved, err := resolveIDs(suspect, b.Collected)
	if len(resolved) > 0 {
		r.ResolvedTestIDs = resolved // what did resolve, even when another ID did not
	}
	if err != nil {
		return stop(report.CodeTestIDUnresolved, err.Error())
	}
	p := *pl.pair
	p.FailToPass, p.PassToPass = applyResolved(p.FailToPass, resolved), applyResolved(p.PassToPass, resolved)
	pl.pair = &p
	for _, id := range suspect {
		pl.notes = append(pl.notes, report.Reason{Code: report.CodeTestIDResolved, Detail: fmt.Sprintf("%q is %q", id, resolved[id])})
	}
	return nil
}
