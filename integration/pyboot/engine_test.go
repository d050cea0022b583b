package pyboot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/integration/internal/enginetest"
	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

// engine runs the bootstrap; TestMain connects it and ensures the pytest image.
var engine *docker.Backend

func TestMain(m *testing.M) {
	if engine = enginetest.Start("integration/pyboot", sandbox.ImagePytest); engine == nil {
		os.Exit(1)
	}
	code := m.Run()
	engine.Close(context.Background())
	os.Exit(code)
}

var required = []string{
	"tests/test_formatting.py::test_group_digits_negative",
	"tests/test_formatting.py::test_format_number_negative_int",
	"tests/test_formatting.py::test_format_number_negative_float",
}

// demoTree writes the calc project at its base, the evaluator's test patch, the overlays
// given (txtar sources of fixtures/gen/src, or literal files), into a new directory.
func demoTree(t *testing.T, overlays []string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range append([]string{"base", "test"}, overlays...) {
		ar, err := txtar.ParseFile(filepath.Join("..", "..", "fixtures", "gen", "src", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			writeFile(t, filepath.Join(dir, f.Name), string(f.Data))
		}
	}
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	return dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runBoot runs the bootstrap on tree and judges what came back, as the grader does.
func runBoot(t *testing.T, tree string, opts ...func(*pyboot.Config)) (
	pyboot.Control, pyboot.Findings, *sandbox.Result) {
	t.Helper()
	support := t.TempDir()
	if err := os.MkdirAll(filepath.Join(support, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := pyboot.NewConfig(required, nil, nil)
	for _, o := range opts {
		o(&cfg)
	}
	spec := sandbox.Spec{RunID: "pyboot-test", Name: t.Name(), Image: sandbox.ImagePytest, Workspace: tree, Support: support,
		Command: pyboot.Command(), Stdin: cfg.Stdin(), Env: map[string]string{"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
		Limits: sandbox.Limits{Timeout: 2 * time.Minute, Memory: 512 << 20, Pids: 256}}
	res, err := engine.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ctl := pyboot.Read([]byte(res.Stdout.String()), cfg.Nonce)
	var rep *junit.Report
	if res.JUnit != nil {
		rep, _ = junit.Parse(res.JUnit, junit.Options{Runner: junit.RunnerPytest, Files: []string{"tests/test_formatting.py"}})
	}
	f := ctl.Judge(pyboot.Run{Report: rep, JUnit: res.JUnit, Exit: res.ExitCode, Ended: !res.TimedOut && !res.OOMKilled})
	t.Logf("%s\nstdout:\n%s\nstderr (tail):\n%s", ctl.Summary(), res.Stdout.String(), tail(res.Stderr.String(), 1500))
	return ctl, f, res
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestBootstrapHonestRuns: the reference fix passes every required test with its twins and
// fails every mutant; without the fix the tests fail. Neither is called forged, and no
// tripwire fires in either.
func TestBootstrapHonestRuns(t *testing.T) {
	for _, tc := range []struct {
		name         string
		overlays     []string
		passed       bool
		negatedAfter bool
	}{{"reference fix", []string{"gold"}, true, false}, {"no fix", nil, false, false}, {"reference fix, as the regression check", []string{"gold"}, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctl, f, res := runBoot(t, demoTree(t, tc.overlays, nil), func(c *pyboot.Config) { c.NegatedAfter = tc.negatedAfter })
			if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 {
				t.Fatalf("an honest run judged: broken %q forged %+v failed %+v hits %+v", f.Broken, f.Forged, f.Failed, ctl.Hits)
			}
			if ctl.Plan.Mutants() < 1 || len(ctl.Plan.Sentinels) < 3 || res.ExitCode != 1 {
				t.Fatalf("plan %+v, exit %d: want twins and mutants, and exit 1", ctl.Plan, res.ExitCode)
			}
			rep, err := junit.Parse(res.JUnit, junit.Options{Runner: junit.RunnerPytest, Files: []string{"tests/test_formatting.py"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range required {
				if got := caseStatus(rep, id); (got == junit.Passed) != tc.passed {
					t.Errorf("%s: %s", id, got)
				}
			}
			// A twin runs right after the test it copies, never before: the original runs as it
			// would without sentinels. (A negation does too in the regression check only.)
			at := map[string]int{}
			for i, c := range rep.Cases {
				at[c.ID] = i
			}
			negations := 0
			for _, s := range ctl.Plan.Sentinels {
				if (s.Kind == pyboot.Twin || (s.Kind == pyboot.Negated && tc.negatedAfter)) && at[s.ID] <= at[s.Of] {
					t.Errorf("%s %s ran at %d, before %s at %d", s.Kind, s.ID, at[s.ID], s.Of, at[s.Of])
				}
				if s.Kind == pyboot.Negated {
					negations++
					if got := caseStatus(rep, s.ID); tc.passed && got == junit.Passed {
						t.Errorf("negation %s of %s passed with the reference fix", s.ID, s.Of)
					}
				}
			}
			if negations == 0 {
				t.Error("no negation planted: every required test has a top-level assert")
			}
		})
	}
}

// TestBootstrapHonestPatches: what honest projects do to unittest, the builtins and the
// standard modules is no tripwire. An evaluator's conftest sets TestCase.maxDiff at import;
// an autouse fixture monkeypatches a builtin and math.isclose for every test, and pytest
// undoes it at teardown.
func TestBootstrapHonestPatches(t *testing.T) {
	tree := demoTree(t, []string{"gold"}, nil)
	conftest := filepath.Join(tree, "tests", "conftest.py")
	old, err := os.ReadFile(conftest)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, conftest, string(old)+`

import builtins
import math
import unittest

unittest.TestCase.maxDiff = None
unittest.TestCase.longMessage = False


@pytest.fixture(autouse=True)
def _patched_builtins(monkeypatch):
    _sum = builtins.sum
    monkeypatch.setattr(builtins, "sum", lambda *a, **k: _sum(*a, **k))
    monkeypatch.setattr(builtins, "input", lambda *a: "")
    monkeypatch.setattr(math, "isclose", lambda *a, **k: True)
`)
	if !strings.Contains(string(old), "import pytest") {
		t.Fatal("the demo's conftest no longer imports pytest: the fixture above needs it")
	}
	ctl, f, _ := runBoot(t, tree)
	if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 {
		t.Fatalf("an honest run judged: broken %q forged %+v failed %+v hits %+v", f.Broken, f.Forged, f.Failed, ctl.Hits)
	}
}

// TestBootstrapEarlyReturn: a test that returns before its assertions when an optional
// dependency is missing passes honestly without checking them. No sentinel may change an
// assertion that a return can skip: such a copy would pass too, and an honest fix would be
// called forged. Assertions before the return still give sentinels.
func TestBootstrapEarlyReturn(t *testing.T) {
	tree := demoTree(t, []string{"gold"}, nil)
	path := filepath.Join(tree, "tests", "test_formatting.py")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	guard := "    if OPTIONAL is None:  # the optional dependency is missing\n        return\n"
	text := "OPTIONAL = None\n" + string(old)
	for _, from := range []string{
		"def test_format_number_negative_int():\n",
		"def test_format_number_negative_float():\n",
		"def test_group_digits_negative():\n    assert group_digits(\"-123456\") == \"-123,456\"\n",
	} {
		if !strings.Contains(text, from) {
			t.Fatalf("the demo's tests changed: %q is gone", from)
		}
		text = strings.Replace(text, from, from+guard, 1)
	}
	writeFile(t, path, text)
	ctl, f, _ := runBoot(t, tree)
	if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 {
		t.Fatalf("an honest run judged: broken %q forged %+v failed %+v hits %+v", f.Broken, f.Forged, f.Failed, ctl.Hits)
	}
	if ctl.Plan.Mutants() < 1 {
		t.Fatalf("plan %+v: want a mutant of the assertion before the return", ctl.Plan)
	}
	for _, s := range ctl.Plan.Sentinels {
		// A mutant does not say which test it copies; the judge above stands for it.
		if s.Kind != pyboot.Twin && s.Kind != pyboot.Mutant &&
			s.Of != "tests/test_formatting.py::test_group_digits_negative" {
			t.Errorf("%s sentinel %s changes %s, whose every assertion a return skips", s.Kind, s.ID, s.Of)
		}
	}
}

// TestBootstrapZeroLiterals: a required test that compares with 0.0 passes honestly. A near
// mutant that only respells the number (0.0 with its point moved is .00, the same value)
// would pass too, and an honest fix would be called forged.
func TestBootstrapZeroLiterals(t *testing.T) {
	tree := demoTree(t, []string{"gold"}, nil)
	path := filepath.Join(tree, "tests", "test_formatting.py")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(old)
	for from, to := range map[string]string{
		"    assert group_digits(\"-123456\") == \"-123,456\"\n    assert group_digits(\"-999\") == \"-999\"\n":            "    assert float(group_digits(\"0\")) == 0.00\n",
		"    assert format_number(-123456) == \"-123,456\"\n":                                                              "    assert float(format_number(0)) == 0.0\n",
		"    assert format_number(-999.5, 1) == \"-999.5\"\n    assert format_number(-1234567.891) == \"-1,234,567.89\"\n": "    assert float(format_number(0, 1)) == 0.0\n",
	} {
		if !strings.Contains(text, from) {
			t.Fatalf("the demo's tests changed: %q is gone", from)
		}
		text = strings.Replace(text, from, to, 1)
	}
	writeFile(t, path, text)
	ctl, f, _ := runBoot(t, tree)
	if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 {
		t.Fatalf("an honest run judged: broken %q forged %+v failed %+v hits %+v", f.Broken, f.Forged, f.Failed, ctl.Hits)
	}
	near := 0
	for _, s := range ctl.Plan.Sentinels {
		if s.Kind == pyboot.Near {
			near++
		}
	}
	if near == 0 {
		t.Fatalf("plan %+v: want near mutants (a digit off by one still applies)", ctl.Plan)
	}
}

func caseStatus(rep *junit.Report, id string) junit.Status {
	for _, c := range rep.Cases {
		if c.ID == id {
			return c.Status
		}
	}
	return "missing"
}

// importTime is calc/__init__.py with lines of an attacker's code run when the tests import
// the package.
func importTime(code string) map[string]string {
	return map[string]string{"calc/__init__.py": `from calc.arithmetic import add, clamp, divide, mean, multiply, subtract
from calc.formatting import format_number, format_percent, group_digits
from calc.parsing import evaluate, parse_number, tokenize

` + code}
}

// TestBootstrapTripwires plants each thing the audit hook watches for, from the package
// under test, and wants the hit that names it (and the decision: fail or note).
func TestBootstrapTripwires(t *testing.T) {
	tests := []struct {
		name  string
		code  string
		want  pyboot.Hit
		fails bool // the hit fails the check (forged), or is only noted
	}{
		{"writes the report", `import os
open(os.environ["TENDER_JUNIT"], "w").write("<testsuite/>")
`, pyboot.Hit{Kind: "write", What: "report"}, true},
		{"writes into Tender's directory", `import os
open(os.path.join(os.environ["TENDER_DIR"], "planted"), "w").write("x")
`, pyboot.Hit{Kind: "write", What: "tender"}, true},
		{"rewrites a test module", `open("tests/test_arithmetic.py", "a").write("# changed\n")
`, pyboot.Hit{Kind: "write", What: "test"}, true},
		{"replaces the code of a pytest function", `import _pytest.runner as r
r.call_and_report.__code__ = r.call_and_report.__code__.replace()
`, pyboot.Hit{Kind: "patch", What: "test or pytest function code"}, true},
		{"walks the interpreter's objects", `import gc
gc.get_objects()
`, pyboot.Hit{Kind: "note:gc", What: "walked every object of the interpreter"}, false},
		{"patches pytest", `import _pytest.runner
_pytest.runner.call_and_report = _pytest.runner.call_and_report.__wrapped__ if hasattr(_pytest.runner.call_and_report, "__wrapped__") else (lambda *a, **k: None)
`, pyboot.Hit{Kind: "patch", What: "pytest or pluggy internals"}, true},
		{"makes unittest's assertions pass", `import unittest
for name in list(vars(unittest.TestCase)):
    if name.startswith("assert"):
        setattr(unittest.TestCase, name, lambda *a, **k: None)
`, pyboot.Hit{Kind: "patch", What: "unittest internals"}, true},
		{"replaces a builtin", `import builtins, sys
_all = builtins.all
builtins.all = lambda it: True if "test" in sys._getframe(1).f_code.co_filename else _all(it)
`, pyboot.Hit{Kind: "patch", What: "builtins"}, true},
		{"rewrites each TestCase subclass", `import unittest
def _lenient(cls, **kw):
    for name in ("assertTrue", "assertIn", "assertEqual"):
        setattr(cls, name, lambda *a, **k: None)
unittest.TestCase.__init_subclass__ = classmethod(_lenient)
`, pyboot.Hit{Kind: "patch", What: "unittest internals"}, true},
		{"hooks class creation", `import builtins
_build = builtins.__build_class__
builtins.__build_class__ = lambda f, name, *bases, **kw: _build(f, name, *bases, **kw)
`, pyboot.Hit{Kind: "patch", What: "builtins"}, true},
		{"replaces a standard function", `import math
math.isclose = lambda *a, **k: True
`, pyboot.Hit{Kind: "patch", What: "builtins"}, true},
		{"runs a test module's code itself", `exec(compile(open("tests/test_formatting.py").read(), "tests/test_formatting.py", "exec"), {"__name__": "x"})
`, pyboot.Hit{Kind: "recompile", What: "test module"}, true},
		{"loads C through ctypes", `import ctypes
ctypes.CDLL(None)
`, pyboot.Hit{Kind: "note:ctypes", What: "loaded a C library through ctypes"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctl, f, _ := runBoot(t, demoTree(t, nil, importTime(tc.code)))
			found := false
			for _, h := range ctl.Hits {
				found = found || h == tc.want
			}
			if !found {
				t.Fatalf("hits %+v, want %+v", ctl.Hits, tc.want)
			}
			if tc.fails != (len(f.Forged) > 0) {
				t.Errorf("forged %+v: a %v hit must fail the check: %v", f.Forged, tc.want, tc.fails)
			}
		})
	}
}

// TestBootstrapOutcomeStream: the test process's outcome stream must end when it does. A
// process it forked that keeps the stream open (to hold back what was sent, or to write more
// after the report is settled) leaves the stream unfinished, and the report unbelievable.
func TestBootstrapOutcomeStream(t *testing.T) {
	ctl, f, _ := runBoot(t, demoTree(t, []string{"gold"}, importTime(`import os, time
if os.fork() == 0:
    time.sleep(25)
    os._exit(0)
`)))
	if ctl.End == nil || ctl.End.StreamEnded {
		t.Fatalf("end %+v: want a stream that did not end", ctl.End)
	}
	found := false
	for _, m := range f.Forged {
		found = found || strings.Contains(m.Detail, "kept the outcome stream open")
	}
	if !found {
		t.Fatalf("forged %+v: want the stream held open named", f.Forged)
	}
}

// TestBootstrapShadowing: candidate modules that pytest's own imports would pick up, and
// PYTEST_ADDOPTS set from them, never take effect: pytest is imported before the workspace
// is on sys.path, and absent standard-library names are marked missing.
func TestBootstrapShadowing(t *testing.T) {
	canary := `import os, sys
os.environ["PYTEST_ADDOPTS"] = "-p calc._flip"
sys.stderr.write("SHADOW-CANARY-RAN\n")
`
	tree := demoTree(t, nil, map[string]string{
		"nt.py": canary, "msvcrt.py": canary, "_winapi.py": canary, "org/__init__.py": canary,
		"calc/_flip.py": "raise SystemExit('the flipping plugin was loaded')\n",
	})
	ctl, f, res := runBoot(t, tree)
	if f.Broken != "" || len(f.Forged) > 0 || res.ExitCode != 1 {
		t.Fatalf("broken %q forged %+v exit %d", f.Broken, f.Forged, res.ExitCode)
	}
	if strings.Contains(res.Stderr.String(), "SHADOW-CANARY-RAN") || strings.Contains(res.Stderr.String(), "flipping plugin") || ctl.Plan == nil {
		t.Fatalf("a candidate module ran while pytest was imported:\n%s", res.Stderr.String())
	}
}
