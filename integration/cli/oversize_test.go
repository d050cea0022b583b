package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/fixtures/bigpatch"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/report"
)

// TestOversizePatch: a 50 MB candidate patch is refused for its pair alone, never parsed or
// applied, and the rest of the batch is graded.
func TestOversizePatch(t *testing.T) {
	suite := copyDir(t, repoRoot+"/fixtures/demo")
	f, err := os.Create(filepath.Join(suite, "pairs", "wrong-fix", "patch.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bigpatch.Write(f, "calc/huge_table.py", 50<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runTender(t, "grade", suite, "--out", out)
	if code != cli.ExitMismatch { // wrong-fix expects unresolved
		t.Fatalf("exit %d, want %d (the expect mismatch of the replaced pair)\n%s%s", code, cli.ExitMismatch, stdout, stderr)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		switch {
		case r.ID == "wrong-fix":
			if r.Verdict != report.IntegrityViolation || len(r.Reasons) == 0 || r.Reasons[0].Code != "patch_too_large" || len(r.Checks) != 0 {
				t.Errorf("oversize pair: %s %+v with %d checks", r.Verdict, r.Reasons, len(r.Checks))
			}
		case r.ExpectMet == nil || !*r.ExpectMet:
			t.Errorf("%s: %s, expected %s", r.ID, r.Verdict, r.Expect)
		}
	}
	if len(results) != 6 {
		t.Errorf("%d results, want 6", len(results))
	}
}
