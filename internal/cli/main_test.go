package cli

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tender-grader/tender/internal/clitest"
)

// TestMain lets the txtar scripts run the real tender binary: the test binary re-executes
// itself as "tender". These tests need no Docker engine: the program's end-to-end tests,
// which grade in verifiers, are in integration/cli.
func TestMain(m *testing.M) {
	testscript.Main(m, clitest.Program(Main))
}

// TestScripts runs testdata/script/*.txtar: the real binary's help, usage errors and image
// flags, none of which reaches the engine.
func TestScripts(t *testing.T) {
	testscript.Run(t, clitest.Scripts(t, "testdata/script", repoRoot))
}
