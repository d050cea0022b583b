package bundle

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Subject names. Files of the bundle use their relative slash path; inputs use these.
const (
	inputPrefix  = "input:"
	inputTool    = inputPrefix + "tool"
	inputOptions = inputPrefix + "options"
	inputImage   = inputPrefix + "image/"
	maxNameLen   = 4096
)

// checkFileName enforces the rules for a bundle-relative path: relative, clean, no "..",
// slash-separated, printable, and not shadowing an input name or the envelope.
func checkFileName(name string) *FileError {
	if reason := pathProblem(name); reason != "" {
		return fileErr(safeQuote(name), ErrUnsafe, "%s", reason)
	}
	if strings.HasPrefix(name, inputPrefix) {
		return fileErr(name, ErrUnsafe, "a bundle file may not start with %q (reserved for inputs)", inputPrefix)
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

// checkInputName enforces the rules for an "input:" subject name.
func checkInputName(name string) *FileError {
	rest, ok := strings.CutPrefix(name, inputPrefix)
	switch {
	case !ok:
		return fileErr(safeQuote(name), ErrMalformed, "not an input name")
	case name == inputTool || name == inputOptions:
		return nil
	case strings.HasPrefix(name, inputImage):
		return checkImageName(strings.TrimPrefix(name, inputImage))
	}
	if reason := pathProblem(rest); reason != "" {
		return fileErr(safeQuote(name), ErrMalformed, "input %s", reason)
	}
	return nil
}

// checkImageName accepts any printable name without spaces (references carry ':' and '/').
func checkImageName(img string) *FileError {
	if img == "" || len(img) > 512 || !printable(img) || strings.ContainsAny(img, " \t") {
		return fileErr(safeQuote(inputImage+img), ErrMalformed, "image name must be 1-512 printable characters without spaces")
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
