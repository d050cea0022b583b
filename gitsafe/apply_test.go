package gitsafe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gitPatch makes a real git patch (diff --binary -M) that turns base into
// changed; "" deletes a file, a name ending in .sh is executable.
func gitPatch(t *testing.T, base, changed map[string]string, modes map[string]os.FileMode) (string, string) {
	dir, _ := newRepo(t, base)
	for name, content := range changed { // deletions first: a file may become a directory
		if content == "" {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, content := range changed {
		if content != "" {
			writeFiles(t, dir, map[string]string{name: content})
		}
	}
	for name, mode := range modes {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	tgit(t, dir, "add", "-A")
	return tgit(t, dir, "diff", "--cached", "--binary", "-M", "--full-index"), dir
}

// plainDir writes files into a fresh plain directory (not a repository).
func plainDir(t *testing.T, files map[string]string) string {
	dir := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, files)
	return dir
}

var applyCases = []struct {
	name    string
	base    map[string]string
	changed map[string]string
	modes   map[string]os.FileMode
}{
	{name: "modify", base: map[string]string{"a.txt": "one\ntwo\n"}, changed: map[string]string{"a.txt": "one\n2\n"}},
	{
		name:    "new file in a new directory",
		base:    map[string]string{"a.txt": "a\n"},
		changed: map[string]string{"d/e/n.txt": "new\n"},
	},
	{
		name:    "delete",
		base:    map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"},
		changed: map[string]string{"d/b.txt": ""},
	},
	{
		name:    "rename with edit",
		base:    map[string]string{"old.py": strings.Repeat("line\n", 20)},
		changed: map[string]string{"old.py": "", "pkg/new.py": strings.Repeat("line\n", 19) + "changed\n"},
	},
	{
		name:    "mode change",
		base:    map[string]string{"run": "#!/bin/sh\n"},
		changed: map[string]string{},
		modes:   map[string]os.FileMode{"run": 0o755},
	},
	{name: "CRLF", base: map[string]string{"w.txt": "a\r\nb\r\n"}, changed: map[string]string{"w.txt": "a\r\nc\r\n"}},
	{name: "no final newline", base: map[string]string{"n.txt": "a\nb"}, changed: map[string]string{"n.txt": "a\nc"}},
	{name: "add final newline", base: map[string]string{"n.txt": "a"}, changed: map[string]string{"n.txt": "a\n"}},
	{
		name:    "binary modify",
		base:    map[string]string{"b.bin": "\x00\x01\x02binary\xff"},
		changed: map[string]string{"b.bin": "\x00\x01\x03binary\xfe\x00"},
	},
	{
		name:    "binary new",
		base:    map[string]string{"a.txt": "a\n"},
		changed: map[string]string{"img.bin": strings.Repeat("\x00\xff", 3000)},
	},
	{
		name:    "file replaced by directory",
		base:    map[string]string{"f": "file\n"},
		changed: map[string]string{"f": "", "f/inner.txt": "x\n"},
	},
}

func TestApply(t *testing.T) {
	for _, c := range applyCases {
		t.Run(c.name, func(t *testing.T) {
			patch, want := gitPatch(t, c.base, c.changed, c.modes)
			p, err := ParsePatch([]byte(patch))
			if err != nil {
				t.Fatalf("ParsePatch: %v\n%s", err, patch)
			}
			ws := plainDir(t, c.base)
			if err := Apply(testCtx(t), p, ws); err != nil {
				t.Fatalf("Apply: %v\n%s", err, patch)
			}
			got, exp := filesOnly(dirState(t, ws)), filesOnly(dirState(t, want))
			for k := range exp {
				if strings.HasPrefix(k, ".git/") {
					delete(exp, k)
				}
			}
			if diff := cmp.Diff(exp, got); diff != "" {
				t.Errorf("tree after Apply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyEmptyPatch(t *testing.T) {
	ws := plainDir(t, map[string]string{"a": "a\n"})
	before := dirState(t, ws)
	p, err := ParsePatch([]byte("\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(testCtx(t), p, ws); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dirState(t, ws)); diff != "" {
		t.Errorf("empty patch changed the tree:\n%s", diff)
	}
}

// A patch that does not apply leaves the directory exactly as it was, even
// when git apply itself fails half way through writing.
func TestApplyFailureLeavesDirUnchanged(t *testing.T) {
	cases := []struct {
		name, patch string
		files       map[string]string
	}{
		{
			name:  "second hunk does not apply",
			files: map[string]string{"x.txt": "one\n", "y.txt": "other\n"},
			patch: "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-one\n+ONE\n" +
				"diff --git a/y.txt b/y.txt\n--- a/y.txt\n+++ b/y.txt\n@@ -1 +1 @@\n-two\n+TWO\n",
		},
		{
			name:  "new file already exists",
			files: map[string]string{"x.txt": "one\n", "n.txt": "here\n"},
			patch: "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-one\n+ONE\n" +
				"diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n",
		},
		{
			// git apply checks pass, then writing f/new.txt fails after
			// x.txt was already rewritten (git 2.39 leaves it half applied).
			name:  "write fails half way",
			files: map[string]string{"x.txt": "one\n", "f": "a file\n"},
			patch: "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-one\n+ONE\n" +
				"diff --git a/f/new.txt b/f/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/f/new.txt\n@@ -0,0 +1 @@\n+new\n" +
				"diff --git a/g/h/new.txt b/g/h/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/g/h/new.txt\n@@ -0,0 +1 @@\n+new\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := plainDir(t, c.files)
			before := dirState(t, ws)
			p, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			err = Apply(testCtx(t), p, ws)
			if !errors.Is(err, ErrPatchFailed) {
				t.Fatalf("Apply = %v, want ErrPatchFailed", err)
			}
			if strings.Contains(err.Error(), "restoring") {
				t.Errorf("restore reported a failure: %v", err)
			}
			t.Logf("error: %v", err)
			if diff := cmp.Diff(before, dirState(t, ws)); diff != "" {
				t.Errorf("directory changed (-before +after):\n%s", diff)
			}
		})
	}
}

// A directory that already holds a symlink on a patched path is refused
// before git runs: nothing is written through it.
func TestApplyRefusesSymlinkOnPath(t *testing.T) {
	outside := t.TempDir()
	ws := plainDir(t, map[string]string{"a.txt": "a\n"})
	mustSymlink(t, outside, filepath.Join(ws, "link"))
	p, err := ParsePatch(
		[]byte(
			"diff --git a/link/pwned b/link/pwned\nnew file mode 100644\n--- /dev/null\n+++ b/link/pwned\n@@ -0,0 +1 @@\n+x\n",
		),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(testCtx(t), p, ws); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("Apply = %v, want ErrUnsafePath", err)
	}
	assertNoMarker(t, filepath.Join(outside, "pwned"))
}

// A Patch whose Raw bytes say something else than its parsed Files (a
// parser differential, or a caller building Patch by hand) is refused by
// git's own reading of it: here a symlink followed by a write through it
// (the CVE-2023-23946 shape).
func TestApplyCrossChecksGitsReading(t *testing.T) {
	outside := t.TempDir()
	marker := filepath.Join(outside, "MARKER")
	benign, err := ParsePatch([]byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	evil := "diff --git a/a.txt b/a.txt\nnew file mode 120000\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+" + outside + "\n\\ No newline at end of file\n" +
		"diff --git a/a.txt/MARKER b/a.txt/MARKER\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt/MARKER\n@@ -0,0 +1 @@\n+x\n"
	for name, raw := range map[string]string{"more files": evil, "symlink mode": evil[:strings.Index(evil, "diff --git a/a.txt/")]} {
		t.Run(name, func(t *testing.T) {
			ws := plainDir(t, map[string]string{})
			p := &Patch{Raw: []byte(raw), Files: benign.Files}
			if err := Apply(testCtx(t), p, ws); !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("Apply = %v, want ErrUnsafePath", err)
			}
			assertNoMarker(t, marker)
			if _, err := os.Lstat(filepath.Join(ws, "a.txt")); err == nil {
				t.Errorf("a.txt was written")
			}
		})
	}
}

func TestApplyRefusesRepositoryDir(t *testing.T) {
	ws := plainDir(t, map[string]string{"a.txt": "a\n", ".git/config": "[core]\n"})
	p, err := ParsePatch([]byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(testCtx(t), p, ws); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("Apply = %v, want ErrUnsafePath", err)
	}
}

// filesOnly drops directories: git tracks files, and git apply removes
// directories a deletion leaves empty.
func filesOnly(st map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range st {
		if !strings.HasPrefix(v, "d") {
			out[k] = v
		}
	}
	return out
}
