package grader

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// linkTree is a small project with in-tree links: a restored link to a restored file, and a
// link to a directory.
var (
	linkTreeFiles = map[string]string{"calc/__init__.py": "", "calc/core.py": "def f():\n    return 1\n",
		"tests/data/x.txt": "X\n", "tests/test_a.py": "def test_a():\n    assert True\n"}
	linkTreeLinks = map[string]string{"tests/fixtures/x.txt": "../data/x.txt", "docs/calc": "../calc"}
)

// linkRepoStream commits linkTree in a new git repository and returns its fast-export stream
// (in a file) and the commit.
func linkRepoStream(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, linkTreeFiles)
	for p, target := range linkTreeLinks {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t",
			"GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	stream := filepath.Join(t.TempDir(), "links.fi")
	if err := os.WriteFile(stream, []byte(git("fast-export", "main")), 0o644); err != nil {
		t.Fatal(err)
	}
	return stream, strings.TrimSpace(git("rev-parse", "HEAD"))
}

// linkSuite writes pairs on the link project with `symlinks: in-tree`.
func linkSuite(t *testing.T, stream string, pairs ...testPair) *suite.Suite {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(stream)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"repos/links.fi": string(data)}
	doc := suite.SuiteDoc{Name: "links", Version: "1",
		Repositories: map[string]suite.RepoDoc{"links": {FastExport: "repos/links.fi", Symlinks: "in-tree"}}}
	for _, p := range pairs {
		doc.Pairs = append(doc.Pairs, pairDoc(p, "links", files))
	}
	manifest, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	files[suite.SuiteFile] = string(manifest)
	writeFiles(t, dir, files)
	s, err := suite.Load(dir, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const addLinkPatch = "diff --git a/docs/core.py b/docs/core.py\nnew file mode 120000\nindex 0000000..1111111\n" +
	"--- /dev/null\n+++ b/docs/core.py\n@@ -0,0 +1 @@\n+../calc/core.py\n\\ No newline at end of file\n"

// TestGradeHandsTheLinksToTheBackend: the verifier gets the workspace's links (the tree's, and
// the one the candidate added) in Spec.Links, while the host workspace holds no
// link at all; a restored link is one of the evaluator's files, which the backend writes as
// Tender's own user.
func TestGradeHandsTheLinksToTheBackend(t *testing.T) {
	stream, base := linkRepoStream(t)
	p := testPair{id: "p", stream: stream, base: base, patch: addLinkPatch,
		failToPass: []string{"tests/test_a.py::test_a"}, expect: "resolved"}
	want := maps.Clone(linkTreeLinks)
	want["docs/core.py"] = "../calc/core.py"
	look := func(c *fakeCall) {
		if !maps.Equal(c.Spec.Links, want) {
			c.errorf("%s: Spec.Links %v, want %v", c.Spec.Name, c.Spec.Links, want)
		}
		_ = filepath.WalkDir(c.Spec.Workspace, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				c.errorf("%s: %s is a symlink on the host", c.Spec.Name, p)
			}
			return nil
		})
	}
	expect := func(c *fakeCall) {
		if !slices.Contains(c.Spec.Evaluator, "tests/fixtures/x.txt") {
			c.errorf("%s: the restored link is not among the evaluator's files %v", c.Spec.Name, c.Spec.Evaluator)
		}
	}
	fake := newFakeBackend(t, map[string]verifier{
		"p/target": inspecting(func(c *fakeCall) { look(c); expect(c) }, reply()),
	})
	results, err := Grade(context.Background(), linkSuite(t, stream, p), testOptions(t, fake))
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Verdict != report.Resolved {
		t.Fatalf("verdict %s %+v, want resolved", r.Verdict, r.Reasons)
	}
}

// TestHiddenAssetNeverThroughALink: a hidden asset at a link of the tree, or under a link to a
// directory, is never written: the pair has no verdict, and the reason names the link and the
// setting. Nothing reaches the directory the link points to.
func TestHiddenAssetNeverThroughALink(t *testing.T) {
	stream, base := linkRepoStream(t)
	for _, asset := range []string{"tests/fixtures/x.txt", "docs/calc/hidden.py"} {
		t.Run(asset, func(t *testing.T) {
			p := testPair{id: "p", stream: stream, base: base, patch: addLinkPatch,
				failToPass: []string{"tests/test_a.py::test_a"}, assets: map[string]string{asset: "HIDDEN\n"}}
			fake := newFakeBackend(t, map[string]verifier{})
			results, err := Grade(context.Background(), linkSuite(t, stream, p), testOptions(t, fake))
			if err != nil {
				t.Fatal(err)
			}
			r := results[0]
			if r.Verdict != report.Error || len(r.Reasons) == 0 || r.Reasons[0].Code != report.CodeWorkspaceFailed ||
				!strings.Contains(r.Reasons[0].Detail, "symlinks: in-tree") {
				t.Fatalf("verdict %s %+v, want error workspace_failed naming the setting", r.Verdict, r.Reasons)
			}
			t.Logf("%s: %s", r.Reasons[0].Code, r.Reasons[0].Detail)
		})
	}
}
