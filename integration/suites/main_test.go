package suites

import (
	"context"
	"os"
	"testing"

	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/sandbox"
)

// repoRoot is the module root, seen from this package's directory (tests run there).
const repoRoot = "../.."

// TestMain ensures the pytest verifier image before any test runs.
func TestMain(m *testing.M) {
	d := enginetest.Start("integration/suites", sandbox.ImagePytest)
	if d == nil {
		os.Exit(1)
	}
	d.Close(context.Background())
	os.Exit(m.Run())
}

// runTender runs one command through cli.Main with PATH alone as its environment.
func runTender(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Run(cli.Main, nil, args...)
}
