package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
)

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

// goModule makes a small Go module with a bug in Add, vendors it as a fast-export stream in a
// new suite directory with a fixing and a wrong patch, and writes the suite's manifest from
// verifierAndPairs (which gets the base commit).
func goModule(t *testing.T, verifierAndPairs func(base string) string) string {
	t.Helper()
	repo := t.TempDir()
	gitIn(t, repo, "", "init", "-q")
	writeFiles(t, repo, map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.19\n",
		"calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Sub(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\n" +
			"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\n" +
			"func TestSub(t *testing.T) {\n\tt.Run(\"small\", func(t *testing.T) {\n\t\tif Sub(3, 2) != 1 {\n\t\t\tt.Fatal(\"Sub\")\n\t\t}\n\t})\n}\n",
	})
	gitIn(t, repo, "", "add", "-A")
	gitIn(t, repo, "", "commit", "-qm", "base")
	base := strings.TrimSpace(gitIn(t, repo, "", "rev-parse", "HEAD"))
	suite := t.TempDir()
	writeFiles(t, suite, map[string]string{"repos/calc.fi": gitIn(t, repo, "", "fast-export", "--all")})
	patch := func(body string) string {
		writeFiles(t, repo, map[string]string{"calc/calc.go": body})
		d := gitIn(t, repo, "", "diff")
		gitIn(t, repo, "", "checkout", "-q", "--", ".")
		return d
	}
	writeFiles(t, suite, map[string]string{
		"issue.md":    "Add subtracts.\n",
		"fix.diff":    patch("package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"),
		"bad.diff":    patch("package calc\n\nfunc Add(a, b int) int { return a * b }\n\nfunc Sub(a, b int) int { return a - b }\n"),
		"tender.yaml": "name: go-demo\nversion: \"1\"\nrepositories:\n  calc:\n    fast_export: repos/calc.fi\n" + verifierAndPairs(base),
	})
	return suite
}

// goPairs is the fixing and the wrong pair of the Go module, with IDs joined by sep ("." for
// the go runner's Go IDs, "::" for classname::name).
func goPairs(base, sep string) string {
	id := func(name string) string { return `"example.com/calc/calc` + sep + name + `"` }
	return `pairs:
  - id: fix
    repository: calc
    base_commit: ` + base + `
    issue: issue.md
    patch: fix.diff
    fail_to_pass: [` + id("TestAdd") + `]
    pass_to_pass: [` + id("TestSub/small") + `]
    expect: resolved
  - id: bad
    repository: calc
    base_commit: ` + base + `
    issue: issue.md
    patch: bad.diff
    fail_to_pass: [` + id("TestAdd") + `]
    expect: unresolved
`
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

// TestGoRunnerEndToEnd grades a small Go module with runner: go in the offline Go verifier
// image: go test -json inside, converted to JUnit and reconciled on the host.
func TestGoRunnerEndToEnd(t *testing.T) {
	suite := goModule(t, func(base string) string {
		return `verifier:
  runner: go
  image: tender-verifier/go
  timeout: 300s
  memory: 2GiB
  disk: 512MiB
` + goPairs(base, ".")
	})
	results, _ := gradeOK(t, suite)
	for _, r := range results {
		if r.ID == "bad" && (len(r.Checks) == 0 || r.Checks[0].Tests["example.com/calc/calc.TestAdd"] != report.TestFailed) {
			t.Errorf("bad: TestAdd should be reported failed: %+v", r.Checks)
		}
		if r.ID == "fix" && (len(r.Checks) != 2 || r.Checks[1].Tests["example.com/calc/calc.TestSub/small"] != report.TestPassed) {
			t.Errorf("fix: the subtest should be reported passed: %+v", r.Checks)
		}
	}
}

// TestCommandRunnerGotestsum grades with runner: command, running gotestsum inside the Go
// image: a real gotestsum JUnit report, written to the path Tender gives, reconciled with
// classname::name IDs.
func TestCommandRunnerGotestsum(t *testing.T) {
	suite := goModule(t, func(base string) string {
		return `verifier:
  runner: command
  image: tender-verifier/go
  command: ["gotestsum", "--junitfile", "{junit}", "--format", "standard-verbose", "--", "-count=1", "./..."]
  timeout: 300s
  memory: 2GiB
  disk: 512MiB
` + goPairs(base, "::")
	})
	results, _ := gradeOK(t, suite)
	for _, r := range results {
		if r.ID == "bad" && (len(r.Checks) == 0 || r.Checks[0].Tests["example.com/calc/calc::TestAdd"] != report.TestFailed) {
			t.Errorf("bad: TestAdd should be reported failed: %+v", r.Checks)
		}
		if r.ID == "fix" && r.Verdict != report.Resolved {
			t.Errorf("fix: %s %+v", r.Verdict, r.Reasons)
		}
	}
}
