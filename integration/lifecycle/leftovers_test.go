package lifecycle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
)

// tenderDirs lists the tender-* entries of dir.
func tenderDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tender-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestKilledRunLeavesNoTempDirs: the temporary directories of a grade killed with SIGKILL
// (repository snapshots, check workspaces, restore bases) are removed by `tender gc`, and by
// the next grade when it starts, as its containers are.
func TestKilledRunLeavesNoTempDirs(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := e2e.OrderedSuite(t, "gold-fix", "gold-fix")
	for _, next := range [][]string{{"gc"}, {"grade", e2e.OrderedSuite(t, "empty-patch"), "--out", filepath.Join(t.TempDir(), "next")}} {
		t.Run(next[0], func(t *testing.T) {
			tmp := t.TempDir()
			env := append(os.Environ(), "TMPDIR="+tmp)
			cmd := exec.Command(bin, "grade", suite, "--out", filepath.Join(t.TempDir(), "out"), "--concurrency", "1")
			cmd.Env = env
			clitest.Must(t, cmd.Start())
			for deadline := time.Now().Add(3 * time.Minute); len(e2e.ContainersOf(t, cmd.Process.Pid)) == 0 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			clitest.Must(t, cmd.Process.Signal(syscall.SIGKILL))
			cmd.Wait()
			left := tenderDirs(t, tmp)
			if len(left) == 0 {
				t.Fatal("the killed run left no temporary directory to sweep; the test needs one")
			}
			after := exec.Command(bin, next...)
			after.Env = env
			if out, err := after.CombinedOutput(); err != nil {
				t.Fatalf("tender %s: %v\n%s", next[0], err, out)
			}
			if still := tenderDirs(t, tmp); len(still) > 0 {
				t.Errorf("after tender %s the killed run's %v are still in TMPDIR (it left %v)", next[0], still, left)
			}
			if c := e2e.ContainersOf(t, cmd.Process.Pid); len(c) > 0 {
				t.Errorf("after tender %s the killed run's containers %v are left", next[0], c)
			}
		})
	}
}
