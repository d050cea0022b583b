package integrity

import (
	"fmt"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// benchPaths is a realistic patch-sized set of paths, some deep.
func benchPaths() []string {
	var out []string
	for i := range 100 {
		out = append(out, fmt.Sprintf("src/pkg%d/sub/module_%d.py", i%7, i), fmt.Sprintf("tests/unit/test_%d.py", i))
	}
	return out
}

// BenchmarkBaselineDoublestar is the floor: doublestar.Match of every default pattern against
// each whole path, with no ancestor or component handling and no folding.
func BenchmarkBaselineDoublestar(b *testing.B) {
	paths := benchPaths()
	for b.Loop() {
		for _, p := range paths {
			for _, pat := range DefaultRestored {
				if doublestar.MatchUnvalidated(pat, p) {
					break
				}
			}
		}
	}
}

func BenchmarkMatchRestored(b *testing.B) {
	m := MustCompile("restored_paths", DefaultRestored, false)
	paths := benchPaths()
	for b.Loop() {
		for _, p := range paths {
			m.Match(p)
		}
	}
}

func BenchmarkMatchProtectedFold(b *testing.B) {
	m := MustCompile("protected_paths", append([]string{".tender/**"}, DefaultRestored...), true)
	paths := benchPaths()
	for b.Loop() {
		for _, p := range paths {
			m.Match(p)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	p := Policy{
		Protected: MustCompile("protected_paths", DefaultProtected, true),
		Restored:  MustCompile("restored_paths", DefaultRestored, false),
		Evaluator: []string{"tests/test_hidden.py", "tests/assets/data.json"},
	}
	var changes []Change
	for _, path := range benchPaths() {
		changes = append(changes, Change{OldPath: path, NewPath: path, Line: 1})
	}
	for b.Loop() {
		Scan(changes, p)
	}
}
