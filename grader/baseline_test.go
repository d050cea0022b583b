package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/sandbox"
)

// collects is a baseline collection that ends with pytest status exit: 0 collects the
// pair's required IDs; anything else reports the import error of a missing module.
func collects(exit int, extra ...string) verifier {
	return func(_ context.Context, c *fakeCall) (*sandbox.Result, error) {
		var cfg struct {
			Nonce string   `json:"nonce"`
			Paths []string `json:"paths"`
		}
		if err := json.Unmarshal(c.Spec.Stdin, &cfg); err != nil || cfg.Nonce == "" {
			c.errorf("baseline config %q: %v", c.Spec.Stdin, err)
		}
		msg := map[string]any{"exit": exit, "ids": extra, "errors": []string{}}
		stderr := ""
		if exit != 0 {
			msg["ids"] = []string{}
			msg["errors"] = []string{
				"ImportError while importing test module 'tests/test_x.py'.\nTraceback:\nE   ModuleNotFoundError: No module named 'wrapt'",
			}
			stderr = "1 error during collection\n"
		}
		line, _ := json.Marshal(msg)
		stdout := fmt.Sprintf("TENDER-COLLECT %s %s\n", cfg.Nonce, line)
		return &sandbox.Result{Backend: "fake", Isolated: true, ImageID: "sha256:fake", Wall: time.Millisecond,
			Stdout: sandbox.Capture{Head: []byte(stdout), Total: int64(len(stdout))},
			Stderr: sandbox.Capture{Head: []byte(stderr), Total: int64(len(stderr))}}, nil
	}
}

func TestReadCollect(t *testing.T) {
	b := &baseline{Exit: -1}
	out := "noise\nTENDER-COLLECT wrong {\"exit\":0,\"ids\":[\"forged\"]}\nTENDER-COLLECT n1 {\"exit\":2,\"ids\":[\"a\"],\"errors\":[\"E   boom\"]}\n"
	errs := readCollect(out, "n1", b)
	if b.Exit != 2 || !cmp.Equal(b.Collected, []string{"a"}) || !cmp.Equal(errs, []string{"E   boom"}) {
		t.Errorf("read %+v, errors %q: a line without the nonce must be ignored", b, errs)
	}
	if b := (&baseline{Exit: -1}); readCollect("TENDER-COLLECT n1 not json\n", "n1", b) != nil || b.Exit != -1 ||
		!b.broken() {
		t.Errorf("a garbled line must leave the baseline broken (never reported): %+v", b)
	}
}

func TestFirstErrorLine(t *testing.T) {
	for _, tt := range []struct {
		name  string
		texts []string
		want  string
	}{
		{"pytest E line", []string{"ImportError while importing test module\nTraceback:\n  x\nE   ModuleNotFoundError: No module named 'lazy_object_proxy'\n"}, "ModuleNotFoundError: No module named 'lazy_object_proxy'"},
		{"conftest error in stderr", []string{"", "ImportError while loading conftest '/w/tests/conftest.py'.\ntests/conftest.py:1: in <module>\n"}, "ImportError while loading conftest '/w/tests/conftest.py'."},
		{"no error word", []string{"\n\n  something odd\n"}, "something odd"},
		{"nothing", []string{"", ""}, "pytest reported no cause"},
		{"long line capped", []string{"E   " + strings.Repeat("x", 37000)}, strings.Repeat("x", maxLine) + "…"},
		{"control characters", []string{"E   a\x1b[31mb\rc"}, "a [31mb c"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstErrorLine(tt.texts); got != tt.want {
				t.Errorf("firstErrorLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCollectPaths(t *testing.T) {
	p := &suite.Pair{FailToPass: []string{"tests/test_a.py::test_x[a", "tests/test_b.py::C::test_y"},
		PassToPass: []string{"tests/test_a.py::test_z", "../escape.py::t", "/abs.py::t", "tests/dir"}}
	want := []string{"tests/dir", "tests/test_a.py", "tests/test_b.py"}
	if diff := cmp.Diff(want, collectPaths(p)); diff != "" {
		t.Errorf("collectPaths (-want +got):\n%s", diff)
	}
}

// TestBaselineGetsTheTestDirs: the baseline collection puts the test files' base directories on
// sys.path as the checks do: its configuration names them (the demo's tests/ is not a package).
func TestBaselineGetsTheTestDirs(t *testing.T) {
	p := validPair(t, "p")
	verifiers := soundInstance(p)
	sound := verifiers[p.id+"/baseline"]
	var dirs []string
	verifiers[p.id+"/baseline"] = func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
		var cfg struct {
			TestDirs      []string `json:"test_dirs"`
			PytestOptions []string `json:"pytest_options"`
		}
		if err := json.Unmarshal(c.Spec.Stdin, &cfg); err != nil || cfg.PytestOptions == nil {
			c.errorf("baseline config %s: %v; want test_dirs and pytest_options", c.Spec.Stdin, err)
		}
		dirs = cfg.TestDirs
		return sound(ctx, c)
	}
	validate(t, ValidateOptions{}, verifiers, p)
	want := testDirs(t.TempDir(), required(p)) // no package in this tree: each file's own directory
	if len(want) == 0 || !cmp.Equal(dirs, want) {
		t.Errorf("test_dirs %q, want %q", dirs, want)
	}
}
