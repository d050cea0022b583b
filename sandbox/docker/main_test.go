package docker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// The engine tests share one client and the built-in pytest image, built offline on first
// use. Docker missing is a failure, never a skip.
var (
	engine      *Backend
	testImageID string
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperRoleEnv); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(mainWithEngine(m))
}

func mainWithEngine(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	d, err := New(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the sandbox tests need a running Docker engine: %v\n", err)
		return 1
	}
	defer d.Close(ctx)
	id, err := d.EnsureImage(ctx, sandbox.ImagePytest, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: verifier image: %v\n", err)
		return 1
	}
	engine, testImageID = d, id
	return m.Run()
}
