package envs

import (
	"context"
	"os"
	"testing"

	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/sandbox"
)

// TestMain ensures both verifier images before any test runs.
func TestMain(m *testing.M) {
	d := enginetest.Start("integration/envs", sandbox.ImagePytest, sandbox.ImageGo)
	if d == nil {
		os.Exit(1)
	}
	d.Close(context.Background())
	os.Exit(m.Run())
}
