package grader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
)

// matrixRow is one pair graded through the fake backend.
type matrixRow struct {
	name string
	pair func(t *testing.T, p *testPair) // changes to the demo's reference fix; nil keeps it
	// target and regression are what the verifier does for each check; nil means the check
	// must never start.
	target, regression verifier
	baseline           verifier // the baseline collection (base + test patch); nil: it must never start
	verdict            report.Verdict
	reasons            []report.Code // the pair's reason codes, in order
	calls              int           // checks started
	more               func(t *testing.T, r report.PairResult)
}

// TestGradeVerdicts is the grader's verdict matrix: every way a pair ends, with real git, real
// patches and real files, and a fake verifier that returns canned results. The rows are the
// pairs of one suite, graded as one batch (one snapshot per repository, as in a real run);
// each row then checks its pair's verdict, reason codes and how many verifiers it started.
func TestGradeVerdicts(t *testing.T) {
	t.Parallel()
	rows := verdictMatrix(t)
	var pairs []testPair
	verifiers := map[string]verifier{}
	for _, tt := range rows {
		p := demoTestPair(t, tt.id())
		p.expect = string(tt.verdict)
		if tt.pair != nil {
			tt.pair(t, &p)
		}
		pairs = append(pairs, p)
		if tt.target != nil {
			verifiers[p.id+"/target"] = tt.target
		}
		if tt.regression != nil {
			verifiers[p.id+"/regression"] = tt.regression
		}
		if tt.baseline != nil {
			verifiers[p.id+"/baseline"] = tt.baseline
		}
	}
	s := writeTestSuite(t, pairs...)
	fake := newFakeBackend(t, verifiers)
	results, err := Grade(context.Background(), s, testOptions(t, fake))
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	for i, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, s.Pairs[i], results[i], fake.callsFor(tt.id()))
		})
	}
}

// id is the row's pair id.
func (tt matrixRow) id() string { return strings.ReplaceAll(tt.name, " ", "-") }

func (tt matrixRow) check(t *testing.T, p *suite.Pair, r report.PairResult, calls []fakeCall) {
	if r.ID != p.ID {
		t.Fatalf("result for %q, want %q", r.ID, p.ID)
	}
	if r.Verdict != tt.verdict {
		t.Errorf("verdict %s, want %s; reasons %+v", r.Verdict, tt.verdict, r.Reasons)
	}
	if diff := cmp.Diff(tt.reasons, reasonCodes(r.Reasons)); diff != "" {
		t.Errorf("reason codes (-want +got):\n%s\nreasons: %+v", diff, r.Reasons)
	}
	if len(calls) != tt.calls {
		t.Errorf("%d verifiers started, want %d", len(calls), tt.calls)
	}
	checkRequiredIDs(t, p, calls)
	if r.ExpectMet == nil || !*r.ExpectMet {
		t.Errorf("expect_met = %v for expect %s and verdict %s", r.ExpectMet, r.Expect, r.Verdict)
	}
	if tt.more != nil {
		tt.more(t, r)
	}
}

// checkRequiredIDs: each verifier was asked for exactly the suite's tests of its check.
func checkRequiredIDs(t *testing.T, p *suite.Pair, calls []fakeCall) {
	t.Helper()
	for _, c := range calls {
		if strings.HasSuffix(c.Spec.Name, "/baseline") {
			continue // collects the test files; it runs no required test
		}
		want := p.FailToPass
		if strings.HasSuffix(c.Spec.Name, "/regression") {
			want = p.PassToPass
		}
		if diff := cmp.Diff(want, c.Proto.Required); diff != "" {
			t.Errorf("%s: required IDs (-suite +asked):\n%s", c.Spec.Name, diff)
		}
	}
}

func testOptions(t *testing.T, b sandbox.Backend) Options {
	return Options{Backend: b, Concurrency: 4, RunID: "grader-test", WorkDir: t.TempDir()}
}

