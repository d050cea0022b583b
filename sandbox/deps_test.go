package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineFreePackagesDoNotLinkTheDockerSDK keeps the Docker SDK inside sandbox/docker: the
// grader holds a Backend and must not carry the engine client with it.
func TestEngineFreePackagesDoNotLinkTheDockerSDK(t *testing.T) {
	for _, pkg := range []string{"github.com/tender-grader/tender/sandbox", "github.com/tender-grader/tender/grader"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var bad []string
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/docker/") || strings.HasSuffix(dep, "/sandbox/docker") {
				bad = append(bad, dep)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s links %d engine package(s), e.g. %s: engine code belongs in sandbox/docker, behind sandbox.Backend",
				pkg, len(bad), strings.Join(bad[:min(3, len(bad))], ", "))
		}
	}
}
