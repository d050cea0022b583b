package lifecycle

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// manyPairs writes a copy of the demo suite with n pairs made from its six: one in five runs
// verifiers (the gold and wrong fixes), the others end before any verifier (a patch that does
// not apply, an empty patch, a protected path), so the batch is large but quick.
func manyPairs(t *testing.T, n int) string {
	t.Helper()
	suiteDir := e2e.CopyDir(t, e2e.RepoRoot+"/fixtures/demo")
	doc := e2e.ReadSuiteDoc(t, suiteDir)
	byID := map[string]suite.PairDoc{}
	for _, p := range doc.Pairs {
		byID[p.ID] = p
	}
	cycle := []string{
		"gold-fix",
		"no-apply",
		"empty-patch",
		"touches-tender",
		"no-apply",
		"wrong-fix",
		"empty-patch",
		"touches-tender",
		"no-apply",
		"empty-patch",
	}
	var pairs []suite.PairDoc
	for i := range n {
		p := byID[cycle[i%len(cycle)]]
		p.ID = fmt.Sprintf("p%03d-%s", i, p.ID)
		pairs = append(pairs, p)
	}
	doc.Pairs = pairs
	e2e.WriteSuiteDoc(t, suiteDir, doc)
	return suiteDir
}

// TestInterruptAndResume grades a 20-pair batch (four of them run verifiers), interrupts it
// with SIGINT while a verifier runs and some pairs are done, checks that the finished pairs
// were kept and no container of the run is left, then resumes it: the resume grades exactly
// the unfinished pairs. 20 pairs hold every case the assertions need (finished, cut short,
// not started) at a fifth of the cost of 100.
func TestInterruptAndResume(t *testing.T) {
	const total = 20
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := manyPairs(t, total)
	out := filepath.Join(t.TempDir(), "out")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "grade", suite, "--out", out, "--concurrency", "2")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(out, "results.jsonl")
	deadline := time.Now().Add(3 * time.Minute)
	// Interrupt while a verifier of the run is up and some pairs have finished.
	for time.Now().Before(deadline) && (e2e.CountLines(jsonl) < 3 || len(e2e.ContainersOf(t, cmd.Process.Pid)) == 0) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Fatalf("interrupted grade: %v, want exit %d\n%s", err, cli.ExitInterrupted, stderr.String())
	}
	if left := e2e.ContainersOf(t, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("containers of the interrupted run are left: %v\n%s", left, stderr.String())
	}
	kept, err := report.ReadResults(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < 3 || len(kept) >= total {
		t.Fatalf("%d pairs finished before the interrupt; want some, not all", len(kept))
	}
	if !strings.Contains(stderr.String(), "--resume "+out) {
		t.Errorf("the interrupted run does not say how to resume:\n%s", stderr.String())
	}
	t.Logf("interrupted after %d of %d pairs", len(kept), total)

	stderr.Reset()
	resume := exec.Command(bin, "grade", suite, "--resume", out, "--concurrency", "2")
	resume.Stderr = &stderr
	if err := resume.Run(); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	all, err := report.ReadResults(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != total {
		t.Errorf("after resume results.jsonl has %d pairs, want %d", len(all), total)
	}
	if n := strings.Count(stderr.String(), "] p"); n != total-len(kept) {
		t.Errorf("resume graded %d pairs, want %d (the unfinished ones)", n, total-len(kept))
	}
	byID := map[string]report.PairResult{}
	for _, r := range all {
		byID[r.ID] = r
	}
	for _, k := range kept {
		if r, ok := byID[k.ID]; !ok || r.InputDigest != k.InputDigest || !r.Started.Equal(k.Started) {
			t.Errorf("finished pair %s was lost or graded again on resume", k.ID)
		}
	}
	if left := e2e.ContainersOf(t, resume.Process.Pid); len(left) > 0 {
		t.Errorf("containers of the resumed run are left: %v", left)
	}
	if _, _, code := e2e.RunTender(t, "verify", out); code != cli.ExitOK {
		t.Errorf("the resumed bundle does not verify")
	}
}
