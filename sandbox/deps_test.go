package sandbox

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// engineSDK reports whether an import path belongs to the Docker SDK: the moby client and API
// modules, or anything under github.com/docker/ (the frozen SDK path and the helpers it brings).
func engineSDK(path string) bool {
	return strings.HasPrefix(path, "github.com/moby/moby/") || strings.HasPrefix(path, "github.com/docker/")
}

// TestEngineFreePackagesDoNotLinkTheDockerSDK keeps the Docker SDK inside sandbox/docker: the
// grader holds a Backend and must not carry the engine client with it.
func TestEngineFreePackagesDoNotLinkTheDockerSDK(t *testing.T) {
	for _, pkg := range []string{
		"github.com/tender-grader/tender/sandbox",
		"github.com/tender-grader/tender/sandbox/netproxy",
		"github.com/tender-grader/tender/grader",
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var bad []string
		for _, dep := range strings.Fields(string(out)) {
			if engineSDK(dep) || strings.HasSuffix(dep, "/sandbox/docker") {
				bad = append(bad, dep)
			}
		}
		if len(bad) > 0 {
			t.Errorf(
				"%s links %d engine package(s), e.g. %s: engine code belongs in sandbox/docker, behind sandbox.Backend",
				pkg,
				len(bad),
				strings.Join(bad[:min(3, len(bad))], ", "),
			)
		}
	}
}

// TestOnlySandboxDockerImportsTheDockerSDK: of all the module's packages, with their tests, only
// sandbox/docker imports the SDK itself; the rest reach the engine through it.
func TestOnlySandboxDockerImportsTheDockerSDK(t *testing.T) {
	const format = `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`
	out, err := exec.Command("go", "list", "-f", format, "github.com/tender-grader/tender/...").Output()
	if err != nil {
		t.Fatalf("go list github.com/tender-grader/tender/...: %v", err)
	}
	var importers []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 && slices.ContainsFunc(f[1:], engineSDK) {
			importers = append(importers, f[0])
		}
	}
	if want := []string{"github.com/tender-grader/tender/sandbox/docker"}; !slices.Equal(importers, want) {
		t.Errorf("packages importing the Docker SDK: %v; want only %v (put engine calls in sandbox/docker)",
			importers, want)
	}
}
