package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// linkBase is the base tree of the project the link tests grade: calc.core.label is wrong,
// and the tree holds in-tree links the regression tests read through: a restored link to a
// restored file, a restored link to a file outside restored paths, a link to a directory and
// a link to a file.
var linkBase = map[string]string{
	"calc/__init__.py":        "",
	"calc/core.py":            "def label(x):\n    return x\n",
	"VERSION":                 "1.0\n",
	"tests/data/expected.txt": "L:a\n",
	"tests/test_calc.py": `import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def test_fixture_through_link():
    assert read("tests/fixtures/expected.txt") == "L:a\n"


def test_version_through_link():
    assert read("tests/fixtures/version.txt") == "1.0\n"


def test_package_version_through_link():
    assert read("calc/VERSION") == "1.0\n"


def test_directory_link():
    assert os.path.islink(os.path.join(ROOT, "docs/calc"))
    assert read("docs/calc/core.py").startswith("def label")
`,
}

var linkBaseLinks = map[string]string{
	"tests/fixtures/expected.txt": "../data/expected.txt",
	"tests/fixtures/version.txt":  "../../VERSION",
	"docs/calc":                   "../calc",
	"calc/VERSION":                "../VERSION",
}

const (
	linkTestModule = "from calc.core import label\n\n\ndef test_label():\n    assert label(\"a\") == \"L:a\"\n"
	linkFix        = "def label(x):\n    return \"L:\" + x\n"
	linkCanary     = "/tmp/tender-canary-links-"
)

// linkEdit is one candidate: what it does to a checkout of the base (the gold fix comes
// first, so that a patch the grader failed to refuse would resolve).
type linkEdit struct {
	id     string
	edit   func(t *testing.T, dir string)
	expect report.Verdict
	code   report.Code // the first reason's code; "" for resolved
	assets map[string]string
	// raw is diff text added to the patch as written, for a path through a link that git
	// would not write (a checkout follows the link, so its diff names the target).
	raw string
}

func symlink(target, link string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, filepath.FromSlash(link))
		clitest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		_ = os.Remove(p)
		clitest.Must(t, os.Symlink(target, p))
	}
}

func write(path, content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { clitest.WriteFiles(t, dir, map[string]string{path: content}) }
}

func remove(path string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		clitest.Must(t, os.Remove(filepath.Join(dir, filepath.FromSlash(path))))
	}
}

func steps(fs ...func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		for _, f := range fs {
			f(t, dir)
		}
	}
}

// linkEdits are the honest candidates and the planted attacks, each aimed at a canary outside
// the workspace where it could reach one.
var linkEdits = []linkEdit{
	{id: "gold", edit: func(*testing.T, string) {}, expect: report.Resolved},
	{id: "honest-link", edit: symlink("../calc/core.py", "docs/core.py"), expect: report.Resolved},
	{id: "link-absolute", edit: symlink(linkCanary+"absolute", "calc/out"), expect: report.IntegrityViolation,
		code: report.CodeUnsafePath},
	{id: "link-dotdot", edit: symlink("../../../../../../../.."+linkCanary+"dotdot", "calc/out"),
		expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "link-chain", edit: steps(symlink("b", "calc/a"), symlink("c", "calc/b"),
		symlink("../../../../../../../.."+linkCanary+"chain", "calc/c")), expect: report.IntegrityViolation,
		code: report.CodeUnsafePath},
	{id: "link-chain-lexical", edit: steps(symlink("..", "calc/sub/up"),
		symlink("up/../../../../../../../.."+linkCanary+"lexical", "calc/sub/esc")),
		expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "link-to-restored", edit: symlink("../tests/test_label.py", "calc/x"), expect: report.IntegrityViolation,
		code: report.CodeEvaluator},
	{id: "write-through-new-link", edit: symlink("../tests", "calc/t"),
		raw: newModulePatch("calc/t/test_label.py", "def test_label():\n    pass\n"), expect: report.IntegrityViolation,
		code: report.CodeUnsafePath},
	{id: "retarget-link", edit: symlink("../tests/data/expected.txt", "calc/VERSION"),
		expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "link-to-file", edit: steps(remove("calc/VERSION"), write("calc/VERSION", "2.0\n")),
		expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "file-to-link", edit: steps(remove("tests/data/expected.txt"),
		symlink("../../VERSION", "tests/data/expected.txt")),
		expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "write-through-base-link", edit: func(*testing.T, string) {},
		raw: newModulePatch("docs/calc/evil.py", "EVIL = 1\n"), expect: report.IntegrityViolation,
		code: report.CodeUnsafePath},
	{id: "link-in-restored", edit: symlink("../calc/core.py", "tests/helper.py"), expect: report.IntegrityViolation,
		code: report.CodeEvaluator},
	{id: "directory-link-restore-writes-through", edit: steps(remove("tests/data/expected.txt"),
		symlink("../calc", "tests/data")), expect: report.IntegrityViolation, code: report.CodeUnsafePath},
	{id: "asset-through-link", edit: symlink("../docs", "calc/gen"), expect: report.IntegrityViolation,
		code: report.CodeEvaluator, assets: map[string]string{"calc/gen/expected.json": "{}\n"}},
	{id: "restored-link-target", edit: write("VERSION", "9.9\n"), expect: report.IntegrityViolation,
		code: report.CodeEvaluator},
}

