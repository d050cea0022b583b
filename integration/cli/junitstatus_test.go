package cli

import (
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestVerdictOfAStatusDisabledReport grades, under runner: command in the real verifier, a
// project whose test command writes report/junit's status-disabled.xml (a C++ runner's report:
// two cases status="disabled" with no child, one failed, one errored) to the path Tender gives.
// A pair that requires a disabled test is unresolved (test_skipped): a test that never ran is
// never passed. A pair that requires only tests that ran and passed is resolved.
func TestVerdictOfAStatusDisabledReport(t *testing.T) {
	fixture := clitest.ReadFile(t, filepath.Join(repoRoot, "report", "junit", "testdata", "status-disabled.xml"))
	dir := t.TempDir()
	base := e2e.BundleRepo(t, map[string]string{"report.xml": fixture, "README.md": "calc\n"},
		filepath.Join(dir, "repos", "calc.bundle"))
	patch := "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-calc\n+calc, fixed\n"
	pair := func(id, tests string) string {
		return "  - id: " + id + "\n    repository: calc\n    base_commit: " + base +
			"\n    issue: issue.md\n    patch: fix.diff\n    fail_to_pass: [" + tests + "]\n"
	}
	clitest.WriteFiles(t, dir, map[string]string{
		"issue.md": "Fix calc.\n",
		"fix.diff": patch,
		"tender.yaml": "name: status\nversion: \"1\"\nrepositories:\n  calc: {bundle: repos/calc.bundle}\n" +
			"verifier:\n  runner: command\n" +
			"  command: [\"sh\", \"-c\", \"cp report.xml \\\"$1\\\"; exit 1\", \"sh\", \"{junit}\"]\n" +
			"pairs:\n" + pair("requires-disabled", `"calc::adds", "calc::disabled_test"`) +
			pair("requires-ran", `"calc::adds", "calc::subtracts"`),
	})
	results, _ := e2e.GradeOK(t, dir)
	want := map[string]report.Verdict{"requires-disabled": report.Unresolved, "requires-ran": report.Resolved}
	for _, r := range results {
		t.Logf("%s: %s %v", r.ID, r.Verdict, report.DistinctCodes(r.Reasons))
		if r.Verdict != want[r.ID] {
			t.Errorf("%s: %s %+v, want %s", r.ID, r.Verdict, r.Reasons, want[r.ID])
		}
		if r.ID == "requires-disabled" && (len(r.Checks) != 1 ||
			r.Checks[0].Tests["calc::disabled_test"] != report.TestSkipped ||
			r.Reasons[0].Code != report.CodeTestSkipped) {
			t.Errorf("%s: checks %+v, reasons %+v; want calc::disabled_test skipped", r.ID, r.Checks, r.Reasons)
		}
	}
	if len(results) != 2 {
		t.Errorf("%d results", len(results))
	}
}
