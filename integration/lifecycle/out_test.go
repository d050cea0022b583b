package lifecycle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestGradeOutRefusals: an --out that cannot hold a bundle is bad input: exit 2 and one line
// that names it, never a raw mkdir or lstat message; --out next to --resume is refused, not
// ignored.
func TestGradeOutRefusals(t *testing.T) {
	suite := e2e.CheapSuite(t, 2)
	file := filepath.Join(t.TempDir(), "file")
	clitest.Must(t, os.WriteFile(file, []byte("x"), 0o644))
	_, done := e2e.GradeOK(t, suite)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"out is a file", []string{"--out", file}, "is not a directory"},
		{"out is empty", []string{"--out", ""}, "--out is empty"},
		{"out under /proc", []string{"--out", "/proc/tender-out"}, "--out /proc/tender-out is on a kernel file system"},
		{"out is /proc itself", []string{"--out", "/proc/self/fdinfo"}, "kernel file system"},
		{"out under a file", []string{"--out", file + "/sub"}, "cannot make the directory (not a directory)"},
		{"out and resume", []string{"--out", filepath.Join(t.TempDir(), "new"), "--resume", done}, "--out and --resume are both given"},
		{"resume is not a directory", []string{"--resume", file}, "--resume " + file + " is not a directory"},
		{"resume has no results", []string{"--resume", t.TempDir()}, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := e2e.RunTender(t, append([]string{"grade", suite}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || len(lines) != 1 ||
				strings.Contains(stderr, "mkdir ") || strings.Contains(stderr, "lstat ") {
				t.Errorf("exit %d, want %d and one line with %q:\n%s", code, cli.ExitUsage, tc.want, stderr)
			}
		})
	}
}

