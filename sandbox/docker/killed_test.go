package docker

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// TestDockerKilledFromOutside: a verifier that dies of a signal Tender did not send (not its
// deadline, not memory) is Killed: infrastructure, never a failing check. A command that
// kills itself, its process group or the container's own processes from inside is the
// candidate's doing and is not.
func TestDockerKilledFromOutside(t *testing.T) {
	for _, tc := range []struct {
		name    string
		script  string
		outside []string // docker CLI arguments run against the container once the command runs
		killed  bool
		plant   bool // the script is the plant step's, which runs before the command
	}{
		{"docker kill", `exec sleep 120`, []string{"kill"}, true, false},
		{"docker stop", `exec sleep 120`, []string{"stop", "-t", "0"}, true, false},
		{"docker rm -f", `exec sleep 120`, []string{"rm", "-f"}, true, false},
		// Killed while Tender's own step (the planter) runs, before the command: still a kill.
		{"docker kill during the plant step", `exec sleep 120`, []string{"kill"}, true, true},
		{"kills its own process group", `sleep 1; kill -9 0`, nil, false, false},
		{"kills every process it can", `sleep 1; kill -9 -1`, nil, false, false},
		// The container's init is Tender's own user's: the verifier user may not signal it.
		{"signals the container's init", `sleep 1; kill -TERM 1 && sleep 120; exit 0`, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := testSpec(t, sh(tc.script)...)
			if tc.plant {
				spec = testSpec(t, sh("exit 0")...)
				spec.Plant = &sandbox.Step{Command: sh(tc.script), Stdin: func([]byte) ([]byte, error) { return nil, nil }}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tc.outside == nil {
					return
				}
				name := waitForCommand(t, spec.RunID, "sleep 120")
				if out, err := exec.Command("docker", append(tc.outside, name)...).CombinedOutput(); err != nil {
					t.Errorf("docker %v: %v\n%s", tc.outside, err, out)
				}
			}()
			res, err := engine.Run(context.Background(), spec)
			<-done
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			assertRunGone(t, spec.RunID)
			if res.Killed != tc.killed || res.TimedOut || res.OOMKilled {
				t.Errorf("killed %v timed out %v oom %v (exit %d), want killed %v and neither of the others",
					res.Killed, res.TimedOut, res.OOMKilled, res.ExitCode, tc.killed)
			}
		})
	}
}

// waitForCommand waits until a container of runID runs a process whose command line holds
// cmd, and returns the container's name.
func waitForCommand(t *testing.T, runID, cmd string) string {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		names, _ := engine.Containers(context.Background(), runID)
		for _, n := range names {
			if out, err := exec.Command("docker", "top", n).Output(); err == nil && strings.Contains(string(out), cmd) {
				return n
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("no container of run %s ran %q", runID, cmd)
	return ""
}
