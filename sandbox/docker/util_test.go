package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/sandbox"
)

// testRunID is unique per test, so assertions about "no container of the run" are exact.
func testRunID(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return fmt.Sprintf("test-%s-%s", strings.ToLower(name), hex.EncodeToString(b[:]))
}

// writeFiles makes a directory holding files (path -> content).
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testSpec is a small, tightly limited check in the pytest image.
func testSpec(t testing.TB, command ...string) sandbox.Spec {
	runID := testRunID(t)
	t.Cleanup(func() { removeRun(runID) })
	return sandbox.Spec{
		RunID:     runID,
		Name:      t.Name(),
		Image:     sandbox.ImagePytest,
		Workspace: writeFiles(t, map[string]string{"README": "workspace\n"}),
		Command:   command,
		Limits: sandbox.Limits{
			Timeout: 2 * time.Minute, CPUs: 1, Memory: 256 << 20, Pids: 128,
			DiskBytes: 32 << 20, OutputBytes: 64 << 10,
		},
	}
}

func runDocker(t testing.TB, spec sandbox.Spec) *sandbox.Result {
	t.Helper()
	res, err := engine.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%s): %v", spec.Name, err)
	}
	assertRunGone(t, spec.RunID)
	return res
}

// assertRunGone checks that no container of runID is left on the engine.
func assertRunGone(t testing.TB, runID string) {
	t.Helper()
	left, err := engine.Containers(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("containers of run %s left behind: %v", runID, left)
	}
}

// removeRun clears whatever a test of runID left behind.
func removeRun(runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = engine.removeLabelled(ctx, LabelRun+"="+runID)
}

func sh(script string) []string { return []string{"sh", "-c", script} }
