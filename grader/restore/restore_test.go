package restore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/report"
)

const baseTOML = `[project]
name = "calc"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"
testpaths = ["tests"]

[tool.black]
line-length = 100
`

const baseCFG = `[metadata]
name = calc
version = 1.0

[tool:pytest]
addopts = -q
markers =
    slow: slow tests

[flake8]
max-line-length = 100
`

const baseTox = `[tox]
envlist = py311

[pytest]
addopts = -q
`

var baseRepo = map[string]file{
	"src/calc.py":         {Data: "def add(a, b):\n    return a + b\n"},
	"src/pkg/__init__.py": {Data: ""},
	"src/pkg/conftest.py": {Data: "import pytest\n"},
	"tests/test_calc.py":  {Data: "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"},
	"tests/run.sh":        {Data: "#!/bin/sh\nexec pytest\n", Mode: 0o755},
	"conftest.py":         {Data: "# base conftest\n"},
	"pyproject.toml":      {Data: baseTOML},
	"setup.cfg":           {Data: baseCFG},
	"tox.ini":             {Data: baseTox},
}

// fixture is a base checkout and a workspace that starts as a copy of it.
type fixture struct {
	base, ws string
}

func newFixture(t *testing.T, repo map[string]file) fixture {
	t.Helper()
	f := fixture{base: t.TempDir(), ws: t.TempDir()}
	writeTree(t, f.base, repo)
	copyTree(t, f.base, f.ws)
	return f
}

func (f fixture) write(t *testing.T, p, data string) {
	t.Helper()
	writeTree(t, f.ws, map[string]file{p: {Data: data}})
}

func (f fixture) remove(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(f.ws, filepath.FromSlash(p))); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.ws, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func defaultRestored() *integrity.Matcher {
	return integrity.MustCompile("restored_paths", integrity.DefaultRestored, false)
}

var ignoreDetail = cmpopts.IgnoreFields(report.Reason{}, "Detail")

func TestUntouchedWorkspaceIsTestedAsSubmitted(t *testing.T) {
	f := newFixture(t, baseRepo)
	before := readTree(t, f.ws)
	out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Outcome{TestedAsSubmitted: true}, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, readTree(t, f.ws)); diff != "" {
		t.Errorf("an untouched workspace changed (-before +after):\n%s", diff)
	}
}

func TestRestoreFiles(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, f fixture)
		want   Outcome
	}{
		{"test file edited", func(t *testing.T, f fixture) {
			f.write(t, "tests/test_calc.py", "def test_add():\n    assert True\n")
		}, Outcome{Restored: []string{"tests/test_calc.py"}}},
		{"test file deleted", func(t *testing.T, f fixture) {
			f.remove(t, "tests/test_calc.py")
		}, Outcome{Restored: []string{"tests/test_calc.py"}}},
		{"tests dir deleted", func(t *testing.T, f fixture) {
			f.remove(t, "tests")
		}, Outcome{Restored: []string{"tests/run.sh", "tests/test_calc.py"}}},
		{"conftest added at root over base conftest", func(t *testing.T, f fixture) {
			f.write(t, "conftest.py", "def pytest_runtest_makereport(item, call):\n    pass\n")
		}, Outcome{Restored: []string{"conftest.py"}}},
		{"conftest added nested", func(t *testing.T, f fixture) {
			f.write(t, "src/conftest.py", "import os\n")
			f.write(t, "deep/a/b/conftest.py", "import os\n")
		}, Outcome{Removed: []string{"deep/a/b/conftest.py", "src/conftest.py"}}},
		{"existing nested conftest modified", func(t *testing.T, f fixture) {
			f.write(t, "src/pkg/conftest.py", "import evil\n")
		}, Outcome{Restored: []string{"src/pkg/conftest.py"}}},
		{"pytest.ini added", func(t *testing.T, f fixture) {
			f.write(t, "pytest.ini", "[pytest]\naddopts = -p evil\n")
		}, Outcome{Removed: []string{"pytest.ini"}}},
		{"new test file in a new dir", func(t *testing.T, f fixture) {
			f.write(t, "tests/new/deeper/test_x.py", "def test_x(): pass\n")
		}, Outcome{Removed: []string{"tests/new/deeper/test_x.py"}}},
		{"test file turned into a directory", func(t *testing.T, f fixture) {
			f.remove(t, "tests/test_calc.py")
			f.write(t, "tests/test_calc.py/x.py", "")
		}, Outcome{Restored: []string{"tests/test_calc.py"}, Removed: []string{"tests/test_calc.py/x.py"}}},
		{"tests dir turned into a file", func(t *testing.T, f fixture) {
			f.remove(t, "tests")
			f.write(t, "tests", "not a dir\n")
		}, Outcome{Restored: []string{"tests/run.sh", "tests/test_calc.py"}, Removed: []string{"tests"}}},
		{"mode changed", func(t *testing.T, f fixture) {
			chmod(t, filepath.Join(f.ws, "tests/test_calc.py"), 0o755)
			chmod(t, filepath.Join(f.ws, "tests/run.sh"), 0o644)
		}, Outcome{Restored: []string{"tests/run.sh", "tests/test_calc.py"}}},
		{"source edits are the candidate's", func(t *testing.T, f fixture) {
			f.write(t, "src/calc.py", "def add(a, b):\n    return b + a\n")
			f.write(t, "src/new.py", "X = 1\n")
		}, Outcome{TestedAsSubmitted: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, baseRepo)
			tc.mutate(t, f)
			candidate := readTree(t, f.ws)
			out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out, ignoreDetail, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Outcome (-want +got):\n%s", diff)
			}
			assertRestored(t, f, candidate)
		})
	}
}

