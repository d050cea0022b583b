package integrity

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tender-grader/tender/report"
)

func testPolicy(t *testing.T) Policy {
	t.Helper()
	return Policy{
		Protected: MustCompile("protected_paths", DefaultProtected, true),
		Restored:  MustCompile("restored_paths", DefaultRestored, false),
		Evaluator: []string{"tests/test_hidden.py", "tests/assets/data.json"},
	}
}

type scanCase struct {
	name   string
	change Change
	policy func(Policy) Policy // optional tweak
	want   []string            // "code path" per reason, in order
}

func add(p string) Change    { return Change{NewPath: p, Line: 7} }
func modify(p string) Change { return Change{OldPath: p, NewPath: p, Line: 7} }

var scanCases = []scanCase{
	// ordinary project code: no violation
	{name: "source edit", change: modify("src/calc.py")},
	{name: "pytest.ini is restored, not shadowing", change: add("pytest.ini")},
	{name: "py.typed marker", change: add("src/pkg/py.typed")},
	{name: "library pytest plugin", change: add("src/pkg/pytest_plugin.py")},
	{name: "root pytest_ module", change: add("pytest_myplugin.py")},
	{name: "pytest-ish name", change: add("src/pytestish.py")},
	{name: "docs about pytest", change: add("docs/pytest.md")},
	{name: "pyproject", change: modify("pyproject.toml")},
	{name: ".gitignore", change: modify(".gitignore")},
	{name: ".github workflow", change: add(".github/workflows/ci.yml")},
	{name: "root conftest is restored", change: add("conftest.py")},
	{name: "nested conftest is restored", change: add("src/pkg/conftest.py")},
	{name: "test file edited is restored", change: modify("tests/test_calc.py")},
	{name: "test file deleted is restored", change: Change{OldPath: "tests/test_calc.py", Line: 7}},
	{name: "tender-like dir", change: add(".tenders/x")},
	{name: "binary source file", change: Change{NewPath: "docs/logo.png", Line: 7, Binary: true}},

	// protected paths
	{name: ".tender", change: add(".tender/answers.json"), want: []string{"protected_path .tender/answers.json"}},
	{name: ".TENDER", change: add(".TENDER/answers.json"), want: []string{"protected_path .TENDER/answers.json"}},
	{name: ".Tender nested", change: add(".Tender/a/b"), want: []string{"protected_path .Tender/a/b"}},
	{name: "ZWNJ inside", change: add(".te\u200cnder/x"), want: []string{"protected_path .te\u200cnder/x"}},
	{name: "BOM after", change: add(".tender\ufeff/x"), want: []string{"protected_path .tender\ufeff/x"}},
	{name: "ZWJ before", change: add("\u200d.TENDER/x"), want: []string{"protected_path \u200d.TENDER/x"}},
	{
		name:   "delete protected",
		change: Change{OldPath: ".tender/x", Line: 7},
		want:   []string{"protected_path .tender/x"},
	},
	{
		name:   "rename into protected",
		change: Change{OldPath: "src/a.py", NewPath: ".tender/a.py", Line: 7},
		want:   []string{"protected_path .tender/a.py"},
	},
	{
		name:   "rename out of protected",
		change: Change{OldPath: ".tender/a.py", NewPath: "src/a.py", Line: 7},
		want:   []string{"protected_path .tender/a.py"},
	},
	{name: "NFD protected pattern", change: add("cafe\u0301/menu"),
		policy: func(p Policy) Policy { p.Protected = MustCompile("protected_paths", []string{"café"}, true); return p },
		want:   []string{"protected_path cafe\u0301/menu"}},

	// evaluator-owned paths
	{
		name:   "evaluator test file",
		change: modify("tests/test_hidden.py"),
		want:   []string{"evaluator_asset tests/test_hidden.py"},
	},
	{
		name:   "evaluator case variant",
		change: add("TESTS/Test_Hidden.py"),
		want:   []string{"evaluator_asset TESTS/Test_Hidden.py"},
	},
	{name: "evaluator ancestor as file", change: add("tests/assets"), want: []string{"evaluator_asset tests/assets"}},
	{
		name:   "below an evaluator file",
		change: add("tests/test_hidden.py/x"),
		want:   []string{"evaluator_asset tests/test_hidden.py/x"},
	},

	// .git components
	{name: ".git", change: add(".git/config"), want: []string{"git_path .git/config"}},
	{
		name:   "nested .git",
		change: add("sub/.git/hooks/pre-commit"),
		want:   []string{"git_path sub/.git/hooks/pre-commit"},
	},
	{name: ".GIT", change: add(".GIT/config"), want: []string{"git_path .GIT/config"}},
	{name: ".git trailing dot", change: add(".git./config"), want: []string{"git_path .git./config"}},
	{name: ".git trailing space", change: add(".git /config"), want: []string{"git_path .git /config"}},
	{name: "8.3 short name", change: add("GIT~1/config"), want: []string{"git_path GIT~1/config"}},
	{
		name:   "NTFS stream",
		change: add(".git::$INDEX_ALLOCATION/config"),
		want:   []string{"git_path .git::$INDEX_ALLOCATION/config"},
	},
	{name: "HFS ignorable", change: add(".g\u200cit/config"), want: []string{"git_path .g\u200cit/config"}},
	{name: ".git file at leaf", change: add("vendor/.git"), want: []string{"git_path vendor/.git"}},

	// shadowing modules
	{name: "pytest.py", change: add("pytest.py"), want: []string{"shadowing_module pytest.py"}},
	{name: "nested pytest.py", change: add("src/pytest.py"), want: []string{"shadowing_module src/pytest.py"}},
	{name: "Pytest.PY", change: add("Pytest.PY"), want: []string{"shadowing_module Pytest.PY"}},
	{name: "pytest package", change: add("pytest/__init__.py"), want: []string{"shadowing_module pytest/__init__.py"}},
	{name: "_pytest/", change: add("_pytest/__init__.py"), want: []string{"shadowing_module _pytest/__init__.py"}},
	{
		name:   "nested _pytest/",
		change: add("lib/_pytest/hooks.py"),
		want:   []string{"shadowing_module lib/_pytest/hooks.py"},
	},
	{name: "_pytest.py", change: add("_pytest.py"), want: []string{"shadowing_module _pytest.py"}},
	{name: "py.py", change: add("py.py"), want: []string{"shadowing_module py.py"}},
	{name: "pluggy/", change: add("pluggy/__init__.py"), want: []string{"shadowing_module pluggy/__init__.py"}},
	{name: "pluggy.py", change: add("pluggy.py"), want: []string{"shadowing_module pluggy.py"}},
	{name: "sitecustomize.py", change: add("sitecustomize.py"), want: []string{"shadowing_module sitecustomize.py"}},
	{name: "SiteCustomize.py", change: add("SiteCustomize.py"), want: []string{"shadowing_module SiteCustomize.py"}},
	{
		name:   "sitecustomize ZWSP",
		change: add("site\u200bcustomize.py"),
		want:   []string{"shadowing_module site\u200bcustomize.py"},
	},
	{
		name:   "sitecustomize package",
		change: add("sitecustomize/__init__.py"),
		want:   []string{"shadowing_module sitecustomize/__init__.py"},
	},
	{name: "usercustomize.py", change: add("usercustomize.py"), want: []string{"shadowing_module usercustomize.py"}},
	{name: ".pth", change: add("evil.pth"), want: []string{"shadowing_module evil.pth"}},
	{name: "nested .PTH", change: add("lib/x.PTH"), want: []string{"shadowing_module lib/x.PTH"}},
	{name: ".egg-link", change: add("x.egg-link"), want: []string{"shadowing_module x.egg-link"}},
	{
		name:   "pycache",
		change: add("src/__pycache__/calc.cpython-311.pyc"),
		want:   []string{"shadowing_module src/__pycache__/calc.cpython-311.pyc"},
	},
	{name: "pyc beside source", change: add("src/calc.pyc"), want: []string{"shadowing_module src/calc.pyc"}},
	{name: "pyo", change: add("calc.pyo"), want: []string{"shadowing_module calc.pyo"}},
	{
		name:   "binary pyc",
		change: Change{NewPath: "calc.pyc", Line: 7, Binary: true},
		want:   []string{"shadowing_module calc.pyc"},
	},
	{
		name:   "extension pytest",
		change: add("pytest.cpython-311-x86_64-linux-gnu.so"),
		want:   []string{"shadowing_module pytest.cpython-311-x86_64-linux-gnu.so"},
	},
	{
		name:   "extension beside source",
		change: add("src/calc.abi3.so"),
		want:   []string{"shadowing_module src/calc.abi3.so"},
	},
	{name: "pyd", change: add("calc.pyd"), want: []string{"shadowing_module calc.pyd"}},
	{
		name:   "dist-info",
		change: add("evil-1.0.dist-info/entry_points.txt"),
		want:   []string{"shadowing_module evil-1.0.dist-info/entry_points.txt"},
	},
	{
		name:   "egg-info",
		change: add("src/evil.egg-info/PKG-INFO"),
		want:   []string{"shadowing_module src/evil.egg-info/PKG-INFO"},
	},
	{name: "conftest outside restored", change: add("conftest.py"),
		policy: func(p Policy) Policy { p.Restored = nil; return p },
		want:   []string{"shadowing_module conftest.py"}},
	{name: "nested conftest outside restored", change: add("src/conftest.py"),
		policy: func(p Policy) Policy {
			p.Restored = MustCompile("restored_paths", []string{"/conftest.py"}, false)
			return p
		},
		want: []string{"shadowing_module src/conftest.py"}},
	{name: "Conftest.py case", change: add("src/Conftest.py"), want: []string{"shadowing_module src/Conftest.py"}},

	// unsafe forms (gitsafe refuses them first; Scan backs it up)
	{name: "traversal", change: add("../outside.py"), want: []string{"unsafe_path ../outside.py"}},
	{name: "absolute", change: add("/etc/cron.d/x"), want: []string{"unsafe_path /etc/cron.d/x"}},
	{name: "empty component", change: add("a//b.py"), want: []string{"unsafe_path a//b.py"}},
	{name: "backslash", change: add(`a\..\b.py`), want: []string{`unsafe_path a\..\b.py`}},
	{
		name:   "symlink mode",
		change: Change{NewPath: "src/link", Line: 7, Mode: 0o120000},
		want:   []string{"unsafe_path src/link"},
	},
	{
		name:   "submodule mode",
		change: Change{NewPath: "vendor/lib", Line: 7, Mode: 0o160000},
		want:   []string{"unsafe_path vendor/lib"},
	},
	{name: "regular mode", change: Change{NewPath: "bin/run", Line: 7, Mode: 0o100755}},

	// several at once, in the documented order
	{name: "protected shadowing git", change: add(".tender/.git/pytest.py"),
		want: []string{
			"protected_path .tender/.git/pytest.py",
			"git_path .tender/.git/pytest.py",
			"shadowing_module .tender/.git/pytest.py",
		}},
	{name: "a directory named like bytecode", change: add("tests/test_hidden.pyc/x"), want: nil},
}

