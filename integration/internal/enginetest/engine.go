// Package enginetest starts every end-to-end test package under integration/: before any test
// runs, it reaches the Docker engine and ensures the verifier images the package grades in,
// building the missing ones side by side, so that no test pays for a build inside its own
// time. It never skips: an unreachable engine or a failed build fails the whole package with
// one line that says what is missing and how to fix it.
package enginetest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox/docker"
)

// Start connects to the engine and ensures images within half of go test's -timeout (go test
// kills the binary at -timeout: the tests need the rest). On failure it writes one line
// starting "FAIL: pkg" to stderr and returns nil; the caller's TestMain then exits 1.
func Start(pkg string, images ...string) *docker.Backend {
	return start(pkg, images, os.Stderr)
}

// Main is the TestMain of a package that needs nothing but the engine and images: it runs the
// package's tests once Start succeeded, and exits 1 when it did not.
func Main(m *testing.M, pkg string, images ...string) {
	d := Start(pkg, images...)
	if d == nil {
		os.Exit(1)
	}
	d.Close(context.Background())
	os.Exit(m.Run())
}

func start(pkg string, images []string, w io.Writer) *docker.Backend {
	if !flag.Parsed() {
		flag.Parse()
	}
	limit := budget()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	d, err := docker.New(ctx)
	if err != nil {
		fmt.Fprintf(w, "FAIL: %s: these end-to-end tests need a running Docker engine: %v\n"+
			"  Start it (`docker info` must answer). The engine-free packages, all but integration/...\n"+
			"  and sandbox/docker, need none.\n", pkg, err)
		return nil
	}
	if _, err := d.EnsureImages(ctx, images, w); err != nil {
		d.Close(context.Background())
		fmt.Fprintf(w, "FAIL: %s: verifier images %v (within %s, half of go test's -timeout): %v\n"+
			"  Build them first (`go run . image build --image NAME`), or give go test a larger -timeout.\n",
			pkg, images, limit, err)
		return nil
	}
	return d
}

// budget is half of go test's -timeout, or an hour without one.
func budget() time.Duration {
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			return d / 2
		}
	}
	return time.Hour
}
