package suite

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pluginSuite is envSuite with plugins and ini options: the suite's, one environment's own,
// and one environment that clears both.
var pluginSuite = strings.NewReplacer(
	"  setup: [[\"true\"]]\n", "  setup: [[\"true\"]]\n  plugins: [pytest_timeout]\n  ini: {timeout: 15}\n",
	"      packages: [python3-tz]\n", "      packages: [python3-tz]\n    plugins: [pytest_asyncio, pytest_timeout]\n"+
		"    ini: {asyncio_mode: auto, timeout: 15, asyncio_default_fixture_loop_scope: \"function\"}\n",
	"    python_path: []\n", "    python_path: []\n    plugins: []\n    ini: {}\n",
).Replace(envSuite)

// TestLoadPlugins: a pair runs with its environment's plugins and ini options, or the suite's
// when the environment names none, or none when it clears them; the options reach pytest as
// -o KEY=VALUE in key order, and they are in the input digest.
func TestLoadPlugins(t *testing.T) {
	s, err := Load(writeLoadSuite(t, pluginSuite, envFiles), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Plugins, Options []string
	}
	want := map[string]got{
		"p1": {[]string{"pytest_asyncio", "pytest_timeout"},
			[]string{
				"-o",
				"asyncio_default_fixture_loop_scope=function",
				"-o",
				"asyncio_mode=auto",
				"-o",
				"timeout=15",
			}},
		"p2": {[]string{}, nil},
		"p3": {[]string{"pytest_timeout"}, []string{"-o", "timeout=15"}},
	}
	for _, p := range s.Pairs {
		v := s.VerifierFor(p)
		if diff := cmp.Diff(want[p.ID], got{v.Plugins, v.PytestOptions()}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p.ID, diff)
		}
	}

	plain, err := Load(writeLoadSuite(t, envSuite, envFiles), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range plain.Pairs {
		if p.InputDigest == s.Pairs[i].InputDigest {
			t.Errorf("%s: the same input digest with and without plugins: --resume would keep a stale result", p.ID)
		}
	}
	other, err := Load(
		writeLoadSuite(t, strings.Replace(pluginSuite, "asyncio_mode: auto", "asyncio_mode: strict", 1), envFiles),
		LoadOptions{},
	)
	if err != nil {
		t.Fatal(err)
	}
	if other.Pairs[0].InputDigest == s.Pairs[0].InputDigest || other.Pairs[2].InputDigest != s.Pairs[2].InputDigest {
		t.Error("an ini value of p1's environment: want p1's input digest changed and p3's kept")
	}
}

// TestEmptyIniKeepsDigests: a verifier without ini options digests as it did before ini
// existed (the key is left out), so --resume keeps the results of today's suites.
func TestEmptyIniKeepsDigests(t *testing.T) {
	for _, v := range []Verifier{{}, {Ini: map[string]string{}}} {
		doc, err := json.Marshal(v)
		if err != nil || strings.Contains(string(doc), "Ini") {
			t.Errorf("verifier %+v digests as %s (%v): want no Ini key", v, doc, err)
		}
	}
	doc, _ := json.Marshal(Verifier{Ini: map[string]string{"timeout": "5"}})
	if !strings.Contains(string(doc), `"Ini":{"timeout":"5"}`) {
		t.Errorf("verifier with ini digests as %s: want its options in it", doc)
	}
}

