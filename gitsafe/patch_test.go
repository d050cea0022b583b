package gitsafe

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var parseCases = []struct {
	name  string
	patch string
	want  []FileChange
}{
	{
		name:  "modify",
		patch: "diff --git a/a.txt b/a.txt\nindex 5626abf..a2628c1 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
		want:  []FileChange{{OldPath: "a.txt", NewPath: "a.txt", OldMode: modeFile, NewMode: modeFile, Line: 1}},
	},
	{
		name:  "new file",
		patch: "diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..3e75765\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n",
		want:  []FileChange{{NewPath: "n.txt", IsNew: true, NewMode: modeFile, Line: 1}},
	},
	{
		name:  "delete",
		patch: "diff --git a/d.txt b/d.txt\ndeleted file mode 100755\nindex f719efd..0000000\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-two\n",
		want:  []FileChange{{OldPath: "d.txt", IsDelete: true, OldMode: modeExec, Line: 1}},
	},
	{
		name:  "pure rename then mode change",
		patch: "diff --git a/x.txt b/y/z.txt\nsimilarity index 100%\nrename from x.txt\nrename to y/z.txt\ndiff --git a/m.sh b/m.sh\nold mode 100644\nnew mode 100755\n",
		want: []FileChange{
			{OldPath: "x.txt", NewPath: "y/z.txt", IsRename: true, Line: 1},
			{OldPath: "m.sh", NewPath: "m.sh", OldMode: modeFile, NewMode: modeExec, Line: 5},
		},
	},
	{
		name:  "copy",
		patch: "diff --git a/a.txt b/b.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to b.txt\n",
		want:  []FileChange{{OldPath: "a.txt", NewPath: "b.txt", IsCopy: true, Line: 1}},
	},
	{
		name:  "traditional diff with -p1 prefix",
		patch: "preamble text\n--- a/src/x.py\t2024-01-01 00:00:00\n+++ b/src/x.py\t2024-01-01 00:00:00\n@@ -1 +1 @@\n-a\n+b\n",
		want:  []FileChange{{OldPath: "src/x.py", NewPath: "src/x.py", Line: 2}},
	},
	{
		name: "removed line that looks like a header is hunk content",
		patch: "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- a\n+++ b\n x\n" +
			"diff --git a/r.txt b/r.txt\n--- a/r.txt\n+++ b/r.txt\n@@ -1 +1 @@\n-r\n+R\n",
		want: []FileChange{
			{OldPath: "q.sql", NewPath: "q.sql", Line: 1},
			{OldPath: "r.txt", NewPath: "r.txt", Line: 8},
		},
	},
	{
		name:  "CRLF content and no final newline",
		patch: "diff --git a/w.txt b/w.txt\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\n\\ No newline at end of file\n",
		want:  []FileChange{{OldPath: "w.txt", NewPath: "w.txt", Line: 1}},
	},
	{
		name:  "quoted unicode path",
		patch: "diff --git \"a/\\303\\274ber.md\" \"b/\\303\\274ber.md\"\n--- \"a/\\303\\274ber.md\"\n+++ \"b/\\303\\274ber.md\"\n@@ -1 +1 @@\n-a\n+b\n",
		want:  []FileChange{{OldPath: "über.md", NewPath: "über.md", Line: 1}},
	},
	{
		name: "binary literal",
		patch: "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e6e3a5ba0e8e9f1b4fa3a18a5ff3a3e8f2b1d2c4\n" +
			"GIT binary patch\nliteral 4\nLcmZQzWMT#Y01f~L\n\nliteral 0\nHcmV?d00001\n\n",
		want: []FileChange{{NewPath: "b.bin", IsNew: true, IsBinary: true, NewMode: modeFile, Line: 1}},
	},
}

func TestParsePatch(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePatch([]byte(c.patch))
			if err != nil {
				t.Fatalf("ParsePatch: %v", err)
			}
			if diff := cmp.Diff(c.want, p.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePatchEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "  \n\t\r\n"} {
		p, err := ParsePatch([]byte(in))
		if err != nil || p == nil || len(p.Files) != 0 || len(p.Paths()) != 0 {
			t.Errorf("ParsePatch(%q) = %+v, %v; want an empty patch", in, p, err)
		}
	}
}

func TestPatchPaths(t *testing.T) {
	p, err := ParsePatch([]byte(parseCases[3].patch + parseCases[0].patch))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "m.sh", "x.txt", "y/z.txt"}, p.Paths()); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
}

