package integrity

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// compileRule returns the rule for pattern p, or a problem for the author to fix.
func compileRule(p string, fold bool) (rule, string) {
	if problem := rawPatternProblem(p); problem != "" {
		return rule{}, problem
	}
	body, anchored := strings.CutPrefix(p, "/")
	body, dirOnly := strings.CutSuffix(body, "/")
	if body == "" {
		return rule{}, fmt.Sprintf(
			"%q names no path; write a pattern relative to the repository root, such as \".tender/**\"",
			p,
		)
	}
	if problem := componentProblem(body); problem != "" {
		return rule{}, problem
	}
	glob := body
	if fold {
		glob = canonical(body)
		if problem := componentProblem(glob); problem != "" {
			return rule{}, fmt.Sprintf("%q has a component made only of invisible characters", p)
		}
	}
	if !doublestar.ValidatePattern(glob) {
		return rule{}, fmt.Sprintf("%q is not a valid doublestar pattern (an unclosed '[' or '{'?)", p)
	}
	r := rule{source: p, glob: glob, dirOnly: dirOnly}
	r.anyDepth = !anchored && !strings.Contains(body, "/")
	return r, ""
}

// rawPatternProblem checks the pattern text before it is taken apart.
func rawPatternProblem(p string) string {
	switch {
	case p == "":
		return "empty pattern; remove it, or write a path relative to the repository root"
	case strings.TrimSpace(p) != p:
		return fmt.Sprintf("%q has whitespace at an end; remove it", p)
	case strings.ContainsRune(p, 0):
		return fmt.Sprintf("%q contains a NUL byte", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Sprintf(
			"%q contains a backslash; use '/' between components, and [*] for a literal metacharacter",
			p,
		)
	case strings.HasPrefix(p, "//"):
		return fmt.Sprintf(
			"%q is a network path; use a path relative to the repository root (one leading '/' anchors it there)",
			p,
		)
	case hasDriveLetter(p):
		return fmt.Sprintf("%q is an absolute Windows path; use a path relative to the repository root", p)
	}
	return ""
}

func hasDriveLetter(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return 'a' <= c && c <= 'z'
}

// componentProblem refuses empty, "." and ".." components.
func componentProblem(body string) string {
	for _, c := range strings.Split(body, "/") {
		switch c {
		case "":
			return fmt.Sprintf("%q has an empty component ('//'); remove the extra slash", body)
		case ".":
			return fmt.Sprintf("%q has a \".\" component; write the path without it", body)
		case "..":
			return "\"..\" is not allowed in a pattern; use a path relative to the repository root"
		}
	}
	return ""
}

// cleanPathProblem says why path is not a clean relative slash path, or returns "".
func cleanPathProblem(path string) string {
	switch {
	case path == "":
		return "empty path"
	case strings.HasPrefix(path, "/") || hasDriveLetter(path):
		return "absolute path"
	case strings.ContainsRune(path, 0):
		return "NUL byte in path"
	case strings.ContainsRune(path, '\\'):
		return "backslash in path"
	}
	for _, c := range strings.Split(path, "/") {
		switch c {
		case "", ".", "..":
			return fmt.Sprintf("%q component in path", c)
		}
	}
	return ""
}
