package gitsafe

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// linkSource is a clone whose base commit holds files and the given symlinks (path -> target),
// committed as git commits a real link (mode 120000).
func linkSource(t *testing.T, files, links map[string]string) (string, string) {
	t.Helper()
	dir, _ := newRepo(t, map[string]string{"README": "x\n"})
	writeFiles(t, dir, files)
	for p, target := range links {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return dir, commitAll(t, dir, "links")
}

// noLinkOnDisk fails when anything under dir is a symlink: the host never holds one.
func noLinkOnDisk(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("%s is a symlink on the host", p)
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// TestMaterializeRefusesLinksByDefault: without the setting, a tree with a symlink is refused
// before anything is written, and the refusal names the path and the setting.
func TestMaterializeRefusesLinksByDefault(t *testing.T) {
	src, head := linkSource(t, map[string]string{"test/fixtures/a.sql": "select 1\n"},
		map[string]string{"test/fixtures/b.sql": "a.sql"})
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	ws := filepath.Join(t.TempDir(), "ws")
	_, err := r.Materialize(testCtx(t), head, ws)
	if !errors.Is(err, ErrUnsafeTree) || !strings.Contains(err.Error(), `"test/fixtures/b.sql"`) ||
		!strings.Contains(err.Error(), "symlinks: in-tree") {
		t.Fatalf("Materialize = %v, want ErrUnsafeTree naming the path and the setting", err)
	}
	if _, err := os.Stat(ws); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the workspace was made: %v", err)
	}
	t.Logf("refused: %v", err)
}

// TestMaterializeInTreeLinks: with symlinks: in-tree, each link becomes a regular file that
// holds its target, named in Fingerprint.Links, and the tree is clean.
func TestMaterializeInTreeLinks(t *testing.T) {
	links := map[string]string{"test/fixtures/b.sql": "a.sql", "docs/src": "../src", "x": "test/fixtures/b.sql"}
	src, head := linkSource(t, map[string]string{"test/fixtures/a.sql": "select 1\n", "src/m.py": "X = 1\n"}, links)
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	r.SetSymlinks(SymlinksInTree)
	ws := filepath.Join(t.TempDir(), "ws")
	fp, err := r.Materialize(testCtx(t), head, ws)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(links, fp.Links); diff != "" || !fp.Clean {
		t.Fatalf("links (-want +got):\n%s\nclean %v", diff, fp.Clean)
	}
	for p, target := range links {
		data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(p)))
		if err != nil || string(data) != target {
			t.Errorf("%s holds %q (%v), want its target %q", p, data, err, target)
		}
	}
	noLinkOnDisk(t, ws)
	got, err := r.TreeLinks(testCtx(t), head)
	if err != nil || !maps.Equal(got, links) {
		t.Errorf("TreeLinks = %v, %v; want %v", got, err, links)
	}
}

// TestMaterializeRefusesEscapingLinks plants links that leave the tree, each aimed at a canary
// beside the workspace: every one is refused before anything is written, naming the path and
// the setting, and the canary never appears.
func TestMaterializeRefusesEscapingLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links func(canary string) map[string]string
		why   string
	}{
		{"absolute", func(c string) map[string]string { return map[string]string{"pkg/x": c} }, "absolute"},
		{"dot-dot out", func(string) map[string]string {
			return map[string]string{"pkg/x": "../../tender-canary"}
		}, "above the root"},
		{"chain out", func(string) map[string]string {
			return map[string]string{"sub/up": "..", "sub/a": "up/../tender-canary"}
		}, "above the root"},
		{"loop", func(string) map[string]string { return map[string]string{"a": "b", "b": "a"} }, "loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outer := t.TempDir()
			canary := filepath.Join(outer, "tender-canary")
			src, head := linkSource(t, map[string]string{"a.py": "A = 1\n"}, tc.links(canary))
			r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
			r.SetSymlinks(SymlinksInTree)
			ws := filepath.Join(outer, "ws")
			_, err := r.Materialize(testCtx(t), head, ws)
			if !errors.Is(err, ErrUnsafeTree) || !strings.Contains(err.Error(), tc.why) ||
				!strings.Contains(err.Error(), "symlinks: in-tree") {
				t.Fatalf("Materialize = %v, want ErrUnsafeTree (%s) naming the setting", err, tc.why)
			}
			t.Logf("refused: %v", err)
			if _, err := os.Lstat(canary); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the canary appeared: %v", err)
			}
			if _, err := os.Stat(ws); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("something was written: %v", err)
			}
		})
	}
}

// linkPatch is the git diff that takes the tree of base (files, links) to head's.
func linkPatch(t *testing.T, files, links map[string]string, edit func(dir string)) (*Repo, string, string) {
	t.Helper()
	src, base := linkSource(t, files, links)
	edit(src)
	tgit(t, src, "add", "-A")
	tgit(t, src, "commit", "-q", "--no-verify", "-m", "edit")
	diff := tgit(t, src, "diff", "--no-color", "--no-ext-diff", base, "HEAD")
	r := mustSnapshot(t, Source{Kind: SourceClone, Path: src})
	r.SetSymlinks(SymlinksInTree)
	return r, base, diff
}