// linkSuite writes the project (its base, and each candidate's commit on a branch of its own)
// and a suite with `symlinks: in-tree` that grades every candidate.
func linkSuite(t *testing.T) string {
	t.Helper()
	suiteDir, work := t.TempDir(), t.TempDir()
	clitest.WriteFiles(t, work, linkBase)
	for link, target := range linkBaseLinks {
		symlink(target, link)(t, work)
	}
	e2e.GitIn(t, work, "", "init", "-q", "-b", "main")
	e2e.GitIn(t, work, "", "add", "-A")
	e2e.GitIn(t, work, "", "commit", "-q", "-m", "base")
	base := strings.TrimSpace(e2e.GitIn(t, work, "", "rev-parse", "HEAD"))
	clitest.Must(t, os.MkdirAll(filepath.Join(suiteDir, "repos"), 0o755))
	e2e.GitIn(t, work, "", "bundle", "create", "-q", filepath.Join(suiteDir, "repos", "proj.bundle"), "main")
	files := map[string]string{"issue.md": "label is wrong\n", "test.diff": newModulePatch("tests/test_label.py",
		linkTestModule)}
	var pairs []suite.PairDoc
	for _, e := range linkEdits {
		e2e.GitIn(t, work, "", "checkout", "-q", "-B", e.id, base)
		write("calc/core.py", linkFix)(t, work)
		e.edit(t, work)
		e2e.GitIn(t, work, "", "add", "-A")
		e2e.GitIn(t, work, "", "commit", "-q", "--allow-empty", "-m", e.id)
		files["patches/"+e.id+".diff"] = e2e.GitIn(t, work, "", "diff", "--no-color", "--no-ext-diff", base, e.id) + e.raw
		p := suite.PairDoc{ID: e.id, Repository: "proj", BaseCommit: base, Issue: "issue.md",
			Patch: "patches/" + e.id + ".diff", TestPatch: "test.diff",
			FailToPass: list("tests/test_label.py::test_label"), Expect: string(e.expect),
			PassToPass: list("tests/test_calc.py::test_fixture_through_link", "tests/test_calc.py::test_version_through_link",
				"tests/test_calc.py::test_package_version_through_link", "tests/test_calc.py::test_directory_link")}
		for name, content := range e.assets {
			files["assets/"+e.id+"/"+name] = content
			p.Assets = "assets/" + e.id
		}
		pairs = append(pairs, p)
	}
	clitest.WriteFiles(t, suiteDir, files)
	e2e.WriteSuiteDoc(t, suiteDir, suite.SuiteDoc{Name: "links", Version: "1",
		Repositories: map[string]suite.RepoDoc{"proj": {Bundle: "repos/proj.bundle", Symlinks: "in-tree"}},
		Pairs:        pairs})
	return suiteDir
}

