package realworld

import (
	"testing"

	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/sandbox"
)

// TestMain ensures the verifier images this package grades in before any test runs.
func TestMain(m *testing.M) {
	enginetest.Main(m, "integration/realworld", sandbox.ImagePytest, sandbox.ImageGo)
}
