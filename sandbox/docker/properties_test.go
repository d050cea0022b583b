package docker

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// The property table of issue 4: each row plants its attack in a real container and checks
// what must hold. The rows that need a second process (SIGINT, SIGKILL) are in
// signals_test.go.

func TestPropertyNoNetwork(t *testing.T) {
	// A listener on the host's loopback: the verifier must not reach it. Only 127.0.0.1 is
	// ever contacted.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`import os, socket
print("ifaces=" + ",".join(sorted(os.listdir("/sys/class/net"))))
s = socket.socket(); s.settimeout(3)
try:
    s.connect(("127.0.0.1", %d)); print("connect=CANARY-CONNECTED")
except OSError as e:
    print("connect=failed", e.errno)
`, port)
	res := runDocker(t, testSpec(t, "python3", "-c", script))
	out := res.Stdout.String()
	if !strings.Contains(out, "ifaces=lo\n") {
		t.Errorf("interfaces inside the verifier: want only lo, got %q (stderr %q)", out, res.Stderr.String())
	}
	if !strings.Contains(out, "connect=failed") || strings.Contains(out, "CANARY") {
		t.Errorf("connect to the host's loopback port %d did not fail: %q", port, out)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("host listener accepted %d connections from the verifier", n)
	}
}

func TestPropertyReadOnlyRoot(t *testing.T) {
	res := runDocker(t, testSpec(t, sh(`
for p in /usr/tender-canary /etc/tender-canary /tender-canary /bin/tender-canary; do
  if echo planted > "$p"; then echo "WROTE $p"; fi
done
for p in /usr/tender-canary /etc/tender-canary /tender-canary /bin/tender-canary; do
  test -e "$p" && echo "CANARY PRESENT $p"
done
exit 0`)...))
	if out := res.Stdout.String(); strings.Contains(out, "WROTE") || strings.Contains(out, "CANARY") {
		t.Errorf("write to the root filesystem succeeded: %q", out)
	}
	if n := strings.Count(res.Stderr.String(), "Read-only file system"); n != 4 {
		t.Errorf("want 4 read-only errors, got %d: %q", n, res.Stderr.String())
	}
}

func TestPropertyUnprivileged(t *testing.T) {
	res := runDocker(
		t,
		testSpec(t, sh(`id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status`)...),
	)
	got := strings.Fields(res.Stdout.String())
	want := []string{"65532", "65532", "CapPrm:", "0000000000000000", "CapEff:", "0000000000000000",
		"CapBnd:", sandbox.VerifierBoundingCaps, "NoNewPrivs:", "1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("identity inside the verifier:\n got %q\nwant %q", got, want)
	}
}

func TestPropertyForkBombContained(t *testing.T) {
	spec := testSpec(t, sh(`f() { f | f & }; f; sleep 2; echo bomb-done`)...)
	spec.Limits.Pids, spec.Limits.Timeout = 64, 60*time.Second
	start := time.Now()
	res := runDocker(t, spec)
	t.Logf("fork bomb: outcome %s after %s, pids limit hit %v, stderr total %d bytes",
		res.Outcome(), time.Since(start).Round(time.Millisecond), res.PidsLimitHit, res.Stderr.Total)
	if !res.PidsLimitHit {
		t.Errorf(
			"fork bomb was not reported: PidsLimitHit is false (stderr head %q)",
			res.Stderr.Head[:min(200, len(res.Stderr.Head))],
		)
	}
	if !strings.Contains(res.Stderr.String(), "Cannot fork") {
		t.Errorf("want forks refused inside the verifier, stderr %q", res.Stderr.String())
	}
	if int64(len(res.Stderr.Head)+len(res.Stderr.Tail)) > spec.Limits.OutputBytes {
		t.Errorf("stderr capture exceeds its cap")
	}
}

func TestPropertyEndlessForkBombRemoved(t *testing.T) {
	// A bomb that keeps every pid taken after its first process died: the check ends, the
	// limit is reported (from the engine's pids count when no read-back process can start),
	// and removing the container ends the bomb.
	spec := testSpec(t, sh(`f() { while :; do f 2>/dev/null & done; }; f`)...)
	spec.Limits.Pids, spec.Limits.Timeout = 48, 20*time.Second
	start := time.Now()
	res := runDocker(t, spec) // asserts the container is gone
	took := time.Since(start)
	t.Logf(
		"endless fork bomb: outcome %s, wall %s, whole run %s, pids limit hit %v",
		res.Outcome(),
		res.Wall.Round(time.Millisecond),
		took.Round(time.Millisecond),
		res.PidsLimitHit,
	)
	if res.ExitCode == 0 || !res.PidsLimitHit {
		t.Errorf(
			"outcome %s, PidsLimitHit %v; want a failure with the pids limit reported",
			res.Outcome(),
			res.PidsLimitHit,
		)
	}
	if took > spec.Limits.Timeout+30*time.Second {
		t.Errorf("the bomb held the grader for %s", took)
	}
}

func TestPropertyMemoryBalloonIsOOM(t *testing.T) {
	// The attack first writes a passing report, then balloons: the check must still be oom.
	script := `
import pathlib, os
pathlib.Path(os.environ["TENDER_JUNIT"]).write_text('<testsuite tests="1"><testcase name="t"/></testsuite>')
hog = []
while True:
    hog.append(b"x" * (8 << 20))
`
	spec := testSpec(t, "python3", "-c", script)
	spec.Limits.Memory = 128 << 20
	res := runDocker(t, spec)
	t.Logf("balloon: outcome %s exit %d peak %d MiB", res.Outcome(), res.ExitCode, res.PeakMemory>>20)
	if !res.OOMKilled || res.Outcome() != "oom" {
		t.Errorf(
			"memory balloon: outcome %s (OOMKilled %v, exit %d), want oom",
			res.Outcome(),
			res.OOMKilled,
			res.ExitCode,
		)
	}
	if res.ExitCode == 0 {
		t.Errorf("memory balloon exited 0")
	}
	if res.PeakMemory < 100<<20 || res.PeakMemory > spec.Limits.Memory {
		t.Errorf("peak memory %d, want near the 128 MiB limit and never above it", res.PeakMemory)
	}
}

func TestPropertyDiskFillHitsCap(t *testing.T) {
	spec := testSpec(t, sh(`
for d in /workspace /tender /tmp; do
  head -c 100000000 /dev/zero > $d/fill || echo "fill $d failed"
  echo "$d $(wc -c < $d/fill)"
done`)...)
	spec.Limits.DiskBytes = 8 << 20
	res := runDocker(t, spec)
	out := res.Stdout.String()
	t.Logf("disk fill: %q, DiskFull %v", out, res.DiskFull)
	for _, d := range []string{"/workspace", "/tender", "/tmp"} {
		if !strings.Contains(out, "fill "+d+" failed") {
			t.Errorf("filling %s did not fail", d)
		}
		var size int64
		if _, err := fmt.Sscanf(out[strings.Index(out, "\n"+d+" ")+1:], d+" %d", &size); err != nil {
			t.Fatalf("%s: no size reported: %q", d, out)
		}
		if size > 8<<20 || size < 8<<20-64<<10 {
			t.Errorf("%s: fill stopped at %d bytes, want the 8 MiB cap (less what the tree uses)", d, size)
		}
	}
	if !strings.Contains(res.Stderr.String(), "No space left on device") {
		t.Errorf("want ENOSPC, stderr %q", res.Stderr.String())
	}
	if !res.DiskFull {
		t.Errorf("disk fill not reported: DiskFull is false")
	}
}

func TestPropertyDeadlineKillsAndRemoves(t *testing.T) {
	spec := testSpec(t, "sleep", "infinity")
	spec.Limits.Timeout = 3 * time.Second
	grace := 10 * time.Second
	start := time.Now()
	res := runDocker(t, spec) // also asserts no container of the run is left
	took := time.Since(start)
	t.Logf(
		"sleep infinity: outcome %s, wall %s, whole run %s",
		res.Outcome(),
		res.Wall.Round(time.Millisecond),
		took.Round(time.Millisecond),
	)
	if !res.TimedOut || res.Outcome() != "timeout" {
		t.Errorf("outcome %s, want timeout", res.Outcome())
	}
	if res.Wall < spec.Limits.Timeout || res.Wall > spec.Limits.Timeout+grace {
		t.Errorf("killed after %s, want between %s and %s", res.Wall, spec.Limits.Timeout, spec.Limits.Timeout+grace)
	}
	if res.PeakMemory <= 0 {
		t.Errorf("peak memory of a timed-out check not reported")
	}
	if took > spec.Limits.Timeout+grace+10*time.Second {
		t.Errorf("Run took %s with a %s deadline", took, spec.Limits.Timeout)
	}
}

func TestPropertyHugeStdoutBounded(t *testing.T) {
	const gig = 1 << 30
	spec := testSpec(t, sh(`yes tender-output | head -c 1073741824; echo done >&2`)...)
	spec.Limits.OutputBytes = 1 << 20
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	res := runDocker(t, spec)
	close(stop)
	<-sampled
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("1 GiB stdout: total %d, kept %d+%d, wall %s, grader heap grew %d MiB at peak",
		res.Stdout.Total, len(res.Stdout.Head), len(res.Stdout.Tail), res.Wall.Round(time.Millisecond), grew>>20)
	if res.Stdout.Total != gig || !res.Stdout.Truncated {
		t.Errorf("stdout total %d truncated %v, want %d and true", res.Stdout.Total, res.Stdout.Truncated, gig)
	}
	if kept := len(res.Stdout.Head) + len(res.Stdout.Tail); int64(kept) > spec.Limits.OutputBytes {
		t.Errorf("kept %d bytes, cap %d", kept, spec.Limits.OutputBytes)
	}
	if want := streamSlice("tender-output\n", 0, len(res.Stdout.Head)); string(res.Stdout.Head) != want {
		t.Errorf("head is not the start of the stream")
	}
	if want := streamSlice("tender-output\n", gig-len(res.Stdout.Tail), gig); string(res.Stdout.Tail) != want {
		t.Errorf("tail is not the end of the stream")
	}
	if grew > 48<<20 {
		t.Errorf("grader heap grew by %d MiB while streaming 1 GiB", grew>>20)
	}
	if res.TimedOut || res.ExitCode != 0 {
		t.Errorf("outcome %s", res.Outcome())
	}
}

func TestPropertyHostEnvironmentAbsent(t *testing.T) {
	canary := "tender-canary-" + testRunID(t)
	t.Setenv("TENDER_TEST_CANARY", canary)
	t.Setenv("GITHUB_TOKEN", canary)
	allowed, err := sandbox.AllowEnv([]string{"SUITE_NAMED"}, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(t, sh(`env; echo ==; tr '\0' '\n' < /proc/1/environ`)...)
	spec.Env = allowed
	spec.Env["SUITE_VAR"] = "suite-value"
	res := runDocker(t, spec)
	out := res.Stdout.String()
	if strings.Contains(out, canary) {
		t.Errorf("host canary reached the verifier:\n%s", out)
	}
	for _, want := range []string{"SUITE_VAR=suite-value", "TENDER_JUNIT=/tender/out/junit.xml",
		"TENDER_ASSETS=/tender/assets", "TENDER_WORKSPACE=/workspace", "TENDER_DIR=/tender", "PATH=" + sandbox.SafePath} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %s in the verifier environment:\n%s", want, out)
		}
	}
}

func TestDockerSurvivesOwnCancellation(t *testing.T) {
	// In-process variant of the SIGINT row: a cancelled context still removes the container.
	spec := testSpec(t, "sleep", "infinity")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForContainer(t, spec.RunID, 30*time.Second)
		cancel()
	}()
	_, err := engine.Run(ctx, spec)
	if err == nil {
		t.Fatal("cancelled Run returned no error")
	}
	assertRunGone(t, spec.RunID)
}

// waitForContainer waits until a container of runID is running, then a moment more so the
// command has started.
func waitForContainer(t testing.TB, runID string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if names, err := engine.Containers(context.Background(), runID); err == nil && len(names) > 0 {
			time.Sleep(time.Second)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no container of run %s appeared within %s", runID, limit)
}

// streamSlice is bytes [from, to) of pattern repeated forever.
func streamSlice(pattern string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteByte(pattern[i%len(pattern)])
	}
	return b.String()
}