// TestMalformedPlugins: a plugin or ini option that could change what Tender relies on, or that
// pytest could not take, is refused with one line naming its field. Each row is a way a suite
// author could write it.
func TestMalformedPlugins(t *testing.T) {
	sub := func(old, new string) string { return strings.Replace(pluginSuite, old, new, 1) }
	const envIni = "ini: {asyncio_mode: auto, timeout: 15, asyncio_default_fixture_loop_scope: \"function\"}"
	ini := func(kv string) string { return sub(envIni, "ini: {"+kv+"}") }
	tests := []struct {
		name, manifest, field string
		want                  []string
	}{
		{
			"plugin disabling one",
			sub("[pytest_asyncio, pytest_timeout]", "[\"no:cacheprovider\"]"),
			"environments.deb.plugins[0]",
			[]string{"not a plugin module name"},
		},
		{
			"plugin as an option",
			sub("[pytest_asyncio, pytest_timeout]", "[\"-pevil\"]"),
			"environments.deb.plugins[0]",
			[]string{"not a plugin module name"},
		},
		{
			"plugin with a space",
			sub("[pytest_asyncio, pytest_timeout]", "[\"pytest_mock -x\"]"),
			"environments.deb.plugins[0]",
			nil,
		},
		{
			"plugin path",
			sub("[pytest_asyncio, pytest_timeout]", "[\"evil/plugin\"]"),
			"environments.deb.plugins[0]",
			nil,
		},
		{"plugin dots", sub("[pytest_asyncio, pytest_timeout]", "[\"a..b\"]"), "environments.deb.plugins[0]", nil},
		{
			"plugin twice",
			sub("[pytest_asyncio, pytest_timeout]", "[pytest_timeout, pytest_timeout]"),
			"environments.deb.plugins[1]",
			[]string{"twice"},
		},
		{"suite plugin", sub("plugins: [pytest_timeout]", "plugins: [\"\"]"), "verifier.plugins[0]", nil},
		{
			"addopts",
			ini("addopts: -p evil"),
			"environments.deb.ini.addopts",
			[]string{"cannot be set", "command-line options"},
		},
		{"addopts upper case", ini("ADDOPTS: -p evil"), "environments.deb.ini.ADDOPTS", []string{"cannot be set"}},
		{"junit family", ini("junit_family: xunit2"), "environments.deb.ini.junit_family", []string{"JUnit report"}},
		{"junit logging", ini("junit_logging: all"), "environments.deb.ini.junit_logging", []string{"JUnit report"}},
		{
			"junit suite name",
			ini("junit_suite_name: x"),
			"environments.deb.ini.junit_suite_name",
			[]string{"JUnit report"},
		},
		{"python_files", ini("python_files: \"*.py\""), "environments.deb.ini.python_files", []string{"default rules"}},
		{
			"python_functions",
			ini("python_functions: check_*"),
			"environments.deb.ini.python_functions",
			[]string{"default rules"},
		},
		{"python_classes", ini("python_classes: Check"), "environments.deb.ini.python_classes", nil},
		{"pythonpath", ini("pythonpath: src"), "environments.deb.ini.pythonpath", []string{"python_path"}},
		{"testpaths", ini("testpaths: tests"), "environments.deb.ini.testpaths", []string{"no effect"}},
		{"cache_dir", ini("cache_dir: /tmp/x"), "environments.deb.ini.cache_dir", nil},
		{"key with =", ini("\"a=b\": c"), "environments.deb.ini.a=b", []string{"not an ini key"}},
		{"key as an option", ini("\"-p\": evil"), "environments.deb.ini.-p", []string{"not an ini key"}},
		{"empty key", ini("\"\": x"), "environments.deb.ini.", []string{"not an ini key"}},
		{
			"long key",
			ini(strings.Repeat("k", 65) + ": x"),
			"environments.deb.ini." + strings.Repeat("k", 65),
			[]string{"not an ini key"},
		},
		{
			"value with a newline",
			ini("timeout: \"15\\naddopts=-p evil\""),
			"environments.deb.ini.timeout",
			[]string{"one-line value"},
		},
		{"value with a tab", ini("timeout: \"15\\t\""), "environments.deb.ini.timeout", []string{"one-line value"}},
		{
			"long value",
			ini("timeout: " + strings.Repeat("1", maxIniValue+1)),
			"environments.deb.ini.timeout",
			[]string{"at most 1024"},
		},
		{"value a list", ini("timeout: [1, 2]"), "environments.deb.ini.timeout", []string{"got a list, want a string"}},
		{"suite ini", sub("ini: {timeout: 15}", "ini: {junit_family: legacy}"), "verifier.ini.junit_family", nil},
		{
			"plugins for go",
			strings.Replace(goodSuite, "pairs:", "verifier: {runner: go, plugins: [pytest_mock]}\npairs:", 1),
			"verifier.plugins",
			[]string{"runner: pytest only"},
		},
		{
			"ini for go",
			strings.Replace(
				goodSuite,
				"pairs:",
				"verifier: {runner: go}\nenvironments:\n  e: {image: "+pinnedID+", ini: {timeout: \"5\"}}\npairs:",
				1,
			),
			"environments.e.ini",
			[]string{"runner: pytest only"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadNoPanic(t, writeLoadSuite(t, tt.manifest, envFiles))
			if !errors.Is(err, ErrBadSuite) {
				t.Fatalf("Load: %v, want an error wrapping ErrBadSuite", err)
			}
			msg := err.Error()
			var le *LoadError
			if strings.Contains(msg, "\n") || !errors.As(err, &le) || le.Field != tt.field {
				t.Errorf("error %q: want one line for field %q, got %#v", msg, tt.field, le)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestCheckEnvironmentDoc: an environment outside a suite (an --env spec entry) is checked as
// the loader checks it, its dockerfile aside, and the error names the file and the entry.
func TestCheckEnvironmentDoc(t *testing.T) {
	plugins := []string{"pytest_mock"}
	ini := map[string]string{"asyncio_mode": "auto"}
	good := []EnvironmentDoc{
		{Debian: &DebianDoc{Packages: []string{"python3-pytest-mock"}}, Plugins: &plugins, Ini: &ini},
		{Dockerfile: "envs/x/Dockerfile", Plugins: &plugins},
		{Image: pinnedID},
	}
	for i, e := range good {
		if err := CheckEnvironmentDoc("spec.yaml", "acme/calc version \"1\"", e); err != nil {
			t.Errorf("good[%d]: %v", i, err)
		}
	}
	bad := []string{"no:cacheprovider"}
	addopts := map[string]string{"addopts": "-p evil"}
	for _, tt := range []struct {
		e    EnvironmentDoc
		want string
	}{
		{EnvironmentDoc{Image: pinnedID, Plugins: &bad}, `spec.yaml: acme/calc version "1".plugins[0]: "no:cacheprovider" is not a plugin module name`},
		{EnvironmentDoc{Dockerfile: "D", Ini: &addopts}, `spec.yaml: acme/calc version "1".ini.addopts: cannot be set`},
		{EnvironmentDoc{Debian: &DebianDoc{Packages: []string{"x y"}}}, `debian.packages[0]: "x y" is not a Debian package name`},
		{EnvironmentDoc{Image: "tender-verifier/pytest"}, "is not pinned"},
		{EnvironmentDoc{Image: pinnedID, Dockerfile: "D"}, "sets 2 of debian, dockerfile, image and image_template"},
	} {
		err := CheckEnvironmentDoc("spec.yaml", "acme/calc version \"1\"", tt.e)
		if !errors.Is(err, ErrBadSuite) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.e, err, tt.want)
		}
	}
}
