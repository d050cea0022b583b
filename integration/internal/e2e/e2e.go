// Package e2e holds the helpers of the end-to-end test packages (integration/cli,
// integration/lifecycle, integration/envs, integration/realworld, integration/suites,
// integration/honest): running the program through cli.Main, grading a suite, and making the
// suites and repositories the tests grade, with real git. Those the engine-free tests of
// internal/cli use too are in internal/clitest.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// RepoRoot is the module root, seen from an integration/ package's directory (tests run there).
const RepoRoot = "../.."

// RunTender runs one command through cli.Main with PATH alone as its environment (and the
// variables of env), and returns its stdout, stderr and exit code.
func RunTender(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	return RunTenderEnv(t, nil, args...)
}

func RunTenderEnv(t testing.TB, env []string, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Run(cli.Main, env, args...)
}

// GradeOK grades a suite into a new bundle, showing the verifier logs if the exit code is not
// 0. It returns the results and the bundle directory.
func GradeOK(t testing.TB, suite string, flags ...string) ([]report.PairResult, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := RunTender(t, append([]string{"grade", suite, "--out", out}, flags...)...)
	if code != cli.ExitOK {
		logs, _ := filepath.Glob(filepath.Join(out, "pairs", "*", "*.log"))
		for _, l := range logs {
			t.Logf("%s:\n%s", l, clitest.ReadFile(t, l))
		}
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return results, out
}

// CopyDir copies a fixture suite so a test can break it without touching the tree.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// GitIn runs git for a test's own scratch repository (never for Tender's work).
func GitIn(t testing.TB, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// ReadSuiteDoc reads a suite's tender.yaml, so a test can rewrite its pairs.
func ReadSuiteDoc(t testing.TB, suiteDir string) suite.SuiteDoc {
	t.Helper()
	var doc suite.SuiteDoc
	if err := yaml.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(suiteDir, "tender.yaml"))), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func WriteSuiteDoc(t testing.TB, suiteDir string, doc suite.SuiteDoc) {
	t.Helper()
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "tender.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func CountLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// OrderedSuite is the demo suite with the given pairs, in that order, as p0, p1, ...
func OrderedSuite(t testing.TB, kinds ...string) string {
	t.Helper()
	suiteDir := CopyDir(t, RepoRoot+"/fixtures/demo")
	doc := ReadSuiteDoc(t, suiteDir)
	byID := map[string]suite.PairDoc{}
	for _, p := range doc.Pairs {
		byID[p.ID] = p
	}
	doc.Pairs = nil
	for i, k := range kinds {
		p := byID[k]
		p.ID = fmt.Sprintf("p%d-%s", i, k)
		doc.Pairs = append(doc.Pairs, p)
	}
	WriteSuiteDoc(t, suiteDir, doc)
	return suiteDir
}

// BundleRepo commits files in a new repository with real git and bundles it at bundle; it
// returns the commit.
func BundleRepo(t testing.TB, files map[string]string, bundle string) string {
	t.Helper()
	repo := t.TempDir()
	clitest.WriteFiles(t, repo, files)
	GitIn(t, repo, "", "init", "-q", "-b", "main")
	GitIn(t, repo, "", "add", ".")
	GitIn(t, repo, "", "commit", "-q", "-m", "base")
	clitest.Must(t, os.MkdirAll(filepath.Dir(bundle), 0o755))
	GitIn(t, repo, "", "bundle", "create", "-q", bundle, "main")
	return strings.TrimSpace(GitIn(t, repo, "", "rev-parse", "HEAD"))
}

// CheckSWEBenchAgrees wants the SWE-bench column of each pair's report.json to agree with
// Tender's verdict (RESOLVED_FULL where Tender resolved), and summary.md to name no pair where
// the rules differ.
func CheckSWEBenchAgrees(t testing.TB, bundle string, results []report.PairResult) {
	t.Helper()
	for _, r := range results {
		var rep map[string]struct {
			Resolved   bool   `json:"resolved"`
			Resolution string `json:"swebench_resolution"`
		}
		if err := json.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(bundle, "pairs", r.ID, "report.json"))),
			&rep); err != nil {
			t.Fatal(err)
		}
		if got := rep[r.ID]; got.Resolved != (r.Verdict == report.Resolved) ||
			(got.Resolution == "RESOLVED_FULL") != got.Resolved {
			t.Errorf("%s: report.json resolved %v, swebench_resolution %s; Tender's verdict %s", r.ID, got.Resolved,
				got.Resolution, r.Verdict)
		}
		t.Logf("%s: Tender %s, SWE-bench %s", r.ID, r.Verdict, rep[r.ID].Resolution)
	}
	if md := clitest.ReadFile(t, filepath.Join(bundle, "summary.md")); strings.Contains(md, "rules differ") {
		t.Errorf("summary.md names pairs where the rules differ:\n%s", md)
	}
}

