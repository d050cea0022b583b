package swebench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/suite"
)

// stubDebian has every package but those listed: a fixed index, so the test does not depend
// on the host's apt lists (the CLI's index is the host's apt-cache).
func stubDebian(missing ...string) DebianIndex {
	return DebianIndex{Where: "a test's index", Has: func(pkgs []string) (map[string]bool, error) {
		out := map[string]bool{}
		for _, p := range pkgs {
			out[p] = !slices.Contains(missing, p)
		}
		return out, nil
	}}
}

// TestInferRealProjects: the proposals for the real projects of fixtures/realworld, read from
// their own files at an instance's base commit, give what the table of known environments
// (measured there) gives, but for what no file declares.
func TestInferRealProjects(t *testing.T) {
	ini := func(kv ...string) *map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &m
	}
	for _, tt := range []struct {
		dir, bundle, commit string
		want                suite.EnvironmentDoc
		notes               []string
	}{
		{"async-lru", "aio-libs__async-lru", "5e92c702e92ae8a916962e3996a15cb848eddc0e",
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pytest-asyncio", "python3-pytest-timeout"}},
				Plugins: &[]string{"pytest_asyncio.plugin", "pytest_timeout"},
				Ini:     ini("asyncio_mode", "auto", "timeout", "15", "xfail_strict", "true")},
			[]string{"Debian bookworm's Python 3.11 meets >=3.9 (setup.cfg python_requires)",
				"pytest-asyncio (from requirements.txt): python3-pytest-asyncio"}},
		{"clikit", "sdispater__clikit", "cbb523dbd32d0e6a2d4d54fe9d55bc676f3eefe3",
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-crashtest", "python3-pastel",
				"python3-pylev", "python3-pytest-mock"}}, Plugins: &[]string{"pytest_mock"},
				Ini: ini("mock_traceback_monkeypatch", "false"), PythonPath: &[]string{"src"}},
			[]string{"enum34 (from pyproject.toml [tool.poetry.dependencies]): skipped, its marker (poetry-python ~2.7)", "the package is under src/"}},
		{"tabulate", "astanin__python-tabulate", "46108518490d6a013e954a05b58219910285c23c",
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-wcwidth"}}},
			[]string{"wcwidth (from pyproject.toml [project.optional-dependencies] widechars): python3-wcwidth"}},
		{"javaproperties", "jwodder__javaproperties", "5e1e3ff931618402b081fb9f830e93f127832b9f",
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pytest-mock", "python3-dateutil"}},
				Plugins: &[]string{"pytest_mock"}, Ini: ini("mock_traceback_monkeypatch", "false"),
				PythonPath: &[]string{"src"}},
			[]string{"python-dateutil (from tox.ini [testenv] deps): python3-dateutil"}},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			r := snapshotBundle(t, filepath.Join("..", "..", "fixtures", "realworld", tt.dir, tt.bundle+".bundle"))
			p, err := Infer(context.Background(), r, tt.commit, stubDebian())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Env); diff != "" {
				t.Errorf("proposal (-want +got):\n%s\nnotes:\n%s", diff, strings.Join(p.Notes, "\n"))
			}
			if err := suite.CheckEnvironmentDoc("infer", tt.dir, p.Env); err != nil {
				t.Errorf("the proposal does not load: %v", err)
			}
			for _, w := range tt.notes {
				if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, w) }) {
					t.Errorf("no note says %q:\n%s", w, strings.Join(p.Notes, "\n"))
				}
			}
		})
	}
}

