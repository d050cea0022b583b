package swebench

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
)

// pytestPlugin is a pytest plugin Tender knows: the module of its pytest11 entry point (what
// the bootstrap loads with -p, as autoload is off), the Debian package that holds it, and the
// ini options of its own that a project may set in its config files (which Tender never reads).
type pytestPlugin struct {
	Module   string
	Debian   string
	Ini      []string
	Defaults map[string]string // ini options Tender needs set (their sources are knownFacts')
}

// knownPlugins are the plugins of knownFacts and of `tender env infer`, by their distribution
// name as requirements spell it (lowercase, '-'). Each module was read from the entry_points.txt
// of Debian bookworm's package.
var knownPlugins = map[string]pytestPlugin{
	"pytest-mock": {Module: "pytest_mock", Debian: "python3-pytest-mock",
		Ini: []string{"mock_use_standalone_module", "mock_traceback_monkeypatch"}, Defaults: iniMock},
	"pytest-asyncio": {Module: "pytest_asyncio.plugin", Debian: "python3-pytest-asyncio", Ini: []string{"asyncio_mode"}},
	"pytest-timeout": {Module: "pytest_timeout", Debian: "python3-pytest-timeout",
		Ini: []string{"timeout", "timeout_method", "timeout_func_only"}},
	"pytest-httpbin": {Module: "pytest_httpbin.plugin", Debian: "python3-pytest-httpbin"},
}

// pluginByModule finds a known plugin by its module.
func pluginByModule(module string) (pytestPlugin, bool) {
	for _, p := range knownPlugins {
		if p.Module == module {
			return p, true
		}
	}
	return pytestPlugin{}, false
}

// withKnownEnv fills an --env entry that names no plugins with the plugins of Tender's table
// (knownFacts) for the repository and version, with their Debian packages on a debian image,
// and says what it did in one line ("" when the table has no plugins for it or the entry names
// its own).
func withKnownEnv(repo, version, name string, e suite.EnvironmentDoc) (suite.EnvironmentDoc, string) {
	f, _, ok := knownFact(repo, version)
	if !ok || len(f.Plugins) == 0 || e.Plugins != nil {
		return e, ""
	}
	plugins := slices.Clone(f.Plugins)
	e.Plugins = &plugins
	what := []string{"plugins " + strings.Join(plugins, ", ")}
	if len(f.Ini) > 0 && e.Ini == nil {
		ini := maps.Clone(f.Ini)
		e.Ini = &ini
		what = append(what, "ini "+strings.Join(suite.Verifier{Ini: ini}.PytestOptions(), " "))
	}
	var pkgs []string
	for _, m := range plugins {
		if p, ok := pluginByModule(m); ok {
			pkgs = append(pkgs, p.Debian)
		}
	}
	if e.Debian != nil {
		deb := *e.Debian
		deb.Packages = slices.Clone(deb.Packages)
		var added []string
		for _, p := range pkgs {
			if !slices.Contains(deb.Packages, p) {
				deb.Packages, added = append(deb.Packages, p), append(added, p)
			}
		}
		e.Debian = &deb
		if len(added) > 0 {
			what = append(what, "Debian packages "+strings.Join(added, ", "))
		}
	} else {
		what = append(what, "which the image must hold ("+strings.Join(pkgs, ", ")+" on Debian)")
	}
	return e, fmt.Sprintf("environment %s: %s, from Tender's table of known environments for %s (%s); "+
		"give plugins in --env to choose others, plugins: [] for none", name, strings.Join(what, "; "), repo,
		strings.Join(f.Sources, "; "))
}
