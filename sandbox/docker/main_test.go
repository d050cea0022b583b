package docker

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

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
	ids, err := ensureImages(ctx, d, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: verifier images: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "FAIL: building them did not finish within %s (half of go test's -timeout: the tests need the rest).\n"+
				"  Build them first (`go run . image build --image tender-verifier/pytest`, then --image tender-verifier/go),\n"+
				"  or give go test a larger -timeout.\n", budget)
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

// ensureImages builds the missing images side by side (each recipe has its own build
// lock, so a build by another process is waited for, not repeated), with each progress line
// prefixed by its image.
func ensureImages(ctx context.Context, d *Backend, progress io.Writer) (map[string]string, error) {
	start := time.Now()
	ids := make(map[string]string, len(testImages))
	var mu sync.Mutex
	var g errgroup.Group
	for _, name := range testImages {
		g.Go(func() error {
			id, err := d.EnsureImage(ctx, name, &linePrefixer{w: progress, prefix: name + ": ", mu: &mu})
			mu.Lock()
			defer mu.Unlock()
			ids[name] = id
			return err
		})
	}
	err := g.Wait()
	if err == nil {
		fmt.Fprintf(progress, "sandbox/docker: images %v ready after %s\n", testImages, time.Since(start).Round(100*time.Millisecond))
	}
	return ids, err
}

// linePrefixer writes complete lines only, each with a prefix, so two builds' progress can
// share stderr.
type linePrefixer struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
}