// TestPatchLinks: a patch may create a symlink (in-tree only), which lands as a regular file
// that holds its target; it may not retarget, remove or replace one, turn a file into one,
// or write a link's file or anything through one. Each refusal names the path and the
// setting, and leaves the workspace as it was.
func TestPatchLinks(t *testing.T) {
	files := map[string]string{"pkg/a.py": "A = 1\n", "tests/test_a.py": "def test_a():\n    assert True\n",
		"data/d.txt": "d\n"}
	links := map[string]string{"pkg/link.py": "a.py", "pkg/data": "../data"}
	for _, tc := range []struct {
		name    string
		edit    func(dir string)
		refused string // "" when the patch applies; else a word of the refusal
		at      string // the stage that refuses: "parse" or "links"
	}{
		{"create a link", func(d string) { must(t, os.Symlink("a.py", filepath.Join(d, "pkg/new.py"))) }, "", ""},
		{"retarget a link", func(d string) {
			must(t, os.Remove(filepath.Join(d, "pkg/link.py")))
			must(t, os.Symlink("../tests/test_a.py", filepath.Join(d, "pkg/link.py")))
		}, "symlink mode 120000", "parse"},
		{"remove a link", func(d string) { must(t, os.Remove(filepath.Join(d, "pkg/link.py"))) },
			"symlink mode 120000", "parse"},
		{"link into a file", func(d string) {
			must(t, os.Remove(filepath.Join(d, "pkg/link.py")))
			must(t, os.WriteFile(filepath.Join(d, "pkg/link.py"), []byte("B = 2\n"), 0o644))
		}, "symlink mode 120000", "parse"},
		{"file into a link", func(d string) {
			must(t, os.Remove(filepath.Join(d, "pkg/a.py")))
			must(t, os.Symlink("../tests/test_a.py", filepath.Join(d, "pkg/a.py")))
		}, "in place", "parse"},
		{"write through a directory link", func(d string) {
			must(t, os.WriteFile(filepath.Join(d, "data/new.txt"), []byte("n\n"), 0o644))
		}, "", ""}, // data/ itself is no link: only pkg/data is
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, base, diff := linkPatch(t, files, links, tc.edit)
			p, err := ParsePatchWith([]byte(diff), PatchOptions{Links: true})
			if tc.at == "parse" {
				if !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("ParsePatchWith = %v, want ErrUnsafePath with %q\n%s", err, tc.refused, diff)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("ParsePatchWith: %v\n%s", err, diff)
			}
			if err := p.CheckLinks(links); err != nil {
				t.Fatalf("CheckLinks: %v", err)
			}
			ws := filepath.Join(t.TempDir(), "ws")
			if _, err := r.Materialize(testCtx(t), base, ws); err != nil {
				t.Fatal(err)
			}
			if err := Apply(testCtx(t), p, ws); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			for path, target := range p.Links() {
				data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(path)))
				if err != nil || string(data) != target {
					t.Errorf("%s holds %q (%v), want %q", path, data, err, target)
				}
			}
			noLinkOnDisk(t, ws)
		})
	}
}

// TestPatchThroughLinks: CheckLinks refuses a patch that writes a link's own file or anything
// through a link (the tree's or one the patch creates), and a created link that leaves the
// tree, alone or through the tree's links; the error names the link and the setting.
func TestPatchThroughLinks(t *testing.T) {
	links := map[string]string{"pkg/x": "../tests/test_a.py", "pkg/data": "../data", "sub/up": ".."}
	for _, tc := range []struct {
		name, patch, want string
	}{
		{"write a link's file", modify("pkg/x", "def test_a():\n    assert True\n", "pass\n"), `"pkg/x"`},
		{"write through a directory link", create("pkg/data/evil.txt", "e\n"), `"pkg/data"`},
		{"write through a link the patch creates", createLink("pkg/new", "../data") + create("pkg/new/f.txt", "f\n"),
			`"pkg/new"`},
		{"created link under a link it creates", createLink("pkg/d", "../data") + createLink("pkg/d/x", "y"), `"pkg/d"`},
		{"created link under the tree's link", createLink("pkg/data/x", "y"), `"pkg/data"`},
		{"created link out of the tree", createLink("pkg/out", "../../tender-canary"), "above the root"},
		{"created link out through the tree's link", createLink("sub/a", "up/../../tender-canary"), "above the root"},
		{"created absolute link", createLink("pkg/abs", "/tmp/tender-canary"), "absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePatchWith([]byte(tc.patch), PatchOptions{Links: true})
			if err != nil {
				t.Fatalf("ParsePatchWith: %v\n%s", err, tc.patch)
			}
			err = p.CheckLinks(links)
			if !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "symlinks: in-tree") {
				t.Fatalf("CheckLinks = %v, want ErrUnsafePath with %s and the setting", err, tc.want)
			}
			t.Logf("refused: %v", err)
		})
	}
}

// TestPatchLinkWithoutTheSetting: a patch that creates a link is refused by ParsePatch, and
// the refusal names the setting.
func TestPatchLinkWithoutTheSetting(t *testing.T) {
	_, err := ParsePatch([]byte(createLink("pkg/new", "a.py")))
	if !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), "symlinks: in-tree") {
		t.Fatalf("ParsePatch = %v, want ErrUnsafePath naming the setting", err)
	}
}

func createLink(path, target string) string {
	return "diff --git a/" + path + " b/" + path + "\nnew file mode 120000\nindex 0000000..1111111\n" +
		"--- /dev/null\n+++ b/" + path + "\n@@ -0,0 +1 @@\n+" + target + "\n\\ No newline at end of file\n"
}

func create(path, content string) string {
	return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + path +
		"\n@@ -0,0 +1 @@\n+" + content
}

func modify(path, old, content string) string {
	return "diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n@@ -1,2 +1 @@\n" +
		prefixLines("-", old) + prefixLines("+", content)
}

func prefixLines(prefix, s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
