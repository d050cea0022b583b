package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newTestLocal(t *testing.T) (*Local, *bytes.Buffer) {
	t.Helper()
	l, err := NewLocal(true)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	l.Log = &log
	return l, &log
}

func localSpec(t *testing.T, command ...string) Spec {
	return Spec{
		RunID: testRunID(t), Name: t.Name(),
		Workspace: writeFiles(t, map[string]string{"README": "workspace\n"}),
		Command:   command,
		Limits:    Limits{Timeout: 30 * time.Second, OutputBytes: 16 << 10},
	}
}

func TestLocalRefusesWithoutTrust(t *testing.T) {
	l, err := NewLocal(false)
	if !errors.Is(err, ErrNotTrusted) || l != nil {
		t.Errorf("NewLocal(false) = %v, %v; want nil, ErrNotTrusted", l, err)
	}
}

func TestLocalEnvironmentAllowlist(t *testing.T) {
	canary := "tender-canary-" + testRunID(t)
	t.Setenv("TENDER_TEST_CANARY", canary)
	t.Setenv("GITHUB_TOKEN", canary)
	t.Setenv("SUITE_NAMED", "named-value")
	l, _ := newTestLocal(t)
	spec := localSpec(t, "env")
	var err error
	spec.Env, err = AllowEnv([]string{"SUITE_NAMED", "SUITE_UNSET"}, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		names = append(names, k)
		if v == canary {
			t.Errorf("host canary reached the local check as %s", k)
		}
	}
	want := []string{"HOME", "PATH", "SUITE_NAMED", "TENDER_ASSETS", "TENDER_DIR", "TENDER_JUNIT", "TENDER_WORKSPACE"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(names))); diff != "" {
		t.Errorf("environment names (-want +got):\n%s", diff)
	}
}

func TestLocalKillsProcessGroupOnTimeout(t *testing.T) {
	l, _ := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", `sleep 300 & echo $!; sh -c 'sleep 301' & echo $!; sleep 302`)
	spec.Limits.Timeout = time.Second
	start := time.Now()
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Outcome() != "timeout" {
		t.Errorf("outcome %s, want timeout", res.Outcome())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Run took %s with a 1s deadline", took)
	}
	pids := strings.Fields(res.Stdout.String())
	if len(pids) != 2 {
		t.Fatalf("want two child pids, got %q", res.Stdout.String())
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		waitGone(t, pid)
	}
}

func TestLocalKillsStragglersAfterExit(t *testing.T) {
	l, _ := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", `sleep 300 >/dev/null 2>&1 & echo $!; exit 0`)
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(res.Stdout.String()))
	if res.ExitCode != 0 || pid == 0 {
		t.Fatalf("outcome %s, stdout %q", res.Outcome(), res.Stdout.String())
	}
	waitGone(t, pid)
}

// waitGone fails unless pid is gone (or a zombie) within a few seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d outlived its check", pid)
}

func TestLocalBoundedOutputAndMarking(t *testing.T) {
	l, log := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", `yes local | head -c 50000000; echo "<testsuite/>" > {junit}; echo done >&2`)
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.Total != 50_000_000 || !res.Stdout.Truncated || len(res.Stdout.Head)+len(res.Stdout.Tail) > 16<<10 {
		t.Errorf(
			"stdout total %d truncated %v kept %d",
			res.Stdout.Total,
			res.Stdout.Truncated,
			len(res.Stdout.Head)+len(res.Stdout.Tail),
		)
	}
	if res.Backend != "local" || res.Isolated || res.Notice != NotIsolated {
		t.Errorf("result not marked: backend %q isolated %v notice %q", res.Backend, res.Isolated, res.Notice)
	}
	if string(res.JUnit) != "<testsuite/>\n" || res.Stderr.String() != "done\n" {
		t.Errorf("JUnit %q stderr %q", res.JUnit, res.Stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want log lines, got %q", log.String())
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, NotIsolated+": ") {
			t.Errorf("log line not marked: %q", line)
		}
	}
}

func TestLocalCommandFromSafePathOnly(t *testing.T) {
	dir := writeFiles(t, map[string]string{})
	if err := os.WriteFile(dir+"/tender-evil-tool", []byte("#!/bin/sh\necho CANARY\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	l, _ := newTestLocal(t)
	_, err := l.Run(context.Background(), localSpec(t, "tender-evil-tool"))
	if err == nil || !strings.Contains(err.Error(), "not in "+SafePath) {
		t.Errorf("a command found only on the grader's PATH ran: err = %v", err)
	}
}

func TestLocalLeavesNoDirectoryAndCloseRetriesLeftovers(t *testing.T) {
	l, _ := newTestLocal(t)
	l.TempDir = t.TempDir()
	spec := localSpec(t, "sh", "-c", `mkdir -p sub/deep && touch sub/deep/f && chmod 0 sub/deep sub`)
	if _, err := l.Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(l.TempDir); len(left) != 0 {
		t.Errorf("Run left %d directories in %s", len(left), l.TempDir)
	}
	// A directory Run could not remove is kept for Close, which tries again.
	stuck := writeFiles(t, map[string]string{"a/b": "x"})
	l.leftover = map[string]bool{stuck: true}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stuck); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", stuck, err)
	}
}

func TestLocalFeedsStdin(t *testing.T) {
	l, _ := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", `wc -c; cat`)
	spec.Stdin = []byte("tender configuration\n")
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(res.Stdout.String()) != "21" {
		t.Errorf("stdout %q: want the 21 bytes counted, then EOF", res.Stdout.String())
	}
}

// TestLocalSetupAndPlant: the local backend runs the setup commands, then the plant step with
// its files in {step} and its "stdin" file on its standard input, then the command with the
// standard input the step's output made; the first failing setup command ends the check, and a
// failing step is an ErrStep. (It has no second user: the evaluator's files are the grader's
// user's, as the whole workspace is.)
func TestLocalSetupAndPlant(t *testing.T) {
	l, _ := newTestLocal(t)
	spec := localSpec(t, "sh", "-c", `cat; cat setup-was-here`)
	spec.Setup = [][]string{{"sh", "-c", "echo setup > setup-was-here"}}
	spec.Plant = &Step{Command: []string{"sh", "{step}/step.sh"},
		Files: map[string][]byte{"step.sh": []byte("tr a-z A-Z"), "stdin": []byte("planted")},
		Stdin: func(out []byte) ([]byte, error) { return []byte("<" + string(out) + ">"), nil }}
	res, err := l.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Stdout.String(); got != "<PLANTED>setup\n" || string(res.Plant) != "PLANTED" || !res.Ran() {
		t.Errorf("stdout %q, plant %q, ran %v", got, res.Plant, res.Ran())
	}
	spec.Setup = [][]string{{"sh", "-c", "exit 5"}, {"sh", "-c", "touch second"}}
	res, err = l.Run(context.Background(), spec)
	if err != nil || res.SetupExit != 5 || res.Ran() || res.Stdout.String() != "" {
		t.Errorf("a failing setup: %v, exit %d, stdout %q", err, res.SetupExit, res.Stdout.String())
	}
	spec.Setup = nil
	spec.Plant.Command = []string{"sh", "-c", "exit 3"}
	if _, err := l.Run(context.Background(), spec); !errors.Is(err, ErrStep) {
		t.Errorf("a failing step: %v, want ErrStep", err)
	}
}
