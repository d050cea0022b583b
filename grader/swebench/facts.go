package swebench

import (
	"maps"
	"slices"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
)

// envFact is what Tender knows about the environment a repository's tests need at some of
// its SWE-bench versions: a Debian recipe (the suite whose Python fits, the packages that hold
// the dependencies), the pytest plugins to load and their ini options, the workspace
// directories for sys.path. Every fact carries its source in Sources: SWE-bench's harness
// specs (MAP_REPO_VERSION_TO_SPECS in swebench/harness/constants), the project's own
// setup.py/setup.cfg/pyproject.toml at that version, a run of Tender here, or Debian's
// package name (each package was looked up with the host's apt-cache on Debian bookworm).
//
// Unsupported says why no environment of this kind can grade the repository (compiled
// extensions to build, tests that are not pytest's); such an entry gives no environment.
type envFact struct {
	Versions    []string // SWE-bench versions it covers; nil: every version no other entry lists
	Python      string   // the Python SWE-bench's harness uses, for the record
	Suite       string   // the Debian suite whose python3 fits; "" is the pytest image's (bookworm)
	Packages    []string // Debian packages beyond python3 and python3-pytest
	Plugins     []string // pytest plugin modules (the module of the pytest11 entry point)
	Ini         map[string]string
	PythonPath  []string
	Lacks       []string // requirements Debian has no package for: tests that need them fail
	Unsupported string
	Sources     []string
}

// Debian packages shared by several entries.
var (
	debAstroid  = []string{"python3-wrapt", "python3-lazy-object-proxy", "python3-typing-extensions", "python3-distutils"}
	debScipy    = []string{"python3-numpy", "python3-pandas", "python3-scipy", "python3-matplotlib"}
	debSphinx   = []string{"python3-docutils", "python3-pygments", "python3-jinja2", "python3-babel", "python3-alabaster", "python3-imagesize", "python3-snowballstemmer", "python3-requests", "python3-packaging", "python3-html5lib", "python3-sphinxcontrib.applehelp", "python3-sphinxcontrib.devhelp", "python3-sphinxcontrib.htmlhelp", "python3-sphinxcontrib.jsmath", "python3-sphinxcontrib.qthelp", "python3-sphinxcontrib.serializinghtml"}
	debFlask    = []string{"python3-werkzeug", "python3-jinja2", "python3-itsdangerous", "python3-click", "python3-blinker"}
	debRequests = []string{"python3-urllib3", "python3-idna", "python3-chardet", "python3-charset-normalizer", "python3-certifi", "python3-socks", "python3-trustme", "python3-pytest-httpbin"}
	debPylint   = []string{"python3-astroid", "python3-isort", "python3-mccabe", "python3-tomlkit", "python3-platformdirs", "python3-dill", "python3-typing-extensions"}
	debSqlfluff = []string{"python3-click", "python3-colorama", "python3-jinja2", "python3-yaml", "python3-regex", "python3-tblib", "python3-tqdm", "python3-pathspec", "python3-appdirs", "python3-chardet", "python3-typing-extensions", "python3-toml", "diff-cover"}
	debPvlib    = []string{"python3-numpy", "python3-pandas", "python3-scipy", "python3-tz", "python3-requests", "python3-h5py", "python3-pytest-mock"}
	debPyvista  = []string{"python3-vtk9", "python3-numpy", "python3-imageio", "python3-pooch", "python3-matplotlib"}
	srcHarness  = "SWE-bench's harness specs (swebench/harness/constants/python.py, MAP_REPO_VERSION_TO_SPECS)"
	srcDebian   = "each package name looked up with apt-cache policy on Debian bookworm"
	srcCompiled = "the tests import compiled extensions that the harness builds with pip install -e .; a workspace at the base commit has none, and a Debian package of another version would be imported in its place"
	srcMockTB   = "measured: pytest-mock wraps unittest.mock's assert methods to shorten tracebacks, which the " +
		"bootstrap's tripwire takes for tampering (clikit's runs); mock_traceback_monkeypatch = false leaves them be"
	iniMock      = map[string]string{"mock_traceback_monkeypatch": "false"}
	srcPy311Fits = "its tests run on bookworm's Python 3.11 (SWE-bench's harness uses 3.9; nothing at this version needs an older one)"
)

