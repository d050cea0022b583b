package swebench

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
)

// TestKnownFacts: every entry of the table says where its facts come from, and each
// environment it gives loads as the suite loader checks it; an entry that gives none says why;
// a repository has at most one entry for every version; every plugin named is a known one.
func TestKnownFacts(t *testing.T) {
	for _, repo := range slices.Sorted(maps.Keys(knownFacts)) {
		anyVersion := 0
		for i, f := range knownFacts[repo] {
			if len(f.Sources) == 0 {
				t.Errorf("%s[%d]: no source", repo, i)
			}
			if f.Versions == nil {
				anyVersion++
			}
			if f.Unsupported != "" && f.needsEnvironment() {
				t.Errorf("%s[%d]: unsupported, yet it gives an environment", repo, i)
			}
			if err := suite.CheckEnvironmentDoc("table", repo, f.doc()); err != nil {
				t.Errorf("%s[%d]: %v", repo, i, err)
			}
			for _, m := range f.Plugins {
				p, ok := pluginByModule(m)
				if !ok || !slices.Contains(f.Packages, p.Debian) {
					t.Errorf("%s[%d]: plugin %s is not a known plugin with its package in the entry", repo, i, m)
				}
			}
		}
		if anyVersion > 1 {
			t.Errorf("%s: %d entries for every version", repo, anyVersion)
		}
	}
	for _, repo := range []string{"pylint-dev/astroid", "sdispater/clikit", "aio-libs/async-lru",
		"astanin/python-tabulate", "jwodder/javaproperties", "r1chardj0n3s/parse", "mahmoud/boltons",
		"marshmallow-code/marshmallow", "pvlib/pvlib-python", "pydicom/pydicom", "sqlfluff/sqlfluff",
		"pyvista/pyvista", "pydata/xarray", "mwaskom/seaborn", "pallets/flask", "psf/requests",
		"pylint-dev/pylint", "sphinx-doc/sphinx", "astropy/astropy", "scikit-learn/scikit-learn",
		"matplotlib/matplotlib", "pytest-dev/pytest", "django/django", "sympy/sympy"} {
		if _, _, ok := knownFact(repo, "0.0"); !ok {
			t.Errorf("%s is not in the table", repo)
		}
	}
}

// TestImportFromKnownFacts: without --env, an instance of a known repository gets the
// table's environment for its version (a version's own entry, or the one for every version),
// with a note naming the sources; a repository the table says cannot be graded fails its
// instance, naming why; one that needs nothing runs in the suite's verifier.
func TestImportFromKnownFacts(t *testing.T) {
	im := &importer{envs: map[string]suite.EnvironmentDoc{}}
	for _, tt := range []struct{ repo, version, want, err string }{
		{"pylint-dev/astroid", "2.9", "pylint-dev__astroid-2.9", ""},
		{"pylint-dev/astroid", "2.14", "pylint-dev__astroid-any", ""},
		{"pylint-dev/astroid", "2.15", "pylint-dev__astroid-any", ""},
		{"sdispater/clikit", "0.6", "sdispater__clikit-any", ""},
		{"mahmoud/boltons", "25.0", "", ""},
		{"pytest-dev/pytest", "7.4", "", "no Debian environment can grade pytest-dev/pytest"},
		{"acme/calc", "0.3", "", ""},
	} {
		got, err := im.environment(Instance{InstanceID: "i", Repo: tt.repo, Version: Version(tt.version)})
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %q, %v; want %q, %q", tt.repo, tt.version, got, err, tt.want, tt.err)
		}
	}
	if d := im.envs["pylint-dev__astroid-2.9"].Debian; d == nil || d.Suite != "bullseye" {
		t.Errorf("astroid 2.9: %+v, want bullseye's Python 3.9", d)
	}
	clikit := im.envs["sdispater__clikit-any"]
	want := suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pastel", "python3-pylev",
		"python3-crashtest", "python3-pytest-mock"}}, Plugins: &[]string{"pytest_mock"},
		Ini: &map[string]string{"mock_traceback_monkeypatch": "false"}, PythonPath: &[]string{"src"}}
	if diff := cmp.Diff(want, clikit); diff != "" {
		t.Errorf("clikit (-want +got):\n%s", diff)
	}
	notes := strings.Join(im.sum.Notes, "\n")
	for _, w := range []string{
		"environment pylint-dev__astroid-any: Debian bookworm; packages python3-wrapt",
		"from Tender's table of known environments for pylint-dev/astroid version 2.14 (SWE-bench's harness specs",
		"mahmoud/boltons needs nothing beyond the pytest image",
		"acme/calc is not in Tender's table of known environments: its pairs run in the suite's verifier",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes do not say %q:\n%s", w, notes)
		}
	}
	if n := strings.Count(notes, "environment pylint-dev__astroid-any:"); n != 1 {
		t.Errorf("the any environment is noted %d times, want once", n)
	}
}