var refusedPatches = []struct {
	name  string
	patch string
	want  error
}{
	{"dot-dot", "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", ErrUnsafePath},
	{
		"nested dot-dot",
		"diff --git a/a/../../x b/a/../../x\n--- a/a/../../x\n+++ b/a/../../x\n@@ -1 +1 @@\n-a\n+b\n",
		ErrUnsafePath,
	},
	{
		"doubled slash read as absolute by git",
		"diff --git a//etc/passwd b//etc/passwd\n--- a//etc/passwd\n+++ b//etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
		ErrUnsafePath,
	},
	{
		"doubled slash that the parser refuses",
		"diff --git a//tmp/x b//tmp/x\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b//tmp/x\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		".git hook",
		"diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		".GIT config",
		"diff --git a/.GIT/config b/.GIT/config\n--- a/.GIT/config\n+++ b/.GIT/config\n@@ -1 +1 @@\n-a\n+b\n",
		ErrUnsafePath,
	},
	{
		"nested .Git",
		"diff --git a/sub/.Git/config b/sub/.Git/config\nnew file mode 100644\n--- /dev/null\n+++ b/sub/.Git/config\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		"trailing-space .git",
		"diff --git \"a/.git /config\" \"b/.git /config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/.git /config\"\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		"git~1",
		"diff --git a/git~1/config b/git~1/config\nnew file mode 100644\n--- /dev/null\n+++ b/git~1/config\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		"zero-width .git",
		"diff --git \"a/.g\\342\\200\\214it/config\" \"b/.g\\342\\200\\214it/config\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/.g\\342\\200\\214it/config\"\n@@ -0,0 +1 @@\n+x\n",
		ErrUnsafePath,
	},
	{
		"rename into .git",
		"diff --git a/x b/.git/config\nsimilarity index 100%\nrename from x\nrename to .git/config\n",
		ErrUnsafePath,
	},
	{
		"rename from outside",
		"diff --git a/../x b/x\nsimilarity index 100%\nrename from ../x\nrename to x\n",
		ErrUnsafePath,
	},
	{
		"symlink mode",
		"diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n",
		ErrUnsafePath,
	},
	{"symlink mode change", "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n", ErrUnsafePath},
	{
		"submodule mode",
		"diff --git a/s b/s\nnew file mode 160000\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+Subproject commit 0123456789012345678901234567890123456789\n",
		ErrUnsafePath,
	},
	{"backslash", "diff --git a/..\\x b/..\\x\n--- a/..\\x\n+++ b/..\\x\n@@ -1 +1 @@\n-a\n+b\n", ErrUnsafePath},
	{"not a patch", "hello, this is not a diff\n", ErrPatchInvalid},
	{"traditional without prefix", "--- x.py\n+++ x.py\n@@ -1 +1 @@\n-a\n+b\n", ErrPatchInvalid},
	{"bad hunk", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n", ErrPatchInvalid},
}

func TestParsePatchRefuses(t *testing.T) {
	for _, c := range refusedPatches {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePatch([]byte(c.patch))
			if !errors.Is(err, c.want) {
				t.Fatalf("ParsePatch = %+v, %v; want %v", p, err, c.want)
			}
		})
	}
}

func TestParsePatchTooLarge(t *testing.T) {
	data := []byte(parseCases[0].patch + strings.Repeat("x", MaxPatchBytes))
	_, err := ParsePatch(data)
	if !errors.Is(err, ErrPatchTooLarge) || !strings.Contains(err.Error(), "MaxPatchBytes") {
		t.Fatalf("ParsePatch of %d bytes = %v; want ErrPatchTooLarge naming the limit", len(data), err)
	}
}

// FuzzParsePatch: whatever ParsePatch accepts has only valid paths and
// plain file modes, and line numbers inside the patch.
func FuzzParsePatch(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c.patch))
	}
	for _, c := range refusedPatches {
		f.Add([]byte(c.patch))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePatch(data)
		if err != nil {
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, fc := range p.Files {
			for _, m := range []uint32{fc.OldMode, fc.NewMode} {
				if m != 0 && m != modeFile && m != modeExec {
					t.Fatalf("accepted mode %o", m)
				}
			}
			if fc.Line < 1 || fc.Line > lines {
				t.Fatalf("line %d outside the patch", fc.Line)
			}
		}
		for _, path := range p.Paths() {
			if err := ValidatePath(path); err != nil {
				t.Fatalf("accepted unsafe path: %v", err)
			}
		}
	})
}
