package grader

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// Patches on the demo's repository for the apply policies: the reference fix written against a
// slightly different calc/formatting.py (its last context line drifted), and hunks on a test
// file, with and without drift.
const (
	exactFormatNumber   = " def format_number(value, places=None, sep=\",\"):\n"
	driftedFormatNumber = " def format_number(value, places=None, sep=\", \"):\n"
	testFileHunk        = "diff --git a/tests/test_formatting.py b/tests/test_formatting.py\n" +
		"--- a/tests/test_formatting.py\n+++ b/tests/test_formatting.py\n@@ -9,5 +9,5 @@\n" +
		" def test_group_digits_custom_separator():\n" +
		"-    assert group_digits(\"1234567\", sep=\".\") == \"1.234.567\"\n" +
		"+    assert group_digits(\"1234567\", sep=\".\") in (\"1.234.567\", \"1234567\")\n" +
		" \n \n def test_format_number_int():\n"
	driftedTestFileHunk = "diff --git a/tests/test_formatting.py b/tests/test_formatting.py\n" +
		"--- a/tests/test_formatting.py\n+++ b/tests/test_formatting.py\n@@ -9,5 +9,5 @@\n" +
		" def test_group_digits_custom_separator():\n" +
		"-    assert group_digits(\"1234567\", sep=\".\") == \"1.234.567\"\n" +
		"+    assert group_digits(\"1234567\", sep=\".\") in (\"1.234.567\", \"1234567\")\n" +
		" \n \n def test_format_number_integer():\n"
	// A no-op change to calc/formatting.py whose last context line drifted, and a hunk of
	// calc/arithmetic.py that fits nowhere.
	driftedComment = "diff --git a/calc/formatting.py b/calc/formatting.py\n" +
		"--- a/calc/formatting.py\n+++ b/calc/formatting.py\n@@ -1,4 +1,4 @@\n" +
		"-\"\"\"Human-readable formatting of numbers.\"\"\"\n" +
		"+\"\"\"Human-readable formatting of numbers (drifted).\"\"\"\n" +
		" \n \n def group_digits(digits, separator=\",\"):\n"
	nowhereHunk = "diff --git a/calc/arithmetic.py b/calc/arithmetic.py\n" +
		"--- a/calc/arithmetic.py\n+++ b/calc/arithmetic.py\n@@ -4,5 +4,5 @@\n" +
		" def add(a, b, c):\n-    return a + b + c\n+    return a + b + c + 0\n \n \n def subtract(a, b):\n"
)

// fixedGroupDigits is a correct group_digits: the content a .orig file would put in place if
// anything moved it over calc/formatting.py.
const fixedGroupDigits = "def group_digits(digits, sep=\",\"):\n    sign = \"\"\n" +
	"    if digits[:1] in (\"-\", \"+\"):\n        sign, digits = digits[0], digits[1:]\n" +
	"    groups = []\n    while len(digits) > 3:\n        groups.insert(0, digits[-3:])\n" +
	"        digits = digits[:-3]\n    groups.insert(0, digits)\n    return sign + sep.join(groups)\n"

// driftedGold is the demo's reference fix with its last context line drifted: git apply
// refuses it, the fuzz step places it where it belongs.
func driftedGold(t *testing.T) string {
	t.Helper()
	gold := demoPatch(t, "gold-fix")
	if !strings.Contains(gold, exactFormatNumber) {
		t.Fatalf("the demo's gold patch no longer ends its hunk with %q", exactFormatNumber)
	}
	return strings.Replace(gold, exactFormatNumber, driftedFormatNumber, 1)
}

// applyRow is one pair graded under both apply policies.
type applyRow struct {
	name     string
	patch    func(t *testing.T) string
	strict   applyWant
	swebench applyWant
}

// applyWant is what one policy must make of a row: a verdict, its reason codes, the method
// recorded, and (when checks run) what the verifier must see in the workspace.
type applyWant struct {
	verdict report.Verdict
	codes   []report.Code
	method  string // apply_method
	chain   string // swebench_apply_method
	detail  string // in the first reason's detail
	look    func(c *fakeCall)
}

func (w applyWant) ran() bool { return w.look != nil }

