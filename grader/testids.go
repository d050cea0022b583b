package grader

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tender-grader/tender/report"
)

// Test IDs as SWE-bench ships them are sometimes cut at the first space of a parametrized
// test's parameters ("test_fail[validator_failed-Invalid", "test_valid[42"): its log parser
// splits pytest's lines on whitespace. Passed to pytest, one such ID makes it exit 4 and run
// nothing. Tender marks these IDs at load and, before any check, resolves each against the
// collection of the base commit plus the test patch (baseline.go): an ID that names exactly one
// collected test by prefix maps to it.

// idShape says what is wrong with a test ID's brackets.
type idShape int

const (
	idWellFormed idShape = iota
	idTruncated          // an opening bracket that never closes: the truncation signature
	idUnbalanced         // a closing bracket with no opening one: no cut produces this
)

// shapeOf reads the brackets of a pytest node ID: the parameters start at the first '[' and
// may hold brackets (and "::") of their own ("test_x[[1, 2]]").
func shapeOf(id string) idShape {
	name := id
	open := strings.IndexByte(name, '[')
	if open < 0 {
		if strings.ContainsRune(name, ']') {
			return idUnbalanced
		}
		return idWellFormed
	}
	if strings.ContainsRune(name[:open], ']') {
		return idUnbalanced
	}
	depth := 0
	for _, c := range name[open:] {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		}
	}
	switch {
	case depth > 0 || !strings.HasSuffix(name, "]"):
		return idTruncated
	case depth < 0:
		return idUnbalanced
	}
	return idWellFormed
}

// SuspectIDs lists the pair's required test IDs that look truncated, in suite order. Under
// the pytest runner they are resolved against the base collection before any check runs.
func (p *Pair) SuspectIDs() []string {
	var out []string
	for _, id := range slices.Concat(p.FailToPass, p.PassToPass) {
		if shapeOf(id) == idTruncated && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

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
	if len(suspect) == 0 || pl.verifier().Runner != RunnerPytest {
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
