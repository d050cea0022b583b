package restore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

type configCase struct {
	name string
	file string // config path at the root
	cand string // candidate content; "" with deleted=true deletes the file
	// deleted: the candidate deleted the file
	deleted bool
	// base overrides the base content of file ("" keeps baseRepo's; "-" means not in the base)
	base string
	want string // resulting content; "" when a violation is expected
}

var configCases = []configCase{
	{
		name: "pyproject pytest table and version changed",
		file: "pyproject.toml",
		cand: strings.Replace(
			strings.Replace(baseTOML, `version = "1.0"`, `version = "1.1"`, 1),
			`addopts = "-q"`,
			`addopts = "-p evil"`,
			1,
		),
		want: strings.Replace(baseTOML, `version = "1.0"`, `version = "1.1"`, 1),
	},
	{
		name: "pyproject pytest table removed by the candidate",
		file: "pyproject.toml",
		cand: "[project]\nname = \"calc\"\nversion = \"2.0\"\n\n[tool.black]\nline-length = 100\n",
		want: "[project]\nname = \"calc\"\nversion = \"2.0\"\n\n[tool.black]\nline-length = 100\n\n" +
			"[tool.pytest.ini_options]\naddopts = \"-q\"\ntestpaths = [\"tests\"]\n\n",
	},
	{
		name: "pyproject pytest tables added where the base has none",
		file: "pyproject.toml",
		base: "[project]\nname = \"calc\"\n",
		cand: "[project]\nname = \"calc\"\n\n[tool.pytest]\nminversion = \"9.0\"\n\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n\n[tool.pytest_env]\nX = \"1\"\n",
		want: "[project]\nname = \"calc\"\n\n",
	},
	{
		name: "pyproject added by the candidate",
		file: "pyproject.toml",
		base: "-",
		cand: "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n[tool.ruff]\nline-length = 80\n",
		want: "[project]\nname = \"x\"\n[tool.ruff]\nline-length = 80\n",
	},
	{
		name: "pyproject edit outside the section only",
		file: "pyproject.toml",
		cand: baseTOML + "\n[tool.mypy]\nstrict = true\n",
		want: baseTOML + "\n[tool.mypy]\nstrict = true\n",
	},
	{
		name: "pyproject header-like text inside a multi-line string is not a header",
		file: "pyproject.toml",
		cand: "[project]\nname = \"calc\"\ndescription = \"\"\"\n[tool.pytest.ini_options]\naddopts = '-p evil'\n\"\"\"\n" + baseTOML[len("[project]\nname = \"calc\"\nversion = \"1.0\"\n"):],
		want: "[project]\nname = \"calc\"\ndescription = \"\"\"\n[tool.pytest.ini_options]\naddopts = '-p evil'\n\"\"\"\n" + baseTOML[len("[project]\nname = \"calc\"\nversion = \"1.0\"\n"):],
	},
	{
		name: "pyproject pytest options as a dotted key inside [tool]",
		file: "pyproject.toml",
		cand: baseTOML + "\n[tool]\npytest.ini_options.python_files = [\"*.py\"]\n",
	},
	{
		name: "pyproject pytest options only as a dotted key inside [tool]",
		file: "pyproject.toml",
		base: "[project]\nname = \"calc\"\n",
		cand: "[project]\nname = \"calc\"\n\n[tool]\npytest.ini_options.addopts = \"-p evil\"\n",
	},
	{
		name: "pyproject pytest options as a root dotted key",
		file: "pyproject.toml",
		base: "[project]\nname = \"calc\"\n",
		cand: "tool.pytest.ini_options.addopts = \"-p evil\"\n[project]\nname = \"calc\"\n",
	},
	{
		name: "pyproject pytest options as an inline table",
		file: "pyproject.toml",
		cand: "tool = { pytest = { ini_options = { addopts = \"-p evil\" } } }\n[project]\nname = \"calc\"\nversion = \"1.0\"\n",
	},
	{
		name: "pyproject duplicate pytest table",
		file: "pyproject.toml",
		cand: baseTOML + "\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n",
	},
	{
		name: "pyproject parse error",
		file: "pyproject.toml",
		cand: "[project\nname = \"calc\"\n",
	},
	{
		name:    "pyproject deleted while the base has a pytest table",
		file:    "pyproject.toml",
		deleted: true,
	},
	{
		name:    "pyproject deleted while the base has no pytest table",
		file:    "pyproject.toml",
		base:    "[project]\nname = \"calc\"\n",
		deleted: true,
		want:    "-",
	},
	{
		name: "setup.cfg [tool:pytest] and metadata changed",
		file: "setup.cfg",
		cand: strings.Replace(
			strings.Replace(baseCFG, "version = 1.0", "version = 1.1", 1),
			"addopts = -q",
			"addopts = -p evil",
			1,
		),
		want: strings.Replace(baseCFG, "version = 1.0", "version = 1.1", 1),
	},
	{
		name: "setup.cfg multi-line value changed",
		file: "setup.cfg",
		cand: strings.Replace(baseCFG, "    slow: slow tests\n", "    slow: slow tests\n    evil: -p evil\n", 1),
		want: baseCFG,
	},
	{
		name: "setup.cfg [tool:pytest] added where the base has none, as the last section without newline",
		file: "setup.cfg",
		base: "[metadata]\nname = calc\n",
		cand: "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -p evil",
		want: "[metadata]\nname = calc\n\n",
	},
	{
		name: "setup.cfg duplicate section",
		file: "setup.cfg",
		cand: baseCFG + "\n[tool:pytest]\naddopts = -p evil\n",
	},
	{
		name: "setup.cfg duplicate key",
		file: "setup.cfg",
		cand: strings.Replace(baseCFG, "addopts = -q\n", "addopts = -q\naddopts = -p evil\n", 1),
	},
	{
		name: "setup.cfg deleted",
		file: "setup.cfg", deleted: true,
	},
	{
		name: "tox.ini [pytest] and [tox] changed",
		file: "tox.ini",
		cand: "[tox]\nenvlist = py312\n\n[pytest]\naddopts = -p evil\n",
		want: "[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n",
	},
	{
		name: "tox.ini inline comment kept as part of a value",
		file: "tox.ini",
		cand: "[tox]\nenvlist = py311 # and more\n\n[pytest]\naddopts = -q # -p evil\n",
		want: "[tox]\nenvlist = py311 # and more\n\n[pytest]\naddopts = -q\n",
	},
	{
		name: "tox.ini indented [pytest] header",
		file: "tox.ini",
		cand: "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n\n  [pytest]\naddopts = -p evil\n",
	},
	{
		name: "tox.ini duplicate [pytest]",
		file: "tox.ini",
		cand: baseTox + "[pytest]\naddopts = -p evil\n",
	},
	{
		name: "tox.ini parse error",
		file: "tox.ini",
		cand: "[tox\nenvlist = py311\n",
	},
	{
		name:    "tox.ini deleted",
		file:    "tox.ini",
		deleted: true,
	},
}

