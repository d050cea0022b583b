package bundle

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Names. A subject (a file of the bundle) is its relative slash path; a resolved dependency
// is an input file's path ("suite/tender.yaml") or depImage and an image name.
const (
	depImage   = "image/"
	maxNameLen = 4096
)

// checkFileName enforces the rules for a bundle-relative path: relative, clean, no "..",
// slash-separated, printable, and not the envelope.
func checkFileName(name string) *FileError {
	if reason := pathProblem(name); reason != "" {
		return fileErr(safeQuote(name), ErrUnsafe, "%s", reason)
	}
	if name == EnvelopeName {
		return fileErr(name, ErrUnsafe, "the envelope cannot list itself")
	}
	return nil
}

// pathProblem says what is wrong with p as a relative clean path, or "" when nothing is.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty path"
	case len(p) > maxNameLen:
		return "path longer than 4096 bytes"
	case !printable(p):
		return "path is not printable UTF-8"
	case strings.Contains(p, `\`):
		return "path contains a backslash; use slashes"
	case path.IsAbs(p):
		return "path is absolute; it must be relative to the bundle"
	case p == ".":
		return "path is the bundle itself"
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return `path escapes the bundle ("..")`
	case path.Clean(p) != p:
		return "path is not clean (double slash, trailing slash or \".\" element)"
	}
	return ""
}

// checkDependencyName enforces the rules for a resolved dependency's name: "image/<name>",
// or a relative clean path.
func checkDependencyName(name string) *FileError {
	if img, ok := strings.CutPrefix(name, depImage); ok {
		return checkImageName(img)
	}
	if reason := pathProblem(name); reason != "" {
		return fileErr(safeQuote(name), ErrMalformed, "resolved dependency %s", reason)
	}
	return nil
}

// checkImageName accepts any printable name without spaces (references carry ':' and '/').
func checkImageName(img string) *FileError {
	if img == "" || len(img) > 512 || !printable(img) || strings.ContainsAny(img, " \t") {
		return fileErr(
			safeQuote(depImage+img),
			ErrMalformed,
			"image name must be 1-512 printable characters without spaces",
		)
	}
	return nil
}

// printable: valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// safeQuote makes a hostile name fit for an error line: quoted and capped.
func safeQuote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}
