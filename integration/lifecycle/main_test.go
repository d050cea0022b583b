package lifecycle

import (
	"context"
	"os"
	"testing"

	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/sandbox"
)

// TestMain ensures the pytest verifier image before any test runs.
func TestMain(m *testing.M) {
	d := enginetest.Start("integration/lifecycle", sandbox.ImagePytest)
	if d == nil {
		os.Exit(1)
	}
	d.Close(context.Background())
	os.Exit(m.Run())
}
