package cli

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// goModule makes a small Go module with a bug in Add, vendors it as a fast-export stream in a
// new suite directory with a fixing and a wrong patch, and writes the suite's manifest from
// verifierAndPairs (which gets the base commit).
func goModule(t *testing.T, verifierAndPairs func(base string) string) string {
	t.Helper()
	repo := t.TempDir()
	e2e.GitIn(t, repo, "", "init", "-q")
	clitest.WriteFiles(t, repo, map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.19\n",
		"calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Sub(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\n" +
			"func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\n" +
			"func TestSub(t *testing.T) {\n\tt.Run(\"small\", func(t *testing.T) {\n\t\tif Sub(3, 2) != 1 {\n\t\t\tt.Fatal(\"Sub\")\n\t\t}\n\t})\n}\n",
	})
	e2e.GitIn(t, repo, "", "add", "-A")
	e2e.GitIn(t, repo, "", "commit", "-qm", "base")
	base := strings.TrimSpace(e2e.GitIn(t, repo, "", "rev-parse", "HEAD"))
	suite := t.TempDir()
	clitest.WriteFiles(t, suite, map[string]string{"repos/calc.fi": e2e.GitIn(t, repo, "", "fast-export", "--all")})
	patch := func(body string) string {
		clitest.WriteFiles(t, repo, map[string]string{"calc/calc.go": body})
		d := e2e.GitIn(t, repo, "", "diff")
		e2e.GitIn(t, repo, "", "checkout", "-q", "--", ".")
		return d
	}
	clitest.WriteFiles(t, suite, map[string]string{
		"issue.md": "Add subtracts.\n",
		"fix.diff": patch(
			"package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n",
		),
		"bad.diff": patch(
			"package calc\n\nfunc Add(a, b int) int { return a * b }\n\nfunc Sub(a, b int) int { return a - b }\n",
		),
		"tender.yaml": "name: go-demo\nversion: \"1\"\nrepositories:\n  calc:\n    fast_export: repos/calc.fi\n" + verifierAndPairs(
			base,
		),
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
	results, _ := e2e.GradeOK(t, suite)
	for _, r := range results {
		if r.ID == "bad" &&
			(len(r.Checks) == 0 || r.Checks[0].Tests["example.com/calc/calc.TestAdd"] != report.TestFailed) {
			t.Errorf("bad: TestAdd should be reported failed: %+v", r.Checks)
		}
		if r.ID == "fix" &&
			(len(r.Checks) != 2 || r.Checks[1].Tests["example.com/calc/calc.TestSub/small"] != report.TestPassed) {
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
	results, _ := e2e.GradeOK(t, suite)
	for _, r := range results {
		if r.ID == "bad" &&
			(len(r.Checks) == 0 || r.Checks[0].Tests["example.com/calc/calc::TestAdd"] != report.TestFailed) {
			t.Errorf("bad: TestAdd should be reported failed: %+v", r.Checks)
		}
		if r.ID == "fix" && r.Verdict != report.Resolved {
			t.Errorf("fix: %s %+v", r.Verdict, r.Reasons)
		}
	}
}
