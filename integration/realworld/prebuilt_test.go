package realworld

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// The look-alike of a prebuilt SWE-bench instance image, built FROM the pytest image (nothing
// can be pulled here): the test interpreter in an environment of its own (a venv at a conda
// env's path, with the system's pytest), and the project installed editable at /testbed, both
// ways an install does it: setuptools' finder on sys.meta_path and a path entry in
// easy-install.pth. /testbed holds the *fixed* project, with a canary that warns when it is
// imported (pytest's warnings summary reaches the log; its capture would swallow a print): if
// the tests imported it, a wrong patch would pass and the log would say so.
var lookalikeFiles = map[string]string{
	"envs/lookalike/Dockerfile": `FROM tender-verifier/pytest
USER root
COPY testbed /testbed
COPY site /tmp/site
COPY pyvenv.cfg /opt/miniconda3/envs/testbed/pyvenv.cfg
RUN v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') && \
    mkdir -p /opt/miniconda3/envs/testbed/bin /opt/miniconda3/envs/testbed/lib/python$v && \
    ln -s /usr/bin/python3 /opt/miniconda3/envs/testbed/bin/python && \
    mv /tmp/site /opt/miniconda3/envs/testbed/lib/python$v/site-packages
USER 65532
`,
	"envs/lookalike/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = true\n",
	"envs/lookalike/testbed/src/calcpkg/__init__.py": "import warnings\n\n" +
		"warnings.warn(\"TESTBED-CANARY: the image's copy of calcpkg was imported\")\n\n\n" +
		"def double(x):\n    return x * 2\n",
	"envs/lookalike/testbed/tests/test_calc.py":              e2e.SrcLayoutRepo["tests/test_calc.py"],
	"envs/lookalike/site/easy-install.pth":                   "/testbed/src\n",
	"envs/lookalike/site/__editable__.calcpkg-0.1.pth":       "import __editable___calcpkg_0_1_finder; __editable___calcpkg_0_1_finder.install()\n",
	"envs/lookalike/site/__editable___calcpkg_0_1_finder.py": lookalikeFinder,
}

// lookalikeFinder is written the way setuptools' editable finders work: a module-level MAPPING
// of top-level names to paths, a finder class on sys.meta_path, and install().
const lookalikeFinder = `import sys
from importlib.machinery import PathFinder

MAPPING = {"calcpkg": "/testbed/src/calcpkg"}


class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            return PathFinder.find_spec(fullname, [MAPPING[fullname].rsplit("/", 1)[0]])
        return None


def install():
    if not any(f is _EditableFinder for f in sys.meta_path):
        sys.meta_path.insert(0, _EditableFinder)
`

