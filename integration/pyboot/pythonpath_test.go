package pyboot

import (
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/report/junit"
)

// subprocessTest runs the package of a src/ layout the way sqlfluff's CLI tests do: `python -m
// PKG` in a subprocess of the test. It also says what PYTHONPATH the test process was given.
const subprocessTest = `import os, subprocess, sys, warnings


def test_module_runs_in_a_subprocess():
    warnings.warn("PYTHONPATH-SEEN %r" % os.environ.get("PYTHONPATH"))  # pytest shows it, passed or not
    out = subprocess.run([sys.executable, "-m", "calcsub"], capture_output=True, text=True)
    assert out.stdout == "calcsub ran\n", out.stderr
`

// TestBootstrapPythonPathReachesSubprocesses: with python_path [src], a test's `python -m
// calcsub` finds src/calcsub; without it, it does not. The PYTHONPATH the subprocess gets is
// Tender's alone: one the check's environment carried is scrubbed first.
func TestBootstrapPythonPathReachesSubprocesses(t *testing.T) {
	const id = "tests/test_sub.py::test_module_runs_in_a_subprocess"
	for _, tc := range []struct {
		name       string
		pythonPath []string
		passed     bool
	}{{"python_path src", []string{"src"}, true}, {"no python_path", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tree := demoTree(t, nil, map[string]string{
				"src/calcsub/__init__.py": "",
				"src/calcsub/__main__.py": "print('calcsub ran')\n",
				"tests/test_sub.py":       subprocessTest,
			})
			cfg := pyboot.NewConfig([]string{id}, nil, tc.pythonPath)
			res := bootRun(t, tree, cfg, []string{id}, map[string]string{"PYTHONPATH": "/tmp/tender-canary-pythonpath"})
			ctl := bootControl(t, res, cfg)
			rep, err := junit.Parse(res.JUnit, junit.Options{Runner: junit.RunnerPytest, Files: []string{"tests/test_sub.py"}})
			if err != nil {
				t.Fatalf("report: %v\nstderr:\n%s", err, tail(res.Stderr.String(), 3000))
			}
			f := ctl.Judge(pyboot.Run{Report: rep, JUnit: res.JUnit, Exit: res.ExitCode, Ended: true})
			if f.Broken != "" || len(f.Forged) > 0 || len(f.Failed) > 0 || len(ctl.Hits) > 0 {
				t.Fatalf("judged: broken %q forged %+v failed %+v hits %+v", f.Broken, f.Forged, f.Failed, ctl.Hits)
			}
			if got := caseStatus(rep, id); (got == junit.Passed) != tc.passed {
				t.Fatalf("%s: %s, want passed=%v\nstderr:\n%s", id, got, tc.passed, tail(res.Stderr.String(), 3000))
			}
			want := "PYTHONPATH-SEEN None"
			if len(tc.pythonPath) > 0 {
				want = "PYTHONPATH-SEEN '/workspace/src'"
			}
			if !strings.Contains(res.Stderr.String(), want) || strings.Contains(res.Stderr.String(), "tender-canary") {
				t.Fatalf("want %q and no canary in the test's output:\n%s", want, tail(res.Stderr.String(), 3000))
			}
		})
	}
}
