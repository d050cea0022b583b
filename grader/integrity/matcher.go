package integrity

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadPattern is wrapped by every PatternError, so a loader can test errors.Is(err, ErrBadPattern).
var ErrBadPattern = errors.New("invalid path pattern")

// PatternError names the suite field and index of a pattern Compile refused, and why.
type PatternError struct {
	Field   string // e.g. "protected_paths"
	Index   int
	Pattern string
	Problem string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s[%d]: %s", e.Field, e.Index, e.Problem)
}

func (e *PatternError) Unwrap() error { return ErrBadPattern }

// rule is one compiled pattern.
type rule struct {
	source   string // as the author wrote it
	glob     string // what doublestar sees (canonical when folding)
	anyDepth bool   // rule 2: matched against every component name
	dirOnly  bool   // rule 3: only ancestors (directories) may match
}

// Matcher matches clean relative slash paths against compiled patterns; see the package doc
// for the rules. The zero value and a nil *Matcher match nothing (but still fail closed on an
// unclean path).
type Matcher struct {
	field string
	fold  bool
	rules []rule
}

// Compile validates and compiles patterns from the suite field named field. fold makes matching
// insensitive to case, Unicode normalization and ignorable code points (rule 7).
func Compile(field string, patterns []string, fold bool) (*Matcher, error) {
	m := &Matcher{field: field, fold: fold}
	for i, p := range patterns {
		r, problem := compileRule(p, fold)
		if problem != "" {
			return nil, &PatternError{Field: field, Index: i, Pattern: p, Problem: problem}
		}
		m.rules = append(m.rules, r)
	}
	return m, nil
}

// MustCompile is Compile for patterns fixed in Tender's own source; it panics on an error.
func MustCompile(field string, patterns []string, fold bool) *Matcher {
	m, err := Compile(field, patterns, fold)
	if err != nil {
		panic(err)
	}
	return m
}

// Patterns returns the patterns as written, in order.
func (m *Matcher) Patterns() []string {
	if m == nil {
		return nil
	}
	out := make([]string, len(m.rules))
	for i, r := range m.rules {
		out[i] = r.source
	}
	return out
}

// Match reports whether path is matched by any pattern, or is not a clean relative slash path.
func (m *Matcher) Match(path string) bool {
	_, ok := m.Which(path)
	return ok
}

// Which is Match, also returning the first pattern (as written) that matched. For an unclean
// path it returns ("", true).
func (m *Matcher) Which(path string) (string, bool) {
	if cleanPathProblem(path) != "" {
		return "", true
	}
	if m == nil || len(m.rules) == 0 {
		return "", false
	}
	if m.fold {
		path = canonicalPath(path)
	}
	comps := strings.Split(path, "/")
	for _, r := range m.rules {
		if r.matches(path, comps) {
			return r.source, true
		}
	}
	return "", false
}

func (r rule) matches(path string, comps []string) bool {
	last := len(comps)
	if r.dirOnly {
		last-- // a directory is a proper ancestor: never the last component
	}
	end := 0
	for i := 0; i < last; i++ {
		end += len(comps[i])
		if i > 0 {
			end++ // the slash before comps[i]
		}
		subject := path[:end] // rule 4: the ancestor (or the path) itself
		if r.anyDepth {
			subject = comps[i] // rule 2: this component's name
		}
		if doublestar.MatchUnvalidated(r.glob, subject) {
			return true
		}
	}
	return false
}

// DefaultProtected is protected_paths when a suite gives none (compile it with fold).
var DefaultProtected = []string{".tender/**"}

// DefaultRestored is restored_paths when a suite gives none (the README: "Restored paths"):
// test files and test directories at any depth, so that in-package tests (pkg/tests/) and a
// test module planted at the root are evaluator files too, and the pytest config files.
var DefaultRestored = []string{"**/tests/**", "**/test/**", "**/test_*.py", "**/*_test.py", "**/conftest.py",
	"pytest.ini", "pytest.toml", ".pytest.toml", "noxfile.py"}