func reasonCodes(rs []report.Reason) []report.Code {
	var out []report.Code
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func verdictMatrix(t *testing.T) []matrixRow {
	gold := demo(t, "gold-fix")
	f2p, p2p := gold.FailToPass, gold.PassToPass
	const hidden = "tests/test_hidden.py"
	return []matrixRow{
		{name: "plain pass is resolved", target: reply(), regression: reply(),
			verdict: report.Resolved, calls: 2, more: func(t *testing.T, r report.PairResult) {
				if got := checkNames(r); !cmp.Equal(got, []string{"target:pass", "regression:pass"}) {
					t.Errorf("checks %v", got)
				}
				if !r.TestedAsSubmitted || r.ExecutedCommit != gold.BaseCommit {
					t.Errorf("tested_as_submitted %v, executed %s", r.TestedAsSubmitted, r.ExecutedCommit)
				}
			}},
		{name: "plain failure is unresolved", pair: withPatch(demoPatch(t, "wrong-fix")),
			target: reply(failing(f2p[0], f2p[2])), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestFailed, report.CodeTestFailed}, calls: 2,
			more: detailHasPrefix("target: ")},
		{name: "a regression failure is unresolved", target: reply(), regression: reply(failing(p2p[1])),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestFailed}, calls: 2, more: detailHasPrefix("regression: ")},
		{
			name:    "no pass_to_pass runs the target check alone",
			pair:    func(_ *testing.T, p *testPair) { p.passToPass = nil },
			target:  reply(),
			verdict: report.Resolved,
			calls:   1,
		},

		// Refused before any verifier starts.
		{
			name:    "empty patch",
			pair:    withPatch(" \n"),
			verdict: report.Unresolved,
			reasons: []report.Code{report.CodeEmptyPatch},
			more: func(t *testing.T, r report.PairResult) {
				if !r.EmptyPatch {
					t.Error("empty_patch flag not set")
				}
			},
		},
		{
			name:    "patch does not apply",
			pair:    withPatch(demoPatch(t, "no-apply")),
			verdict: report.Unresolved,
			reasons: []report.Code{report.CodePatchFailed},
		},
		{
			name:    "patch does not parse",
			pair:    withPatch("this is not a diff\n"),
			verdict: report.Unresolved,
			reasons: []report.Code{report.CodePatchFailed},
		},
		{
			name:    "protected path",
			pair:    withPatch(demoPatch(t, "touches-tender")),
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeProtected},
		},
		{name: "evaluator asset", pair: func(_ *testing.T, p *testPair) {
			p.assets = map[string]string{hidden: "def test_hidden():\n    pass\n"}
			p.patch += newFilePatch(hidden, "def test_hidden():\n    pass\n", "100644")
		}, verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeEvaluator}},
		{name: "evaluator path of the test patch", pair: func(_ *testing.T, p *testPair) {
			p.testPatch += newFilePatch("calc/expected.json", "{}\n", "100644")
			p.patch += newFilePatch("calc/expected.json", "{\"forged\": true}\n", "100644")
		}, verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeEvaluator}},
		// gitsafe.ParsePatch refuses every .git variant before integrity.Scan sees the patch,
		// and says so with its own sentinel error: the pair ends as git_path.
		{name: "git path", pair: withPatch(newFilePatch(".git/hooks/post-checkout", "#!/bin/sh\n", "100755")),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeGitPath}, more: reasonPath(".git/hooks/post-checkout")},
		{
			name:    "shadowing module",
			pair:    func(_ *testing.T, p *testPair) { p.patch += newFilePatch("sitecustomize.py", "import sys\n", "100644") },
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeShadowing},
			more:    reasonPath("sitecustomize.py"),
		},
		{name: "unsafe path", pair: withPatch(newFilePatch("../escape.py", "x = 1\n", "100644")),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeUnsafePath}, more: reasonPath("../escape.py")},
		{name: "symlink mode", pair: withPatch(newFilePatch("calc/escape", "/tmp", "120000")),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeUnsafePath}},
		{name: "oversize patch", pair: withPatch(strings.Repeat("x", suite.MaxPatch+1)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodePatchTooLarge}},
		{name: "test patch fails to apply", pair: func(_ *testing.T, p *testPair) {
			p.testPatch = strings.Replace(p.testPatch, "def test_format_percent():", "def test_format_percentage():", 1)
		}, verdict: report.Error, reasons: []report.Code{report.CodeTestPatchFailed}},
		{
			name:    "test patch does not parse",
			pair:    func(_ *testing.T, p *testPair) { p.testPatch = "not a diff either\n" },
			verdict: report.Error,
			reasons: []report.Code{report.CodeTestPatchInvalid},
		},
		{name: "base commit missing", pair: func(_ *testing.T, p *testPair) { p.base = strings.Repeat("0", 40) },
			verdict: report.Error, reasons: []report.Code{report.CodeBaseMissing}},
		{
			name:    "repository refused",
			pair:    func(_ *testing.T, p *testPair) { p.stream = "../fixtures/attacks/repos/unsafe-stream.fi" },
			verdict: report.Error,
			reasons: []report.Code{report.CodeRepositoryRefused},
		},
		{name: "tree with a symlink", pair: func(_ *testing.T, p *testPair) {
			p.stream, p.base = "../fixtures/attacks/repos/hostile.fi", "3c8f61fce8d64b5afb0009e70fc866bda299e631"
		}, verdict: report.Error, reasons: []report.Code{report.CodeUnsafeTree}},
		{
			name:    "deleted mixed-purpose config",
			pair:    func(t *testing.T, p *testPair) { p.patch += readFixture(t, "attacks/pairs/config-deleted/patch.diff") },
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeConfigUnverifiable},
		},

		// What the verifier ran into.
		{name: "timeout", target: reply(timedOut()), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTimeout, report.CodeReportMissing}, calls: 2,
			more: detailHasPrefix("target: killed after 2m0s")},
		{name: "out of memory", target: reply(oomKilled()), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeOOM, report.CodeReportMissing}, calls: 2},
		{
			name:       "pids limit",
			target:     reply(failing(f2p[1]), result(func(r *sandbox.Result) { r.PidsLimitHit = true })),
			regression: reply(),
			verdict:    report.Unresolved,
			reasons:    []report.Code{report.CodeTestFailed, report.CodePidsLimit},
			calls:      2,
		},
		{
			name:       "pids limit on a passing check explains nothing",
			target:     reply(result(func(r *sandbox.Result) { r.PidsLimitHit = true })),
			regression: reply(),
			verdict:    report.Resolved,
			calls:      2,
			more: func(t *testing.T, r report.PairResult) {
				if got := reasonCodes(r.Checks[0].Reasons); !cmp.Equal(got, []report.Code{report.CodePidsLimit}) {
					t.Errorf("target check reasons %v, want the limit recorded on the check", got)
				}
			},
		},
		{
			name:       "disk full",
			target:     reply(noReport(), result(func(r *sandbox.Result) { r.DiskFull = true })),
			regression: reply(),
			verdict:    report.Unresolved,
			reasons:    []report.Code{report.CodeReportMissing, report.CodeDiskFull},
			calls:      2,
		},
		{
			name:       "report too large",
			target:     reply(noReport(), result(func(r *sandbox.Result) { r.JUnitTooLarge = true })),
			regression: reply(),
			verdict:    report.Unresolved,
			reasons:    []report.Code{report.CodeReportMissing, report.CodeReportTooLarge},
			calls:      2,
		},
		{name: "missing report", target: reply(noReport()), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeReportMissing}, calls: 2},
		{name: "unparsable report", target: reply(rawReport("<testsuite")), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeReportUnparsable}, calls: 2},
		{name: "a failing test is shown at the line of the bootstrap parent and never the report", regression: reply(),
			target: reply(
				failing(f2p[1]),
				reportedLine(7330),
				withControl(func(o *controlOpts) { o.lines = map[string]int{f2p[1]: 12} }),
			),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestFailed}, calls: 2,
			more: func(t *testing.T, r report.PairResult) {
				for _, c := range r.Checks {
					for _, rs := range c.Reasons {
						if rs.Code == report.CodeTestFailed &&
							(rs.Line != 12 || rs.Path != strings.Split(f2p[1], "::")[0]) {
							t.Errorf("reason %+v: want the plan's line 12 in its file", rs)
						}
					}
				}
				if len(r.Reasons) == 0 || r.Reasons[0].Line != 12 {
					t.Errorf("reasons %+v: want the plan's line 12", r.Reasons)
				}
			}},
		{name: "required test reported twice", target: reply(duplicated()), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestDuplicate}, calls: 2},
		{name: "required test skipped", target: reply(withStatus(junit.Skipped, f2p[0])), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestSkipped}, calls: 2},
		{name: "runner usage error", target: reply(noReport(), exitCode(4)), regression: reply(), baseline: collects(0),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeReportMissing, report.CodeExitCodeMismatch}, calls: 3},
		{
			name:       "collection errors exit 2 and fail the check",
			target:     reply(exitCode(2)),
			regression: reply(),
			baseline:   collects(0),
			pair:       ownInstance("tests/data_a.txt"),
			verdict:    report.Unresolved,
			reasons:    []report.Code{report.CodeExitCodeMismatch},
			calls:      3,
		},
		{
			name:     "collection errors on the base too are environment_broken",
			target:   reply(noReport(), exitCode(2)),
			baseline: collects(2),
			pair:     ownInstance("tests/data_b.txt"),
			verdict:  report.Error,
			reasons:  []report.Code{report.CodeEnvironmentBroken},
			calls:    2,
			more: detailHasPrefix(
				"target: the tests cannot be collected on the base commit with the test patch alone (pytest status 2): ModuleNotFoundError: No module named 'wrapt'",
			),
		},

		// Forged reports: integrity violations, and the regression check never starts.
		{name: "mutant reported passed with exit 1", target: reply(sentinelsReported(false, junit.Passed), exitCode(1)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{name: "blanket pass with exit 0", target: reply(sentinelsReported(false, junit.Passed)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{name: "blanket pass with exit 2", target: reply(sentinelsReported(false, junit.Passed), exitCode(2)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{name: "twin failed while its original passed", target: reply(sentinelsReported(true, junit.Failed)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{name: "report of the required tests alone", target: reply(sentinelsDropped(), exitCode(1)),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{name: "exit 0 with a failure", target: reply(exitCode(0)), regression: reply(),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeExitCodeMismatch}, calls: 2},
		{
			name:    "report changed after the test process ended",
			target:  reply(withControl(func(o *controlOpts) { o.endDigest = ptr("0") })),
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeReportForged},
			calls:   1,
		},
		{
			name:    "report written though the bootstrap never ended",
			target:  reply(withControl(func(o *controlOpts) { o.noEnd = true })),
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeReportForged},
			calls:   1,
		},
		{
			name:    "report edited inside the test process",
			target:  reply(withControl(func(o *controlOpts) { o.sawPassed = []string{} })),
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeReportForged},
			calls:   1,
		},
		{name: "report without any bootstrap", target: reply(withControl(func(o *controlOpts) { o.noStart = true })),
			verdict: report.IntegrityViolation, reasons: []report.Code{report.CodeReportForged}, calls: 1},
		{
			name:    "no bootstrap and no report is a broken environment",
			target:  reply(noReport(), exitCode(127), withControl(func(o *controlOpts) { o.noStart = true })),
			verdict: report.Error,
			reasons: []report.Code{report.CodeBootstrap},
			calls:   1,
		},
		{
			name: "tripwire that fails the check",
			target: reply(
				withControl(func(o *controlOpts) { o.hits = []pyboot.Hit{{Kind: "write", What: "report"}} }),
			),
			verdict: report.IntegrityViolation,
			reasons: []report.Code{report.CodeTampering},
			calls:   1,
		},
		{name: "tripwire that is only noted", target: reply(withControl(func(o *controlOpts) {
			o.hits = []pyboot.Hit{{Kind: "note:ctypes", What: "loaded a C library through ctypes"}}
		})), regression: reply(),
			verdict: report.Resolved, reasons: []report.Code{report.CodeTripwire}, calls: 2},
		{
			name:       "forged in the regression check",
			target:     reply(),
			regression: reply(withControl(func(o *controlOpts) { o.endDigest = ptr("0") })),
			verdict:    report.IntegrityViolation,
			reasons:    []report.Code{report.CodeReportForged},
			calls:      2,
			more: func(t *testing.T, r report.PairResult) {
				if len(r.Checks) != 2 || r.Checks[1].Passed || r.Checks[1].Name != "regression" {
					t.Errorf("the forged check is not recorded: %+v", r.Checks)
				}
			},
		},

		// No verdict.
		{name: "verifier infrastructure error", target: fails(errors.New("docker: engine gone")),
			verdict: report.Error, reasons: []report.Code{report.CodeVerifierFailed}, calls: 1},
		{name: "panic in the backend", target: panics("backend bug"),
			verdict: report.Error, reasons: []report.Code{report.CodeInternalPanic}, calls: 1},

		// What reaches the verifier.
		{name: "candidate edit of a test file is undone", pair: withPatch(demoPatch(t, "edits-test")),
			target: inspecting(testFileRestored, reply()), regression: inspecting(testFileRestored, reply()),
			verdict: report.Resolved, reasons: []report.Code{report.CodeEvaluatorReset}, calls: 2, more: func(t *testing.T, r report.PairResult) {
				if r.Reasons[0].Path != "tests/test_formatting.py" {
					t.Errorf("the reset note names %q", r.Reasons[0].Path)
				}
				if r.TestedAsSubmitted {
					t.Error("tested_as_submitted is true although the candidate's test edit was undone")
				}
			}},
		{name: "hidden test output is withheld", pair: func(_ *testing.T, p *testPair) {
			p.assets = map[string]string{hidden: "def test_hidden():\n    assert True\n"}
			p.failToPass = append([]string{hidden + "::test_hidden"}, p.failToPass...)
		}, target: inspecting(assetWritten(hidden), reply(failing(hidden+"::test_hidden"))), regression: inspecting(assetWritten(hidden), reply()),
			verdict: report.Unresolved, reasons: []report.Code{report.CodeTestFailed}, calls: 2,
			more: func(t *testing.T, r report.PairResult) {
				// No runner text reaches a reason, for a hidden test or any other.
				if d := r.Reasons[0].Detail; strings.Contains(d, "assert") {
					t.Errorf("detail %q shows the hidden test's output", d)
				}
			}},
	}
}

// ownInstance makes the pair an instance of its own (one more file in its test patch), so it
// gets its own baseline collection.
func ownInstance(file string) func(*testing.T, *testPair) {
	return func(_ *testing.T, p *testPair) { p.testPatch += newFilePatch(file, "data\n", "100644") }
}

func withPatch(patch string) func(*testing.T, *testPair) {
	return func(_ *testing.T, p *testPair) { p.patch = patch }
}

// newFilePatch is a git diff that creates one file.
func newFilePatch(path, content, mode string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(
		&b,
		"diff --git a/%s b/%s\nnew file mode %s\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n",
		path,
		path,
		mode,
		path,
		len(lines),
	)
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	if !strings.HasSuffix(content, "\n") {
		b.WriteString("\\ No newline at end of file\n")
	}
	return b.String()
}

func readFixture(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../fixtures", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func checkNames(r report.PairResult) []string {
	var out []string
	for _, c := range r.Checks {
		st := "fail"
		if c.Passed {
			st = "pass"
		}
		out = append(out, c.Name+":"+st)
	}
	return out
}

func detailHasPrefix(prefix string) func(*testing.T, report.PairResult) {
	return func(t *testing.T, r report.PairResult) {
		if len(r.Reasons) == 0 || !strings.HasPrefix(r.Reasons[0].Detail, prefix) {
			t.Errorf("first reason %+v does not start with %q", r.Reasons, prefix)
		}
	}
}

func reasonPath(path string) func(*testing.T, report.PairResult) {
	return func(t *testing.T, r report.PairResult) {
		if len(r.Reasons) == 0 || r.Reasons[0].Path != path {
			t.Errorf("reasons %+v, want the first to name %q", r.Reasons, path)
		}
	}
}

// testFileRestored: the verifier sees the base test file with the evaluator's test patch, not
// the candidate's edit of it.
// TestRequiredModulesAreTenders: the planter rewrites the module of every test a check runs, as
// Tender's root user, so each is one of the evaluator's files in the spec even when no restored
// path covers it and the test patch does not touch it; a module the check does not run is the
// verifier user's.
func TestRequiredModulesAreTenders(t *testing.T) {
	s := writeTestSuiteWith(t, func(d *suite.SuiteDoc) { d.RestoredPaths = &[]string{"nothing/**"} },
		demoTestPair(t, "p"))
	look := func(want, not []string) func(c *fakeCall) {
		return func(c *fakeCall) {
			for _, f := range want {
				if !slices.Contains(c.Spec.Evaluator, f) {
					c.errorf("%s: %s is not among the evaluator's files %v", c.Spec.Name, f, c.Spec.Evaluator)
				}
			}
			for _, f := range not {
				if slices.Contains(c.Spec.Evaluator, f) {
					c.errorf("%s: %s, whose tests the check does not run, is the evaluator's", c.Spec.Name, f)
				}
			}
		}
	}
	fake := newFakeBackend(t, map[string]verifier{
		"p/target": inspecting(look([]string{"tests/test_formatting.py"},
			[]string{"tests/test_arithmetic.py", "tests/conftest.py"}), reply()),
		"p/regression": inspecting(look([]string{"tests/test_formatting.py", "tests/test_arithmetic.py",
			"tests/test_parsing.py"}, []string{"tests/conftest.py"}), reply()),
	})
	results, err := Grade(context.Background(), s, testOptions(t, fake))
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Verdict != report.Resolved {
		t.Fatalf("verdict %s %+v, want resolved", r.Verdict, r.Reasons)
	}
}

func testFileRestored(c *fakeCall) {
	data, err := os.ReadFile(filepath.Join(c.Spec.Workspace, "tests", "test_formatting.py"))
	if err != nil || strings.Contains(string(data), "formatting.group_digits = group_digits") ||
		!strings.Contains(string(data), "def test_group_digits_negative") {
		c.errorf(
			"%s: tests/test_formatting.py is not the restored file plus the test patch (err %v):\n%s",
			c.Spec.Name,
			err,
			data,
		)
	}
}

// assetWritten: a hidden asset is in the workspace and in the support directory's assets.
func assetWritten(rel string) func(*fakeCall) {
	return func(c *fakeCall) {
		for _, dir := range []string{c.Spec.Workspace, filepath.Join(c.Spec.Support, "assets")} {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				c.errorf("%s: hidden asset missing: %v", c.Spec.Name, err)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