// knownFacts is Tender's table of environments by SWE-bench repository (OWNER/NAME): the
// repositories of SWE-bench Lite (test and dev splits) and the real projects of
// fixtures/realworld. Entries marked "measured" were graded here (fixtures/realworld/README.md);
// the others were read from the sources they name.
var knownFacts = map[string][]envFact{
	"pylint-dev/astroid": {
		{Versions: []string{"2.5", "2.6", "2.7", "2.8", "2.9"}, Python: "3.9", Suite: "bullseye", Packages: debAstroid,
			Sources: []string{srcHarness + ": Python 3.9",
				"astroid's setup.cfg install_requires: lazy_object_proxy, wrapt, typing-extensions (Python < 3.10)",
				"astroid up to 2.10 imports distutils (astroid/modutils.py), a package of its own on Debian",
				"measured: pylint-dev__astroid-1268 (2.9) fails test_is_property on Python 3.11, so bullseye's 3.9",
				srcDebian}},
		{Python: "3.9", Packages: debAstroid,
			Sources: []string{srcHarness + ": Python 3.9",
				"astroid's setup.cfg/pyproject.toml install_requires: lazy_object_proxy, wrapt, typing-extensions",
				"astroid up to 2.10 imports distutils (astroid/modutils.py)",
				"measured: pylint-dev__astroid-1196, -1333, -1978 resolve on bookworm's Python 3.11", srcDebian}},
	},
	"sdispater/clikit": {{Packages: []string{"python3-pastel", "python3-pylev", "python3-crashtest", "python3-pytest-mock"},
		Plugins: []string{"pytest_mock"}, PythonPath: []string{"src"}, Ini: iniMock,
		Sources: []string{srcMockTB, "clikit 0.6's pyproject.toml dependencies: pastel, pylev, crashtest; dev-dependencies: pytest-mock",
			"its package is under src/ (pyproject.toml packages from src)",
			"tests/utils/test_terminal.py uses pytest-mock's mocker fixture; the plugin's pytest11 module is pytest_mock",
			"measured: fixtures/realworld/clikit", srcDebian}}},
	"aio-libs/async-lru": {{Packages: []string{"python3-pytest-asyncio", "python3-pytest-timeout"},
		Plugins: []string{"pytest_asyncio.plugin", "pytest_timeout"},
		Ini:     map[string]string{"asyncio_mode": "auto", "timeout": "15", "xfail_strict": "true"},
		Sources: []string{"async-lru 2.0's setup.cfg [tool:pytest]: asyncio_mode = auto, timeout = 15, xfail_strict = true " +
			"(filterwarnings = error is left out: it turns pytest's warning about the preloaded plugin into an error)",
			"requirements-dev: pytest-asyncio, pytest-timeout; pytest11 modules pytest_asyncio.plugin, pytest_timeout",
			"measured: fixtures/realworld/async-lru", srcDebian}}},
	"astanin/python-tabulate": {{Packages: []string{"python3-wcwidth"},
		Sources: []string{"tabulate 0.9's setup.py extras widechars: wcwidth; without it the wide-character tests are skipped",
			"measured: fixtures/realworld/tabulate", srcDebian}}},
	"jwodder/javaproperties": {{Packages: []string{"python3-dateutil", "python3-pytest-mock"},
		Plugins: []string{"pytest_mock"}, PythonPath: []string{"src"}, Ini: iniMock,
		Sources: []string{srcMockTB, "javaproperties 0.8: package under src/ (setup.cfg package_dir = =src)",
			"test/test_dumps.py imports dateutil; its conftest's fixed_timestamp fixture uses pytest-mock's mocker " +
				"(tox.ini deps: pytest-mock, python-dateutil)", srcDebian}}},
	"r1chardj0n3s/parse": {{Sources: []string{"parse 1.20 is one module with no dependency (setup.py); " +
		"measured: fixtures/realworld/parse"}}},
	"mahmoud/boltons": {{Sources: []string{"boltons 25.0 has no dependency (setup.py); measured: fixtures/realworld/boltons"}}},

	// SWE-bench Lite, dev split.
	"marshmallow-code/marshmallow": {
		{Versions: []string{"2.18", "2.19", "2.20"}, Python: "3.9", Suite: "bullseye",
			Packages: []string{"python3-dateutil", "python3-tz", "python3-simplejson"},
			Sources: []string{srcHarness + ": Python 3.9, pip install -e '.[dev]'",
				"marshmallow 2.x uses collections.Mapping, which Python 3.10 removed (issue 20): bullseye's 3.9",
				"setup.py extras tests: pytest, pytz, simplejson, python-dateutil", srcDebian}},
		{Python: "3.9", PythonPath: []string{"src"}, Packages: []string{"python3-tz", "python3-simplejson"},
			Sources: []string{srcHarness + ": Python 3.9, pip install -e '.[dev]'",
				"marshmallow 3.x keeps its package under src/ (setup.py package_dir)",
				"setup.py extras tests: pytest, pytz, simplejson", srcPy311Fits, srcDebian}},
	},
	"pvlib/pvlib-python": {{Python: "3.9", Packages: debPvlib, Plugins: []string{"pytest_mock"}, Ini: iniMock,
		Sources: []string{srcMockTB, srcHarness + ": Python 3.9, pip install -e .[all]",
			"pvlib's setup.py install_requires: numpy, pandas, pytz, requests, scipy, h5py; extras test: pytest-mock",
			"its tests use pytest-mock's mocker fixture (issue 19)", srcDebian}}},
	"pydicom/pydicom": {{Python: "3.6-3.11 by version", Packages: []string{"python3-numpy"},
		Sources: []string{srcHarness + ": packages numpy, pip install -e .",
			"pydicom is pure Python; numpy is optional (pixel data tests skip without it)", srcDebian}}},
	"sqlfluff/sqlfluff": {{Python: "3.9", Packages: debSqlfluff,
		Sources: []string{srcHarness + ": Python 3.9, requirements.txt",
			"sqlfluff's setup.py/setup.cfg install_requires: click, colorama, Jinja2, PyYAML, regex, tblib, tqdm, " +
				"pathspec, appdirs, chardet, typing_extensions, toml, diff-cover", srcDebian + " (diff-cover is Debian's diff-cover, not python3-)"}}},
	"pyvista/pyvista": {{Python: "3.9", Packages: debPyvista, Lacks: []string{"scooby"},
		Sources: []string{srcHarness + ": Python 3.9, requirements.txt",
			"pyvista's setup.py install_requires: numpy, imageio, pooch, scooby, vtk; matplotlib for its plotting tests",
			srcDebian + "; Debian has no scooby", "python3-vtk9 and its libraries are large (issue 20: 265 MiB)"}}},

	// SWE-bench Lite, test split.
	"pydata/xarray": {{Python: "3.10", Packages: []string{"python3-numpy", "python3-pandas", "python3-packaging", "python3-scipy"},
		Sources: []string{srcHarness + ": Python 3.10, environment.yml, numpy 1.23, pandas 1.5.3",
			"xarray's setup.cfg install_requires: numpy, pandas, packaging; scipy for the interpolation tests",
			"bookworm has pandas 1.5.3 and numpy 1.24", srcDebian}}},
	"mwaskom/seaborn": {{Python: "3.9", Packages: debScipy,
		Sources: []string{srcHarness + ": Python 3.9; matplotlib 3.7.2, numpy 1.25.2, pandas 1.3.5 to 2.0.0, scipy 1.11.2",
			"seaborn's pyproject.toml dependencies: numpy, pandas, matplotlib; scipy is optional (stats)",
			"bookworm has matplotlib 3.6.3, numpy 1.24, pandas 1.5.3, scipy 1.10", srcDebian}}},
	"pallets/flask": {{Python: "3.9-3.11 by version", Packages: debFlask,
		Sources: []string{srcHarness + ": Werkzeug 2.3.7, Jinja2 3.x, itsdangerous 2.1.2, click 8.x",
			"flask's pyproject.toml dependencies: Werkzeug, Jinja2, itsdangerous, click, blinker",
			"bookworm has Werkzeug 2.2.2: instances that need 2.3's API fail", srcDebian}}},
	"psf/requests": {{Python: "3.9", Packages: debRequests, Plugins: []string{"pytest_httpbin.plugin"},
		Sources: []string{srcHarness + ": Python 3.9, pip install .",
			"requests' setup.py install_requires: charset_normalizer/chardet, idna, urllib3, certifi; extras socks",
			"requirements-dev.txt: pytest-httpbin, trustme; the httpbin fixture is pytest-httpbin's " +
				"(pytest11 module pytest_httpbin.plugin, read from Debian's package), served on loopback",
			srcDebian}}},
	"pylint-dev/pylint": {{Python: "3.9", Packages: debPylint,
		Sources: []string{srcHarness + ": Python 3.9, requirements.txt; astroid is pinned per version",
			"pylint's setup.cfg/pyproject.toml install_requires: astroid, isort, mccabe, tomlkit, platformdirs, dill",
			"bookworm has astroid 2.14.2, which only pylint 2.16 accepts: other versions fail on astroid's API",
			srcDebian}}},
	"sphinx-doc/sphinx": {{Python: "3.9", Packages: debSphinx,
		Sources: []string{srcHarness + ": Python 3.9, pip install -e .[test], Jinja2 3.0.3 (< 3.0 before 4.5)",
			"sphinx's setup.py/pyproject.toml install_requires: docutils, Pygments, Jinja2, babel, alabaster, " +
				"imagesize, snowballstemmer, requests, packaging; extras test: html5lib",
			"sphinx 2.0 and later install_requires sphinxcontrib-applehelp, -devhelp, -htmlhelp, -jsmath, -qthelp, " +
				"-serializinghtml",
			srcDebian}}},
	"astropy/astropy":           {{Python: "3.9", Unsupported: srcCompiled, Sources: []string{srcHarness}}},
	"scikit-learn/scikit-learn": {{Python: "3.6-3.9", Unsupported: srcCompiled, Sources: []string{srcHarness}}},
	"matplotlib/matplotlib":     {{Python: "3.5-3.11", Unsupported: srcCompiled, Sources: []string{srcHarness}}},
	"pytest-dev/pytest": {{Python: "3.9", Unsupported: "the code under test is pytest itself: its _pytest/ and pytest.py " +
		"would shadow the pytest that runs the tests, which Tender refuses (protected shadowing modules)",
		Sources: []string{srcHarness, "DESIGN.md invariant 5"}}},
	"django/django": {{Python: "3.5-3.11 by version", Unsupported: "its tests run with tests/runtests.py, and " +
		"SWE-bench's test names (test_x (module.Class)) are not pytest node IDs", Sources: []string{srcHarness + ": TEST_DJANGO"}}},
	"sympy/sympy": {{Python: "3.9", Unsupported: "its tests run with bin/test, and SWE-bench's test names are bare " +
		"function names, not pytest node IDs", Sources: []string{srcHarness + ": TEST_SYMPY"}}},
}

