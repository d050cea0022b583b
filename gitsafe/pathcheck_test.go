package gitsafe

import (
	"errors"
	"strings"
	"testing"
)

var pathCases = []struct {
	path string
	ok   bool
}{
	{"app.py", true},
	{"src/pkg/mod.go", true},
	{".github/workflows/ci.yml", true},
	{".gitignore", true},
	{".gitattributes", true},
	{".gitmodules", true},
	{"git", true},
	{"a.git", true},
	{".git2", true},
	{"dir/.gitkeep", true},
	{"docs/über.md", true},
	{"a..b", true},
	{"...", true},
	{"", false},
	{"/etc/passwd", false},
	{"//server/share", false},
	{"../outside", false},
	{"a/../../b", false},
	{"a/..", false},
	{"./a", false},
	{"a/./b", false},
	{"a//b", false},
	{"a/", false},
	{".git", false},
	{".git/config", false},
	{"sub/.git/hooks/post-checkout", false},
	{".GIT/config", false},
	{".Git/hooks/x", false},
	{".git /config", false},
	{".git./config", false},
	{".git. . /config", false},
	{"git~1/config", false},
	{"GIT~1/config", false},
	{"git~2/config", false},
	{".git::$INDEX_ALLOCATION/config", false},
	{".git:stream", false},
	{".g\u200cit/config", false},
	{".gi\u200dt/config", false},
	{"\u200e.git/config", false},
	{".git\ufeff/config", false},
	{".g\u00adit/config", false},
	{"\uff0e\uff47\uff49\uff54/config", false},
	{".\u0262it/x", true},
	{".GİT/x", false}, // stricter than HFS+ or NTFS: İ lower-cases to i
	{"a\\b", false},
	{"..\\..\\x", false},
	{"C:/windows", false},
	{"c:evil", false},
	{"a\x00b", false},
	{"a\nb", false},
	{"a\tb", false},
	{strings.Repeat("a", MaxPathBytes+1), false},
}

func TestValidatePath(t *testing.T) {
	for _, c := range pathCases {
		t.Run(c.path, func(t *testing.T) {
			err := ValidatePath(c.path)
			if c.ok && err != nil {
				t.Errorf("ValidatePath(%q) = %v, want accepted", c.path, err)
			}
			if !c.ok && !errors.Is(err, ErrUnsafePath) {
				t.Errorf("ValidatePath(%q) = %v, want ErrUnsafePath", c.path, err)
			}
		})
	}
}

// FuzzValidatePath checks the validator against independent, simpler
// properties: whatever it accepts is relative, has no empty, "." or ".."
// component, no control character or backslash, and no component that
// still reads as .git after dropping format characters and folding case.
func FuzzValidatePath(f *testing.F) {
	for _, c := range pathCases {
		f.Add(c.path)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("error %v does not wrap ErrUnsafePath", err)
			}
			return
		}
		if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00\n\r") {
			t.Fatalf("accepted %q", p)
		}
		for _, comp := range strings.Split(p, "/") {
			if comp == "" || comp == "." || comp == ".." || looksLikeDotGit(comp) {
				t.Fatalf("accepted %q with component %q", p, comp)
			}
		}
	})
}

// looksLikeDotGit is a deliberately naive second opinion, after git's own
// is_hfs_dotgit and is_ntfs_dotgit: drop the code points HFS+ ignores,
// fold ASCII case, cut an NTFS stream name, trim trailing dots and spaces.
func looksLikeDotGit(comp string) bool {
	var b strings.Builder
	for _, r := range comp {
		if !hfsIgnorable(r) {
			b.WriteRune(r)
		}
	}
	s := strings.ToLower(b.String())
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, ". ") == ".git" || s == "git~1"
}

func hfsIgnorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e ||
		r >= 0x206a && r <= 0x206f || r == 0xfeff
}
