package lifecycle

import (
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/report"
)

// TestKillParentAndForkRewriteAreForged: r2-kill-parent kills the bootstrap's parent after its
// plan line, so no end line comes; whether or not the report was written in time (a race that
// a loaded machine decides), the broken control channel is evidence. r2-fork-rewrite leaves a
// forked process that holds the outcome stream and rewrites the report once the test process
// has ended; the parent reaps it only after the stream's grace, so the rewrite is always seen
// (a mutant passed, or the report changed after the digest). Both are integrity_violation
// every time. Run it under ../shared/tools/under-load with -count=5.
func TestKillParentAndForkRewriteAreForged(t *testing.T) {
	suite := e2e.OnlyPairs(t, e2e.RepoRoot+"/fixtures/attacks", "r2-kill-parent", "r2-fork-rewrite")
	out := filepath.Join(t.TempDir(), "out")
	e2e.RunTender(t, "grade", suite, "--out", out, "--concurrency", "1")
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for _, r := range results {
		if r.Verdict != report.IntegrityViolation || len(r.Reasons) == 0 {
			t.Errorf("%s: %s %+v, want integrity_violation", r.ID, r.Verdict, r.Reasons)
		}
		if r.ID == "r2-kill-parent" && r.Reasons[0].Code != report.CodeReportForged {
			t.Errorf("%s: %+v, want report_forged", r.ID, r.Reasons)
		}
	}
}
