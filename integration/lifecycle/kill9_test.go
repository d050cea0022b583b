package lifecycle

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestKill9CyclesThenResume kills a 50-pair grade with SIGKILL at random points, ten times
// (each time resuming what the last one left), then lets a last resume finish. Nothing a
// killed run recorded may be lost or graded again, no pair may be recorded twice, and once
// the last run has started and ended no temporary directory or container of any run is left.
// The seed is logged; TENDER_KILL9_SEED replays a run.
func TestKill9CyclesThenResume(t *testing.T) {
	const pairs, cycles = 50, 10
	bin := clitest.BuildTender(t, e2e.RepoRoot)
	suite := manyPairs(t, pairs)
	tmp := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	env := append(os.Environ(), "TMPDIR="+tmp)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TENDER_KILL9_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)

	recorded := map[string]report.PairResult{} // every record any run has written
	var killed []int
	for cycle := 1; cycle <= cycles; cycle++ {
		args := []string{"grade", suite, "--resume", out}
		if cycle == 1 {
			args = []string{"grade", suite, "--out", out}
		}
		cmd := exec.Command(bin, append(args, "--concurrency", "2")...)
		cmd.Env = env
		clitest.Must(t, cmd.Start())
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		// A random point of the run's progress: after k more pairs are recorded (0: before the
		// first), then a random moment more, up to about a verifier's lifetime.
		k := rng.IntN(6)
		start := e2e.CountLines(filepath.Join(out, report.ResultsJSONL))
		for e2e.CountLines(filepath.Join(out, report.ResultsJSONL)) < start+k && !closed(exited) {
			time.Sleep(20 * time.Millisecond)
		}
		delay := time.Duration(rng.Int64N(int64(3 * time.Second)))
		select {
		case <-time.After(delay):
		case <-exited:
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		killed = append(killed, cmd.Process.Pid)
		now := recordsByID(t, out, cycle)
		lost := 0
		for id, r := range recorded {
			if got, ok := now[id]; !ok || !got.Started.Equal(r.Started) {
				lost++
			}
		}
		t.Logf(
			"cycle %2d: killed %-6s after record %2d: %2d of %d pairs recorded, %d lost, %d tender-* directories and %d containers left for the next start",
			cycle,
			delay.Round(time.Millisecond),
			start+k,
			len(now),
			pairs,
			lost,
			len(tenderDirs(t, tmp)),
			len(e2e.ContainersOf(t, cmd.Process.Pid)),
		)
		if lost > 0 {
			t.Errorf("cycle %d lost %d recorded pair(s)", cycle, lost)
		}
		for id, r := range now {
			if r.Verdict != report.Error { // an error verdict is graded again, by design
				recorded[id] = r
			}
		}
	}

	final := exec.Command(bin, "grade", suite, "--resume", out, "--concurrency", "2")
	final.Env = env
	var stderr strings.Builder
	final.Stderr = &stderr
	if err := final.Run(); err != nil {
		t.Fatalf("the last resume: %v\n%s", err, stderr.String())
	}
	all := recordsByID(t, out, cycles+1)
	lost, regraded := 0, 0
	for id, r := range recorded {
		if got, ok := all[id]; !ok {
			lost++
		} else if !got.Started.Equal(r.Started) {
			regraded++
		}
	}
	left := tenderDirs(t, tmp)
	var containers []string
	for _, pid := range append(killed, final.Process.Pid) {
		containers = append(containers, e2e.ContainersOf(t, pid)...)
	}
	t.Logf(
		"after the last resume: %d of %d pairs recorded once each, %d lost, %d recorded pairs graded again, %d tender-* directories and %d containers left",
		len(all),
		pairs,
		lost,
		regraded,
		len(left),
		len(containers),
	)
	if len(all) != pairs || lost > 0 || regraded > 0 || len(left) > 0 || len(containers) > 0 {
		t.Errorf(
			"want all %d pairs, none lost or graded again, nothing left: left %v, containers %v",
			pairs,
			left,
			containers,
		)
	}
	if _, stderr, code := e2e.RunTender(t, "verify", out); code != cli.ExitOK {
		t.Errorf("the bundle does not verify:\n%s", stderr)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// recordsByID reads results.jsonl (which a kill may have cut mid-line: the torn tail is not a
// record) and fails on a pair recorded twice.
func recordsByID(t *testing.T, out string, cycle int) map[string]report.PairResult {
	t.Helper()
	rs, err := report.ReadResults(filepath.Join(out, report.ResultsJSONL))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]report.PairResult{}
	}
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	byID := map[string]report.PairResult{}
	var dups []string
	for _, r := range rs {
		if _, dup := byID[r.ID]; dup {
			dups = append(dups, r.ID)
		}
		byID[r.ID] = r
	}
	if len(dups) > 0 {
		t.Errorf("cycle %d: recorded twice: %v", cycle, slices.Compact(slices.Sorted(slices.Values(dups))))
	}
	return byID
}
