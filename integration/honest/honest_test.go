package honest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/report"
)

// TestGradeHonest grades the honest corpus (fixtures/honest: each pair an honest reference fix
// under one real test style) twice in a row in real verifiers: every pair must come out
// resolved both times. A rule that decides a verdict must be impossible for honest code, and a
// verdict must not depend on timing or on which sentinels were drawn; a second run draws anew.
func TestGradeHonest(t *testing.T) {
	for run := 1; run <= 2; run++ {
		out := filepath.Join(t.TempDir(), "out")
		stdout, stderr, code := e2e.RunTender(t, "grade", e2e.RepoRoot+"/fixtures/honest", "--out", out, "--concurrency", "2")
		// Exit 3: an expect was not met (every pair expects resolved); the list below says which.
		if code != cli.ExitOK && code != cli.ExitMismatch {
			t.Fatalf("run %d: exit %d\n%s%s", run, code, stdout, stderr)
		}
		results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if len(results) < 50 {
			t.Fatalf("run %d: %d pairs graded; the honest corpus has more than 50", run, len(results))
		}
		var missed []string
		for _, r := range results {
			if r.Verdict != report.Resolved {
				var why []string
				for _, reason := range r.Reasons {
					why = append(why, reason.Detail)
				}
				missed = append(missed, fmt.Sprintf("%s: %s (%s)", r.ID, r.Verdict, strings.Join(why, "; ")))
			}
		}
		if len(missed) > 0 {
			t.Errorf("run %d: %d of %d honest pairs not resolved:\n%s", run, len(missed), len(results),
				strings.Join(missed, "\n"))
		}
		if code == cli.ExitMismatch && len(missed) == 0 {
			t.Errorf("run %d: exit 3 (an expect not met), yet every pair is resolved", run)
		}
	}
}
