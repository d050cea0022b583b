package github

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tender-grader/tender/report"
)

// Location is a file and line in the repository that hosts the check run.
type Location struct {
	Path string
	Line int
}

// Locator places a pair's annotation. It knows only where the suite sits in the repository;
// the suite file, the line of the pair's entry and the patch file come from what the grader
// recorded in each result (suite-relative).
type Locator struct {
	suiteDir string
}

// NewLocator places annotations for a suite at suiteDir in the repository (slash-separated
// and repository-relative; "" or "." is the root).
func NewLocator(suiteDir string) *Locator {
	return &Locator{suiteDir: cleanDir(suiteDir)}
}

func cleanDir(dir string) string {
	dir = path.Clean(strings.TrimPrefix(dir, "./"))
	if dir == "." || dir == "/" {
		return ""
	}
	return strings.TrimPrefix(dir, "/")
}

// file joins a suite-relative path to the suite directory. It returns "" for a path that is
// absolute or climbs out of the suite: a result's fields are not trusted to name any file.
func (l *Locator) file(rel string) string {
	rel = path.Clean(filepath.ToSlash(rel))
	if rel == "" || rel == "." || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	if l == nil || l.suiteDir == "" {
		return rel
	}
	return l.suiteDir + "/" + rel
}

// Locate places p: an integrity violation on the patch hunk that touched the protected path,
// an unresolved pair on its failing test's file and line where a reason names them, and
// anything else on the pair's entry in the suite file.
func (l *Locator) Locate(p report.PairResult) Location {
	if p.Verdict == report.IntegrityViolation {
		if loc, ok := l.hunk(p); ok {
			return loc
		}
	}
	if p.Verdict == report.Unresolved {
		if loc, ok := failingTest(p); ok {
			return loc
		}
	}
	return l.pairEntry(p)
}

func (l *Locator) hunk(p report.PairResult) (Location, bool) {
	for _, r := range p.Reasons {
		if info, _ := report.Lookup(r.Code); info.Locus != report.PatchLine || r.Line <= 0 {
			continue
		}
		if f := l.file(p.PatchFile); p.PatchFile != "" && f != "" {
			return Location{Path: f, Line: r.Line}, true
		}
		if r.Path != "" {
			return Location{Path: r.Path, Line: r.Line}, true
		}
	}
	return Location{}, false
}

func failingTest(p report.PairResult) (Location, bool) {
	for _, c := range p.Checks {
		for _, r := range c.Reasons {
			if r.Path != "" && r.Line > 0 {
				return Location{Path: r.Path, Line: r.Line}, true
			}
		}
	}
	return Location{}, false
}

// pairEntry is the pair's entry in the suite file the grader recorded, or line 1 of the
// suite's tender.yaml when the result does not say.
func (l *Locator) pairEntry(p report.PairResult) Location {
	f := l.file(p.SuiteFile)
	if p.SuiteFile == "" || f == "" {
		f = l.file("tender.yaml")
	}
	return Location{Path: f, Line: max(p.Line, 1)}
}

func (loc Location) String() string { return loc.Path + ":" + strconv.Itoa(loc.Line) }
