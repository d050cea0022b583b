package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
)

// TestShardedGradeMergesToTheUnshardedVerdicts grades fixtures/demo whole and in three shards
// with the real Docker backend, merges the shards and checks the merged bundle verifies and
// carries the same verdicts and reasons as the unsharded run: with the shards chosen by the
// hash, and balanced by the whole run's recorded durations (--durations), where each of the
// three pairs that run a verifier gets a shard of its own.
func TestShardedGradeMergesToTheUnshardedVerdicts(t *testing.T) {
	tmp := t.TempDir()
	grade := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"grade", repoRoot + "/fixtures/demo", "--out", out, "--concurrency", "2"}, extra...)
		if _, stderr, code := e2e.RunTenderEnv(t, []string{"HOME=" + os.Getenv("HOME")}, args...); code != cli.ExitOK {
			t.Fatalf("grade %v: exit %d\n%s", extra, code, stderr)
		}
	}
	wholeDir := filepath.Join(tmp, "whole")
	grade(wholeDir)
	verdicts := func(dir string) map[string]string {
		m := map[string]string{}
		for _, pr := range clitest.ReadResults(t, dir).Pairs {
			m[pr.ID] = string(pr.Verdict) + " " + strings.Join(report.DistinctCodes(pr.Reasons), ",")
		}
		return m
	}
	whole := verdicts(wholeDir)
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"by the hash", nil}, {"balanced by --durations", []string{"--durations", wholeDir}}} {
		t.Run(tc.name, func(t *testing.T) {
			var shards []string
			for k := 1; k <= 3; k++ {
				dir := filepath.Join(tmp, fmt.Sprintf("%s-s%d", strings.Fields(tc.name)[0], k))
				grade(dir, append([]string{"--shard", fmt.Sprintf("%d/3", k)}, tc.extra...)...)
				shards = append(shards, dir)
			}
			out := filepath.Join(tmp, strings.Fields(tc.name)[0]+"-merged")
			_, stderr, code := e2e.RunTender(t, append([]string{"merge", "--out", out}, shards...)...)
			if code != cli.ExitOK {
				t.Fatalf("merge: exit %d\n%s", code, stderr)
			}
			if _, err := bundle.Verify(out, nil, bundle.VerifyOptions{}); err != nil {
				t.Fatalf("merged bundle: %v", err)
			}
			if d := cmp.Diff(whole, verdicts(out)); d != "" || len(whole) == 0 {
				t.Errorf("merged verdicts differ from the unsharded run (-whole +merged):\n%s", d)
			}
			logShardCosts(t, tc.name, wholeDir, shards)
			if tc.extra != nil {
				checkOneVerifierPairEach(t, shards)
			}
		})
	}
}

// checkOneVerifierPairEach: balanced by durations, the three pairs that run a verifier (the
// longest, by far, in any run) are in three different shards, whatever their durations were.
func checkOneVerifierPairEach(t *testing.T, shards []string) {
	t.Helper()
	for _, dir := range shards {
		res := clitest.ReadResults(t, dir)
		var costly []string
		for _, p := range res.Pairs {
			if slices.Contains([]string{"gold-fix", "wrong-fix", "edits-test"}, p.ID) {
				costly = append(costly, p.ID)
			}
		}
		if res.ShardPlan == nil || len(costly) != 1 {
			t.Errorf("shard %s: plan %v, verifier pairs %v; want a plan and one of them",
				res.Shard, res.ShardPlan != nil, costly)
		}
	}
}

// logShardCosts logs, for the figures, each shard's cost as the whole run recorded it (the
// sum of its pairs' durations) and as it took (its wall time), the slowest against the mean.
func logShardCosts(t *testing.T, how, wholeDir string, shards []string) {
	t.Helper()
	durations, _, err := report.ReadDurations(wholeDir)
	if err != nil {
		t.Fatal(err)
	}
	var recorded, wall []time.Duration
	for _, dir := range shards {
		res := clitest.ReadResults(t, dir)
		var sum time.Duration
		for _, p := range res.Pairs {
			sum += time.Duration(durations[p.ID]) * time.Millisecond
		}
		recorded, wall = append(recorded, sum), append(wall, res.Finished.Sub(res.Started))
	}
	ratio := func(ds []time.Duration) string {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		mean := sum / time.Duration(len(ds))
		return fmt.Sprintf("%v (slowest %v / mean %v = %.2f)", ds, slices.Max(ds).Round(time.Millisecond),
			mean.Round(time.Millisecond), float64(slices.Max(ds))/float64(mean))
	}
	t.Logf("%s: recorded cost per shard %s; wall per shard %s", how, ratio(recorded), ratio(wall))
}
