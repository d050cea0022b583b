// Package clitest holds what the two test packages of the tender program share: the unit tests
// of internal/cli, which need no Docker engine, and the end-to-end tests of integration/cli,
// which do. It writes fixtures, clones the demo repository, builds the binary, plays the
// Actions runner and sets up the txtar scripts. It never imports internal/cli (whose own tests
// import it): a helper that runs the program is handed the entry point, cli.Main.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
)

// Entry is the program's entry point, cli.Main: it runs one command and returns its exit code.
type Entry func(ctx context.Context, version string, args, environ []string, stdin io.Reader,
	stdout, stderr io.Writer) int

// DemoBase is the base commit of the demo suite's pairs (fixtures/demo).
const DemoBase = "5dc05fd562f9d9f35bfb9d1d99baac8ce6ebb568"

// Must fails the test on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the file's content, failing the test if it cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WriteFile writes content to path, making its directory first.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	Must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	Must(t, os.WriteFile(path, []byte(content), 0o644))
}

// WriteFiles writes each file (a slash-separated name under root) with its content.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		WriteFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
}

// WriteJSONFile writes v as indented JSON.
func WriteJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	Must(t, err)
	WriteFile(t, path, string(b))
}

// WriteJSONL writes records as JSON lines, as SWE-bench's instance and prediction files are.
func WriteJSONL(t testing.TB, path string, records []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		line, err := json.Marshal(r)
		Must(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	WriteFile(t, path, b.String())
}

// ReadResults reads a bundle's results.json.
func ReadResults(t testing.TB, dir string) report.Results {
	t.Helper()
	r, err := report.ReadResultsJSON(dir)
	Must(t, err)
	return r
}

// BuildTender builds the real binary from the module at root, so a test can run it as
// another user or send it real signals.
func BuildTender(t testing.TB, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tender")
	if out, err := exec.Command("go", "build", "-o", bin, root).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// DemoClone makes a local clone of the demo repository (root/fixtures/demo) from its vendored
// stream, checked out at DemoBase, as an operator's checkout would be.
func DemoClone(t testing.TB, root string) string {
	t.Helper()
	dir := t.TempDir()
	stream, err := os.Open(filepath.Join(root, "fixtures", "demo", "repos", "calc.fi"))
	Must(t, err)
	defer stream.Close()
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"init", "-q"}, {"fast-import", "--quiet"}, {"checkout", "-q", DemoBase}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if args[0] == "fast-import" {
			cmd.Stdin = stream
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// Run runs one command through entry (cli.Main) with PATH alone as its environment (and the
// variables of env), and returns its stdout, stderr and exit code.
func Run(entry Entry, env []string, args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	environ := append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	code := entry(context.Background(), "dev", args, environ, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}