// knownFact returns the table's entry for a repository and version: the entry that lists the
// version, else the one for every version.
func knownFact(repo, version string) (envFact, string, bool) {
	var any *envFact
	for i, f := range knownFacts[repo] {
		if f.Versions == nil {
			any = &knownFacts[repo][i]
			continue
		}
		if slices.Contains(f.Versions, version) {
			return f, version, true
		}
	}
	if any != nil {
		return *any, AnyVersion, true
	}
	return envFact{}, "", false
}

// needsEnvironment reports whether the entry asks for anything beyond the pytest image.
func (f envFact) needsEnvironment() bool {
	return f.Unsupported == "" && (len(f.Packages) > 0 || f.Suite != "" || len(f.Plugins) > 0 || len(f.Ini) > 0 ||
		len(f.PythonPath) > 0)
}

// doc is the entry as a suite environment.
func (f envFact) doc() suite.EnvironmentDoc {
	e := suite.EnvironmentDoc{Debian: &suite.DebianDoc{Suite: f.Suite, Packages: slices.Clone(f.Packages)}}
	if f.Plugins != nil {
		p := slices.Clone(f.Plugins)
		e.Plugins = &p
	}
	if f.Ini != nil {
		ini := maps.Clone(f.Ini)
		e.Ini = &ini
	}
	if f.PythonPath != nil {
		p := slices.Clone(f.PythonPath)
		e.PythonPath = &p
	}
	return e
}

// describe says what the environment is, in one line.
func (f envFact) describe() string {
	suiteName := f.Suite
	if suiteName == "" {
		suiteName = "bookworm"
	}
	what := []string{"Debian " + suiteName}
	if len(f.Packages) > 0 {
		what = append(what, "packages "+strings.Join(f.Packages, ", "))
	}
	if len(f.Plugins) > 0 {
		what = append(what, "plugins "+strings.Join(f.Plugins, ", "))
	}
	if len(f.Ini) > 0 {
		what = append(what, "ini "+strings.Join(suite.Verifier{Ini: f.Ini}.PytestOptions(), " "))
	}
	if len(f.PythonPath) > 0 {
		what = append(what, "python_path "+strings.Join(f.PythonPath, ", "))
	}
	if len(f.Lacks) > 0 {
		what = append(what, "lacking "+strings.Join(f.Lacks, ", ")+" (not in Debian)")
	}
	return strings.Join(what, "; ")
}
