package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// Patches on the demo's calc repository for the apply policies, as a model writes them against
// a tree that is not quite the base: the reference fix whose last context line drifted, a hunk
// of calc/arithmetic.py that fits nowhere, a drifted hunk on a test file (a restored path), a
// drifted no-op on calc/formatting.py, and new files.
const (
	driftedLine = " def format_number(value, places=None, sep=\", \"):\n"
	nowhereHunk = "diff --git a/calc/arithmetic.py b/calc/arithmetic.py\n" +
		"--- a/calc/arithmetic.py\n+++ b/calc/arithmetic.py\n@@ -4,5 +4,5 @@\n" +
		" def add(a, b, c):\n-    return a + b + c\n+    return a + b + c + 0\n \n \n def subtract(a, b):\n"
	driftedTest = "diff --git a/tests/test_formatting.py b/tests/test_formatting.py\n" +
		"--- a/tests/test_formatting.py\n+++ b/tests/test_formatting.py\n@@ -9,5 +9,5 @@\n" +
		" def test_group_digits_custom_separator():\n" +
		"-    assert group_digits(\"1234567\", sep=\".\") == \"1.234.567\"\n" +
		"+    assert group_digits(\"1234567\", sep=\".\") in (\"1.234.567\", \"1234567\")\n" +
		" \n \n def test_format_number_integer():\n"
	driftedComment = "diff --git a/calc/formatting.py b/calc/formatting.py\n" +
		"--- a/calc/formatting.py\n+++ b/calc/formatting.py\n@@ -1,4 +1,4 @@\n" +
		"-\"\"\"Human-readable formatting of numbers.\"\"\"\n" +
		"+\"\"\"Human-readable formatting of numbers (drifted).\"\"\"\n" +
		" \n \n def group_digits(digits, separator=\",\"):\n"
	// fixedModule is a whole calc/formatting.py that fixes the bug: what SWE-bench's newer
	// harness would move over the real file if the candidate planted it as a .orig.
	fixedModule = `def group_digits(digits, sep=","):
    sign = ""
    if digits[:1] in ("-", "+"):
        sign, digits = digits[0], digits[1:]
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    return sign + sep.join(groups)


def format_number(value, places=None, sep=","):
    if isinstance(value, int) and places is None:
        return group_digits(str(value), sep)
    places = 2 if places is None else places
    whole, _, fraction = f"{value:.{places}f}".partition(".")
    grouped = group_digits(whole, sep)
    return f"{grouped}.{fraction}" if fraction else grouped


def format_percent(ratio, places=1):
    return f"{format_number(ratio * 100, places)}%"
`
)

// newFile is a patch that creates path with content.
func newFile(path, content string) string {
	n := strings.Count(content, "\n")
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n+%s",
		path, path, path, n, strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+")+"\n")
}

// applyExpect is what one policy must make of a pair.
type applyExpect struct {
	verdict report.Verdict
	code    report.Code // the first reason's code; "" for none
	method  string      // apply_method
	chain   string      // swebench_apply_method
}

// applyCase is one candidate and what each policy must make of it.
type applyCase struct {
	id, patch        string
	strict, swebench applyExpect
}

