package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/cli"
)

// TestHelpers: the helpers make what the end-to-end tests grade, with real git and no engine:
// a repository bundled at a commit that git itself verifies, the demo suite with chosen pairs
// in order that `tender validate` loads, and a copy that leaves the fixture as it was.
func TestHelpers(t *testing.T) {
	t.Chdir("..") // RepoRoot is the module root seen from a package of integration/
	bundle := filepath.Join(t.TempDir(), "repos", "r.bundle")
	commit := BundleRepo(t, map[string]string{"README.md": "r\n", "tests/test_r.py": "def test_r():\n    pass\n"}, bundle)
	if len(commit) != 40 {
		t.Fatalf("BundleRepo returned %q, want a commit", commit)
	}
	repo := t.TempDir()
	GitIn(t, repo, "", "init", "-q")
	GitIn(t, repo, "", "bundle", "verify", "-q", bundle)
	if heads := GitIn(t, repo, "", "bundle", "list-heads", bundle); heads != commit+" refs/heads/main\n" {
		t.Errorf("the bundle's heads are %q; BundleRepo said main is %s", heads, commit)
	}

	dir := OrderedSuite(t, "wrong-fix", "gold-fix", "wrong-fix")
	var ids []string
	for _, p := range ReadSuiteDoc(t, dir).Pairs {
		ids = append(ids, p.ID)
	}
	if got := strings.Join(ids, " "); got != "p0-wrong-fix p1-gold-fix p2-wrong-fix" {
		t.Errorf("OrderedSuite's pairs: %s", got)
	}
	if _, stderr, code := RunTender(t, "validate", dir); code != cli.ExitOK {
		t.Errorf("validate of the ordered suite: exit %d\n%s", code, stderr)
	}
	if n := len(ReadSuiteDoc(t, RepoRoot+"/fixtures/demo").Pairs); n != 6 {
		t.Errorf("fixtures/demo has %d pairs after the copy was rewritten, want its 6", n)
	}
	if n := CountLines(filepath.Join(dir, "tender.yaml")); n < 10 {
		t.Errorf("CountLines of the suite's tender.yaml: %d", n)
	}
}
