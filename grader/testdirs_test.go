package grader

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testDirsTree is a workspace with the layouts real projects have: a flat tests/ (tabulate:
// `from common import ...`), a package tests/ inside a package (pkg/tests), a package tests/
// at the top, a nested non-package directory under a package, and a root-level test file.
var testDirsTree = map[string]string{
	"test/common.py": "", "test/test_flat.py": "",
	"pkg/__init__.py": "", "pkg/tests/__init__.py": "", "pkg/tests/test_in_pkg.py": "",
	"tests/__init__.py": "", "tests/unit/__init__.py": "", "tests/unit/test_deep.py": "",
	"lib/__init__.py": "", "lib/more/test_under.py": "",
	"test_root.py":         "",
	"odd/__init__.py/keep": "", "odd/test_dir_init.py": "", // an __init__.py that is a directory
}

var testDirsIDs = []string{"test/test_flat.py::test_a", "pkg/tests/test_in_pkg.py::T::test_b",
	"tests/unit/test_deep.py::test_c[x::y]", "lib/more/test_under.py::test_d", "test_root.py::test_e",
	"test/test_flat.py::test_again", "odd/test_dir_init.py::t", "missing/test_gone.py::t",
	"tests/unit", "../escape.py::t", "/abs/test_x.py::t"}

// TestTestDirs: one directory per test file's first non-package ancestor, in order, once; none
// for the workspace itself, a directory ID, or a path outside the workspace.
func TestTestDirs(t *testing.T) {
	tree := t.TempDir()
	writeTestTree(t, tree, testDirsTree)
	want := []string{"test", "lib/more", "missing"}
	if diff := cmp.Diff(want, testDirs(tree, testDirsIDs)); diff != "" {
		t.Errorf("testDirs (-want +got):\n%s", diff)
	}
}

// TestTestDirsAgreeWithTheBootstrap: the baseline's rule and the bootstrap's (basedir in
// boot/sentinels.py, run by the host's python3) give the same directories for every test file.
func TestTestDirsAgreeWithTheBootstrap(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the bootstrap's rule: ", err)
	}
	tree := t.TempDir()
	writeTestTree(t, tree, testDirsTree)
	var local []string
	for _, id := range testDirsIDs {
		if file, _, _ := strings.Cut(id, "::"); strings.HasSuffix(file, ".py") && filepath.IsLocal(file) {
			local = append(local, id)
		}
	}
	src, err := filepath.Abs(filepath.Join("pyboot", "boot", "sentinels.py"))
	if err != nil {
		t.Fatal(err)
	}
	// The bootstrap's own loop (make_sentinels): basedir of each file's directory, the
	// workspace left out, each once.
	script := `import json, os, sys
ns = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), ns)
ws, out = sys.argv[2], []
for nodeid in json.loads(sys.argv[3]):
    rel = nodeid.split("::", 1)[0]
    base = ns["basedir"](ws, os.path.dirname(rel))
    if base != ws and base not in out:
        out.append(base)
print(json.dumps([os.path.relpath(b, ws) for b in out]))
`
	ids, _ := json.Marshal(local)
	out, err := exec.Command(py, "-I", "-c", script, src, tree, string(ids)).Output()
	if err != nil {
		t.Fatalf("the bootstrap's rule: %v", err)
	}
	var theirs []string
	if err := json.Unmarshal(out, &theirs); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if diff := cmp.Diff(theirs, testDirs(tree, local)); diff != "" {
		t.Errorf("baseline's testDirs differ from the bootstrap's basedir (-bootstrap +baseline):\n%s", diff)
	}
}

func writeTestTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