// TestPrebuiltInstanceImage grades a src/ layout project in look-alike prebuilt instance
// images, named per pair by image_template and digests, run with the image's interpreter.
// With project_copy: /testbed, the workspace's code is what the tests import: validate --run
// finds the base commit failing (the copy at /testbed is fixed, so it was not imported), the
// gold patch resolves, a wrong patch does not, and no log holds the copy's canary. The control
// environment, the same image without project_copy, lets /testbed win: its wrong patch
// "resolves" and its log holds the canary.
func TestPrebuiltInstanceImage(t *testing.T) {
	builder := t.TempDir()
	base := e2e.BundleRepo(t, withWhereTest(e2e.SrcLayoutRepo), filepath.Join(builder, "repos", "calc.bundle"))
	files := map[string]string{"issue.md": "double() triples.\n", "gold.diff": e2e.SrcLayoutGold, "wrong.diff": e2e.SrcLayoutWrong,
		"tender.yaml": "name: builder\nversion: \"1\"\nenvironments:\n  lookalike: {dockerfile: envs/lookalike/Dockerfile}\n" +
			"repositories:\n  calc: {bundle: repos/calc.bundle}\npairs:\n" + prebuiltPair("p", "", base, "gold.diff")}
	for k, v := range lookalikeFiles {
		files[k] = v
	}
	clitest.WriteFiles(t, builder, files)
	stdout, stderr, code := e2e.RunTender(t, "image", "build", "--suite", builder)
	id := ""
	for _, line := range strings.Split(stdout, "\n") { // "(verifier) IMAGE ID" first, then "ENV IMAGE ID"
		if f := strings.Fields(line); len(f) == 3 && f[0] == "lookalike" && strings.HasPrefix(f[2], "sha256:") {
			id = f[2]
		}
	}
	if code != cli.ExitOK || id == "" {
		t.Fatalf("image build --suite: exit %d, no image for lookalike\n%s%s", code, stdout, stderr)
	}
	ids := []string{"gold", "wrong", "nocopy-wrong"}
	for _, pair := range ids {
		tag := "tender-test/sweb.eval.x86_64." + pair
		if out, err := exec.Command("docker", "tag", id, tag).CombinedOutput(); err != nil {
			t.Fatalf("docker tag %s %s: %v\n%s", id, tag, err, out)
		}
		t.Cleanup(func() { exec.Command("docker", "rmi", tag).Run() }) // the tag only: the image keeps its own
	}

	suite := t.TempDir()
	clitest.Must(t, os.MkdirAll(filepath.Join(suite, "repos"), 0o755))
	clitest.Must(t, os.Rename(filepath.Join(builder, "repos", "calc.bundle"), filepath.Join(suite, "repos", "calc.bundle")))
	env := func(name, extra string) string {
		digests := []string{}
		for _, pair := range ids {
			digests = append(digests, pair+": "+id)
		}
		return fmt.Sprintf("  %s:\n    image_template: \"tender-test/sweb.eval.x86_64.{instance}@sha256:{digest}\"\n"+
			"    digests: {%s}\n    python: /opt/miniconda3/envs/testbed/bin/python\n    python_path: [src]\n%s",
			name, strings.Join(digests, ", "), extra)
	}
	clitest.WriteFiles(t, suite, map[string]string{"issue.md": "double() triples.\n", "gold.diff": e2e.SrcLayoutGold,
		"wrong.diff": e2e.SrcLayoutWrong, "tender.yaml": "name: prebuilt\nversion: \"1\"\nenvironments:\n" +
			env("sweb", "    project_copy: /testbed\n") + env("nocopy", "") +
			"repositories:\n  calc: {bundle: repos/calc.bundle}\npairs:\n" +
			prebuiltPair("gold", "sweb", base, "gold.diff") + prebuiltPair("wrong", "sweb", base, "wrong.diff") +
			prebuiltPair("nocopy-wrong", "nocopy", base, "wrong.diff")})

	val := filepath.Join(t.TempDir(), "val")
	stdout, stderr, code = e2e.RunTender(t, "validate", "--run", "--out", val, suite)
	if !strings.Contains(stdout, "sound   gold") || !strings.Contains(stdout, "sound   wrong") ||
		!strings.Contains(stdout, "BROKEN  nocopy-wrong") {
		t.Errorf("validate --run: exit %d; want gold and wrong sound (the base commit fails: the workspace was "+
			"imported) and nocopy-wrong broken (/testbed's fixed copy passes at the base commit)\n%s%s", code, stdout,
			stderr)
	}
	results, out := e2e.GradeOK(t, suite)
	want := map[string]report.Verdict{"gold": report.Resolved, "wrong": report.Unresolved,
		"nocopy-wrong": report.Resolved}
	for _, r := range results {
		if r.Verdict != want[r.ID] {
			t.Errorf("%s: %s %v, want %s", r.ID, r.Verdict, r.Reasons, want[r.ID])
		}
		if len(r.Checks) == 0 || r.Checks[0].ImageID != id {
			t.Errorf("%s: checks %+v, want them run in the look-alike image %s", r.ID, r.Checks, id)
		}
	}
	for _, dir := range []string{out, val} {
		logs, _ := filepath.Glob(filepath.Join(dir, "pairs", "*", "*.log"))
		for _, l := range logs {
			// The baseline's collection prints no warnings summary: there, only its absence counts.
			control := strings.HasPrefix(filepath.Base(filepath.Dir(l)), "nocopy-")
			canary := strings.Contains(clitest.ReadFile(t, l), "TESTBED-CANARY")
			if canary && !control || !canary && control && filepath.Base(l) != "baseline.log" {
				t.Errorf("%s: canary %v; want it in the control's check logs only", l, canary)
			}
		}
		if len(logs) < 4 {
			t.Errorf("%s: %d logs, want the runs' logs", dir, len(logs))
		}
	}
}

// withWhereTest adds a test that passes only under the image's own interpreter.
func withWhereTest(files map[string]string) map[string]string {
	out := map[string]string{"tests/test_where.py": "import sys\n\n\ndef test_interpreter():\n" +
		"    assert sys.prefix == \"/opt/miniconda3/envs/testbed\"\n"}
	for k, v := range files {
		out[k] = v
	}
	return out
}

func prebuiltPair(id, env, base, patch string) string {
	e := ""
	if env != "" {
		e = ", environment: " + env
	}
	return fmt.Sprintf("  - {id: %s, repository: calc%s, base_commit: %s, issue: issue.md, patch: %s, "+
		"reference_patch: gold.diff, fail_to_pass: [tests/test_calc.py::test_double], "+
		"pass_to_pass: [tests/test_calc.py::test_zero, tests/test_where.py::test_interpreter]}\n", id, e, base, patch)
}
