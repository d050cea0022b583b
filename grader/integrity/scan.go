package integrity

import (
	"fmt"
	"strings"

	"github.com/tender-grader/tender/report"
)

// Change is one file of a candidate patch. OldPath is "" for a created file and NewPath is ""
// for a deleted one ("/dev/null" is read as ""). Line is the patch line of the file's header.
// Mode is the new git mode (0100644, 0100755, 0120000, 0160000), or 0 when the patch gives
// none. Binary is informational: a binary change is judged by its paths like any other.
type Change struct {
	OldPath, NewPath string
	Line             int
	Binary           bool
	Mode             uint32
	// LinkTarget is the target of the symlink the change creates (Mode 0120000, a new file);
	// "" for any other change.
	LinkTarget string
}

// Policy is what a pair's patch must not touch.
type Policy struct {
	Protected *Matcher // protected_paths, compiled with fold
	Restored  *Matcher // restored_paths (a conftest.py under them is reset, so allowed)
	// Evaluator lists evaluator-owned paths: every path the test patch touches and every hidden
	// asset's target path. A candidate path equal to one (in the fold form), or an ancestor or
	// a descendant of one, is a violation.
	Evaluator []string
	// Links are the tree's symlinks and whether a patch may create one.
	Links Links
}

const (
	modeSymlink   = 0o120000
	modeSubmodule = 0o160000
	modeTypeMask  = 0o170000
)

// Scan returns one report.Reason per violation, in patch order: for each change, each of its
// distinct paths is checked for every code. No violation gives nil. Scan never stops early, so
// the result names everything that is wrong with a patch.
//
// Under `symlinks: in-tree` (Policy.Links), a change that creates a symlink is judged by where it
// lies and what it resolves to (linkReasons), and a path that is what a restored or protected
// link of the base tree resolves to is the evaluator's (ownedTargetReason).
func Scan(changes []Change, p Policy) []report.Reason {
	ev := newEvaluatorSet(p.Evaluator)
	owned := ownedTargets(p)
	created := map[string]string{}
	for _, c := range changes {
		if c.LinkTarget != "" && p.Links.Allowed {
			created[c.NewPath] = c.LinkTarget
		}
	}
	var out []report.Reason
	for _, c := range changes {
		for _, path := range changePaths(c) {
			out = append(out, scanPath(path, c.Line, p, ev)...)
			out = append(out, ownedTargetReason(path, c.Line, owned)...)
		}
		out = append(out, modeReasons(c, created, p, ev)...)
	}
	return out
}

// modeReasons judges a change's mode: a symlink the tree's setting allows (linkReasons), and
// no other symlink or submodule.
func modeReasons(c Change, created map[string]string, p Policy, ev evaluatorSet) []report.Reason {
	t := c.Mode & modeTypeMask
	switch {
	case t == modeSymlink && p.Links.Allowed && c.LinkTarget != "":
		return linkReasons(c.NewPath, c.LinkTarget, c.Line, created, p, ev)
	case t == modeSymlink && p.Links.Allowed:
		return []report.Reason{reason(report.CodeUnsafePath, firstNonEmpty(c.NewPath, c.OldPath), c.Line,
			"changes a symlink; a patch may only add one, never change, retarget or remove one")}
	case t == modeSymlink:
		return []report.Reason{reason(report.CodeUnsafePath, firstNonEmpty(c.NewPath, c.OldPath), c.Line,
			fmt.Sprintf("mode %o creates a symlink; patches may only create regular files, unless the repository's "+
				"tree allows symlinks (symlinks: in-tree)", c.Mode))}
	case t == modeSubmodule:
		return []report.Reason{reason(report.CodeUnsafePath, firstNonEmpty(c.NewPath, c.OldPath), c.Line,
			fmt.Sprintf("mode %o creates a submodule; patches may only create regular files", c.Mode))}
	}
	return nil
}

func changePaths(c Change) []string {
	var out []string
	for _, p := range []string{c.OldPath, c.NewPath} {
		if p == "" || p == "/dev/null" || (len(out) == 1 && out[0] == p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// scanPath checks one path against every rule.
func scanPath(path string, line int, p Policy, ev evaluatorSet) []report.Reason {
	if problem := cleanPathProblem(path); problem != "" {
		return []report.Reason{
			reason(report.CodeUnsafePath, path, line, problem+"; patch paths must be clean and relative"),
		}
	}
	var out []report.Reason
	if pat, ok := p.Protected.Which(path); ok {
		out = append(
			out,
			reason(report.CodeProtected, path, line, fmt.Sprintf("matches protected_paths pattern %q", pat)),
		)
	}
	if owned, ok := ev.conflict(path); ok {
		out = append(
			out,
			reason(report.CodeEvaluator, path, line, fmt.Sprintf("collides with evaluator-owned path %q", owned)),
		)
	}
	if comp, ok := gitComponent(path); ok {
		out = append(
			out,
			reason(report.CodeGitPath, path, line, fmt.Sprintf("component %q is (or may alias) .git", comp)),
		)
	}
	if why := shadowReason(path, p.Restored.Match); why != "" {
		out = append(out, reason(report.CodeShadowing, path, line, why))
	}
	return out
}

func reason(code report.Code, path string, line int, detail string) report.Reason {
	return report.Reason{Code: code, Path: path, Line: line,
		Detail: fmt.Sprintf("patch line %d: %q %s", line, path, detail)}
}

// gitComponent finds a component that is .git or that a file system may resolve to .git:
// trailing dots and spaces (NTFS), an alternate data stream (".git::$INDEX_ALLOCATION"), the
// 8.3 short name GIT~1, and case or ignorable-code-point variants (HFS+).
func gitComponent(path string) (string, bool) {
	for _, c := range strings.Split(path, "/") {
		f := strings.TrimRight(canonical(c), ". ")
		if f == ".git" || f == "git~1" || strings.HasPrefix(f, ".git:") {
			return c, true
		}
	}
	return "", false
}

func firstNonEmpty(a, b string) string {
	if a != "" && a != "/dev/null" {
		return a
	}
	return b
}
