package integrity

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// authoringTree has root-level and nested matches for every way an author writes a pattern,
// including the seed review's bare-directory case (grading/ with a nested fixtures/ dir).
var authoringTree = []string{
	"README.md",
	"build.expected/out.txt",
	"dist/z.js",
	"docs/grading",
	"grading/expected.json",
	"grading/fixtures/oracle.txt",
	"gradings/notes.txt",
	"report.expected",
	"src/grading.py",
	"src/grading/rubric.md",
	"tests/data/case.expected",
	"tests/data/case.expected.bak",
	"tools/a/b/dist/y.js",
	"tools/a/dist/x.js",
}

// rootFileTree has a root-level FILE named grading, to pin what directory patterns do to it.
var rootFileTree = []string{"docs/grading/x.txt", "grading", "gradingx"}

type matrixCase struct {
	pattern string
	tree    []string
	want    []string
}

var authoringMatrix = []matrixCase{
	// The seed's hole: exclude_patterns ['grading'] must take grading/fixtures/oracle.txt too.
	{
		"grading",
		authoringTree,
		[]string{"docs/grading", "grading/expected.json", "grading/fixtures/oracle.txt", "src/grading/rubric.md"},
	},
	{
		"grading/",
		authoringTree,
		[]string{"grading/expected.json", "grading/fixtures/oracle.txt", "src/grading/rubric.md"},
	},
	{"grading/*", authoringTree, []string{"grading/expected.json", "grading/fixtures/oracle.txt"}},
	{"grading/**", authoringTree, []string{"grading/expected.json", "grading/fixtures/oracle.txt"}},
	{"/grading", authoringTree, []string{"grading/expected.json", "grading/fixtures/oracle.txt"}},
	{"/grading/", authoringTree, []string{"grading/expected.json", "grading/fixtures/oracle.txt"}},
	{
		"**/grading",
		authoringTree,
		[]string{"docs/grading", "grading/expected.json", "grading/fixtures/oracle.txt", "src/grading/rubric.md"},
	},
	{"grading/fixtures", authoringTree, []string{"grading/fixtures/oracle.txt"}},
	{"*.expected", authoringTree, []string{"build.expected/out.txt", "report.expected", "tests/data/case.expected"}},
	{"**/*.expected", authoringTree, []string{"build.expected/out.txt", "report.expected", "tests/data/case.expected"}},
	{"/*.expected", authoringTree, []string{"build.expected/out.txt", "report.expected"}},
	{"tools/*/dist", authoringTree, []string{"tools/a/dist/x.js"}},
	{"tools/**/dist", authoringTree, []string{"tools/a/b/dist/y.js", "tools/a/dist/x.js"}},
	{
		"{grading,dist}",
		authoringTree,
		[]string{
			"dist/z.js",
			"docs/grading",
			"grading/expected.json",
			"grading/fixtures/oracle.txt",
			"src/grading/rubric.md",
			"tools/a/b/dist/y.js",
			"tools/a/dist/x.js",
		},
	},
	{"GRADING", authoringTree, nil}, // no fold: case matters
	{"grading", rootFileTree, []string{"docs/grading/x.txt", "grading"}},
	{"grading/", rootFileTree, []string{"docs/grading/x.txt"}},
	{"grading/*", rootFileTree, nil},
	{"grading/**", rootFileTree, []string{"grading"}}, // doublestar: ** matches zero components
	{"/grading", rootFileTree, []string{"grading"}},
	{"/grading/", rootFileTree, nil},
}

func matchedSet(t *testing.T, m *Matcher, tree []string) []string {
	t.Helper()
	var got []string
	for _, p := range tree {
		if m.Match(p) {
			got = append(got, p)
		}
	}
	return got
}

func TestAuthoringMatrix(t *testing.T) {
	for _, tc := range authoringMatrix {
		name := tc.pattern
		if len(tc.tree) == len(rootFileTree) {
			name += " over a root file"
		}
		t.Run(name, func(t *testing.T) {
			m, err := Compile("restored_paths", []string{tc.pattern}, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, matchedSet(t, m, tc.tree)); diff != "" {
				t.Errorf("paths matched by %q (-want +got):\n%s", tc.pattern, diff)
			}
		})
	}
}

