package lifecycle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestVerifierKilledFromOutside: `docker kill` of a running verifier is infrastructure, so
// the pair is an error (verifier_killed), never unresolved for a missing report.
func TestVerifierKilledFromOutside(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := e2e.OrderedSuite(t, "gold-fix")
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "grade", suite, "--out", out, "--concurrency", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	clitest.Must(t, cmd.Start())
	killed := ""
	for killed == "" && cmd.ProcessState == nil {
		ps, _ := exec.Command("docker", "ps", "-q", "--filter", "label=tender.pid="+strconv.Itoa(cmd.Process.Pid)).
			Output()
		for _, id := range strings.Fields(string(ps)) {
			if top, err := exec.Command("docker", "top", id).Output(); err == nil &&
				strings.Contains(string(top), "python3") {
				if exec.Command("docker", "kill", id).Run() == nil {
					killed = id
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Wait()
	if killed == "" {
		t.Fatalf("the test never caught the verifier running:\n%s", stderr.String())
	}
	rs, err := report.ReadResults(filepath.Join(out, report.ResultsJSONL))
	if err != nil || len(rs) != 1 {
		t.Fatalf("results: %v %v\n%s", rs, err, stderr.String())
	}
	if r := rs[0]; r.Verdict != report.Error || len(r.Reasons) == 0 || r.Reasons[0].Code != report.CodeVerifierKilled {
		log, _ := os.ReadFile(filepath.Join(out, "pairs", r.ID, "target.log"))
		t.Errorf("after docker kill: %s %+v, want error verifier_killed\n%s\n%s", r.Verdict, r.Reasons, log,
			stderr.String())
	}
}
