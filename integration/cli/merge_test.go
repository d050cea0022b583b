package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
)

// TestShardedGradeMergesToTheUnshardedVerdicts grades fixtures/demo whole and in three shards
// with the real Docker backend, merges the shards and checks the merged bundle verifies and
// carries the same verdicts and reasons as the unsharded run.
func TestShardedGradeMergesToTheUnshardedVerdicts(t *testing.T) {
	tmp := t.TempDir()
	grade := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"grade", repoRoot + "/fixtures/demo", "--out", out, "--concurrency", "2"}, extra...)
		if _, stderr, code := runTenderEnv(t, []string{"HOME=" + os.Getenv("HOME")}, args...); code != cli.ExitOK {
			t.Fatalf("grade %v: exit %d\n%s", extra, code, stderr)
		}
	}
	grade(filepath.Join(tmp, "whole"))
	var shards []string
	for k := 1; k <= 3; k++ {
		dir := filepath.Join(tmp, fmt.Sprintf("s%d", k))
		grade(dir, "--shard", fmt.Sprintf("%d/3", k))
		shards = append(shards, dir)
	}
	out := filepath.Join(tmp, "merged")
	if _, stderr, code := runTender(t, append([]string{"merge", "--out", out}, shards...)...); code != cli.ExitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	if _, err := bundle.Verify(out, nil, bundle.VerifyOptions{}); err != nil {
		t.Fatalf("merged bundle: %v", err)
	}
	verdicts := func(dir string) map[string]string {
		m := map[string]string{}
		for _, pr := range clitest.ReadResults(t, dir).Pairs {
			m[pr.ID] = string(pr.Verdict) + " " + strings.Join(report.DistinctCodes(pr.Reasons), ",")
		}
		return m
	}
	whole := verdicts(filepath.Join(tmp, "whole"))
	if d := cmp.Diff(whole, verdicts(out)); d != "" || len(whole) == 0 {
		t.Errorf("merged verdicts differ from the unsharded run (-whole +merged):\n%s", d)
	}
}