// TestAuthoringMatrixFold runs the same matrix with fold on, over the tree with its case
// changed and ignorables inserted: the matched set must be the same files.
func TestAuthoringMatrixFold(t *testing.T) {
	disguise := func(p string) string { return strings.ReplaceAll(strings.ToUpper(p), "A", "A\u200d") }
	for _, tc := range authoringMatrix {
		if tc.pattern == "GRADING" {
			continue
		}
		t.Run(tc.pattern, func(t *testing.T) {
			m, err := Compile("protected_paths", []string{tc.pattern}, true)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range tc.want {
				want = append(want, disguise(p))
			}
			tree := make([]string, len(tc.tree))
			for i, p := range tc.tree {
				tree[i] = disguise(p)
			}
			if diff := cmp.Diff(want, matchedSet(t, m, tree)); diff != "" {
				t.Errorf("paths matched by %q with fold (-want +got):\n%s", tc.pattern, diff)
			}
		})
	}
}

func TestFoldVariants(t *testing.T) {
	m := MustCompile("protected_paths", []string{".tender/**", "café/**", "keys/"}, true)
	tests := []struct {
		path string
		want bool
	}{
		{".tender/x", true},
		{".TENDER/x", true},
		{".Tender/sub/x", true},
		{".te\u200cnder/x", true},
		{".tender\ufeff/x", true},
		{"\u200d.tender/x", true},
		{".tender/\u200b/x", true},       // an all-ignorable component disappears
		{"café/x", true},                 // NFC pattern, NFC path
		{"cafe\u0301/x", true},           // NFD path
		{"CAFE\u0301/x", true},           // NFD and case
		{"\u212aEYS/a", true},            // KELVIN SIGN folds to k
		{".te\u0301nder/x", false},       // an accent makes a different name
		{".tenders/x", false},            // not the directory
		{"src/.tender/x", false},         // .tender/** is anchored
		{"\u0131\u0307.tender/x", false}, // junk before the name
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.Match(tc.path); got != tc.want {
				t.Errorf("Match(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestCompileFoldPatternIsCanonical(t *testing.T) {
	// The pattern side folds too: an author's ".Tender/**" protects ".tender/x".
	m := MustCompile("protected_paths", []string{".Tender/**", "CAFE\u0301/"}, true)
	for _, p := range []string{".tender/x", ".TENDER/x", "café/x"} {
		if !m.Match(p) {
			t.Errorf("Match(%q) = false, want true", p)
		}
	}
}

func TestMatchUncleanPathFailsClosed(t *testing.T) {
	m := MustCompile("restored_paths", []string{"tests/**"}, false)
	var empty *Matcher
	for _, p := range []string{"", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/.", "a\\b", "a\x00b", "C:/x"} {
		if !m.Match(p) || !empty.Match(p) {
			t.Errorf("Match(%q) = false, want true (fail closed)", p)
		}
	}
	if empty.Match("tests/x") {
		t.Error("a nil Matcher matched a clean path")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		pattern string
		fold    bool
		want    string
	}{
		{"", false, `protected_paths[1]: empty pattern; remove it, or write a path relative to the repository root`},
		{" tests/**", false, `protected_paths[1]: " tests/**" has whitespace at an end; remove it`},
		{"tests/** ", false, `protected_paths[1]: "tests/** " has whitespace at an end; remove it`},
		{"a\x00b", false, `protected_paths[1]: "a\x00b" contains a NUL byte`},
		{
			`tests\**`,
			false,
			`protected_paths[1]: "tests\\**" contains a backslash; use '/' between components, and [*] for a literal metacharacter`,
		},
		{
			`C:\x`,
			false,
			`protected_paths[1]: "C:\\x" contains a backslash; use '/' between components, and [*] for a literal metacharacter`,
		},
		{
			"C:/x",
			false,
			`protected_paths[1]: "C:/x" is an absolute Windows path; use a path relative to the repository root`,
		},
		{
			"//server/share",
			false,
			`protected_paths[1]: "//server/share" is a network path; use a path relative to the repository root (one leading '/' anchors it there)`,
		},
		{
			"/",
			false,
			`protected_paths[1]: "/" names no path; write a pattern relative to the repository root, such as ".tender/**"`,
		},
		{"a//b", false, `protected_paths[1]: "a//b" has an empty component ('//'); remove the extra slash`},
		{"a/", false, ""},
		{"a//", false, `protected_paths[1]: "a/" has an empty component ('//'); remove the extra slash`},
		{"./tests/**", false, `protected_paths[1]: "./tests/**" has a "." component; write the path without it`},
		{
			"../x",
			false,
			`protected_paths[1]: ".." is not allowed in a pattern; use a path relative to the repository root`,
		},
		{
			"a/../../x",
			false,
			`protected_paths[1]: ".." is not allowed in a pattern; use a path relative to the repository root`,
		},
		{
			"/..",
			false,
			`protected_paths[1]: ".." is not allowed in a pattern; use a path relative to the repository root`,
		},
		{
			"tests/[abc",
			false,
			`protected_paths[1]: "tests/[abc" is not a valid doublestar pattern (an unclosed '[' or '{'?)`,
		},
		{"{a,b", false, `protected_paths[1]: "{a,b" is not a valid doublestar pattern (an unclosed '[' or '{'?)`},
		{"a/\u200c/b", true, `protected_paths[1]: "a/\u200c/b" has a component made only of invisible characters`},
		{"a/\u200c/b", false, ""}, // without fold the name is an ordinary (odd) name
		{"/.tender/**", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			_, err := Compile("protected_paths", []string{".tender/**", tc.pattern}, tc.fold)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Compile(%q) = %v, want no error", tc.pattern, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile(%q) succeeded, want %q", tc.pattern, tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Field != "protected_paths" || pe.Index != 1 || pe.Pattern != tc.pattern {
				t.Errorf("error %#v does not name the field, index and pattern", err)
			}
			if !errors.Is(err, ErrBadPattern) {
				t.Errorf("error %v does not wrap ErrBadPattern", err)
			}
		})
	}
}

func TestDefaultsCompile(t *testing.T) {
	restored := MustCompile("restored_paths", DefaultRestored, false)
	protected := MustCompile("protected_paths", DefaultProtected, true)
	if diff := cmp.Diff(DefaultRestored, restored.Patterns()); diff != "" {
		t.Error(diff)
	}
	tree := []string{"conftest.py", "src/pkg/conftest.py", "tests/test_a.py", "test/unit/test_b.py",
		"pytest.ini", "pytest.toml", ".pytest.toml", "noxfile.py", "src/pkg/tests/test_c.py", "pkg/tests/__init__.py",
		"test_root.py", "pkg/parser_test.py", "pkg/sub/test_x.py", "setup.cfg", "src/app.py", "pkg/testing.py",
		"pkg/test_data/data.json", ".tender/x"}
	// In-package test directories, test files anywhere (a root test_x.py too); not a module
	// that merely starts with "test" or a data directory named test_*.
	want := []string{"conftest.py", "src/pkg/conftest.py", "tests/test_a.py", "test/unit/test_b.py",
		"pytest.ini", "pytest.toml", ".pytest.toml", "noxfile.py", "src/pkg/tests/test_c.py", "pkg/tests/__init__.py",
		"test_root.py", "pkg/parser_test.py", "pkg/sub/test_x.py"}
	if diff := cmp.Diff(want, matchedSet(t, restored, tree)); diff != "" {
		t.Errorf("default restored_paths (-want +got):\n%s", diff)
	}
	if got := matchedSet(t, protected, tree); !slices.Equal(got, []string{".tender/x"}) {
		t.Errorf("default protected_paths matched %q", got)
	}
}

func TestFoldQuestionMarkMatchesComposedCharacter(t *testing.T) {
	m := MustCompile("protected_paths", []string{"caf?/**"}, true)
	plain := MustCompile("protected_paths", []string{"caf?/**"}, false)
	for _, p := range []string{"caf\u00e9/x", "cafe\u0301/x", "CAF\u00c9/x", "cafe/x"} {
		if !m.Match(p) {
			t.Errorf("fold: Match(%q) = false, want true", p)
		}
	}
	if !plain.Match("caf\u00e9/x") || plain.Match("cafe\u0301/x") {
		t.Error("without fold, ? must match the one code point of NFC é and not the two of NFD")
	}
}
