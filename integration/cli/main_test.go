package cli

import (
	"context"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/sandbox"
)

// repoRoot is the module root, seen from this package's directory (tests run there).
const repoRoot = "../.."

// TestMain lets the txtar scripts run the real tender binary: the test binary re-executes
// itself as "tender". Before any test runs, it ensures both verifier images.
func TestMain(m *testing.M) {
	testscript.Main(withImages{m}, clitest.Program(cli.Main))
}

type withImages struct{ m *testing.M }

func (w withImages) Run() int {
	d := enginetest.Start("integration/cli", sandbox.ImagePytest, sandbox.ImageGo)
	if d == nil {
		return 1
	}
	d.Close(context.Background())
	return w.m.Run()
}

// TestScripts runs testdata/script/*.txtar end to end: the real binary on real fixture
// suites, with real git and the real Docker engine.
func TestScripts(t *testing.T) {
	testscript.Run(t, clitest.Scripts(t, "testdata/script", repoRoot))
}
