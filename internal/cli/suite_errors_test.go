package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

func TestValidateGoodSuite(t *testing.T) {
	dir := writeSuite(t, goodSuite, nil)
	out, errOut, code := runTender(t, "validate", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "suite t 1: 1 pair(s)") {
		t.Errorf("stdout = %q", out)
	}
}

// TestMalformedSuites: every malformed suite gives exit 2 and one line that names the file,
// the field and what to do.
func TestMalformedSuites(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(goodSuite, old, new, 1) }
	tests := []struct {
		name     string
		manifest string
		extra    map[string]string
		symlink  [2]string
		want     []string // substrings of the one error line
	}{
		{"unknown key", sub("version: \"1\"", "version: \"1\"\ncolour: blue"), nil, [2]string{}, []string{"tender.yaml", `unknown key "colour"`}},
		{"unknown pair key", sub("expect: resolved", "expect: resolved\n    timeout: 5s"), nil, [2]string{}, []string{`unknown key "timeout"`}},
		{"duplicate id", goodSuite + sub("name: t\nversion: \"1\"\nrepositories:\n  r:\n    fast_export: repos/r.fi\npairs:\n", ""), nil, [2]string{}, []string{"pairs[1].id", "unique"}},
		{"duplicate key", sub("name: t", "name: t\nname: u"), nil, [2]string{}, []string{"tender.yaml", "already defined"}},
		{"missing issue file", sub("pairs/p1/issue.md", "pairs/p1/nope.md"), nil, [2]string{}, []string{"pairs[0].issue", "does not exist"}},
		{"short commit", sub("0123456789abcdef0123456789abcdef01234567", "0123456"), nil, [2]string{}, []string{"pairs[0].base_commit", "40"}},
		{"uppercase commit", sub("0123456789abcdef0123456789abcdef01234567", "0123456789ABCDEF0123456789abcdef01234567"), nil, [2]string{}, []string{"pairs[0].base_commit"}},
		{"issue over cap", goodSuite, map[string]string{"pairs/p1/issue.md": strings.Repeat("x", 300<<10)}, [2]string{}, []string{"pairs[0].issue", "over the cap"}},
		{"issue not utf-8", goodSuite, map[string]string{"pairs/p1/issue.md": "caf\xe9\n"}, [2]string{}, []string{"pairs[0].issue", "UTF-8"}},
		{"empty fail_to_pass", sub(`fail_to_pass: ["tests/test_a.py::test_a"]`, "fail_to_pass: []"), nil, [2]string{}, []string{"pairs[0].fail_to_pass", "empty"}},
		{"missing fail_to_pass", sub(`fail_to_pass: ["tests/test_a.py::test_a"]`, ""), nil, [2]string{}, []string{"pairs[0].fail_to_pass", "missing"}},
		{"dotdot path", sub("pairs/p1/patch.diff", "../patch.diff"), nil, [2]string{}, []string{"pairs[0].patch", `".."`}},
		{"absolute path", sub("pairs/p1/patch.diff", "/etc/passwd"), nil, [2]string{}, []string{"pairs[0].patch", "relative"}},
		{"remote url", sub("fast_export: repos/r.fi", "url: https://example.com/r.git"), nil, [2]string{}, []string{"repositories.r", "remote repository sources are disabled"}},
		{"scp-style remote", sub("fast_export: repos/r.fi", "bundle: git@example.com:r.git"), nil, [2]string{}, []string{"remote repository sources are disabled"}},
		{"symlinked patch", goodSuite, nil, [2]string{"/etc/hostname", "pairs/p1/patch.diff"}, []string{"symlink"}},
		{"bad expect", sub("expect: resolved", "expect: passed"), nil, [2]string{}, []string{"pairs[0].expect", "not a verdict"}},
		{"unknown repository", sub("repository: r", "repository: q"), nil, [2]string{}, []string{"pairs[0].repository", `"q"`}},
		{"bad runner", sub("pairs:", "verifier:\n  runner: maven\npairs:"), nil, [2]string{}, []string{"verifier.runner"}},
		{"empty setup argv", sub("pairs:", "verifier:\n  setup: [[]]\npairs:"), nil, [2]string{}, []string{"verifier.setup[0]", "empty"}},
		{"bad timeout", sub("pairs:", "verifier:\n  timeout: forever\npairs:"), nil, [2]string{}, []string{"verifier.timeout"}},
		{"empty protected pattern", sub("pairs:", "protected_paths: [\"\"]\npairs:"), nil, [2]string{}, []string{"protected_paths"}},
		{"dotdot restored pattern", sub("pairs:", "restored_paths: [\"../x\"]\npairs:"), nil, [2]string{}, []string{"restored_paths"}},
		{"not yaml", "name: [unclosed\n", nil, [2]string{}, []string{"tender.yaml"}},
		{"empty file", "", nil, [2]string{}, []string{"tender.yaml", "empty"}},
		{"no pairs", "name: t\nversion: \"1\"\nrepositories:\n  r:\n    fast_export: repos/r.fi\npairs: []\n", nil, [2]string{}, []string{"pairs", "at least one pair"}},
		{"option-like test id", sub(`pass_to_pass: ["tests/test_a.py::test_b"]`, `pass_to_pass: ["--co"]`), nil, [2]string{}, []string{"pairs[0].pass_to_pass[0]", "not a usable test ID"}},
		{"duplicate test id", sub(`pass_to_pass: ["tests/test_a.py::test_b"]`, `pass_to_pass: ["a::b", "a::b"]`), nil, [2]string{}, []string{"pairs[0].pass_to_pass[1]", "twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSuite(t, tt.manifest, tt.extra)
			if tt.symlink[1] != "" {
				p := filepath.Join(dir, filepath.FromSlash(tt.symlink[1]))
				os.Remove(p)
				if err := os.Symlink(tt.symlink[0], p); err != nil {
					t.Fatal(err)
				}
			}
			_, errOut, code := runTender(t, "validate", dir)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 {
				t.Errorf("want one error line, got %d:\n%s", lines, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q does not contain %q", strings.TrimSpace(errOut), w)
				}
			}
		})
	}
}