// TestSymlinksInTree grades a project whose tree holds in-tree links, with `symlinks:
// in-tree`: the gold patch and an honest patch that adds a link resolve (the regression tests
// read through the tree's links, so the verifier made them); every planted link attack is
// refused before any verifier starts, with the reason that names it; no canary appears
// outside the workspace. Without the setting, the same suite is refused, naming the path and
// the setting.
func TestSymlinksInTree(t *testing.T) {
	suiteDir := linkSuite(t)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suiteDir, "--out", out, "--concurrency", "2")
	results := clitest.ReadResults(t, out).Pairs
	byID := map[string]report.PairResult{}
	for _, r := range results {
		byID[r.ID] = r
	}
	for _, e := range linkEdits {
		r, ok := byID[e.id]
		if !ok {
			t.Errorf("%s: no result", e.id)
			continue
		}
		line := string(r.Verdict)
		if len(r.Reasons) > 0 {
			line += ": " + string(r.Reasons[0].Code) + ": " + r.Reasons[0].Detail
		}
		t.Logf("%-40s %s", e.id, line)
		switch {
		case r.Verdict != e.expect:
			log, _ := os.ReadFile(filepath.Join(out, "pairs", e.id, "target.log"))
			t.Errorf("%s: %s, want %s\n%s", e.id, line, e.expect, log)
		case e.code != "" && (len(r.Reasons) == 0 || r.Reasons[0].Code != e.code):
			t.Errorf("%s: %s, want the first reason %s", e.id, line, e.code)
		case e.code != "" && len(r.Checks) != 0:
			t.Errorf("%s: %d checks ran; a refused patch runs none", e.id, len(r.Checks))
		}
	}
	if code != cli.ExitOK {
		t.Errorf("grade: exit %d, want 0 (every expect met)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if canaries, _ := filepath.Glob(linkCanary + "*"); len(canaries) > 0 {
		t.Errorf("canaries appeared outside the workspace: %v", canaries)
	}

	doc := e2e.ReadSuiteDoc(t, suiteDir)
	doc.Repositories["proj"] = suite.RepoDoc{Bundle: "repos/proj.bundle"}
	for i := range doc.Pairs {
		doc.Pairs[i].Expect = ""
	}
	e2e.WriteSuiteDoc(t, suiteDir, doc)
	out = filepath.Join(t.TempDir(), "refused")
	e2e.RunTender(t, "grade", suiteDir, "--out", out, "--concurrency", "2")
	for _, r := range clitest.ReadResults(t, out).Pairs {
		if r.Verdict == report.Resolved || len(r.Reasons) == 0 ||
			!strings.Contains(r.Reasons[0].Detail, "symlinks: in-tree") {
			t.Errorf("without the setting, %s: %s %+v; want a refusal that names the setting", r.ID, r.Verdict, r.Reasons)
		} else if r.ID == "gold" || r.ID == "honest-link" {
			t.Logf("without the setting, %s: %s: %s: %s", r.ID, r.Verdict, r.Reasons[0].Code, r.Reasons[0].Detail)
		}
	}
}

// TestSymlinksRealWorld: python-semver 3.0.2 (Debian's source package) keeps two links under
// tests/ to modules under docs/advanced/, and its conftest imports them. Imported as is, the
// instance is refused, and validate's line names the link and the setting; with `symlinks:
// in-tree` (and python_path [src], its src/ layout) the instance is sound and its gold patch
// resolves.
func TestSymlinksRealWorld(t *testing.T) {
	const id = "python-semver__python-semver"
	fixture := filepath.Join(repoRoot, "fixtures", "realworld", "semver")
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	bundle, err := filepath.Abs(filepath.Join(fixture, id+".bundle"))
	clitest.Must(t, err)
	e2e.GitIn(t, work, "", "clone", "-q", bundle, clone)
	suiteDir := filepath.Join(work, "suite")
	out, errOut, code := e2e.RunTender(t, "import", "swebench", "--instances", filepath.Join(fixture, "instances.jsonl"),
		"--repo", id+"="+clone, "--out", suiteDir)
	if code != cli.ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = e2e.RunTender(t, "validate", "--run", suiteDir)
	want := `BROKEN  python-semver__python-semver-426: baseline collection: unsafe_tree: gitsafe: unsafe tree: ` +
		`"tests/coerce.py": is a symlink (mode 120000); to allow symlinks that stay inside the tree, set ` +
		"`symlinks: in-tree`"
	if code != cli.ExitFailure || !strings.Contains(out, want) {
		t.Fatalf("validate --run without the setting: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s",
			code, cli.ExitFailure, want, out, errOut)
	}
	t.Logf("without the setting:\n%s", out)

	doc := e2e.ReadSuiteDoc(t, suiteDir)
	repo := doc.Repositories[id]
	repo.Symlinks = "in-tree"
	doc.Repositories[id] = repo
	doc.Verifier.PythonPath = []string{"src"}
	e2e.WriteSuiteDoc(t, suiteDir, doc)
	out, errOut, code = e2e.RunTender(t, "validate", "--run", suiteDir)
	if code != cli.ExitOK || !strings.Contains(out, "sound   python-semver__python-semver-426") {
		t.Fatalf("validate --run with the setting: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	results, _ := e2e.GradeOK(t, suiteDir)
	e2e.CheckVerdicts(t, "gold", results, []string{id + "-426"}, report.Resolved)
	for _, r := range results {
		if len(r.Checks) != 2 || !r.TestedAsSubmitted {
			t.Errorf("gold %s: %d checks, tested_as_submitted %v", r.ID, len(r.Checks), r.TestedAsSubmitted)
		}
	}
}
