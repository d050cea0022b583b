package gitsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxPathBytes bounds one path in a patch or tree.
const MaxPathBytes = 4096

// ValidatePath checks one repository-relative, slash-separated path. It
// refuses empty and over-long paths, control characters, absolute paths
// (including Windows drive and backslash forms), empty, "." and ".."
// components, and any component that a case-insensitive or
// Unicode-normalizing filesystem would read as ".git" (".GIT", ".git ",
// ".git.", "git~1", ".git::$INDEX_ALLOCATION", ".g\u200cit", fullwidth
// forms...). The error is an *UnsafeError wrapping ErrUnsafePath.
func ValidatePath(p string) error {
	if err := checkPathShape(p); err != nil {
		return err
	}
	for _, comp := range strings.Split(p, "/") {
		if err := checkComponent(p, comp); err != nil {
			return err
		}
	}
	return nil
}

func checkPathShape(p string) error {
	switch {
	case p == "":
		return unsafePath(p, "empty path")
	case len(p) > MaxPathBytes:
		return unsafePath(p[:64]+"...", fmt.Sprintf("path longer than %d bytes", MaxPathBytes))
	case strings.HasPrefix(p, "/"):
		return unsafePath(p, "absolute path")
	case strings.ContainsRune(p, '\\'):
		return unsafePath(p, "backslash (a path separator on Windows)")
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return unsafePath(p, "drive-letter path")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return unsafePath(p, fmt.Sprintf("control character %U", r))
		}
	}
	return nil
}

func checkComponent(p, comp string) error {
	switch comp {
	case "":
		return unsafePath(p, "empty path component")
	case ".", "..":
		return unsafePath(p, fmt.Sprintf("%q path component", comp))
	}
	if isDotGit(comp) {
		return &UnsafeError{
			Path:   p,
			Reason: fmt.Sprintf("%q is a .git component (case, Unicode or NTFS variant)", comp),
			Err:    ErrGitPath,
		}
	}
	return nil
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

var folder = cases.Fold()

// isDotGit reports whether a path component names the git directory on
// some filesystem: HFS+ ignores default-ignorable code points and folds
// case and normalization; NTFS folds case, drops trailing dots and spaces,
// reads "name:stream" as name, and has the 8.3 short name GIT~1.
func isDotGit(comp string) bool {
	clean := stripIgnorable(norm.NFKC.String(strings.ToValidUTF8(comp, "\uFFFD")))
	for _, n := range []string{
		foldComponent(comp),
		strings.ToLower(clean),
		strings.ToLower(strings.ToUpper(clean)),
	} {
		if dotGitName(n) {
			return true
		}
	}
	return false
}

func dotGitName(n string) bool {
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimRight(n, ". ")
	if n == ".git" {
		return true
	}
	rest, ok := strings.CutPrefix(n, "git~")
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

// foldComponent removes ignorable code points, then applies NFKC and case
// folding (twice, since folding can produce composable sequences).
func foldComponent(comp string) string {
	if !utf8.ValidString(comp) {
		comp = strings.ToValidUTF8(comp, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range comp {
		if !ignorable(r) {
			b.WriteRune(r)
		}
	}
	s := norm.NFKC.String(folder.String(norm.NFKC.String(b.String())))
	return stripIgnorable(s)
}

func stripIgnorable(s string) string {
	return strings.Map(func(r rune) rune {
		if ignorable(r) {
			return -1
		}
		return r
	}, s)
}

func ignorable(r rune) bool {
	return unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		r == '\u034f' || r == '\u115f' || r == '\u1160' || r == '\u3164' || r == '\uffa0'
}