// TestGradeApplyPolicies grades each pair, with real git and real files, under apply: strict
// and apply: swebench: a drifted reference fix is patch_failed under strict (which says how
// SWE-bench's chain would apply it) and resolved under swebench, applied by the fuzz step; the
// attacks on the chain are refused under both: a partial --reject, a fuzzed hunk on a restored
// file, a protected path, and .orig files, of which none is made and the candidate's own is
// never moved over its file.
func TestGradeApplyPolicies(t *testing.T) {
	t.Parallel()
	gold := func(t *testing.T) string { return demoPatch(t, "gold-fix") }
	noOrig := func(c *fakeCall) {
		filepath.WalkDir(c.Spec.Workspace, func(p string, d os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, ".orig") || strings.HasSuffix(p, ".rej")) &&
				filepath.Base(p) != "formatting.py.orig" {
				c.errorf("%s: the apply left %s", c.Spec.Name, p)
			}
			return nil
		})
	}
	fuzzed := applyWant{verdict: report.Resolved, method: "fuzz", look: noOrig}
	rows := []applyRow{
		{name: "the reference fix applies as it is under both", patch: gold,
			strict:   applyWant{verdict: report.Resolved, method: "git_apply", look: noOrig},
			swebench: applyWant{verdict: report.Resolved, method: "git_apply", look: noOrig}},
		{name: "drifted context: patch_failed under strict, fuzz under swebench", patch: driftedGold,
			strict: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed},
				chain: "fuzz", detail: "SWE-bench's fallback chain applies this patch (fuzz); a suite with apply"},
			swebench: fuzzed},
		{name: "a hunk that fits nowhere is never half applied by --reject",
			patch:    func(t *testing.T) string { return driftedGold(t) + nowhereHunk },
			strict:   applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed}},
			swebench: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed}}},
		{name: "a hunk fuzzed onto a restored file refuses the patch",
			patch: func(t *testing.T) string { return gold(t) + driftedTestFileHunk },
			strict: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed},
				chain: "fuzz"},
			swebench: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed},
				chain: "fuzz", detail: "(tests/test_formatting.py hunk 1 (fuzz 1)); a fuzzed hunk may not land"}},
		{name: "an exact hunk on a restored file beside a fuzzed one is applied, then reset",
			patch: func(t *testing.T) string { return driftedGold(t) + testFileHunk },
			strict: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed},
				chain: "fuzz"},
			swebench: applyWant{verdict: report.Resolved, codes: []report.Code{report.CodeEvaluatorReset},
				method: "fuzz", look: func(c *fakeCall) { noOrig(c); testFileRestored(c) }}},
		{name: "a protected path is refused before any step",
			patch: func(t *testing.T) string {
				return driftedGold(t) + newFilePatch(".tender/key.txt", "forged\n", "100644")
			},
			strict:   applyWant{verdict: report.IntegrityViolation, codes: []report.Code{report.CodeProtected}},
			swebench: applyWant{verdict: report.IntegrityViolation, codes: []report.Code{report.CodeProtected}}},
		{name: "the candidate's .orig is a plain file: never moved over its original",
			patch: func(t *testing.T) string {
				return driftedComment + newFilePatch("calc/formatting.py.orig", fixedGroupDigits, "100644")
			},
			strict: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodePatchFailed},
				chain: "fuzz"},
			swebench: applyWant{verdict: report.Unresolved, codes: []report.Code{report.CodeTestFailed,
				report.CodeTestFailed, report.CodeTestFailed}, method: "fuzz", look: func(c *fakeCall) {
				noOrig(c)
				b, err := os.ReadFile(filepath.Join(c.Spec.Workspace, "calc", "formatting.py"))
				if err != nil || !strings.Contains(string(b), "(drifted)") || strings.Contains(string(b), "sign") {
					c.errorf("%s: calc/formatting.py is not the candidate's drifted no-op (%v):\n%s",
						c.Spec.Name, err, b)
				}
			}}},
	}
	for _, policy := range []gitsafe.ApplyPolicy{gitsafe.ApplyStrict, gitsafe.ApplySWEBench} {
		t.Run(string(policy), func(t *testing.T) {
			gradeApplyRows(t, policy, rows)
		})
	}
}

