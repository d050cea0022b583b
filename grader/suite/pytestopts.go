package suite

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plugins and ini options: what a project's tests need from pytest beyond Tender's own
// command line. pytest runs with -c /dev/null and autoload off, so nothing of a project's
// setup.cfg, tox.ini or entry points reaches it; a suite names each plugin module (-p NAME,
// preloaded before the workspace is on sys.path) and each ini option (-o KEY=VALUE).
//
// The suite's author is trusted: the suite files are the evaluator's, never the candidate's.
// The rules keep what Tender relies on Tender's: the report it reads (junit_*), the options
// it gives (addopts could add any), what is collected (python_*: the required tests and the
// sentinels are found by pytest's default rules), and sys.path (pythonpath: the bootstrap
// orders it). Every other key is the author's call, as plugins register keys Tender cannot
// list.

var (
	rePlugin = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	reIniKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// maxIniValue caps one ini value.
const maxIniValue = 1024

// reservedIni are the ini keys a suite may not set, and why.
var reservedIni = map[string]string{
	"addopts":          "it adds command-line options, which Tender alone gives; name plugins in plugins and set other keys one by one",
	"pythonpath":       "the bootstrap orders sys.path itself; list the directories in python_path",
	"python_files":     "Tender finds the required tests and its sentinels by pytest's default rules",
	"python_classes":   "Tender finds the required tests and its sentinels by pytest's default rules",
	"python_functions": "Tender finds the required tests and its sentinels by pytest's default rules",
	"testpaths":        "it has no effect: Tender names the tests to run",
	"norecursedirs":    "it has no effect: Tender names the tests to run",
	"cache_dir":        "the cache is off (-p no:cacheprovider)",
}

func iniRefusal(key string) string {
	if strings.HasPrefix(key, "junit_") {
		return "Tender reads the JUnit report and sets its options itself"
	}
	return reservedIni[key]
}

// plugins checks a list of plugin modules: dotted Python module names, each once.
func (l *loader) plugins(field string, list []string, runner string) error {
	for i, p := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !rePlugin.MatchString(p) {
			return l.errf(f, "%q is not a plugin module name; write the module pytest's -p loads, e.g. pytest_mock", p)
		}
		if slices.Index(list, p) != i {
			return l.errf(f, "%q is listed twice; list each plugin once", p)
		}
	}
	if len(list) > 0 && runner != RunnerPytest {
		return l.errf(field, "is for runner: pytest only (the bootstrap loads them); remove it")
	}
	return nil
}

// ini checks ini options: a key pytest or a plugin reads, and a one-line value.
func (l *loader) ini(field string, m map[string]string, runner string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f := field + "." + k
		if !reIniKey.MatchString(k) {
			return l.errf(
				f,
				"is not an ini key (letters, digits and '_', at most 64); write it as in setup.cfg, e.g. asyncio_mode",
			)
		}
		if why := iniRefusal(strings.ToLower(k)); why != "" {
			return l.errf(f, "cannot be set: %s", why)
		}
		v := m[k]
		if len(v) > maxIniValue || !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
			return l.errf(
				f,
				"is not a one-line value of at most %d bytes; pytest's -o takes a single line",
				maxIniValue,
			)
		}
	}
	if len(m) > 0 && runner != RunnerPytest {
		return l.errf(field, "is for runner: pytest only (the bootstrap gives it to pytest); remove it")
	}
	return nil
}

// PytestOptions are the ini options as pytest's command line takes them, by key: -o KEY=VALUE.
func (v Verifier) PytestOptions() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(v.Ini)) {
		out = append(out, "-o", k+"="+v.Ini[k])
	}
	return out
}

// CheckEnvironmentDoc checks an environment written outside a suite (an entry of the --env spec
// of `tender import swebench`) as the loader checks it in a suite, but for its dockerfile, which
// the import copies in and the loader checks then. file names the spec, field the entry.
func CheckEnvironmentDoc(file, field string, r EnvironmentDoc) error {
	l := &loader{manifest: file}
	env := &Environment{Name: "spec"}
	if err := l.envKind(field, r, RunnerPytest); err != nil {
		return err
	}
	var err error
	switch {
	case r.Debian != nil:
		err = l.debianEnv(field+".debian", env, *r.Debian)
	case r.Image != "":
		err = l.imageEnv(field+".image", env, r.Image)
	case r.ImageTemplate != "":
		err = l.templateEnv(field, env, r)
	}
	if err != nil {
		return err
	}
	if r.From != "" {
		return l.errf(field+".from", "names another environment, but the import names the environments it "+
			"writes; start the Dockerfile FROM an image instead")
	}
	if err := l.envBuild(field, env, r); err != nil {
		return err
	}
	return l.envSettings(field, env, r, RunnerPytest)
}
