package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestValidateRun checks the demo suite's instances in real verifiers, and catches an
// instance whose fail_to_pass names a test that already passes on the base commit.
func TestValidateRun(t *testing.T) {
	out, errOut, code := e2e.RunTender(t, "validate", "--run", repoRoot+"/fixtures/demo")
	if code != cli.ExitOK {
		t.Fatalf("validate --run fixtures/demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "sound   gold-fix") || !strings.Contains(out, "all 6 instance(s) are sound") {
		t.Errorf("stdout:\n%s", out)
	}

	broken := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	manifest := filepath.Join(broken, "tender.yaml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	// gold-fix is the first pair: give its fail_to_pass a test that passes on the base.
	const first = `      - "tests/test_formatting.py::test_group_digits_negative"`
	if !strings.Contains(string(data), first) {
		t.Fatalf("the demo suite no longer lists %s", first)
	}
	data = []byte(strings.Replace(string(data), first, first+"\n      - \"tests/test_arithmetic.py::test_mean\"", 1))
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = e2e.RunTender(t, "validate", "--run", broken)
	if code != cli.ExitFailure {
		t.Fatalf("broken suite: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cli.ExitFailure, out, errOut)
	}
	want := "BROKEN  gold-fix: on the base commit tests/test_arithmetic.py::test_mean is passed; a fail_to_pass test must fail there"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "sound   wrong-fix") {
		t.Errorf("the other instance should still be sound:\n%s", out)
	}
}

// idsRepo is a small project in a real git repository, as a bundle: calc.label is wrong on
// the base commit and right with the reference patch.
func idsRepo(t *testing.T, suite string) string {
	t.Helper()
	work := t.TempDir()
	clitest.WriteFiles(t, work, map[string]string{"calc.py": "def label(x):\n    return x\n"})
	e2e.GitIn(t, work, "", "init", "-q", "-b", "main")
	e2e.GitIn(t, work, "", "add", "-A")
	e2e.GitIn(t, work, "", "commit", "-q", "-m", "base")
	base := strings.TrimSpace(e2e.GitIn(t, work, "", "rev-parse", "HEAD"))
	clitest.Must(t, os.MkdirAll(filepath.Join(suite, "repos"), 0o755))
	e2e.GitIn(t, work, "", "bundle", "create", "-q", filepath.Join(suite, "repos", "proj.bundle"), "--all")
	return base
}

const (
	idsReference = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def label(x):\n-    return x\n+    return \"L:\" + x\n"
	// The candidate breaks collection itself: calc cannot be imported.
	idsBreaker = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,3 @@\n+raise ImportError(\"the candidate broke the import\")\n def label(x):\n     return x\n"
	// Parametrized tests whose ids hold a space, as SWE-bench cuts them.
	idsTestModule = "import pytest\n\nfrom calc import label\n\n\n" +
		"@pytest.mark.parametrize(\"x\", [\"a b\", \"c\"])\ndef test_x(x):\n    assert label(x) == \"L:\" + x\n\n\n" +
		"@pytest.mark.parametrize(\"y\", [\"p q\", \"p r\"])\ndef test_amb(y):\n    assert label(y) == \"L:\" + y\n\n\n" +
		"def test_keep():\n    assert label(\"\") is not None\n"
	// The test module imports a module the image lacks: no patch can be graded here.
	idsEnvModule = "import wrapt_is_not_installed  # noqa: F401\n\n\ndef test_e():\n    assert True\n"
	// Sixteen coins: over two runs, some coin lands differently but for odds of 1 in 2^16.
	idsFlakyModule = "import os\n\nimport pytest\n\nfrom calc import label\n\n\n" +
		"def test_fixed():\n    assert label(\"z\") == \"L:z\"\n\n\n" +
		"@pytest.mark.parametrize(\"i\", range(16))\ndef test_coin(i):\n    assert os.urandom(1)[0] % 2 == 0\n"
)

// idsSuite writes a suite of the pairs into a new directory, with the project's bundle.
func idsSuite(t *testing.T, pairs []suite.PairDoc, files map[string]string) string {
	t.Helper()
	suiteDir := t.TempDir()
	base := idsRepo(t, suiteDir)
	files["issue.md"] = "label is wrong\n"
	files["reference.diff"] = idsReference
	files["empty.diff"] = ""
	files["breaker.diff"] = idsBreaker
	clitest.WriteFiles(t, suiteDir, files)
	for i := range pairs {
		pairs[i].Repository, pairs[i].BaseCommit, pairs[i].Issue = "proj", base, "issue.md"
		pairs[i].ReferencePatch = "reference.diff"
	}
	e2e.WriteSuiteDoc(t, suiteDir, suite.SuiteDoc{Name: "ids", Version: "1",
		Repositories: map[string]suite.RepoDoc{"proj": {Bundle: "repos/proj.bundle"}}, Pairs: pairs})
	return suiteDir
}

func newModulePatch(path, content string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n+%s\n",
		path, path, path, len(lines), strings.Join(lines, "\n+"))
}

func list(ids ...string) *[]string { return &ids }

// TestTruncatedIDsAndBrokenEnvironments grades, in real verifiers: an instance whose
// fail_to_pass ID is cut at a space (resolved to the full ID; gold resolved), an ambiguous
// cut ID (error naming it), an instance whose test module imports what the image lacks (gold
// is error/environment_broken), and the attack: a candidate that breaks collection itself on a
// healthy base stays unresolved. Then validate --run --out says the same, one line each.
func TestTruncatedIDsAndBrokenEnvironments(t *testing.T) {
	cut := "tests/test_p.py::test_x[a"
	f2p, p2p := list(cut, "tests/test_p.py::test_x[c]"), list("tests/test_p.py::test_keep")
	suiteDir := idsSuite(t, []suite.PairDoc{
		{
			ID:         "trunc-gold",
			Patch:      "reference.diff",
			TestPatch:  "test_p.diff",
			FailToPass: f2p,
			PassToPass: p2p,
			Expect:     "resolved",
		},
		{
			ID:         "trunc-empty",
			Patch:      "empty.diff",
			TestPatch:  "test_p.diff",
			FailToPass: f2p,
			PassToPass: p2p,
			Expect:     "unresolved",
		},
		{
			ID:         "breaks-collection",
			Patch:      "breaker.diff",
			TestPatch:  "test_p.diff",
			FailToPass: f2p,
			PassToPass: p2p,
			Expect:     "unresolved",
		},
		{
			ID:         "ambiguous",
			Patch:      "reference.diff",
			TestPatch:  "test_p.diff",
			FailToPass: list("tests/test_p.py::test_amb[p"),
			Expect:     "error",
		},
		{
			ID:         "env-broken-gold",
			Patch:      "reference.diff",
			TestPatch:  "test_env.diff",
			FailToPass: list("tests/test_env.py::test_e"),
			Expect:     "error",
		},
	}, map[string]string{"test_p.diff": newModulePatch("tests/test_p.py", idsTestModule), "test_env.diff": newModulePatch("tests/test_env.py", idsEnvModule)})

	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suiteDir, "--out", out, "--concurrency", "2")
	if code != cli.ExitOK {
		for _, r := range clitest.ReadResults(t, out).Pairs {
			t.Logf("%s: %s %+v", r.ID, r.Verdict, r.Reasons)
		}
		t.Fatalf("grade: exit %d (3: an expect was not met)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	byID := map[string]report.PairResult{}
	for _, r := range clitest.ReadResults(t, out).Pairs {
		byID[r.ID] = r
	}
	gold := byID["trunc-gold"]
	if want := map[string]string{cut: "tests/test_p.py::test_x[a b]"}; !cmp.Equal(gold.ResolvedTestIDs, want) {
		t.Errorf("trunc-gold resolved_test_ids = %v, want %v", gold.ResolvedTestIDs, want)
	}
	if gold.FailToPass[0] != cut || gold.Checks[0].Tests["tests/test_p.py::test_x[a b]"] != report.TestPassed {
		t.Errorf("trunc-gold: the result keeps the suite's IDs and the check requires the full one: %v %v",
			gold.FailToPass, gold.Checks[0].Tests)
	}
	if !hasCode(gold.Reasons, report.CodeTestIDResolved) {
		t.Errorf("trunc-gold: no test_id_resolved note: %+v", gold.Reasons)
	}
	amb := byID["ambiguous"]
	if len(amb.Reasons) == 0 || amb.Reasons[0].Code != report.CodeTestIDUnresolved ||
		!strings.Contains(
			amb.Reasons[0].Detail,
			`"tests/test_p.py::test_amb[p" looks truncated and names 2 collected tests`,
		) ||
		len(amb.Checks) != 0 {
		t.Errorf("ambiguous: %+v with %d checks", amb.Reasons, len(amb.Checks))
	}
	env := byID["env-broken-gold"]
	if len(env.Reasons) == 0 || env.Reasons[0].Code != report.CodeEnvironmentBroken ||
		!strings.Contains(env.Reasons[0].Detail, "No module named 'wrapt_is_not_installed'") {
		t.Errorf("env-broken-gold: %+v", env.Reasons)
	}
	brk := byID["breaks-collection"]
	if brk.Verdict != report.Unresolved || hasCode(brk.Reasons, report.CodeEnvironmentBroken) ||
		brk.Checks[0].ExitCode < 2 ||
		brk.Checks[0].ExitCode > 5 {
		t.Errorf(
			"breaks-collection: the candidate's own collection failure must count against it: %+v, exit %d",
			brk.Reasons,
			brk.Checks[0].ExitCode,
		)
	}
	for _, f := range []string{report.BaselineJSON("env-broken-gold"), report.BaselineLog("env-broken-gold"), report.BaselineLog("breaks-collection")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the bundle lacks %s: %v", f, err)
		}
	}

	vout := filepath.Join(t.TempDir(), "validate")
	stdout, stderr, code = e2e.RunTender(t, "validate", "--run", "--out", vout, suiteDir)
	if code != cli.ExitFailure {
		t.Fatalf("validate --run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cli.ExitFailure, stdout, stderr)
	}
	for _, want := range []string{
		`truncated trunc-gold: 1 test ID(s) look cut at a space`,
		`resolved trunc-gold: "tests/test_p.py::test_x[a" is "tests/test_p.py::test_x[a b]"`,
		"sound   trunc-gold",
		`BROKEN  ambiguous: test_id_unresolved: test ID "tests/test_p.py::test_amb[p" looks truncated and names 2 collected tests`,
		"BROKEN  env-broken-gold: environment_broken: the tests cannot be collected on the base commit with the test patch alone (pytest status 2): ModuleNotFoundError: No module named 'wrapt_is_not_installed'",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("validate stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, line := range strings.Split(stdout, "\n") {
		if len(line) > 400 {
			t.Errorf("a line of %d characters: %.100s...", len(line), line)
		}
	}
	if !strings.Contains(stderr, "[5/5]") && !strings.Contains(stderr, "[3/3]") {
		t.Errorf("validate showed no progress:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(vout, report.ValidationJSON)); err != nil {
		t.Errorf("validate --out wrote no %s: %v", report.ValidationJSON, err)
	}
}

func hasCode(rs []report.Reason, c report.Code) bool {
	for _, r := range rs {
		if r.Code == c {
			return true
		}
	}
	return false
}

// TestValidateRepeatFlagsUnstable: a gold whose pass_to_pass tests flip coins is flagged
// unstable by validate --run --repeat 2, with each run's log in the --out directory.
func TestValidateRepeatFlagsUnstable(t *testing.T) {
	coins := make([]string, 16)
	for i := range coins {
		coins[i] = fmt.Sprintf("tests/test_f.py::test_coin[%d]", i)
	}
	suiteDir := idsSuite(t, []suite.PairDoc{
		{
			ID:         "flaky",
			Patch:      "reference.diff",
			TestPatch:  "test_f.diff",
			FailToPass: list("tests/test_f.py::test_fixed"),
			PassToPass: &coins,
		},
	}, map[string]string{"test_f.diff": newModulePatch("tests/test_f.py", idsFlakyModule)})
	vout := filepath.Join(t.TempDir(), "validate")
	stdout, stderr, code := e2e.RunTender(t, "validate", "--run", "--repeat", "2", "--out", vout, suiteDir)
	if code != cli.ExitFailure || !strings.Contains(stdout, "BROKEN  flaky: ") {
		t.Fatalf("validate --repeat 2: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var doc struct {
		Instances []grader.InstanceReport `json:"instances"`
	}
	clitest.Must(t, json.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(vout, report.ValidationJSON))), &doc))
	if len(doc.Instances) != 1 || !doc.Instances[0].Unstable || len(doc.Instances[0].Runs) != 2 {
		t.Fatalf("validation.json: %+v", doc.Instances)
	}
	if !slices.ContainsFunc(
		doc.Instances[0].Problems,
		func(p string) bool { return strings.HasPrefix(p, "unstable: 2 runs with the reference patch gave ") },
	) {
		t.Errorf("no unstable problem: %q", doc.Instances[0].Problems)
	}
	for _, f := range []string{"pairs/flaky/target.log", "pairs/flaky.run2/regression.log", "pairs/flaky.run2/target.log", "pairs/flaky/baseline.log"} {
		if _, err := os.Stat(filepath.Join(vout, f)); err != nil {
			t.Errorf("validate --out lacks %s: %v", f, err)
		}
	}
}
