package lifecycle

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
)

// TestHangupAndQuitCleanUp: SIGHUP (a closed terminal) and SIGQUIT end a grade the way SIGINT
// and SIGTERM do: exit 130, every container of the run removed, a resume hint. SIGQUIT still
// prints every goroutine's stack first, as Go's default would.
func TestHangupAndQuitCleanUp(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := e2e.OrderedSuite(t, "gold-fix", "gold-fix", "gold-fix")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(bin, "grade", suite, "--out", out, "--concurrency", "1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			clitest.Must(t, cmd.Start())
			for deadline := time.Now().Add(3 * time.Minute); len(e2e.ContainersOf(t, cmd.Process.Pid)) == 0; {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no verifier started:\n%s", stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			clitest.Must(t, cmd.Process.Signal(sig))
			cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if code != cli.ExitInterrupted || !strings.Contains(stderr.String(), "--resume "+out) {
				t.Errorf(
					"after %s: exit %d, want %d and a resume hint\n%s",
					sig,
					code,
					cli.ExitInterrupted,
					stderr.String(),
				)
			}
			if left := e2e.ContainersOf(t, cmd.Process.Pid); len(left) > 0 {
				t.Errorf("after %s containers of the run are left: %v", sig, left)
				exec.Command("docker", append([]string{"rm", "-f"}, left...)...).Run()
			}
			if sig == syscall.SIGQUIT && !strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("SIGQUIT printed no goroutine stacks")
			}
		})
	}
}

// TestInterruptedValidateRunNamesNothingBroken: validate --run cut short by SIGINT exits 130
// and calls no instance broken for checks it did not finish.
func TestInterruptedValidateRunNamesNothingBroken(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	cmd := exec.Command(bin, "validate", "--run", e2e.RepoRoot+"/fixtures/demo")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	clitest.Must(t, cmd.Start())
	for deadline := time.Now().Add(3 * time.Minute); len(e2e.ContainersOf(t, cmd.Process.Pid)) == 0; {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no verifier started:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	clitest.Must(t, cmd.Process.Signal(syscall.SIGINT))
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted || strings.Contains(stdout.String(), "BROKEN") {
		t.Errorf("interrupted validate --run: exit %d, want %d and no instance called broken\n%s%s",
			code, cli.ExitInterrupted, stdout.String(), stderr.String())
	}
}