// gradeApplyRows grades the rows as one suite under policy and checks each pair.
func gradeApplyRows(t *testing.T, policy gitsafe.ApplyPolicy, rows []applyRow) {
	var pairs []testPair
	verifiers := map[string]verifier{}
	want := map[string]applyWant{}
	for _, row := range rows {
		id := strings.ReplaceAll(row.name, " ", "-")
		id = strings.NewReplacer(":", "", ",", "", "'", "", ".", "").Replace(id)
		p := demoTestPair(t, id)
		p.patch = row.patch(t)
		pairs = append(pairs, p)
		w := row.strict
		if policy == gitsafe.ApplySWEBench {
			w = row.swebench
		}
		want[id] = w
		if w.ran() {
			target := reply()
			if w.verdict == report.Unresolved {
				target = reply(failing())
			}
			verifiers[id+"/target"] = inspecting(w.look, target)
			verifiers[id+"/regression"] = inspecting(w.look, reply())
		}
	}
	s := writeTestSuiteWith(t, func(d *suite.SuiteDoc) { d.Apply = string(policy) }, pairs...)
	results, err := Grade(context.Background(), s, testOptions(t, newFakeBackend(t, verifiers)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		w := want[r.ID]
		t.Run(r.ID, func(t *testing.T) {
			if r.Verdict != w.verdict || !cmp.Equal(reasonCodes(r.Reasons), w.codes) {
				t.Errorf("verdict %s %v, want %s %v\n%+v", r.Verdict, reasonCodes(r.Reasons), w.verdict, w.codes,
					r.Reasons)
			}
			if w.detail != "" && (len(r.Reasons) == 0 || !strings.Contains(r.Reasons[0].Detail, w.detail)) {
				t.Errorf("reasons %+v, want the first to say %q", r.Reasons, w.detail)
			}
			if r.ApplyMethod != w.method || r.SWEBenchApply != w.chain {
				t.Errorf("apply_method %q, swebench_apply_method %q; want %q, %q", r.ApplyMethod, r.SWEBenchApply,
					w.method, w.chain)
			}
			for _, c := range r.Checks {
				if c.ApplyMethod != w.method {
					t.Errorf("check %s: apply_method %q, want %q", c.Name, c.ApplyMethod, w.method)
				}
			}
			if (w.method == "fuzz") != (len(r.ApplyHunks) > 0) {
				t.Errorf("apply_hunks %+v for method %s", r.ApplyHunks, w.method)
			}
			t.Logf("apply: %s: %s %v, apply_method %q, swebench_apply_method %q, hunks %+v", policy, r.Verdict,
				reasonCodes(r.Reasons), r.ApplyMethod, r.SWEBenchApply, r.ApplyHunks)
		})
	}
	if len(results) != len(rows) {
		t.Errorf("%d results for %d rows", len(results), len(rows))
	}
}

// TestGradeAmbiguousIDs: a cut ID that names several collected tests leaves the pair without a
// verdict under ambiguous_ids: error; under all, the tests that continue with a space after it
// are required in its place (the target check is asked for them), recorded in
// stand_in_test_ids and noted, and the result keeps the suite's list.
func TestGradeAmbiguousIDs(t *testing.T) {
	t.Parallel()
	const cut = "tests/test_formatting.py::test_group_digits_negative[a"
	standIns := []string{cut + " b]", cut + " c]"}
	for _, policy := range []string{suite.AmbiguousError, suite.AmbiguousAll} {
		t.Run(policy, func(t *testing.T) {
			p := demoTestPair(t, "amb")
			p.failToPass = []string{cut, p.failToPass[1]}
			collected := append(slices.Clone(standIns), cut+"b]", p.failToPass[1])
			v := map[string]verifier{"amb/baseline": collects(0, append(collected, p.passToPass...)...)}
			if policy == suite.AmbiguousAll {
				asks := func(c *fakeCall) {
					if want := append(slices.Clone(standIns), p.failToPass[1]); !slices.Equal(c.Proto.Required, want) {
						c.errorf("%s requires %q, want %q", c.Spec.Name, c.Proto.Required, want)
					}
				}
				v["amb/target"], v["amb/regression"] = inspecting(asks, reply()), reply()
			}
			s := writeTestSuiteWith(t, func(d *suite.SuiteDoc) { d.AmbiguousIDs = policy }, p)
			opts := testOptions(t, newFakeBackend(t, v))
			opts.RunID += "-" + policy // a baseline is kept per run: each policy runs its own
			r, err := Grade(context.Background(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := r[0]
			t.Logf("ambiguous_ids: %s: %s %v, stand_in_test_ids %q", policy, got.Verdict, reasonCodes(got.Reasons),
				got.StandInTestIDs)
			if policy == suite.AmbiguousError {
				if got.Verdict != report.Error || !cmp.Equal(reasonCodes(got.Reasons),
					[]report.Code{report.CodeTestIDUnresolved}) || got.StandInTestIDs != nil {
					t.Errorf("error policy: %s %+v, stand-ins %v", got.Verdict, got.Reasons, got.StandInTestIDs)
				}
				return
			}
			if got.Verdict != report.Resolved || !cmp.Equal(got.StandInTestIDs, map[string][]string{cut: standIns}) ||
				!slices.Equal(got.FailToPass, p.failToPass) ||
				!cmp.Equal(reasonCodes(got.Reasons), []report.Code{report.CodeTestIDExpanded}) {
				t.Errorf("all policy: %s %+v, stand-ins %v, fail_to_pass %q", got.Verdict, got.Reasons,
					got.StandInTestIDs, got.FailToPass)
			}
		})
	}
}
