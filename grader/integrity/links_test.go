package integrity

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
)

// TestScanLinks: under symlinks: in-tree, a link the patch creates is judged by where it lies
// and what it resolves to (through the tree's links too), and a path that a restored link of
// the base tree resolves to is the evaluator's. Without the setting every link is refused.
func TestScanLinks(t *testing.T) {
	base := map[string]string{
		"tests/fixtures/shared": "../../data/shared", // restored link, its target outside restored paths
		"sub/up":                "..",
		"pkg/alias":             "core",
	}
	files := []string{"tests/test_a.py", "tests/conftest.py", "data/shared/cfg.json", "pkg/core/m.py", "sub/x.py",
		"docs/index.md", ".tender/key"}
	link := func(path, target string) Change {
		return Change{NewPath: path, Line: 1, Mode: modeSymlink, LinkTarget: target}
	}
	for _, tc := range []struct {
		name    string
		allowed bool
		change  Change
		want    report.Code // "" when the patch passes
		words   string
	}{
		{"link without the setting", false, link("pkg/new.py", "core/m.py"), report.CodeUnsafePath, "symlinks: in-tree"},
		{"honest link", true, link("docs/api", "../pkg/core"), "", ""},
		{"link to a restored file", true, link("pkg/x", "../tests/test_a.py"), report.CodeEvaluator, "restored path"},
		{"link to a directory of restored files", true, link("pkg/t", "../tests"), report.CodeEvaluator, "restored path"},
		{"link to a directory holding restored files", true, link("pkg/all", ".."), report.CodeEvaluator, "holds"},
		{"link through the tree's link to restored files", true, link("pkg/y", "../sub/up/tests/conftest.py"),
			report.CodeEvaluator, "restored path"},
		{"link to a protected path", true, link("pkg/k", "../.tender/key"), report.CodeProtected, "protected_paths"},
		{"link to an evaluator asset", true, link("pkg/h", "../docs/hidden.txt"), report.CodeEvaluator,
			"evaluator-owned"},
		{"link under restored paths", true, link("tests/helper.py", "../pkg/core/m.py"), report.CodeEvaluator,
			"under restored_paths"},
		{"link out of the tree", true, link("pkg/out", "../../tender-canary"), report.CodeUnsafePath, "leaves the tree"},
		{"link out through the tree's link", true, link("sub/z", "up/../../tender-canary"), report.CodeUnsafePath,
			"leaves the tree"},
		{"change a restored link's target", true, Change{OldPath: "data/shared/cfg.json", NewPath: "data/shared/cfg.json",
			Line: 1, Mode: 0o100644}, report.CodeEvaluator, `symlink "tests/fixtures/shared"`},
		{"add a file where a restored link points", true, Change{NewPath: "data/shared/new.json", Line: 1,
			Mode: 0o100644}, report.CodeEvaluator, "resolves to"},
		{"change a symlink in place", true, Change{OldPath: "pkg/alias", NewPath: "pkg/alias", Line: 1,
			Mode: modeSymlink}, report.CodeUnsafePath, "only add one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{
				Protected: MustCompile("protected_paths", DefaultProtected, true),
				Restored:  MustCompile("restored_paths", DefaultRestored, false),
				Evaluator: []string{"docs/hidden.txt"},
				Links:     Links{Allowed: tc.allowed, Base: base, Files: files},
			}
			got := Scan([]Change{tc.change}, p)
			if tc.want == "" {
				if len(got) > 0 {
					t.Fatalf("Scan = %+v, want nothing", got)
				}
				return
			}
			if len(got) == 0 || got[0].Code != tc.want || !strings.Contains(got[0].Detail, tc.words) {
				t.Fatalf("Scan = %+v, want %s with %q", got, tc.want, tc.words)
			}
			if info, ok := report.Lookup(got[0].Code); !ok || info.Verdict != report.IntegrityViolation {
				t.Errorf("%s does not lead to integrity_violation", got[0].Code)
			}
			t.Logf("%s: %s", got[0].Code, got[0].Detail)
		})
	}
}
