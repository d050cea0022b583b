package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// plantCanaries configures a clone's own .git to run a helper at every chance git gives it.
func plantCanaries(t *testing.T, clone, marker string) {
	t.Helper()
	helper := filepath.Join(clone, ".git", "canary.sh")
	clitest.WriteFiles(t, clone, map[string]string{".git/canary.sh": "#!/bin/sh\ntouch " + marker + "\n"})
	if err := os.Chmod(helper, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, hook := range []string{"post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"} {
		p := filepath.Join(clone, ".git", "hooks", hook)
		clitest.WriteFiles(t, clone, map[string]string{".git/hooks/" + hook: "#!/bin/sh\ntouch " + marker + "\n"})
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clitest.ReadFile(t, filepath.Join(clone, ".git", "config")) +
		"[core]\n\tfsmonitor = " + helper + "\n\thooksPath = .git/hooks\n\tpager = " + helper + "\n" +
		"[diff]\n\texternal = " + helper + "\n[filter \"x\"]\n\tclean = " + helper + "\n\tsmudge = " + helper + "\n\tprocess = " + helper + "\n" +
		"[alias]\n\tstatus = !" + helper + "\n[credential]\n\thelper = !" + helper + "\n"
	clitest.WriteFiles(t, clone, map[string]string{".git/config": cfg, ".git/info/attributes": "* filter=x\n"})
}

// TestGradeFromAHostileClone maps the demo repository to an operator's clone whose .git is
// planted with hooks and helpers: grading runs none of them, and the verdicts are the ones
// the vendored stream gives.
func TestGradeFromAHostileClone(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	marker := filepath.Join(t.TempDir(), "canary-fired")
	plantCanaries(t, clone, marker)
	results, _ := e2e.GradeOK(t, repoRoot+"/fixtures/demo", "--repo", "calc="+clone, "--pinned")
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a helper planted in the clone's .git ran")
	}
	for _, r := range results {
		if r.ExecutedCommit != clitest.DemoBase || r.RequestedCommit != clitest.DemoBase {
			t.Errorf("%s: requested %s, executed %s", r.ID, r.RequestedCommit, r.ExecutedCommit)
		}
	}
	// Control: the planted vectors are live. Plain git in the clone fires the canary (its
	// exit status does not matter: the helper is not a real fsmonitor).
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = clone, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("control: plain git status did not fire the planted canary, so the test proves nothing")
	}
}

// TestGradeRefusesADirtyOrMovedClone: a clone with uncommitted changes, or (pinned) at another
// commit, is refused before any verifier starts, as an error for every pair.
func TestGradeRefusesADirtyOrMovedClone(t *testing.T) {
	dirty := clitest.DemoClone(t, repoRoot)
	marker := filepath.Join(t.TempDir(), "canary-fired")
	plantCanaries(t, dirty, marker)
	clitest.WriteFiles(t, dirty, map[string]string{"calc/formatting.py": "# edited, not committed\n"})
	moved := clitest.DemoClone(t, repoRoot)
	e2e.GitIn(t, moved, "", "commit", "-q", "--allow-empty", "-m", "later")
	for _, tc := range []struct{ name, clone, reason string }{
		{"dirty", dirty, "source_dirty"},
		{"moved", moved, "head_mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, _, code := e2e.RunTender(
				t,
				"grade",
				repoRoot+"/fixtures/demo",
				"--out",
				out,
				"--repo",
				"calc="+tc.clone,
				"--pinned",
			)
			if code != cli.ExitMismatch {
				t.Fatalf("exit %d, want %d (every pair is an error)", code, cli.ExitMismatch)
			}
			results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Verdict != report.Error || string(r.Reasons[0].Code) != tc.reason || len(r.Checks) != 0 {
					t.Errorf("%s: %s %+v with %d checks", r.ID, r.Verdict, r.Reasons, len(r.Checks))
				}
			}
		})
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a helper planted in the dirty clone's .git ran")
	}
}
