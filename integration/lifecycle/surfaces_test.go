package lifecycle

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// withVerifierLines copies the demo suite and adds lines to its verifier section.
func withVerifierLines(t *testing.T, lines string) string {
	t.Helper()
	suite := e2e.CopyDir(t, e2e.RepoRoot+"/fixtures/demo")
	manifest := filepath.Join(suite, "tender.yaml")
	data := clitest.ReadFile(t, manifest)
	const anchor = "  timeout: 120s\n"
	if !strings.Contains(data, anchor) {
		t.Fatalf("the demo suite's verifier section no longer has %q", anchor)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(data, anchor, anchor+lines, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return suite
}

// TestSetupAndPostSeeTheSameVariables: the suite's setup and post commands run in the same
// verifier as the tests and see the same TENDER_* variables (the seed system's pre_run and
// post_run did not get them).
func TestSetupAndPostSeeTheSameVariables(t *testing.T) {
	suite := withVerifierLines(t, `  setup:
    - ["sh", "-c", "echo \"setup-saw:$TENDER_JUNIT:$TENDER_ASSETS:$TENDER_WORKSPACE:$(pwd)\""]
  post:
    - ["sh", "-c", "echo \"post-saw:$TENDER_JUNIT:$TENDER_ASSETS:$TENDER_WORKSPACE:$(pwd)\"; exit 7"]
`)
	results, out := e2e.GradeOK(t, suite)
	for _, r := range results {
		if r.ExpectMet == nil || !*r.ExpectMet {
			t.Errorf("%s: %s, expected %s (post commands must not change the verdict)", r.ID, r.Verdict, r.Expect)
		}
	}
	log := clitest.ReadFile(t, filepath.Join(out, "pairs", "gold-fix", "target.log"))
	re := regexp.MustCompile(`(setup|post)-saw:(\S*)`)
	seen := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(log, -1) {
		seen[m[1]] = m[2]
	}
	if seen["setup"] == "" || seen["setup"] != seen["post"] || strings.Contains(seen["setup"], "::") {
		t.Errorf("setup saw %q, post saw %q; want the same non-empty variables\n%s", seen["setup"], seen["post"], log)
	}
	if !strings.Contains(log, "tender: post command 1 exited 7") {
		t.Errorf("a failing post command is not reported in the log:\n%s", log)
	}
}

// TestFailingSetupFailsTheCheck: a setup command that fails ends the check before the tests.
func TestFailingSetupFailsTheCheck(t *testing.T) {
	suite := withVerifierLines(t, "  setup:\n    - [\"sh\", \"-c\", \"exit 3\"]\n")
	out := filepath.Join(t.TempDir(), "out")
	_, _, code := e2e.RunTender(t, "grade", suite, "--out", out)
	if code != cli.ExitMismatch { // gold-fix expects resolved
		t.Fatalf("exit %d, want %d", code, cli.ExitMismatch)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.ID == "gold-fix" && (r.Verdict != report.Unresolved || len(r.Checks) == 0 || r.Checks[0].ExitCode != 3) {
			t.Errorf("gold-fix with a failing setup: %s, checks %+v", r.Verdict, r.Checks)
		}
	}
	log := clitest.ReadFile(t, filepath.Join(out, "pairs", "gold-fix", "target.log"))
	if !strings.Contains(log, "tender: setup command 1 exited 3") {
		t.Errorf("the failing setup is not named in the log:\n%s", log)
	}
}
