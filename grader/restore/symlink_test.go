package restore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/report"
)

const canary = "CANARY-untouched\n"

// outside makes a directory outside the workspace holding one canary file.
func outside(t *testing.T) (dir, canaryPath string) {
	t.Helper()
	dir = t.TempDir()
	canaryPath = filepath.Join(dir, "canary.txt")
	if err := os.WriteFile(canaryPath, []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, canaryPath
}

// TestSymlinksAreNeverFollowed plants symlinks where Restore would write or read, pointing
// outside the workspace, and checks that the outside is untouched and the pair fails closed.
func TestSymlinksAreNeverFollowed(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, f fixture, outDir, canaryPath string) string // returns the link path
	}{
		{"restored file is a link to a file outside", func(t *testing.T, f fixture, _, canaryPath string) string {
			f.remove(t, "tests/test_calc.py")
			return link(t, canaryPath, f.ws, "tests/test_calc.py")
		}},
		{"restored dir is a link to a dir outside", func(t *testing.T, f fixture, outDir, _ string) string {
			f.remove(t, "tests")
			return link(t, outDir, f.ws, "tests")
		}},
		{"pyproject.toml is a link outside", func(t *testing.T, f fixture, _, canaryPath string) string {
			f.remove(t, "pyproject.toml")
			return link(t, canaryPath, f.ws, "pyproject.toml")
		}},
		{"a link outside restored paths", func(t *testing.T, f fixture, outDir, _ string) string {
			return link(t, outDir, f.ws, "src/data")
		}},
		{"a dangling link where a conftest would be removed", func(t *testing.T, f fixture, outDir, _ string) string {
			return link(t, filepath.Join(outDir, "conftest.py"), f.ws, "src/conftest.py")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, baseRepo)
			outDir, canaryPath := outside(t)
			before := readTree(t, outDir)
			linkPath := tc.plant(t, f, outDir, canaryPath)
			out, err := Restore(f.ws, dirBase{f.base}, defaultRestored())
			if err != nil {
				t.Fatal(err)
			}
			want := []report.Reason{{Code: report.CodeUnsafeEntry, Path: linkPath}}
			if diff := cmp.Diff(want, out.Violations, ignoreDetail); diff != "" {
				t.Errorf("Violations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, readTree(t, outDir)); diff != "" {
				t.Errorf("Restore wrote outside the workspace (-before +after):\n%s", diff)
			}
			if fi, err := os.Lstat(filepath.Join(f.ws, linkPath)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the planted link was replaced or removed: %v %v", fi, err)
			}
		})
	}
}

func link(t *testing.T, target, ws, rel string) string {
	t.Helper()
	p := filepath.Join(ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return rel
}

// evilBase names a path that escapes the workspace; Restore must refuse it, not write it.
type evilBase struct {
	dirBase
	extra string
}

func (e evilBase) Files() []string { return append(e.dirBase.Files(), e.extra) }

func (e evilBase) ReadFile(p string) ([]byte, error) {
	if p == e.extra {
		return []byte("ESCAPED\n"), nil
	}
	return e.dirBase.ReadFile(p)
}

func TestBasePathCannotEscape(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	base := newFixture(t, baseRepo).base
	copyTree(t, base, ws)
	all := []string{"../escaped.txt", "tests/../../escaped.txt", "/tmp/escaped.txt"}
	for _, extra := range all {
		t.Run(extra, func(t *testing.T) {
			b := evilBase{dirBase{base}, extra}
			if _, err := Restore(ws, b, matchAll(t)); err == nil {
				t.Errorf("Restore accepted base path %q", extra)
			}
			if _, err := os.Stat(filepath.Join(parent, "escaped.txt")); !os.IsNotExist(err) {
				t.Errorf("a file was written outside the workspace: %v", err)
			}
		})
	}
}

func matchAll(t *testing.T) *integrity.Matcher {
	t.Helper()
	return integrity.MustCompile("restored_paths", []string{"**"}, false)
}