// CheckVerdicts wants exactly one result per id, each with the verdict want.
func CheckVerdicts(t testing.TB, what string, results []report.PairResult, ids []string, want report.Verdict) {
	t.Helper()
	got := map[string]report.Verdict{}
	for _, r := range results {
		got[r.ID] = r.Verdict
	}
	if len(got) != len(ids) || len(results) != len(ids) {
		t.Errorf("%s: %d results for %d instances: %v", what, len(results), len(ids), got)
	}
	for _, id := range ids {
		if v, ok := got[id]; !ok || v != want {
			t.Errorf("%s %s: verdict %q, want %q", what, id, v, want)
		}
	}
}

// OnlyPairs copies a fixture suite and keeps only the named pairs in its manifest.
func OnlyPairs(t *testing.T, src string, ids ...string) string {
	t.Helper()
	suite := CopyDir(t, src)
	manifest := filepath.Join(suite, "tender.yaml")
	data := clitest.ReadFile(t, manifest)
	head, body, ok := strings.Cut(data, "\npairs:\n")
	if !ok {
		t.Fatalf("%s has no pairs section", manifest)
	}
	var keep []string
	for _, block := range strings.Split(body, "\n  - id: ")[1:] {
		id, _, _ := strings.Cut(block, "\n")
		for _, want := range ids {
			if strings.TrimSpace(id) == want {
				keep = append(keep, "  - id: "+block)
			}
		}
	}
	if len(keep) != len(ids) {
		t.Fatalf("found %d of the pairs %q in %s", len(keep), ids, manifest)
	}
	if err := os.WriteFile(manifest, []byte(head+"\npairs:\n"+strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return suite
}

// ContainersOf lists the verifier containers of the tender process pid.
func ContainersOf(t *testing.T, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=tender.pid="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

// CheapSuite writes a copy of the demo suite with n pairs that run nothing: empty patches
// and patches the pre-scan rejects (a protected path), in turn. No workspace is written and
// no verifier starts: grading them is bookkeeping.
func CheapSuite(tb testing.TB, n int) string {
	tb.Helper()
	suiteDir := tb.TempDir()
	if err := os.CopyFS(suiteDir, os.DirFS(RepoRoot+"/fixtures/demo")); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(suiteDir, "tender.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var doc suite.SuiteDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	// The pairs share their fields through YAML anchors and merge keys, so 10,000 of them fit
	// under the manifest's 1 MiB cap.
	fields := map[string]string{}
	for _, p := range doc.Pairs {
		ids, _ := json.Marshal(*p.FailToPass)
		fields[p.ID] = fmt.Sprintf(
			"repository: calc, base_commit: %s, issue: %s, patch: %s, test_patch: %s, fail_to_pass: %s",
			p.BaseCommit,
			p.Issue,
			p.Patch,
			p.TestPatch,
			ids,
		)
	}
	var b strings.Builder
	b.WriteString("name: cheap\nversion: \"1\"\nrepositories: {calc: {fast_export: repos/calc.fi}}\npairs:\n")
	cycle := []string{"empty-patch", "touches-tender"}
	for i := range n {
		kind := cycle[i%len(cycle)]
		if i < len(cycle) {
			fmt.Fprintf(&b, "- &%s {id: c%05d, %s}\n", kind, i, fields[kind])
			continue
		}
		fmt.Fprintf(&b, "- {<<: *%s, id: c%05d}\n", kind, i)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "tender.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return suiteDir
}

// SrcLayoutRepo is a project with a src/ layout: its package is importable only with src on
// sys.path. double() is wrong at the base commit.
var SrcLayoutRepo = map[string]string{
	"src/calcpkg/__init__.py": "def double(x):\n    return x * 3\n",
	"tests/test_calc.py":      "from calcpkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\ndef test_zero():\n    assert double(0) == 0\n",
	"tests/test_env.py": "import importlib.util\n\n\ndef test_marker():\n    import tender_envmark\n    assert tender_envmark.MARK == \"dockerfile\"\n\n\n" +
		"def test_no_marker():\n    assert importlib.util.find_spec(\"tender_envmark\") is None\n",
}

// SrcLayoutGold fixes SrcLayoutRepo; SrcLayoutWrong does not.
const (
	SrcLayoutGold  = "diff --git a/src/calcpkg/__init__.py b/src/calcpkg/__init__.py\n--- a/src/calcpkg/__init__.py\n+++ b/src/calcpkg/__init__.py\n@@ -1,2 +1,2 @@\n def double(x):\n-    return x * 3\n+    return x * 2\n"
	SrcLayoutWrong = "diff --git a/src/calcpkg/__init__.py b/src/calcpkg/__init__.py\n--- a/src/calcpkg/__init__.py\n+++ b/src/calcpkg/__init__.py\n@@ -1,2 +1,2 @@\n def double(x):\n-    return x * 3\n+    return x + 1\n"
)
