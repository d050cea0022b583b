package docker

import (
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// TestGoImageRunsGoTestOffline runs `go test -json` in the Go verifier image (built by
// TestMain) with no network.
func TestGoImageRunsGoTestOffline(t *testing.T) {
	spec := testSpec(t, "go", "test", "-json", "./...")
	spec.Image = sandbox.ImageGo
	spec.Workspace = writeFiles(t, map[string]string{
		"go.mod":      "module example.test/m\n\ngo 1.19\n",
		"add.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	})
	spec.Limits.Memory, spec.Limits.DiskBytes, spec.Limits.Pids = 1<<30, 512<<20, 256
	spec.Limits.Timeout, spec.Limits.CPUs = 5*time.Minute, 2
	res := runDocker(t, spec)
	out := res.Stdout.String()
	if res.ExitCode != 0 || !strings.Contains(out, `"Action":"pass","Package":"example.test/m","Test":"TestAdd"`) {
		t.Errorf("go test in the verifier: %s\nstdout:\n%s\nstderr:\n%s", res.Outcome(), out, res.Stderr.String())
	}
}
