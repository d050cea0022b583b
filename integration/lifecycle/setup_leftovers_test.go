package lifecycle

import (
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/report"
)

// TestSetupLeavesNoProcessBehind: a setup command starts a detached writer (setsid, in the
// background) that would, 2 s later, rewrite a test module so that every test passes and
// create a canary file; a post command looks for the canary 3 s after the tests. Tender kills
// every process the setup left before the tests start: the canary never appears, the wrong
// fix stays unresolved, and every pair keeps its expected verdict.
func TestSetupLeavesNoProcessBehind(t *testing.T) {
	suite := withVerifierLines(t, `  setup:
    - ["sh", "-c", "setsid sh -c 'sleep 2; printf \"def test_group_digits_negative():\\n    pass\\n\" > tests/test_formatting.py; touch /tmp/tender-canary' </dev/null >/dev/null 2>&1 &"]
  post:
`+canaryPost)
	results, out := e2e.GradeOK(t, suite, "--concurrency", "2")
	for _, r := range results {
		if r.ExpectMet == nil || !*r.ExpectMet {
			t.Errorf("%s: %s %+v, expected %s", r.ID, r.Verdict, r.Reasons, r.Expect)
		}
		if r.ID == "wrong-fix" && r.Verdict == report.Resolved {
			t.Errorf("wrong-fix resolved: the setup's writer survived")
		}
	}
	noCanaryInLogs(t, filepath.Join(out, "pairs", "*", "*.log"), "the setup's detached writer outlived the setup")
}

// TestSetupCannotTouchTheTests: a setup command that appends a passing test to a test module
// (as the candidate's code could, once a setup step imports it) finds no test module there:
// the evaluator's files are written after the setup commands, over whatever the setup left at
// their paths, owned by Tender's user. The wrong fix stays unresolved, every pair keeps its
// expected verdict, and the setup's test never runs.
func TestSetupCannotTouchTheTests(t *testing.T) {
	suite := withVerifierLines(t, `  setup:
    - ["sh", "-c", "printf 'def test_group_digits_negative():\n    pass\n' >> tests/test_formatting.py"]
`)
	results, _ := e2e.GradeOK(t, suite, "--concurrency", "2")
	for _, r := range results {
		if r.ExpectMet == nil || !*r.ExpectMet {
			t.Errorf("%s with a setup that wrote a test: %s %+v, expected %s", r.ID, r.Verdict, r.Reasons, r.Expect)
		}
	}
}
