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
	cfg := pyboot.NewConfig(required, nil, nil)
	for _, o := range opts {
		o(&cfg)
	}
	res := bootRun(t, tree, cfg, required, nil)
	ctl := bootControl(t, res, cfg)
	var rep *junit.Report
	if res.JUnit != nil {
		rep, _ = junit.Parse(
			res.JUnit,
			junit.Options{Runner: junit.RunnerPytest, Files: []string{"tests/test_formatting.py"}},
		)
	}
	f := ctl.Judge(
		pyboot.Run{Report: rep, JUnit: res.JUnit, Exit: res.ExitCode, Ended: !res.TimedOut && !res.OOMKilled},
	)
	t.Logf("%s\nstdout:\n%s\nstderr (tail):\n%s", ctl.Summary(), res.Stdout.String(), tail(res.Stderr.String(), 1500))
	return ctl, f, res
}

// bootRun runs the bootstrap on tree with cfg for the required tests ids, as the grader runs
// it: the planter first, as Tender's root user, then the tests, with env added to theirs.
func bootRun(t *testing.T, tree string, cfg pyboot.Config, ids []string, env map[string]string) *sandbox.Result {
	t.Helper()
	support := t.TempDir()
	if err := os.MkdirAll(filepath.Join(support, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
	for k, v := range env {
		all[k] = v
	}
	res, err := engine.Run(context.Background(), sandbox.Spec{
		RunID:     "pyboot-test",
		Name:      t.Name(),
		Image:     sandbox.ImagePytest,
		Workspace: tree,
		Support:   support,
		Command:   pyboot.Command(),
		Evaluator: pyboot.Modules(ids), // the planter rewrites them, as Tender's root user
		Plant: &sandbox.Step{Command: pyboot.PlantCommand("python3"), Files: pyboot.PlantFiles(ids, true),
			Stdin: cfg.FromPlant},
		Env:    all,
		Limits: sandbox.Limits{Timeout: 2 * time.Minute, Memory: 512 << 20, Pids: 256},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// bootControl reads the bootstrap's control stream with what the planter planted.
func bootControl(t *testing.T, res *sandbox.Result, cfg pyboot.Config) pyboot.Control {
	t.Helper()
	ctl := pyboot.Read([]byte(res.Stdout.String()), cfg.Nonce)
	planted, err := pyboot.ParsePlant(res.Plant)
	if err != nil {
		t.Fatalf("the planter's output: %v", err)
	}
	ctl.Plan = planted.Plan
	return ctl
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestBootstrapHonestRuns: every assertion of the demo's required tests compares with a
// literal at the test's top level, so each is wholly held and gets no copy: with the reference
// fix each held comparison holds as the test runs and the tests pass; without it they fail,
// and the parent saw each comparison fail. Neither is called forged, and no tripwire fires.
func TestBootstrapHonestRuns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		overlays []string
		passed   bool
	}{{"reference fix", []string{"gold"}, true}, {"no fix", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctl, f, res := runBoot(t, demoTree(t, tc.overlays, nil))
			if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 || len(f.Notes) > 0 {
				t.Fatalf("an honest run judged: broken %q forged %+v failed %+v notes %+v hits %+v",
					f.Broken, f.Forged, f.Failed, f.Notes, ctl.Hits)
			}
			if len(ctl.Plan.Sentinels) != 0 || ctl.End == nil || ctl.End.HeldUnknown != 0 {
				t.Fatalf("plan %+v end %+v: want no copy of a wholly held test, and every ask placed", ctl.Plan, ctl.End)
			}
			want := 0
			if !tc.passed {
				want = 1
			}
			if res.ExitCode != want {
				t.Errorf("exit %d, want %d", res.ExitCode, want)
			}
			rep, err := junit.Parse(res.JUnit,
				junit.Options{Runner: junit.RunnerPytest, Files: []string{"tests/test_formatting.py"}})
			if err != nil {
				t.Fatal(err)
			}
			asked := map[[2]string]pyboot.HeldRecord{}
			for _, h := range ctl.End.Held {
				asked[[2]string{h.Token, h.Key}] = h
			}
			for _, id := range required {
				if got := caseStatus(rep, id); (got == junit.Passed) != tc.passed {
					t.Errorf("%s: %s", id, got)
				}
				held := ctl.Plan.Held[id]
				if len(held.Tokens) == 0 || !held.Full {
					t.Errorf("%s: held %+v, want wholly held", id, held)
				}
				// Without the fix a test stops at its first failing assertion: the rest never ask.
				h, ok := asked[[2]string{held.Tokens[0], pyboot.TestKey(id)}]
				if !ok || (h.Matched == 1) != tc.passed || (h.Mismatched == 1) == tc.passed {
					t.Errorf("%s: the parent's record of its first held comparison: %+v (asked %v)", id, h, ok)
				}
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
		t.Fatalf(
			"an honest run judged: broken %q forged %+v failed %+v hits %+v",
			f.Broken,
			f.Forged,
			f.Failed,
			ctl.Hits,
		)
	}
}

// TestBootstrapEarlyReturn: a test that returns before its assertions when an optional
// dependency is missing passes honestly without checking them. No held site may be an
// assertion that a return can skip (a test that passed honestly would never have asked), and
// such a test is not wholly held: it gets copies, among them one without its guard.
// Assertions before the return are still held.
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
		t.Fatalf(
			"an honest run judged: broken %q forged %+v failed %+v hits %+v",
			f.Broken,
			f.Forged,
			f.Failed,
			ctl.Hits,
		)
	}
	if h := ctl.Plan.Held["tests/test_formatting.py::test_group_digits_negative"]; len(h.Tokens) != 1 || h.Full {
		t.Fatalf("held %+v: want the assertion before the return held, and the test not wholly held", h)
	}
	unguarded := 0
	for _, s := range ctl.Plan.Sentinels {
		if s.Kind == pyboot.Unguarded {
			unguarded++
		}
	}
	if unguarded != 2 {
		t.Errorf("%d unguarded copies: want one for each of the two tests that return before they check", unguarded)
	}
}

// TestBootstrapZeroLiterals: a required test that compares with 0.0 (and 0.00, another spelling
// of it) passes honestly: the parent compares values, not their spelling, and -0.0 == 0.0 as in
// Python.
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
		"    assert format_number(-123456) == \"-123,456\"\n":                                                              "    assert -float(format_number(0)) == 0.0\n",
		"    assert format_number(-999.5, 1) == \"-999.5\"\n    assert format_number(-1234567.891) == \"-1,234,567.89\"\n": "    assert float(format_number(0, 1)) == 0\n",
	} {
		if !strings.Contains(text, from) {
			t.Fatalf("the demo's tests changed: %q is gone", from)
		}
		text = strings.Replace(text, from, to, 1)
	}
	writeFile(t, path, text)
	ctl, f, res := runBoot(t, tree)
	if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 || res.ExitCode != 0 {
		t.Fatalf("an honest run judged: broken %q forged %+v failed %+v hits %+v exit %d",
			f.Broken, f.Forged, f.Failed, ctl.Hits, res.ExitCode)
	}
	for _, id := range required {
		if h := ctl.Plan.Held[id]; len(h.Tokens) != 1 || !h.Full {
			t.Errorf("%s: held %+v, want its one assertion held", id, h)
		}
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
	return map[string]string{
		"calc/__init__.py": `from calc.arithmetic import add, clamp, divide, mean, multiply, subtract
from calc.formatting import format_number, format_percent, group_digits
from calc.parsing import evaluate, parse_number, tokenize

` + code,
	}
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
		{
			"runs a test module's code itself",
			`exec(compile(open("tests/test_formatting.py").read(), "tests/test_formatting.py", "exec"), {"__name__": "x"})
`,
			pyboot.Hit{Kind: "recompile", What: "test module"},
			true,
		},
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
	if strings.Contains(res.Stderr.String(), "SHADOW-CANARY-RAN") ||
		strings.Contains(res.Stderr.String(), "flipping plugin") ||
		ctl.Plan == nil {
		t.Fatalf("a candidate module ran while pytest was imported:\n%s", res.Stderr.String())
	}
}
