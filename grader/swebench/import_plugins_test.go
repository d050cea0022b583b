package swebench

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
)

// TestImportWithPlugins: an --env entry's plugins and ini options reach the written suite,
// and each pair runs with them.
func TestImportWithPlugins(t *testing.T) {
	c := importCase{instances: []map[string]any{demoInstance(t, "acme__calc-1")},
		env: "acme/calc:\n  \"*\":\n    debian: {packages: [python3-pytest-asyncio]}\n" +
			"    plugins: [pytest_asyncio]\n    ini: {asyncio_mode: auto, timeout: 15}\n"}
	out, _, err := c.run(t, demoClone(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := s.VerifierFor(s.Pairs[0])
	want := []string{"pytest_asyncio", "-o", "asyncio_mode=auto", "-o", "timeout=15"}
	if diff := cmp.Diff(want, append(v.Plugins, v.PytestOptions()...)); diff != "" {
		t.Errorf("plugins and options (-want +got):\n%s", diff)
	}
}

// TestReadEnvSpecRefusesPlugins: an entry the suite loader would refuse is the spec's error,
// naming --env, the file and the entry, before anything is imported.
func TestReadEnvSpecRefusesPlugins(t *testing.T) {
	for _, tt := range []struct{ name, entry, want string }{
		{"plugin option", "plugins: [\"no:cacheprovider\"]", `acme/calc version "*".plugins[0]: "no:cacheprovider" is not a plugin module name`},
		{"addopts", "ini: {addopts: \"-p evil\"}", `acme/calc version "*".ini.addopts: cannot be set`},
		{"junit", "ini: {junit_family: xunit2}", `.ini.junit_family: cannot be set`},
		{"newline", "ini: {timeout: \"1\\n2\"}", `.ini.timeout: is not a one-line value`},
		{"bad package", "debian: {packages: [\"a b\"]}", `debian.packages[0]: "a b" is not a Debian package name`},
		{"unpinned image", "image: tender-verifier/pytest", "is not pinned"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kind := "    image: " + pinned + "\n"
			if strings.HasPrefix(tt.entry, "debian") || strings.HasPrefix(tt.entry, "image") {
				kind = ""
			}
			spec := "acme/calc:\n  \"*\":\n" + kind + "    " + tt.entry + "\n"
			_, err := readEnvSpec(strings.NewReader(spec), "spec.yaml")
			if !errors.Is(err, suite.ErrBadSuite) || !strings.Contains(err.Error(), "--env spec.yaml") ||
				!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line with --env spec.yaml and %q", err, tt.want)
			}
		})
	}
}

// TestKnownPlugins: an entry for a repository of the table that names no plugins gets the
// table's, with their Debian packages on a debian image and a note that says so; an entry
// that names its own, even none, is left as written.
func TestKnownPlugins(t *testing.T) {
	mock := []string{"pytest_mock"}
	none := []string{}
	ini := map[string]string{"mock_traceback_monkeypatch": "false"}
	for _, tt := range []struct {
		name, repo string
		in         suite.EnvironmentDoc
		want       suite.EnvironmentDoc
		note       []string
	}{
		{"debian", "pvlib/pvlib-python", suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pandas"}}},
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pandas", "python3-pytest-mock"}}, Plugins: &mock, Ini: &ini},
			[]string{"environment E: plugins pytest_mock; ini -o mock_traceback_monkeypatch=false; Debian packages python3-pytest-mock", "for pvlib/pvlib-python", "issue 19", "plugins: [] for none"}},
		{"debian, package there", "pvlib/pvlib-python", suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pytest-mock"}}},
			suite.EnvironmentDoc{Debian: &suite.DebianDoc{Packages: []string{"python3-pytest-mock"}}, Plugins: &mock, Ini: &ini},
			[]string{"environment E: plugins pytest_mock; ini -o mock_traceback_monkeypatch=false, from"}},
		{"image", "pvlib/pvlib-python", suite.EnvironmentDoc{Image: pinned},
			suite.EnvironmentDoc{Image: pinned, Plugins: &mock, Ini: &ini}, []string{"which the image must hold (python3-pytest-mock on Debian)"}},
		{"own plugins", "pvlib/pvlib-python", suite.EnvironmentDoc{Image: pinned, Plugins: &none},
			suite.EnvironmentDoc{Image: pinned, Plugins: &none}, nil},
		{"not in the table", "acme/calc", suite.EnvironmentDoc{Image: pinned}, suite.EnvironmentDoc{Image: pinned}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, note := withKnownEnv(tt.repo, "0.9", "E", tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			if (note == "") != (tt.note == nil) {
				t.Errorf("note %q, want one: %v", note, tt.note != nil)
			}
			for _, w := range tt.note {
				if !strings.Contains(note, w) {
					t.Errorf("note %q does not say %q", note, w)
				}
			}
		})
	}
	deb := suite.DebianDoc{Packages: []string{"python3-pandas"}}
	withKnownEnv("pvlib/pvlib-python", "0.9", "E", suite.EnvironmentDoc{Debian: &deb})
	if len(deb.Packages) != 1 {
		t.Errorf("the spec's own entry was changed: %v", deb.Packages)
	}
}

// TestImportNotesKnownPlugins: an import that took plugins from the table says so, once per
// environment.
func TestImportNotesKnownPlugins(t *testing.T) {
	env := "pvlib/pvlib-python:\n  \"*\":\n    debian: {packages: [python3-tz]}\n"
	im := &importer{envs: map[string]suite.EnvironmentDoc{}}
	var err error
	if im.spec, err = readEnvSpec(strings.NewReader(env), "spec.yaml"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := im.environment(Instance{Repo: "pvlib/pvlib-python", Version: "0.9"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(im.sum.Notes) != 1 ||
		!strings.Contains(im.sum.Notes[0], "environment pvlib__pvlib-python-any: plugins pytest_mock") {
		t.Errorf("notes %q: want one for the environment", im.sum.Notes)
	}
	if e := im.envs["pvlib__pvlib-python-any"]; e.Plugins == nil || len(e.Debian.Packages) != 2 {
		t.Errorf("environment %+v: want pytest_mock and its package", e)
	}
}
