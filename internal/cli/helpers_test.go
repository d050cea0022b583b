package cli

// Helpers shared by the CLI's tests. Each is defined here once.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// repoRoot is the module root, seen from this package's directory (tests run there).
const repoRoot = "../.."

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, path, string(b))
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func actionsEnv(apiURL string) map[string]string {
	return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_API_URL": apiURL, "GITHUB_TOKEN": pubToken,
		"GITHUB_REPOSITORY": "octo/grader", "GITHUB_SHA": strings.Repeat("a", 40), "GITHUB_RUN_ID": "4242",
		"GITHUB_SERVER_URL": "https://github.example.test"}
}

// copyDir copies a fixture suite so a test can break it without touching the tree.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func readResults(t *testing.T, dir string) report.Results {
	t.Helper()
	r, err := report.ReadResultsJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// buildTender builds the real binary, so a test can send it real signals.
func buildTender(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tender")
	if out, err := exec.Command("go", "build", "-o", bin, repoRoot).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func containersOf(t *testing.T, pid int) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=tender.pid="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// gradeOK grades a suite into a new bundle, showing the verifier logs if the exit code is not
// 0. It returns the results and the bundle directory.
func gradeOK(t *testing.T, suite string, flags ...string) ([]report.PairResult, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runTender(t, append([]string{"grade", suite, "--out", out}, flags...)...)
	if code != exitOK {
		logs, _ := filepath.Glob(filepath.Join(out, "pairs", "*", "*.log"))
		for _, l := range logs {
			t.Logf("%s:\n%s", l, readFile(t, l))
		}
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return results, out
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitIn runs git for a test's own scratch repository (never for Tender's work).
func gitIn(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// demoClone makes a local clone of the demo repository from its vendored stream, as an
// operator's checkout would be.
func demoClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stream, err := os.Open(repoRoot + "/fixtures/demo/repos/calc.fi")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"init", "-q"}, {"fast-import", "--quiet"}, {"checkout", "-q", demoBase}} {
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

func writeJSONL(t *testing.T, path string, records []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

const demoBase = "5dc05fd562f9d9f35bfb9d1d99baac8ce6ebb568"

func runTender(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx := context.Background()
	err := run(ctx, "dev", args, []string{"PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		stderr.WriteString("tender: " + err.Error() + "\n")
	}
	return stdout.String(), stderr.String(), exitCode(ctx, err)
}

// readSuiteDoc reads a suite's tender.yaml, so a test can rewrite its pairs.
func readSuiteDoc(t *testing.T, suiteDir string) suite.SuiteDoc {
	t.Helper()
	var doc suite.SuiteDoc
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(suiteDir, "tender.yaml"))), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func writeSuiteDoc(t *testing.T, suiteDir string, doc suite.SuiteDoc) {
	t.Helper()
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "tender.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
