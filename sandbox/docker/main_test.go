package docker

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// The engine tests share one client and the built-in images, which TestMain builds once,
// before any test runs, when they are missing. An unreachable engine or a failed build fails
// the whole package: it is never a skip.
var (
	engine      *Backend
	testImageID string // of sandbox.ImagePytest
)

// testImages are the images this package's tests run in.
var testImages = []string{sandbox.ImagePytest, sandbox.ImageGo}

func TestMain(m *testing.M) {
	if role := os.Getenv(helperRoleEnv); role != "" {
		os.Exit(runHelper(role))
	}
	os.Exit(mainWithEngine(m))
}

func mainWithEngine(m *testing.M) int {
	flag.Parse()
	pctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := New(pctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the sandbox/docker tests need a running Docker engine: %v\n", err)
		return 1
	}
	defer d.Close(context.Background())
	budget := imageBudget()
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	ids, err := d.EnsureImages(ctx, testImages, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: verifier images: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintf(
				os.Stderr,
				"FAIL: building them did not finish within %s (half of go test's -timeout: the tests need the rest).\n"+
					"  Build them first (`go run . image build --image tender-verifier/pytest`, then --image tender-verifier/go),\n"+
					"  or give go test a larger -timeout.\n",
				budget,
			)
		}
		return 1
	}
	engine, testImageID = d, ids[sandbox.ImagePytest]
	return m.Run()
}

// imageBudget bounds building the images to half of go test's -timeout. The testing
// package's own alarm starts only when the tests do, but go test kills the whole binary a
// minute after -timeout, so the build and the tests share it.
func imageBudget() time.Duration {
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			return d / 2
		}
	}
	return time.Hour
}
