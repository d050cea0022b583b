package integrity

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompileMatch checks the contract's invariants on any pattern and path:
//   - Compile never panics; an error is always a *PatternError naming the field;
//   - an unclean path always matches (fail closed);
//   - a matched path's subtree is matched (a directory pattern prunes its subtree);
//   - a slash-free, unanchored pattern that matches p also matches x/p (any depth);
//   - with fold: canonical is idempotent, and upper-casing or inserting an ignorable code
//     point into a component does not change the answer.
func FuzzCompileMatch(f *testing.F) {
	for _, tc := range authoringMatrix {
		for _, p := range tc.tree {
			f.Add(tc.pattern, p, false)
			f.Add(tc.pattern, p, true)
		}
	}
	for _, tc := range scanCases {
		f.Add(".tender/**", tc.change.NewPath, true)
		f.Add("**/conftest.py", tc.change.NewPath, false)
	}
	f.Add("café/**", "CAFE\u0301/x", true)
	f.Add("[!a]", "b/c", false)
	f.Fuzz(func(t *testing.T, pattern, path string, fold bool) {
		m, err := Compile("f", []string{pattern}, fold)
		if err != nil {
			pe, ok := err.(*PatternError)
			if !ok || pe.Field != "f" || !strings.HasPrefix(err.Error(), "f[0]: ") {
				t.Fatalf("Compile(%q) error %v does not name the field", pattern, err)
			}
			return
		}
		if cleanPathProblem(path) != "" {
			if !m.Match(path) {
				t.Fatalf("unclean path %q did not fail closed", path)
			}
			return
		}
		got := m.Match(path)
		if got && !m.Match(path+"/child") {
			t.Fatalf("%q matches %q but not its child", pattern, path)
		}
		if got && !strings.Contains(pattern, "/") && !m.Match("x/"+path) {
			t.Fatalf("slash-free %q matches %q but not x/%s", pattern, path, path)
		}
		if fold {
			checkFold(t, m, pattern, path, got)
		}
	})
}

func checkFold(t *testing.T, m *Matcher, pattern, path string, got bool) {
	if c := canonical(path); canonical(c) != c {
		t.Fatalf("canonical not idempotent on %q: %q then %q", path, c, canonical(c))
	}
	if !utf8.ValidString(path) {
		return // the upper-casing below would replace invalid bytes, a different name
	}
	if up := strings.ToUpper(path); m.Match(up) != got {
		t.Fatalf("%q: Match(%q)=%v but Match(%q)=%v", pattern, path, got, up, !got)
	}
	if first, size := utf8.DecodeRuneInString(path); first != '/' && size > 0 {
		disguised := path[:size] + "\u200c" + path[size:]
		if m.Match(disguised) != got {
			t.Fatalf("%q: an inserted ZWNJ changed Match(%q) from %v", pattern, path, got)
		}
	}
}
