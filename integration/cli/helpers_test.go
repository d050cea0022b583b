package cli

// Helpers of the end-to-end tests. Those the engine-free tests of internal/cli use too are in
// internal/clitest.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// runTender runs one command through cli.Main with PATH alone as its environment (and the
// variables of env), and returns its stdout, stderr and exit code.
func runTender(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runTenderEnv(t, nil, args...)
}

func runTenderEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return clitest.Run(cli.Main, env, args...)
}

// gradeOK grades a suite into a new bundle, showing the verifier logs if the exit code is not
// 0. It returns the results and the bundle directory.
func gradeOK(t *testing.T, suite string, flags ...string) ([]report.PairResult, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runTender(t, append([]string{"grade", suite, "--out", out}, flags...)...)
	if code != cli.ExitOK {
		logs, _ := filepath.Glob(filepath.Join(out, "pairs", "*", "*.log"))
		for _, l := range logs {
			t.Logf("%s:\n%s", l, clitest.ReadFile(t, l))
		}
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	results, err := report.ReadResults(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return results, out
}

// copyDir copies a fixture suite so a test can break it without touching the tree.
func copyDir(t testing.TB, src string) string {
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

// containersOf lists the verifier containers of the tender process pid.
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

// readSuiteDoc reads a suite's tender.yaml, so a test can rewrite its pairs.
func readSuiteDoc(t testing.TB, suiteDir string) suite.SuiteDoc {
	t.Helper()
	var doc suite.SuiteDoc
	if err := yaml.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(suiteDir, "tender.yaml"))), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func writeSuiteDoc(t testing.TB, suiteDir string, doc suite.SuiteDoc) {
	t.Helper()
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "tender.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