func snapshotBundle(t *testing.T, bundle string) *gitsafe.Repo {
	t.Helper()
	abs, err := filepath.Abs(bundle)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gitsafe.Snapshot(context.Background(), gitsafe.Source{Kind: gitsafe.SourceBundle, Path: abs}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestInferSetupPy: setup.py is read, never run (a canary it would write stays absent): its
// literal lists, a name assigned a list, extras but the documentation's, python_requires that
// only bullseye's Python meets, markers for other Pythons, and what Debian lacks.
func TestInferSetupPy(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	setup := `import os
from setuptools import setup
open(` + "`" + `CANARY` + "`" + `, "w").write("ran")
REQS = [
    "wrapt>=1.11,<1.14",   # comment, with ] inside
    'lazy_object_proxy>=1.4.0',
    "typing-extensions>=3.10; python_version < '3.10'",
    "enum34; python_version < '3'",
]
setup(
    name="demo",
    install_requires=REQS,
    tests_require=["pytest", "pytest-mock>=2", "Not_In_Debian==1.0"],
    extras_require={"docs": ["sphinx-rtd-theme"], "yaml": ["PyYAML"]},
    python_requires=">=3.6, <3.10",
    package_dir={"": "src"},
    entry_points=get_entry_points(),
    classifiers=[c for c in CLASSIFIERS],
)
`
	setup = strings.Replace(setup, "`CANARY`", `"`+canary+`"`, 1)
	repo := t.TempDir()
	gitRepo(t, repo, map[string]string{"setup.py": setup, "requirements-dev.txt": "-r requirements.txt\n-e .\n" +
		"https://example.invalid/x.tar.gz\nfreezegun  # tests\n"})
	r, err := gitsafe.Snapshot(context.Background(), gitsafe.Source{Kind: gitsafe.SourceClone, Path: repo}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.ResolveHEAD(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Infer(context.Background(), r, head, stubDebian("python3-not-in-debian", "python3-not.in-debian"))
	if err != nil {
		t.Fatal(err)
	}
	want := suite.EnvironmentDoc{Debian: &suite.DebianDoc{Suite: "bullseye", Packages: []string{"python3-freezegun",
		"python3-lazy-object-proxy", "python3-pytest-mock", "python3-yaml", "python3-typing-extensions", "python3-wrapt"}},
		Plugins: &[]string{"pytest_mock"}, Ini: &map[string]string{"mock_traceback_monkeypatch": "false"},
		PythonPath: &[]string{"src"}}
	if diff := cmp.Diff(want, p.Env); diff != "" {
		t.Errorf("proposal (-want +got):\n%s\nnotes:\n%s", diff, strings.Join(p.Notes, "\n"))
	}
	if diff := cmp.Diff([]string{"not-in-debian"}, p.Lacks); diff != "" {
		t.Errorf("lacks (-want +got):\n%s", diff)
	}
	for _, w := range []string{"Debian bookworm's Python 3.11 does not meet >=3.6, <3.10 (setup.py python_requires)",
		"Debian bullseye's Python 3.9 meets", "not-in-debian (from setup.py tests_require): Debian has none of"} {
		if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, w) }) {
			t.Errorf("no note says %q:\n%s", w, strings.Join(p.Notes, "\n"))
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("setup.py ran: %s exists (%v)", canary, err)
	}
	noDebian, err := Infer(context.Background(), r, head, DebianIndex{})
	if err != nil || len(noDebian.Lacks) != 0 ||
		!slices.ContainsFunc(noDebian.Notes, func(n string) bool { return strings.Contains(n, "was not checked") }) {
		t.Errorf("without an index: %v, lacks %v, notes %v; want nothing lacking and a note that says so", err,
			noDebian.Lacks, noDebian.Notes)
	}
}

// TestVersionMatches: the constraints requires-python and markers use.
func TestVersionMatches(t *testing.T) {
	for _, tt := range []struct {
		c, v string
		want bool
	}{
		{">=3.7", "3.11", true}, {">=3.6.2", "3.9", true}, {"<3.10", "3.11", false}, {">=3.6, <3.10", "3.9", true},
		{"~=3.8", "3.11", true}, {"~=3.8.1", "3.9", false}, {"^3.6", "3.11", true}, {"~2.7 || ^3.4", "3.11", true},
		{"~2.7", "3.11", false}, {"~3.4", "3.11", false}, {"==3.*", "3.9", true}, {"!=3.9.*", "3.9", false},
		{">3.11", "3.11", false}, {"<=3.11", "3.11", true}, {"==2.7", "3.9", false}, {"weird", "3.9", true},
	} {
		if got := versionMatches(tt.c, tt.v); got != tt.want {
			t.Errorf("versionMatches(%q, %s) = %v, want %v", tt.c, tt.v, got, tt.want)
		}
	}
	for _, tt := range []struct {
		m    string
		want bool
	}{
		{`python_version < "3.11"`, false}, {`python_version >= "3.5" and python_full_version < "3.5.4"`, false},
		{`sys_platform == "win32"`, false}, {`sys_platform != "win32" and python_version >= "3.8"`, true},
		{`python_version < "3" or python_version >= "3.10"`, true}, {`implementation_name=="cpython"`, true},
	} {
		if got := markerHolds(tt.m, "3.11"); got != tt.want {
			t.Errorf("markerHolds(%q) = %v, want %v", tt.m, got, tt.want)
		}
	}
}

// gitRepo commits files in a new repository with real git.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
