package docker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tender-grader/tender/sandbox"
)

// fakeEngine answers the Engine API on a unix socket: pings succeed, every other request
// gets a 500, and is recorded. It stands for an engine that is up but failing.
type fakeEngine struct {
	mu   sync.Mutex
	seen []string
}

func startFakeEngine(t *testing.T) (*fakeEngine, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEngine{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Write([]byte("OK"))
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message":"the engine is failing"}`))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return f, "unix://" + sock
}

// cancelOn cancels a context when a progress line holds a word: a build that must not start
// stops at once if it does.
type cancelOn struct {
	word   string
	cancel context.CancelFunc
	mu     sync.Mutex
	text   strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text.Write(p)
	if strings.Contains(c.text.String(), c.word) {
		c.cancel()
	}
	return len(p), nil
}

// TestEnsureImageEngineErrorIsNotMissing: an engine that fails to inspect an image has not said
// the image is missing, so no offline rebuild starts; the error names the engine.
func TestEnsureImageEngineErrorIsNotMissing(t *testing.T) {
	fake, host := startFakeEngine(t)
	t.Setenv("DOCKER_HOST", host)
	d, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer d.cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelOn{word: "building", cancel: cancel}
	_, err = d.EnsureImage(ctx, sandbox.ImagePytest, progress)
	if !errors.Is(err, ErrEngine) || strings.Contains(progress.text.String(), "building") {
		t.Errorf(
			"EnsureImage on a failing engine: %v, progress %q; want ErrEngine and no build",
			err,
			progress.text.String(),
		)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, req := range fake.seen {
		if !strings.HasPrefix(req, "GET ") || !strings.Contains(req, "/images/") {
			t.Errorf("the engine got %s; want image inspections only", req)
		}
	}
}