func TestConfigSections(t *testing.T) {
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			repo := map[string]file{}
			for p, f := range baseRepo {
				repo[p] = f
			}
			switch tc.base {
			case "-":
				delete(repo, tc.file)
			case "":
			default:
				repo[tc.file] = file{Data: tc.base}
			}
			f := newFixture(t, repo)
			if tc.deleted {
				f.remove(t, tc.file)
			} else {
				f.write(t, tc.file, tc.cand)
			}
			out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
			if err != nil {
				t.Fatal(err)
			}
			checkConfigOutcome(t, f, tc, out)
		})
	}
}

func checkConfigOutcome(t *testing.T, f fixture, tc configCase, out Outcome) {
	t.Helper()
	if tc.want == "" {
		want := []report.Reason{{Code: report.CodeConfigUnverifiable, Path: tc.file}}
		if diff := cmp.Diff(want, out.Violations, ignoreDetail); diff != "" {
			t.Errorf("Violations (-want +got):\n%s", diff)
		}
		for _, v := range out.Violations {
			t.Logf("violation: %s", v.Detail)
		}
		if len(out.Violations) == 1 && !strings.Contains(out.Violations[0].Detail, tc.file) {
			t.Errorf("violation detail %q does not name the file", out.Violations[0].Detail)
		}
		return
	}
	if len(out.Violations) > 0 {
		t.Fatalf("unexpected violations: %+v", out.Violations)
	}
	if tc.want == "-" {
		if _, err := os.Stat(filepath.Join(f.ws, tc.file)); !os.IsNotExist(err) || !out.TestedAsSubmitted {
			t.Errorf("deleted file: stat %v, outcome %+v", err, out)
		}
		return
	}
	got := f.read(t, tc.file)
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("%s after Restore (-want +got):\n%s", tc.file, diff)
	}
	changed := got != tc.cand
	if out.TestedAsSubmitted == changed || (len(out.Sections) == 1) != changed {
		t.Errorf("changed=%v but outcome %+v", changed, out)
	}
}
