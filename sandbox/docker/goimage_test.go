package docker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// TestGoImageRunsGoTestOffline builds the Go verifier image when it is missing (about a
// minute on a quiet machine) and runs `go test -json` in it with no network.
func TestGoImageRunsGoTestOffline(t *testing.T) {
	ctx := context.Background()
	if _, err := engine.EnsureImage(ctx, sandbox.ImageGo, testProgress(t)); err != nil {
		t.Fatal(err)
	}
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

// testProgress sends image build progress to the test log when -v is on, else nowhere.
func testProgress(t *testing.T) *os.File {
	if testing.Verbose() {
		return os.Stderr
	}
	return nil
}