// TestEmptyShardIsABundle: a shard that selects no pair is a valid, sealed, empty bundle, so
// a matrix with more shards than pairs still merges.
func TestEmptyShardIsABundle(t *testing.T) {
	suite := e2e.CheapSuite(t, 2)
	const n = 8
	var dirs []string
	empty := 0
	for k := 1; k <= n; k++ {
		out := filepath.Join(t.TempDir(), "out")
		_, stderr, code := e2e.RunTender(t, "grade", suite, "--out", out, "--shard", fmt.Sprintf("%d/%d", k, n))
		if code != cli.ExitOK {
			t.Fatalf("shard %d/%d: exit %d\n%s", k, n, code, stderr)
		}
		if _, stderr, code := e2e.RunTender(t, "verify", out); code != cli.ExitOK {
			t.Fatalf("shard %d/%d does not verify:\n%s", k, n, stderr)
		}
		if len(clitest.ReadResults(t, out).Pairs) == 0 {
			empty++
		}
		dirs = append(dirs, out)
	}
	if empty < n-2 {
		t.Fatalf("%d empty shards, want at least %d", empty, n-2)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if _, stderr, code := e2e.RunTender(t, append([]string{"merge", "--out", merged}, dirs...)...); code != cli.ExitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	if got := len(clitest.ReadResults(t, merged).Pairs); got != 2 {
		t.Errorf("the merged bundle has %d pairs, want 2", got)
	}
}

// TestConcurrentGradesOneOut: two grades started together into one new --out. Ten times, one
// is refused (exit 2) and the other writes a whole bundle: every pair once, and it verifies.
func TestConcurrentGradesOneOut(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	const pairs = 20
	suite := e2e.CheapSuite(t, pairs)
	for round := range 10 {
		out := filepath.Join(t.TempDir(), "out")
		var wg sync.WaitGroup
		codes := make([]int, 2)
		logs := make([]string, 2)
		for i := range 2 {
			wg.Go(func() {
				cmd := exec.Command(bin, "grade", suite, "--out", out, "--concurrency", "2")
				b, err := cmd.CombinedOutput()
				codes[i], logs[i] = cmd.ProcessState.ExitCode(), string(b)
				if err != nil && cmd.ProcessState == nil {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
		slices.Sort(codes)
		if !slices.Equal(codes, []int{cli.ExitOK, cli.ExitUsage}) {
			t.Fatalf("round %d: exit codes %v, want one 0 and one 2\n%s\n%s", round, codes, logs[0], logs[1])
		}
		recs, err := report.ReadResults(filepath.Join(out, report.ResultsJSONL))
		ids := map[string]int{}
		for _, r := range recs {
			ids[r.ID]++
		}
		if err != nil || len(recs) != pairs || len(ids) != pairs {
			t.Fatalf(
				"round %d: results.jsonl has %d records of %d pairs (%v), want %d once each",
				round,
				len(recs),
				len(ids),
				err,
				pairs,
			)
		}
		if _, stderr, code := e2e.RunTender(t, "verify", out); code != cli.ExitOK {
			t.Fatalf("round %d: the bundle does not verify:\n%s", round, stderr)
		}
		refused := logs[0]
		if !strings.Contains(refused, "another tender process") && !strings.Contains(refused, "is not empty") {
			refused = logs[1]
		}
		t.Logf(
			"round %2d: exits %v; refused with %q; %d records of %d pairs, each once; the bundle verifies",
			round+1,
			codes,
			strings.TrimSpace(refused[strings.LastIndex(strings.TrimSpace(refused), "\n")+1:]),
			len(recs),
			pairs,
		)
	}
}

// tmpfs mounts a small tmpfs of size bytes for the test (Tender's tests run as root).
func tmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Fatalf("mount a %d-byte tmpfs (the test needs root): %v", size, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFullDiskStopsAndResumes: when results.jsonl cannot grow, the run stops at once with
// exit 1, says the disk is full and how to continue, and keeps every record whole; after space
// is freed, --resume finishes with every pair once.
func TestFullDiskStopsAndResumes(t *testing.T) {
	const pairs = 400
	suite := e2e.CheapSuite(t, pairs)
	disk := tmpfs(t, 64<<10)
	out := filepath.Join(disk, "out")
	_, stderr, code := e2e.RunTender(t, "grade", suite, "--out", out, "--concurrency", "2")
	if code != cli.ExitFailure || !strings.Contains(stderr, "no space left on device") ||
		!strings.Contains(stderr, "--resume "+out) {
		t.Fatalf(
			"grade on a full disk: exit %d, want %d, a full disk and a resume hint:\n%s",
			code,
			cli.ExitFailure,
			stderr,
		)
	}
	recorded, err := report.ReadResults(filepath.Join(out, report.ResultsJSONL))
	if err != nil {
		t.Fatalf("results.jsonl after the disk filled: %v", err)
	}
	var ids []string
	for _, r := range recorded {
		ids = append(ids, r.ID)
	}
	for _, id := range gradedIDs(stderr) {
		if !slices.Contains(ids, id) {
			t.Errorf("%s was reported graded but is not recorded", id)
		}
	}
	if len(recorded) >= pairs || strings.Count(stderr, "no space left") != 1 {
		t.Errorf(
			"%d of %d pairs recorded: the run did not stop, or did not say why once:\n%s",
			len(recorded),
			pairs,
			stderr,
		)
	}
	clitest.Must(t, syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=64m"))
	_, stderr, code = e2e.RunTender(t, "grade", suite, "--resume", out)
	if code != cli.ExitOK {
		t.Fatalf("resume after freeing space: exit %d\n%s", code, stderr)
	}
	if ids := recordIDs(t, out); len(ids) != pairs || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != pairs {
		t.Errorf("after the resume results.jsonl has %d records, want %d pairs once each", len(ids), pairs)
	}
}

// TestOutRemovedMidRun: --out deleted while the run writes is an error (exit 1), never a
// sealed bundle without results.jsonl. The first pair is cheap; the second runs a verifier,
// and --out goes while it runs.
func TestOutRemovedMidRun(t *testing.T) {
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := e2e.OrderedSuite(t, "empty-patch", "gold-fix", "empty-patch")
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "grade", suite, "--out", out, "--concurrency", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	clitest.Must(t, cmd.Start())
	for e2e.CountLines(filepath.Join(out, report.ResultsJSONL)) < 1 || len(e2e.ContainersOf(t, cmd.Process.Pid)) == 0 {
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	clitest.Must(t, os.RemoveAll(out))
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code != cli.ExitFailure || !strings.Contains(stderr.String(), "removed or replaced") {
		t.Fatalf("grade with --out removed: %v (exit %d), want exit %d naming the removal\n%s",
			err, code, cli.ExitFailure, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "bundle.dsse.json")); err == nil {
		t.Errorf("a bundle was sealed in the recreated --out")
	}
}