// assertRestored checks the workspace is exactly the candidate's tree outside restored paths
// and exactly the base inside them, modes included.
func assertRestored(t *testing.T, f fixture, candidate map[string]file) {
	t.Helper()
	m := defaultRestored()
	want := map[string]file{}
	for p, fl := range candidate {
		if !fl.Mode.IsDir() && !m.Match(p) {
			want[p] = fl
		}
	}
	base := readTree(t, f.base)
	for p, fl := range base {
		if m.Match(strings.TrimSuffix(p, "/")) || fl.Mode.IsDir() {
			want[p] = fl
		}
	}
	for p, fl := range candidate { // a candidate directory stays if a file stays below it
		for q := range want {
			if fl.Mode.IsDir() && strings.HasPrefix(q, p) && !strings.HasSuffix(q, "/") {
				want[p] = fl
			}
		}
	}
	got := readTree(t, f.ws)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workspace after Restore (-want +got):\n%s", diff)
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestModeFallbackWithoutModeBase(t *testing.T) {
	f := newFixture(t, baseRepo)
	f.remove(t, "tests/run.sh")
	out, err := Restore(f.ws, noModeBase{dirBase{f.base}}, defaultRestored())
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.ws, "tests/run.sh"))
	if err != nil || fi.Mode().Perm() != 0o644 || out.TestedAsSubmitted {
		t.Fatalf("restored tests/run.sh: %v, %v, %+v; want mode 0644", fi.Mode(), err, out)
	}
}

func TestConflictOutsideRestoredPaths(t *testing.T) {
	// The candidate deleted src/pkg/ and put a file there: src/pkg/conftest.py (restored)
	// cannot come back without deleting a candidate file outside restored paths.
	f := newFixture(t, baseRepo)
	f.remove(t, "src/pkg")
	f.write(t, "src/pkg", "x\n")
	out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
	if err != nil {
		t.Fatal(err)
	}
	want := []report.Reason{{Code: report.CodeRestoreConflict, Path: "src/pkg/conftest.py"}}
	if diff := cmp.Diff(want, out.Violations, ignoreDetail); diff != "" {
		t.Errorf("Violations (-want +got):\n%s", diff)
	}
}

func TestTopLevelGitIsSkipped(t *testing.T) {
	f := newFixture(t, baseRepo)
	f.write(t, ".git/config", "[core]\n")
	all := integrity.MustCompile("restored_paths", []string{"**"}, false)
	out, err := Restore(f.ws, dirBase{f.base}, all)
	if err != nil {
		t.Fatal(err)
	}
	if f.read(t, ".git/config") != "[core]\n" || !out.TestedAsSubmitted {
		t.Errorf("the workspace's own .git was touched: %+v", out)
	}
}

func TestWorkspaceErrors(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "file")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{filepath.Join(dir, "missing"), target, link} {
		if _, err := Restore(ws, dirBase{dir}, defaultRestored()); err == nil ||
			!strings.Contains(err.Error(), ErrWorkspace.Error()) {
			t.Errorf("Restore(%s) error = %v, want ErrWorkspace", ws, err)
		}
	}
}

func TestFifoIsUnsafe(t *testing.T) {
	f := newFixture(t, baseRepo)
	if err := syscall.Mkfifo(filepath.Join(f.ws, "tests", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "tests/test_calc.py", "edited\n")
	out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
	if err != nil {
		t.Fatal(err)
	}
	want := []report.Reason{{Code: report.CodeUnsafeEntry, Path: "tests/pipe"}}
	if diff := cmp.Diff(want, out.Violations, ignoreDetail); diff != "" {
		t.Errorf("Violations (-want +got):\n%s", diff)
	}
	if f.read(t, "tests/test_calc.py") != "edited\n" {
		t.Error("Restore changed the workspace although it holds an unsafe entry")
	}
}