// TestGradeApplyPoliciesInDocker grades the same candidates in the real verifier under apply:
// strict and apply: swebench. The reference fix with drifted context is patch_failed under
// strict (which names the step of SWE-bench's chain that takes it, and summary.md says the patch
// method made the difference) and resolved under swebench, applied by the fuzz step (shown in
// summary.md). The planted attacks on the chain are refused under both: a --reject that would
// half apply, a hunk that applies only with fuzz onto a restored test file, a protected path,
// and a .orig file holding a fixed module, which is never moved over the real one (the tests
// still fail).
func TestGradeApplyPoliciesInDocker(t *testing.T) {
	demo := filepath.Join(repoRoot, "fixtures", "demo")
	gold := clitest.ReadFile(t, filepath.Join(demo, "pairs", "gold-fix", "patch.diff"))
	drifted := strings.Replace(gold, " def format_number(value, places=None, sep=\",\"):\n", driftedLine, 1)
	if drifted == gold {
		t.Fatal("the demo's gold patch changed: its last context line is not format_number's def")
	}
	failed := applyExpect{verdict: report.Unresolved, code: report.CodePatchFailed}
	pairs := []applyCase{
		{"drifted-gold", drifted, applyExpect{report.Unresolved, report.CodePatchFailed, "", "fuzz"},
			applyExpect{report.Resolved, "", "fuzz", ""}},
		{"reject-half", drifted + nowhereHunk, failed, failed},
		{"fuzz-onto-test", gold + driftedTest, applyExpect{report.Unresolved, report.CodePatchFailed, "", "fuzz"},
			applyExpect{report.Unresolved, report.CodePatchFailed, "", "fuzz"}},
		{"protected", drifted + newFile(".tender/key.txt", "forged\n"),
			applyExpect{verdict: report.IntegrityViolation, code: report.CodeProtected},
			applyExpect{verdict: report.IntegrityViolation, code: report.CodeProtected}},
		{"orig-planted", driftedComment + newFile("calc/formatting.py.orig", fixedModule),
			applyExpect{report.Unresolved, report.CodePatchFailed, "", "fuzz"},
			applyExpect{report.Unresolved, report.CodeTestFailed, "fuzz", ""}},
	}
	base := e2e.CopyDir(t, demo)
	doc := e2e.ReadSuiteDoc(t, base)
	i := slices.IndexFunc(doc.Pairs, func(p suite.PairDoc) bool { return p.ID == "gold-fix" })
	template := doc.Pairs[i]
	doc.Pairs = nil
	for _, p := range pairs {
		pd := template
		pd.ID, pd.Patch, pd.Expect = p.id, "pairs/"+p.id+".diff", ""
		clitest.WriteFile(t, filepath.Join(base, pd.Patch), p.patch)
		doc.Pairs = append(doc.Pairs, pd)
	}
	for _, policy := range []string{"strict", "swebench"} {
		t.Run(policy, func(t *testing.T) {
			dir := e2e.CopyDir(t, base)
			doc.Apply = policy
			e2e.WriteSuiteDoc(t, dir, doc)
			results, out := e2e.GradeOK(t, dir, "--concurrency", "2")
			md := clitest.ReadFile(t, filepath.Join(out, "summary.md"))
			for _, r := range results {
				k := slices.IndexFunc(pairs, func(p applyCase) bool { return p.id == r.ID })
				want := pairs[k].strict
				if policy == "swebench" {
					want = pairs[k].swebench
				}
				checkApplied(t, policy, r, want, md)
			}
			if len(results) != len(pairs) {
				t.Errorf("%d results for %d pairs", len(results), len(pairs))
			}
		})
	}
}

// checkApplied checks one pair's verdict, first reason, methods and summary.md line.
func checkApplied(t *testing.T, policy string, r report.PairResult, want applyExpect, md string) {
	t.Helper()
	code := report.Code("")
	if len(r.Reasons) > 0 {
		code = r.Reasons[0].Code
	}
	t.Logf("apply: %s: %s: %s %v, apply_method %q, swebench_apply_method %q", policy, r.ID, r.Verdict,
		report.DistinctCodes(r.Reasons), r.ApplyMethod, r.SWEBenchApply)
	if r.Verdict != want.verdict || code != want.code || r.ApplyMethod != want.method || r.SWEBenchApply != want.chain {
		t.Errorf("%s: %s (%s), apply_method %q, swebench_apply_method %q; want %s (%s), %q, %q\n%+v", r.ID,
			r.Verdict, code, r.ApplyMethod, r.SWEBenchApply, want.verdict, want.code, want.method, want.chain,
			r.Reasons)
	}
	if (want.method == "") != (len(r.Checks) == 0) {
		t.Errorf("%s: %d checks ran with apply_method %q", r.ID, len(r.Checks), r.ApplyMethod)
	}
	escaped := strings.NewReplacer("-", "\\-", "_", "\\_")
	row := "| " + escaped.Replace(r.ID) + " | " + escaped.Replace(string(r.Verdict))
	if want.method == "fuzz" {
		row += " · patch applied by fuzz |"
	}
	if !strings.Contains(md, row) {
		t.Errorf("%s: summary.md has no row starting %q", r.ID, row)
	}
	line := "- " + escaped.Replace(r.ID) + ": "
	if differs := strings.Contains(md, line); differs != (want.chain != "") ||
		differs && !strings.Contains(md, "**patch method**: Tender refused the patch") {
		t.Errorf("%s: summary.md's line where the rules differ (want one: %v):\n%s", r.ID, want.chain != "", md)
	}
}
