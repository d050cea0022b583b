package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/gitsafe"
)

// goodSuite is a minimal valid tender.yaml; the malformed suites are edits of it.
const goodSuite = `name: t
version: "1"
repositories:
  r:
    fast_export: repos/r.fi
pairs:
  - id: p1
    repository: r
    base_commit: 0123456789abcdef0123456789abcdef01234567
    issue: pairs/p1/issue.md
    patch: pairs/p1/patch.diff
    fail_to_pass: ["tests/test_a.py::test_a"]
    pass_to_pass: ["tests/test_a.py::test_b"]
    expect: resolved
`

// writeLoadSuite lays out goodSuite's files with the given tender.yaml and extra files.
func writeLoadSuite(t *testing.T, manifest string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{SuiteFile: manifest, "repos/r.fi": "reset refs/heads/main\n",
		"pairs/p1/issue.md": "Fix it.\n", "pairs/p1/patch.diff": ""}
	for k, v := range extra {
		files[k] = v
	}
	writeFiles(t, dir, files)
	return dir
}

// writeFiles writes slash-separated relative paths and their contents under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadGoodSuite(t *testing.T) {
	s, err := Load(writeLoadSuite(t, goodSuite, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "t" || len(s.Pairs) != 1 || s.Pairs[0].InputDigest == "" {
		t.Errorf("loaded %+v", s)
	}
}

// TestFlakyPolicyLoads: the flaky key is an addition. A suite without it loads as failed with
// the same input digest as before the key existed; excluded changes the digest (it can change
// a verdict, so --resume must not keep a record graded under the other policy).
func TestFlakyPolicyLoads(t *testing.T) {
	digest := func(manifest string) (string, string) {
		s, err := Load(writeLoadSuite(t, manifest, nil), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Flaky, s.Pairs[0].InputDigest
	}
	policy, plain := digest(goodSuite)
	if policy != FlakyFailed {
		t.Errorf("default policy %q, want %q", policy, FlakyFailed)
	}
	if p, d := digest(strings.Replace(goodSuite, "pairs:", "flaky: failed\npairs:", 1)); p != FlakyFailed ||
		d != plain {
		t.Errorf("flaky: failed gives %q, digest %s; want failed and the digest without the key, %s", p, d, plain)
	}
	if p, d := digest(strings.Replace(goodSuite, "pairs:", "flaky: excluded\npairs:", 1)); p != FlakyExcluded ||
		d == plain {
		t.Errorf("flaky: excluded gives %q with digest %s (plain %s)", p, d, plain)
	}
}

// TestParityPoliciesLoad: ambiguous_ids and apply are additions like flaky: the default, absent
// or written out, keeps the digest a suite had before the key existed; the other value changes
// it, since it can change a verdict.
func TestParityPoliciesLoad(t *testing.T) {
	load := func(manifest string) *Suite {
		s, err := Load(writeLoadSuite(t, manifest, nil), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	plain := load(goodSuite)
	if plain.AmbiguousIDs != AmbiguousError || plain.Apply != gitsafe.ApplyStrict {
		t.Errorf("defaults: ambiguous_ids %q, apply %q", plain.AmbiguousIDs, plain.Apply)
	}
	for _, tt := range []struct {
		key     string
		changes bool
		check   func(*Suite) bool
	}{
		{"ambiguous_ids: error", false, func(s *Suite) bool { return s.AmbiguousIDs == AmbiguousError }},
		{"ambiguous_ids: all", true, func(s *Suite) bool { return s.AmbiguousIDs == AmbiguousAll }},
		{"apply: strict", false, func(s *Suite) bool { return s.Apply == gitsafe.ApplyStrict }},
		{"apply: swebench", true, func(s *Suite) bool { return s.Apply == gitsafe.ApplySWEBench }},
	} {
		s := load(strings.Replace(goodSuite, "pairs:", tt.key+"\npairs:", 1))
		if !tt.check(s) || (s.Pairs[0].InputDigest != plain.Pairs[0].InputDigest) != tt.changes {
			t.Errorf("%s: loaded %q/%q, digest changed %v (want %v)", tt.key, s.AmbiguousIDs, s.Apply,
				s.Pairs[0].InputDigest != plain.Pairs[0].InputDigest, tt.changes)
		}
	}
}

// TestMalformedSuites: every malformed suite is refused with an error that wraps ErrBadSuite,
// is one line, and names the file and the field (or, for a YAML-level problem, the key).
func TestMalformedSuites(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(goodSuite, old, new, 1) }
	tests := []struct {
		name     string
		manifest string
		extra    map[string]string
		symlink  [2]string // target, suite path
		field    string    // LoadError.Field; "" for a problem of the whole file
		want     []string  // more substrings of the one error line
	}{
		{
			"unknown key",
			sub("version: \"1\"", "version: \"1\"\ncolour: blue"),
			nil,
			[2]string{},
			"",
			[]string{`unknown key "colour"`},
		},
		{
			"unknown pair key",
			sub("expect: resolved", "expect: resolved\n    timeout: 5s"),
			nil,
			[2]string{},
			"",
			[]string{`unknown key "timeout"`},
		},
		{
			"duplicate id",
			goodSuite + sub("name: t\nversion: \"1\"\nrepositories:\n  r:\n    fast_export: repos/r.fi\npairs:\n", ""),
			nil,
			[2]string{},
			"pairs[1].id",
			[]string{"unique"},
		},
		{"duplicate key", sub("name: t", "name: t\nname: u"), nil, [2]string{}, "", []string{"already defined"}},
		{
			"missing issue file",
			sub("pairs/p1/issue.md", "pairs/p1/nope.md"),
			nil,
			[2]string{},
			"pairs[0].issue",
			[]string{"does not exist"},
		},
		{
			"short commit",
			sub("0123456789abcdef0123456789abcdef01234567", "0123456"),
			nil,
			[2]string{},
			"pairs[0].base_commit",
			[]string{"40"},
		},
		{
			"uppercase commit",
			sub("0123456789abcdef0123456789abcdef01234567", "0123456789ABCDEF0123456789abcdef01234567"),
			nil,
			[2]string{},
			"pairs[0].base_commit",
			nil,
		},
		{
			"issue over cap",
			goodSuite,
			map[string]string{"pairs/p1/issue.md": strings.Repeat("x", 300<<10)},
			[2]string{},
			"pairs[0].issue",
			[]string{"over the cap"},
		},
		{
			"issue not utf-8",
			goodSuite,
			map[string]string{"pairs/p1/issue.md": "caf\xe9\n"},
			[2]string{},
			"pairs[0].issue",
			[]string{"UTF-8"},
		},
		{
			"empty fail_to_pass",
			sub(`fail_to_pass: ["tests/test_a.py::test_a"]`, "fail_to_pass: []"),
			nil,
			[2]string{},
			"pairs[0].fail_to_pass",
			[]string{"empty"},
		},
		{
			"missing fail_to_pass",
			sub(`fail_to_pass: ["tests/test_a.py::test_a"]`, ""),
			nil,
			[2]string{},
			"pairs[0].fail_to_pass",
			[]string{"missing"},
		},
		{
			"dotdot path",
			sub("pairs/p1/patch.diff", "../patch.diff"),
			nil,
			[2]string{},
			"pairs[0].patch",
			[]string{`".."`},
		},
		{
			"absolute path",
			sub("pairs/p1/patch.diff", "/etc/passwd"),
			nil,
			[2]string{},
			"pairs[0].patch",
			[]string{"relative"},
		},
		{
			"remote url",
			sub("fast_export: repos/r.fi", "url: https://example.com/r.git"),
			nil,
			[2]string{},
			"repositories.r",
			[]string{"remote repository sources are disabled"},
		},
		{
			"scp-style remote",
			sub("fast_export: repos/r.fi", "bundle: git@example.com:r.git"),
			nil,
			[2]string{},
			"repositories.r",
			[]string{"remote repository sources are disabled"},
		},
		{
			"symlinked patch",
			goodSuite,
			nil,
			[2]string{"/etc/hostname", "pairs/p1/patch.diff"},
			"pairs[0].patch",
			[]string{"symlink"},
		},
		{
			"bad expect",
			sub("expect: resolved", "expect: passed"),
			nil,
			[2]string{},
			"pairs[0].expect",
			[]string{"not a verdict"},
		},
		{
			"unknown repository",
			sub("repository: r", "repository: q"),
			nil,
			[2]string{},
			"pairs[0].repository",
			[]string{`"q"`},
		},
		{"bad runner", sub("pairs:", "verifier:\n  runner: maven\npairs:"), nil, [2]string{}, "verifier.runner", nil},
		{
			"empty setup argv",
			sub("pairs:", "verifier:\n  setup: [[]]\npairs:"),
			nil,
			[2]string{},
			"verifier.setup[0]",
			[]string{"empty"},
		},
		{
			"bad timeout",
			sub("pairs:", "verifier:\n  timeout: forever\npairs:"),
			nil,
			[2]string{},
			"verifier.timeout",
			nil,
		},
		{
			"empty protected pattern",
			sub("pairs:", "protected_paths: [\"\"]\npairs:"),
			nil,
			[2]string{},
			"",
			[]string{"protected_paths"},
		},
		{
			"dotdot restored pattern",
			sub("pairs:", "restored_paths: [\"../x\"]\npairs:"),
			nil,
			[2]string{},
			"",
			[]string{"restored_paths"},
		},
		{"not yaml", "name: [unclosed\n", nil, [2]string{}, "", nil},
		{"empty file", "", nil, [2]string{}, "", []string{"empty"}},
		{
			"no pairs",
			"name: t\nversion: \"1\"\nrepositories:\n  r:\n    fast_export: repos/r.fi\npairs: []\n",
			nil,
			[2]string{},
			"pairs",
			[]string{"at least one pair"},
		},
		{
			"option-like test id",
			sub(`pass_to_pass: ["tests/test_a.py::test_b"]`, `pass_to_pass: ["--co"]`),
			nil,
			[2]string{},
			"pairs[0].pass_to_pass[0]",
			[]string{"not a usable test ID"},
		},
		{
			"bad flaky policy",
			sub("pairs:", "flaky: ignored\npairs:"),
			nil,
			[2]string{},
			"flaky",
			[]string{"failed", "excluded"},
		},
		{
			"bad ambiguous_ids policy",
			sub("pairs:", "ambiguous_ids: first\npairs:"),
			nil,
			[2]string{},
			"ambiguous_ids",
			[]string{"error", "all"},
		},
		{
			"bad apply policy",
			sub("pairs:", "apply: fuzzy\npairs:"),
			nil,
			[2]string{},
			"apply",
			[]string{"strict", "swebench"},
		},
		{
			"duplicate test id",
			sub(`pass_to_pass: ["tests/test_a.py::test_b"]`, `pass_to_pass: ["a::b", "a::b"]`),
			nil,
			[2]string{},
			"pairs[0].pass_to_pass[1]",
			[]string{"twice"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeLoadSuite(t, tt.manifest, tt.extra)
			if tt.symlink[1] != "" {
				p := filepath.Join(dir, filepath.FromSlash(tt.symlink[1]))
				os.Remove(p)
				if err := os.Symlink(tt.symlink[0], p); err != nil {
					t.Fatal(err)
				}
			}
			err := loadNoPanic(t, dir)
			if !errors.Is(err, ErrBadSuite) {
				t.Fatalf("Load: %v, want an error wrapping ErrBadSuite", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("want one error line, got:\n%s", msg)
			}
			var le *LoadError
			if !errors.As(err, &le) || le.File != SuiteFile || le.Field != tt.field {
				t.Errorf("error %q: want a LoadError for %s field %q, got %#v", msg, SuiteFile, tt.field, le)
			}
			for _, w := range append([]string{SuiteFile, tt.field}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// loadNoPanic loads dir, turning a panic of Load into a test failure.
func loadNoPanic(t *testing.T, dir string) (err error) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Fatalf("Load panicked: %v", v)
		}
	}()
	_, err = Load(dir, LoadOptions{})
	return err
}

// TestPairsFile: the pairs of a big suite live in a JSON Lines file beside tender.yaml and load
// as the same pairs with the same digests; a malformed line is one error naming the file and
// the line.
func TestPairsFile(t *testing.T) {
	head, _, _ := strings.Cut(goodSuite, "pairs:\n")
	line := `{"id":"p1","repository":"r","base_commit":"0123456789abcdef0123456789abcdef01234567","issue":"pairs/p1/issue.md","patch":"pairs/p1/patch.diff","fail_to_pass":["tests/test_a.py::test_a"],"pass_to_pass":["tests/test_a.py::test_b"],"expect":"resolved"}`
	inline, err := Load(writeLoadSuite(t, goodSuite, nil), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(
		writeLoadSuite(t, head+"pairs_file: pairs.jsonl\n", map[string]string{"pairs.jsonl": line + "\n"}),
		LoadOptions{},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pairs) != 1 || s.Pairs[0].ID != "p1" || s.Pairs[0].InputDigest != inline.Pairs[0].InputDigest {
		t.Errorf("pairs from the file %+v, want the inline pair's digest %s", s.Pairs, inline.Pairs[0].InputDigest)
	}
	for _, tc := range []struct{ name, manifest, file, want string }{
		{"both", goodSuite + "pairs_file: pairs.jsonl\n", line + "\n", "tender.yaml: pairs_file: is set and so is pairs"},
		{"unknown key", head + "pairs_file: pairs.jsonl\n", strings.Replace(line, `"expect"`, `"expected"`, 1) + "\n", `pairs.jsonl: line 1: is not a pair object (json: unknown field "expected")`},
		{"two values on a line", head + "pairs_file: pairs.jsonl\n", line + " {}\n", "pairs.jsonl: line 1: holds more than one JSON value"},
		{"blank line", head + "pairs_file: pairs.jsonl\n", line + "\n\n" + line + "\n", "pairs.jsonl: line 2: is empty"},
		{"a bad field", head + "pairs_file: pairs.jsonl\n", strings.Replace(line, "0123456789abcdef0123", "0123", 1) + "\n", "pairs.jsonl: pairs[0].base_commit"},
		{"missing file", head + "pairs_file: nope.jsonl\n", "", "pairs_file: nope.jsonl does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeLoadSuite(t, tc.manifest, map[string]string{"pairs.jsonl": tc.file}), LoadOptions{})
			if !errors.Is(err, ErrBadSuite) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestSymlinksSettingLoads: a repository's symlinks setting is an addition. Without it (or
// with refuse) the repository refuses links and the input digest is as before the key existed;
// in-tree changes the digest; any other value is refused, naming the field and the values.
func TestSymlinksSettingLoads(t *testing.T) {
	load := func(setting string) (*Suite, error) {
		manifest := goodSuite
		if setting != "" {
			manifest = strings.Replace(goodSuite, "    fast_export: repos/r.fi\n",
				"    fast_export: repos/r.fi\n    symlinks: "+setting+"\n", 1)
		}
		return Load(writeLoadSuite(t, manifest, nil), LoadOptions{})
	}
	plain, err := load("")
	if err != nil {
		t.Fatal(err)
	}
	refuse, err := load("refuse")
	if err != nil {
		t.Fatal(err)
	}
	inTree, err := load("in-tree")
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case plain.Repositories["r"].Symlinks != gitsafe.SymlinksRefuse ||
		refuse.Repositories["r"].Symlinks != gitsafe.SymlinksRefuse:
		t.Errorf("default %q, refuse %q; want refuse", plain.Repositories["r"].Symlinks, refuse.Repositories["r"].Symlinks)
	case inTree.Repositories["r"].Symlinks != gitsafe.SymlinksInTree:
		t.Errorf("in-tree loads as %q", inTree.Repositories["r"].Symlinks)
	case refuse.Pairs[0].InputDigest != plain.Pairs[0].InputDigest:
		t.Error("symlinks: refuse changed the input digest")
	case inTree.Pairs[0].InputDigest == plain.Pairs[0].InputDigest:
		t.Error("symlinks: in-tree left the input digest as it was")
	}
	_, err = load("yes")
	if !errors.Is(err, ErrBadSuite) || !strings.Contains(err.Error(), "repositories.r.symlinks") ||
		!strings.Contains(err.Error(), "in-tree") {
		t.Errorf("symlinks: yes: %v, want an error naming the field and the values", err)
	}
}