func TestScan(t *testing.T) {
	for _, tc := range scanCases {
		t.Run(tc.name, func(t *testing.T) {
			p := testPolicy(t)
			if tc.policy != nil {
				p = tc.policy(p)
			}
			var got []string
			for _, r := range Scan([]Change{tc.change}, p) {
				got = append(got, string(r.Code)+" "+r.Path)
				if r.Line != 7 || !strings.Contains(r.Detail, "patch line 7") ||
					!strings.Contains(r.Detail, strconv.Quote(r.Path)) {
					t.Errorf("reason %+v does not name the path and patch line", r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Scan(%+v) (-want +got):\n%s", tc.change, diff)
			}
		})
	}
}

func TestScanKeepsEveryViolationInPatchOrder(t *testing.T) {
	changes := []Change{
		{OldPath: "src/a.py", NewPath: "src/a.py", Line: 1},
		{NewPath: "pytest.py", Line: 12},
		{NewPath: ".tender/x", Line: 30},
		{OldPath: "/dev/null", NewPath: "sitecustomize.py", Line: 44},
	}
	want := []report.Reason{
		{Code: report.CodeShadowing, Path: "pytest.py", Line: 12},
		{Code: report.CodeProtected, Path: ".tender/x", Line: 30},
		{Code: report.CodeShadowing, Path: "sitecustomize.py", Line: 44},
	}
	got := Scan(changes, testPolicy(t))
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(report.Reason{}, "Detail")); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
	if Scan(changes[:1], testPolicy(t)) != nil {
		t.Error("a clean patch gave a non-nil result")
	}
}

func TestScanDetailNamesPattern(t *testing.T) {
	got := Scan([]Change{add(".TENDER/x")}, testPolicy(t))
	want := `patch line 7: ".TENDER/x" matches protected_paths pattern ".tender/**"`
	if len(got) != 1 || got[0].Detail != want {
		t.Errorf("Scan detail = %+v, want %q", got, want)
	}
}
