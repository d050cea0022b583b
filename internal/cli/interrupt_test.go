package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/report"
)

// manyPairs writes a copy of the demo suite with n pairs made from its six: one in five runs
// verifiers (the gold and wrong fixes), the others end before any verifier (a patch that does
// not apply, an empty patch, a protected path), so the batch is large but quick.
func manyPairs(t *testing.T, n int) string {
	t.Helper()
	suite := copyDir(t, repoRoot+"/fixtures/demo")
	var doc grader.SuiteDoc
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(suite, "tender.yaml"))), &doc); err != nil {
		t.Fatal(err)
	}
	byID := map[string]grader.PairDoc{}
	for _, p := range doc.Pairs {
		byID[p.ID] = p
	}
	cycle := []string{"gold-fix", "no-apply", "empty-patch", "touches-tender", "no-apply", "wrong-fix", "empty-patch", "touches-tender", "no-apply", "empty-patch"}
	var pairs []grader.PairDoc
	for i := range n {
		p := byID[cycle[i%len(cycle)]]
		p.ID = fmt.Sprintf("p%03d-%s", i, p.ID)
		pairs = append(pairs, p)
	}
	doc.Pairs = pairs
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suite, "tender.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return suite
}

// TestInterruptAndResume grades a 100-pair batch, interrupts it with SIGINT mid-run, checks
// that the finished pairs were kept and no container of the run is left, then resumes it.
func TestInterruptAndResume(t *testing.T) {
	bin := buildTender(t)
	suite := manyPairs(t, 100)
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
	for time.Now().Before(deadline) && (countLines(jsonl) < 3 || len(containersOf(t, cmd.Process.Pid)) == 0) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted grade: %v, want exit %d\n%s", err, exitInterrupted, stderr.String())
	}
	if left := containersOf(t, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("containers of the interrupted run are left: %v", left)
	}
	kept, err := report.ReadResults(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < 3 || len(kept) >= 100 {
		t.Fatalf("%d pairs finished before the interrupt; want some, not all", len(kept))
	}
	if !strings.Contains(stderr.String(), "--resume "+out) {
		t.Errorf("the interrupted run does not say how to resume:\n%s", stderr.String())
	}
	t.Logf("interrupted after %d of 100 pairs", len(kept))

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
	if len(all) != 100 {
		t.Errorf("after resume results.jsonl has %d pairs, want 100", len(all))
	}
	if n := strings.Count(stderr.String(), "] p"); n != 100-len(kept) {
		t.Errorf("resume graded %d pairs, want %d (the unfinished ones)", n, 100-len(kept))
	}
	for i, r := range all[:len(kept)] {
		if r.ID != kept[i].ID || r.InputDigest != kept[i].InputDigest {
			t.Errorf("finished pair %d changed on resume: %s -> %s", i, kept[i].ID, r.ID)
		}
	}
	if left := containersOf(t, resume.Process.Pid); len(left) > 0 {
		t.Errorf("containers of the resumed run are left: %v", left)
	}
	if _, _, code := runTender(t, "verify", out); code != exitOK {
		t.Errorf("the resumed bundle does not verify")
	}
}
