package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
)

// TestValidateNamesPythonMismatch: a project written for an older Python (collections.Mapping,
// removed in 3.10, as marshmallow 2.x uses it) whose pass_to_pass test fails on the verifier's
// Python 3.11: validate --run's line for the instance names a likely Python-version mismatch,
// with the error, where it said only that the pass_to_pass tests do not pass.
func TestValidateNamesPythonMismatch(t *testing.T) {
	suiteDir := t.TempDir()
	work := t.TempDir()
	clitest.WriteFiles(t, work, map[string]string{"calc.py": "import collections\n\n\ndef label(x):\n    return x\n\n\n" +
		"def is_map(v):\n    return isinstance(v, collections.Mapping)\n"})
	e2e.GitIn(t, work, "", "init", "-q", "-b", "main")
	e2e.GitIn(t, work, "", "add", "-A")
	e2e.GitIn(t, work, "", "commit", "-q", "-m", "base")
	base := strings.TrimSpace(e2e.GitIn(t, work, "", "rev-parse", "HEAD"))
	clitest.Must(t, os.MkdirAll(filepath.Join(suiteDir, "repos"), 0o755))
	e2e.GitIn(t, work, "", "bundle", "create", "-q", filepath.Join(suiteDir, "repos", "proj.bundle"), "--all")
	module := "from calc import is_map, label\n\n\ndef test_label():\n    assert label(\"a\") == \"L:a\"\n\n\n" +
		"def test_is_map():\n    assert is_map({})\n"
	clitest.WriteFiles(t, suiteDir, map[string]string{"issue.md": "label is wrong\n", "reference.diff": idsReference,
		"test_p.diff": newModulePatch("tests/test_p.py", module)})
	e2e.WriteSuiteDoc(t, suiteDir, suite.SuiteDoc{Name: "mismatch", Version: "1",
		Repositories: map[string]suite.RepoDoc{"proj": {Bundle: "repos/proj.bundle"}},
		Pairs: []suite.PairDoc{{ID: "old-python", Repository: "proj", BaseCommit: base, Issue: "issue.md",
			Patch: "reference.diff", ReferencePatch: "reference.diff", TestPatch: "test_p.diff",
			FailToPass: list("tests/test_p.py::test_label"), PassToPass: list("tests/test_p.py::test_is_map")}}})
	out, errOut, code := e2e.RunTender(t, "validate", "--run", suiteDir)
	if code != cli.ExitFailure {
		t.Fatalf("validate --run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cli.ExitFailure, out, errOut)
	}
	want := "BROKEN  old-python: likely a Python-version mismatch (the log says AttributeError: module " +
		"'collections' has no attribute 'Mapping'); on the base commit tests/test_p.py::test_is_map is failed"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	t.Logf("validate --run:\n%s", out)
}
