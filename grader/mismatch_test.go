package grader

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/sandbox"
)

// marshmallowOnNewPython is what pytest prints when a 2.x marshmallow runs on Python 3.11.
const marshmallowOnNewPython = `FFF
___________________________ test_dump ___________________________
src/marshmallow/schema.py:301: in dump
    if not isinstance(obj, collections.Mapping):
E   AttributeError: module 'collections' has no attribute 'Mapping'
/usr/lib/python3.11/unittest/case.py:57: in testPartExecutor
`

// withStderr is v with text added to the runner's output on stderr.
func withStderr(v verifier, text string) verifier {
	return func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
		res, err := v(ctx, c)
		if err == nil {
			s := text + res.Stderr.String()
			res.Stderr = sandbox.Capture{Head: []byte(s), Total: int64(len(s))}
		}
		return res, err
	}
}

// TestValidateNamesAPythonVersionMismatch: a pass_to_pass test that fails on the base commit
// with a missing name is named in the instance's first line as a likely Python-version
// mismatch, with the error and the Python the output names; hidden assets keep the error in
// the log. The same error in a fail_to_pass test's failure, with the pass_to_pass tests failing
// otherwise, is no hint.
func TestValidateNamesAPythonVersionMismatch(t *testing.T) {
	const missing = "AttributeError: module 'collections' has no attribute 'Mapping'"
	p := validPair(t, "p")
	f2p, p2p := p.failToPass, p.passToPass
	for _, tc := range []struct {
		name   string
		assets bool
		base   verifier
		want   string // the first problem's start; "" means no hint anywhere
	}{
		{"pass_to_pass", false,
			withStderr(reply(failing(f2p...), failingWith(missing, p2p[2])), marshmallowOnNewPython),
			"likely a Python-version mismatch (Python 3.11 says " + missing + "); on the base commit " + p2p[2] +
				" is failed; a pass_to_pass test must pass there"},
		{"pass_to_pass with hidden assets", true,
			withStderr(reply(failing(f2p...), failingWith(missing, p2p...)), marshmallowOnNewPython),
			"likely a Python-version mismatch (Python 3.11 names a missing attribute or import; see the log); " +
				"on the base commit 6 pass_to_pass"},
		{"fail_to_pass only", false,
			withStderr(reply(failing(p2p...), failingWith(missing, f2p...)), marshmallowOnNewPython), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validPair(t, "p")
			if tc.assets {
				p.assets = map[string]string{"tests/hidden_data.txt": "x\n"}
			}
			v := soundInstance(p)
			v["p/base"] = tc.base
			v["p/target"] = withStderr(reply(), marshmallowOnNewPython) // no problem there: no hint
			r := validate(t, ValidateOptions{}, v, p)[0]
			if r.OK || len(r.Problems) != 1 {
				t.Fatalf("problems %q, want one", r.Problems)
			}
			t.Logf("validate line: %s", r.Cause())
			switch {
			case tc.want == "" && strings.Contains(r.Problems[0], "mismatch"):
				t.Errorf("problem %q names a mismatch", r.Problems[0])
			case tc.want != "" && !strings.HasPrefix(r.Problems[0], tc.want):
				t.Errorf("the problem %q, want it to start %q", r.Problems[0], tc.want)
			case tc.want != "" && !strings.HasPrefix(r.Cause(), tc.want[:min(len(tc.want), 150)]):
				t.Errorf("the instance's line %q does not show the hint", r.Cause())
			case tc.assets && strings.Contains(r.Problems[0], "Mapping"):
				t.Errorf("problem %q quotes the runner with hidden assets in the workspace", r.Problems[0])
			}
		})
	}
}

// TestValidateBaseIsOnePlainRun: the base commit is checked in one verifier for both lists,
// with no copies of the tests planted; the reference patch's checks are a grade's, with them.
func TestValidateBaseIsOnePlainRun(t *testing.T) {
	p := validPair(t, "p")
	counts := func(want int) func(c *fakeCall) {
		return func(c *fakeCall) {
			var in pyboot.PlantInput
			if err := json.Unmarshal(c.Spec.Plant.Files["stdin"], &in); err != nil {
				c.errorf("%s: %v", c.Spec.Name, err)
			}
			if got := in.Twins + in.Negated; (got == 0) != (want == 0) {
				c.errorf("%s asks for %d sentinel copies per test, want %d", c.Spec.Name, got, want)
			}
		}
	}
	v := soundInstance(p)
	v["p/base"] = inspecting(counts(0), v["p/base"])
	v["p/target"] = inspecting(counts(1), v["p/target"])
	v["p/regression"] = inspecting(counts(1), v["p/regression"])
	if r := validate(t, ValidateOptions{}, v, p)[0]; !r.OK {
		t.Fatalf("report %+v, want a sound instance", r)
	}
}

// TestBaselineNamesAPythonVersionMismatch: a collection that fails on an import of a name the
// Python lacks says so in the environment_broken line.
func TestBaselineNamesAPythonVersionMismatch(t *testing.T) {
	b := &baseline{Exit: 2, FirstError: "ImportError: cannot import name 'Mapping' from 'collections' " +
		"(/usr/lib/python3.11/collections/__init__.py)"}
	p := validPair(t, "p")
	pl := &pipeline{suite: writeTestSuite(t, p), opts: Options{}}
	pl.pair = pl.suite.Pairs[0]
	got := b.cause(pl)
	want := "(pytest status 2): likely a Python-version mismatch (the environment runs Python 3.11); ImportError: " +
		"cannot import name 'Mapping'"
	if !strings.Contains(got, want) {
		t.Errorf("cause %q, want %q in it", got, want)
	}
	b.FirstError = "E   ModuleNotFoundError: No module named 'wrapt'"
	if got := b.cause(pl); strings.Contains(got, "mismatch") {
		t.Errorf("cause %q names a mismatch for a missing module", got)
	}
}

// TestMissingName reads the error lines of real runs, and nothing else.
func TestMissingName(t *testing.T) {
	for _, tc := range []struct{ text, line, python string }{
		{marshmallowOnNewPython, "AttributeError: module 'collections' has no attribute 'Mapping'", "3.11"},
		{"E   ImportError: cannot import name 'soft_unicode' from 'markupsafe' (/usr/lib/python3/dist-packages/" +
			"markupsafe/__init__.py)", "ImportError: cannot import name 'soft_unicode' from 'markupsafe' " +
			"(/usr/lib/python3/dist-packages/markupsafe/__init__.py)", ""},
		{"tests/test_x.py:3: AttributeError\nE   assert obj has no attribute 'x'", "", ""},
		{"FAILED tests/test_x.py::test_a - assert 1 == 2\n", "", ""},
	} {
		line, python := missingName(tc.text)
		if line != tc.line || python != tc.python {
			t.Errorf("missingName(%q) = %q, %q; want %q, %q", tc.text, line, python, tc.line, tc.python)
		}
	}
}
