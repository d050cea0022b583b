package enginetest

import (
	"strings"
	"testing"
)

// TestStartFailsLoudlyWithoutAnEngine: with DOCKER_HOST pointing nowhere, Start returns no
// backend and says, on one FAIL line, which package needs the engine and where it looked for it.
func TestStartFailsLoudlyWithoutAnEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	var out strings.Builder
	if d := start("integration/example", []string{"tender-verifier/pytest"}, &out); d != nil {
		t.Fatal("Start returned a backend for an engine that does not exist")
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	want := "FAIL: integration/example: these end-to-end tests need a running Docker engine: "
	if !strings.HasPrefix(first, want) || !strings.Contains(first, "unix:///nonexistent/docker.sock") {
		t.Errorf("first line %q, want it to start %q and name the DOCKER_HOST", first, want)
	}
}
