package suite

import (
	"slices"
	"strings"
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
