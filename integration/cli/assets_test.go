package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

const hiddenTest = `def test_secret_oracle():
    assert "SECRET-ORACLE-42" == "the candidate must never read this"
`

const touchesHidden = `diff --git a/tests/test_hidden.py b/tests/test_hidden.py
new file mode 100644
--- /dev/null
+++ b/tests/test_hidden.py
@@ -0,0 +1,2 @@
+def test_secret_oracle():
+    pass
`

// TestHiddenAssets: hidden evaluator tests are written into the verifier after the patch and
// run there; a candidate that touches their path is rejected; and what they print is withheld
// from the results and the summary, which the candidate may read.
func TestHiddenAssets(t *testing.T) {
	suite := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	clitest.WriteFiles(t, suite, map[string]string{
		"hidden/tests/test_hidden.py":     hiddenTest,
		"pairs/touches-hidden/patch.diff": touchesHidden,
	})
	manifest := filepath.Join(suite, "tender.yaml")
	data := clitest.ReadFile(t, manifest)
	const f2p = `      - "tests/test_formatting.py::test_group_digits_negative"` + "\n"
	if strings.Count(data, f2p) < 2 {
		t.Fatal("the demo suite changed shape")
	}
	// gold-fix gets the hidden test as a required test (it fails, so the pair is unresolved).
	data = strings.Replace(
		data,
		"    reference_patch: shared/reference.diff\n",
		"    reference_patch: shared/reference.diff\n    assets: hidden\n",
		1,
	)
	data = strings.Replace(data, f2p, f2p+`      - "tests/test_hidden.py::test_secret_oracle"`+"\n", 1)
	data = strings.Replace(data, "expect: resolved", "expect: unresolved", 1)
	data += `  - id: touches-hidden
    repository: calc
    base_commit: ` + clitest.DemoBase + `
    issue: pairs/gold-fix/issue.md
    patch: pairs/touches-hidden/patch.diff
    assets: hidden
    fail_to_pass: ["tests/test_formatting.py::test_group_digits_negative"]
    expect: integrity_violation
`
	if err := os.WriteFile(manifest, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	results, out := e2e.GradeOK(t, suite)
	for _, r := range results {
		switch r.ID {
		case "gold-fix":
			if r.Verdict != report.Unresolved ||
				r.Checks[0].Tests["tests/test_hidden.py::test_secret_oracle"] != report.TestFailed {
				t.Errorf("gold-fix: %s; the hidden test must have run and failed: %+v", r.Verdict, r.Checks[0].Tests)
			}
			if r.Digests.Assets == "" {
				t.Error("gold-fix: the assets digest is not recorded")
			}
		case "touches-hidden":
			if r.Verdict != report.IntegrityViolation || r.Reasons[0].Code != "evaluator_asset" {
				t.Errorf("touches-hidden: %s %+v", r.Verdict, r.Reasons)
			}
		}
	}
	for _, f := range []string{"results.json", "results.jsonl", "summary.md", "swebench-summary.json", "tender-results.xml", "pairs/gold-fix/report.json"} {
		if strings.Contains(clitest.ReadFile(t, filepath.Join(out, f)), "SECRET-ORACLE-42") {
			t.Errorf("%s shows the hidden test's output", f)
		}
	}
}
