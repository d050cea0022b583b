package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
)

// leakyFormatting is calc/formatting.py from a candidate that reads every file it can find
// in the verifier (the tests with the evaluator's test patch, the hidden assets, Tender's
// directory) and sends each line that holds a marker out every way it can: stdout, stderr, a
// warning, a skip reason, an xfail reason and an exception message, from the code a visible
// test calls.
const leakyFormatting = `"""Human-readable formatting of numbers."""
import glob
import os
import sys
import warnings


def _found():
    lines = []
    roots = [os.environ.get("TENDER_WORKSPACE", "."), os.environ.get("TENDER_ASSETS", "/tender/assets"), "/tender"]
    for root in roots:
        for path in glob.glob(os.path.join(root, "**"), recursive=True):
            try:
                with open(path, errors="replace") as f:
                    lines += [l.strip() for l in f if "LEAK" + "-MARKER" in l]
            except OSError:
                pass
    return " | ".join(sorted(set(lines)))


def group_digits(digits, sep=","):
    import pytest

    pytest.skip("skipped: " + _found())


def format_number(value, places=None, sep=","):
    leak = _found()
    print("stdout: " + leak)
    print("stderr: " + leak, file=sys.stderr)
    warnings.warn("warning: " + leak)
    if value == 1234567:
        import pytest

        pytest.xfail("xfail: " + leak)
    raise ValueError("exception: " + leak)


def format_percent(ratio, places=1):
    return format_number(ratio * 100, places)
`

// TestNothingHiddenReachesCandidateOutputs plants a marker in a hidden asset and in the
// evaluator's test patch, grades a candidate that prints what it finds in every way it can,
// and greps every output a candidate may see: the results, the summary, the JUnit and
// SWE-bench files, what the command prints, and the check-run payloads. The operator's logs
// must hold the marker (so the candidate did find it); no candidate-visible output may.
func TestNothingHiddenReachesCandidateOutputs(t *testing.T) {
	const asset, testPatch = "TENDER-LEAK-MARKER-ASSET-7f3a", "TENDER-LEAK-MARKER-TESTPATCH-91c2"
	clone := clitest.DemoClone(t, repoRoot)
	e2e.GitIn(t, clone, clitest.ReadFile(t, repoRoot+"/fixtures/demo/shared/test.diff"), "apply", "-")
	tests := filepath.Join(clone, "tests", "test_formatting.py")
	clitest.WriteFile(t, tests, "# "+testPatch+"\n"+clitest.ReadFile(t, tests))
	leakTestPatch := e2e.GitIn(t, clone, "", "diff")
	e2e.GitIn(t, clone, "", "checkout", "-q", "--", ".")
	clitest.WriteFile(t, filepath.Join(clone, "calc", "formatting.py"), leakyFormatting)
	leakPatch := e2e.GitIn(t, clone, "", "diff")

	suite := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	clitest.WriteFiles(t, suite, map[string]string{
		"hidden/tests/test_hidden.py": "# " + asset + "\nfrom calc.formatting import format_number\n\n\ndef test_hidden_oracle():\n    assert format_number(7) == \"7\"\n",
		"pairs/leak/patch.diff":       leakPatch,
		"pairs/leak/test.diff":        leakTestPatch,
	})
	manifest := filepath.Join(suite, "tender.yaml")
	clitest.WriteFile(t, manifest, clitest.ReadFile(t, manifest)+`  - id: leak
    repository: calc
    base_commit: `+clitest.DemoBase+`
    issue: pairs/gold-fix/issue.md
    patch: pairs/leak/patch.diff
    test_patch: pairs/leak/test.diff
    assets: hidden
    fail_to_pass: ["tests/test_formatting.py::test_format_number_negative_int", "tests/test_hidden.py::test_hidden_oracle"]
    pass_to_pass: ["tests/test_formatting.py::test_group_digits", "tests/test_formatting.py::test_format_number_int"]
    expect: unresolved
`)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suite, "--out", out, "--concurrency", "2")
	if code != cli.ExitOK {
		t.Fatalf("grade: exit %d\n%s%s", code, stdout, stderr)
	}
	pubOut, pubErr, code := e2e.RunTender(t, "publish", out)
	if code != cli.ExitOK {
		t.Fatalf("publish dry run: exit %d\n%s%s", code, pubOut, pubErr)
	}

	operator := clitest.ReadFile(t, filepath.Join(out, "pairs", "leak", "target.log"))
	for _, m := range []string{asset, testPatch} {
		if !strings.Contains(operator, m) {
			t.Fatalf("the candidate did not find %s: the test would prove nothing. Its log:\n%s", m, operator)
		}
	}
	visible := map[string]string{"grade stdout": stdout, "grade stderr": stderr, "publish dry run": pubOut + pubErr}
	for _, f := range []string{"results.json", "results.jsonl", "summary.md", "swebench-summary.json", "tender-results.xml"} {
		visible[f] = clitest.ReadFile(t, filepath.Join(out, f))
	}
	reports, _ := filepath.Glob(filepath.Join(out, "pairs", "*", "report.json"))
	for _, f := range reports {
		visible[f] = clitest.ReadFile(t, f)
	}
	for name, text := range visible {
		for _, m := range []string{"LEAK-MARKER", asset, testPatch} {
			if strings.Contains(text, m) {
				t.Errorf("%s shows %q", name, m)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "pairs", "leak", "report.json")); err != nil {
		t.Errorf("the leak pair has no report.json to check: %v", err)
	}
}
