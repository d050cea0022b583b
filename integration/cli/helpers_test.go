package cli

// Helpers of the end-to-end tests. Those the engine-free tests of internal/cli use too are in
// internal/clitest.

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// containersOf lists the verifier containers of the tender process pid.
func containersOf(t *testing.T, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=tender.pid="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}
