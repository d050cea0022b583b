package suite

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestHostileSuites: values that decode but cannot mean what they say are refused at load,
// each with one line naming the field, never at grade time and never silently: a YAML type
// error names the field and says what was wanted in words (no !!seq, no Go type); an
// unknown or exotic tag, a NaN or infinite number, and a NUL anywhere are refused.
func TestHostileSuites(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(goodSuite, old, new, 1) }
	verifier := func(v string) string { return sub("pairs:", "verifier:\n  "+v+"\npairs:") }
	tests := []struct {
		name     string
		manifest string
		field    string
		want     []string
	}{
		{"cpus nan", verifier("cpus: .nan"), "verifier.cpus", []string{"not a finite number"}},
		{"cpus inf", verifier("cpus: .inf"), "verifier.cpus", []string{"not a finite number"}},
		{"cpus overflow", verifier("cpus: 1e999"), "verifier.cpus", []string{`"1e999"`, "want a number"}},
		{"timeout 1ns", verifier("timeout: 1ns"), "verifier.timeout", []string{"between 1s and 24h"}},
		{"timeout 999ms", verifier("timeout: 999ms"), "verifier.timeout", []string{"between 1s and 24h"}},
		{"NUL in env value", verifier(`env: {A: "x\0y"}`), "verifier.env.A", []string{"NUL"}},
		{"NUL in setup argv", verifier(`setup: [["make", "a\0b"]]`), "verifier.setup[0][1]", []string{"NUL"}},
		{
			"NUL in a test id",
			sub(`fail_to_pass: ["tests/test_a.py::test_a"]`, `fail_to_pass: ["tests/test_a.py::test_\0a"]`),
			"pairs[0].fail_to_pass[0]",
			[]string{"NUL"},
		},
		{"unknown tag", sub("name: t", "name: !evil t"), "name", []string{`tag "!evil"`}},
		{"binary tag", sub("name: t", "name: !!binary dA=="), "name", []string{`tag "!!binary"`}},
		{
			"list for a string",
			sub("issue: pairs/p1/issue.md", "issue: [pairs/p1/issue.md]"),
			"pairs[0].issue",
			[]string{"line 10", "a list", "want a string"},
		},
		{
			"mapping for the pairs",
			sub("pairs:\n  - id: p1", "pairs:\n  x:\n    id: p1"),
			"pairs",
			[]string{"a mapping", "want a list"},
		},
		{"string for a number", verifier("pids: many"), "verifier.pids", []string{`"many"`, "want a whole number"}},
		{
			"list for the repositories",
			sub("repositories:\n  r:\n    fast_export: repos/r.fi", "repositories:\n  - r"),
			"repositories",
			[]string{"a list", "want a mapping"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadNoPanic(t, writeLoadSuite(t, tt.manifest, nil))
			if !errors.Is(err, ErrBadSuite) {
				t.Fatalf("Load: %v, want an error wrapping ErrBadSuite", err)
			}
			msg := err.Error()
			var le *LoadError
			if !errors.As(err, &le) || le.File != SuiteFile || le.Field != tt.field || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line, a LoadError for %s field %q, got %#v", msg, SuiteFile, tt.field, le)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			for _, jargon := range []string{"!!seq", "!!map", "!!str", "grader.", "[]string", "unmarshal"} {
				if strings.Contains(msg, jargon) {
					t.Errorf("error %q speaks of %q", msg, jargon)
				}
			}
		})
	}
}

// TestInputDigestNeverOfNothing: a pair's input digest covers its inputs; two suites that
// differ only in a pair's patch must never share it (an ignored encoding error once made
// every digest that of the empty string).
func TestInputDigestNeverOfNothing(t *testing.T) {
	a, err := Load(writeLoadSuite(t, goodSuite, map[string]string{"pairs/p1/patch.diff": "one"}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(writeLoadSuite(t, goodSuite, map[string]string{"pairs/p1/patch.diff": "two"}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Pairs[0].InputDigest == b.Pairs[0].InputDigest || a.Pairs[0].InputDigest == sha(nil) {
		t.Errorf(
			"input digests %s and %s: want two digests of the inputs",
			a.Pairs[0].InputDigest,
			b.Pairs[0].InputDigest,
		)
	}
}

// TestInputDigestRefusesWhatItCannotEncode: an input that cannot be encoded is an error, not
// the digest of nothing (a NaN once made every pair's digest sha256("")).
func TestInputDigestRefusesWhatItCannotEncode(t *testing.T) {
	s := &Suite{
		Verifier:     Verifier{CPUs: math.NaN()},
		Repositories: map[string]RepoSource{"r": {Bundle: "b"}},
		Files:        map[string]string{"b": "x"},
	}
	if d, err := inputDigest(s, &Pair{Repository: "r", BaseCommit: "a"}); err == nil {
		t.Errorf("inputDigest with cpus NaN = %s, want an error", d)
	}
}
