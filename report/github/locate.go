package github

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/report"
)

// Location is a file and line in the repository that hosts the check run.
type Location struct {
	Path string
	Line int
}

// Locator places a pair's annotation. It knows where the suite's tender.yaml sits in the
// repository, the line of each pair's entry in it, and each pair's patch file.
type Locator struct {
	suiteDir string
	entries  map[string]entry
}

type entry struct {
	line  int
	patch string
}

// NewLocator reads the pair entries of a tender.yaml found at suiteDir/tender.yaml in the
// repository (suiteDir is slash-separated and repository-relative; "" or "." is the root). It
// reads only ids, patch paths and line numbers: the grader has decoded the file strictly before.
func NewLocator(suiteDir string, tenderYAML []byte) (*Locator, error) {
	l := &Locator{suiteDir: cleanDir(suiteDir), entries: map[string]entry{}}
	if tenderYAML == nil {
		return l, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(tenderYAML, &doc); err != nil {
		return nil, fmt.Errorf("locating pairs in %s: %w", l.file("tender.yaml"), err)
	}
	if len(doc.Content) == 1 {
		l.readPairs(mapValue(doc.Content[0], "pairs"))
	}
	return l, nil
}

func cleanDir(dir string) string {
	dir = path.Clean(strings.TrimPrefix(dir, "./"))
	if dir == "." || dir == "/" {
		return ""
	}
	return strings.TrimPrefix(dir, "/")
}

func (l *Locator) file(rel string) string {
	if l == nil || l.suiteDir == "" {
		return rel
	}
	return l.suiteDir + "/" + rel
}

func (l *Locator) readPairs(seq *yaml.Node) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range seq.Content {
		id := mapValue(item, "id")
		if id == nil || id.Kind != yaml.ScalarNode {
			continue
		}
		e := entry{line: item.Line}
		if p := mapValue(item, "patch"); p != nil && p.Kind == yaml.ScalarNode {
			e.patch = p.Value
		}
		l.entries[id.Value] = e
	}
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Locate places p: an integrity violation on the patch hunk that touched the protected path,
// an unresolved pair on its failing test's file and line where a reason names them, and
// anything else on the pair's entry in tender.yaml.
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
		if e, ok := l.entry(p.ID); ok && e.patch != "" {
			return Location{Path: l.file(e.patch), Line: r.Line}, true
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

func (l *Locator) entry(id string) (entry, bool) {
	if l == nil {
		return entry{}, false
	}
	e, ok := l.entries[id]
	return e, ok
}

// pairEntry prefers the locator's own reading of tender.yaml (repository-relative), then the
// suite file and line the grader recorded when that path is relative.
func (l *Locator) pairEntry(p report.PairResult) Location {
	if e, ok := l.entry(p.ID); ok {
		return Location{Path: l.file("tender.yaml"), Line: e.line}
	}
	loc := Location{Path: l.file("tender.yaml"), Line: max(p.Line, 1)}
	if f := path.Clean(filepath.ToSlash(p.SuiteFile)); p.SuiteFile != "" && !path.IsAbs(f) && !strings.HasPrefix(f, "../") {
		loc.Path = f
	}
	return loc
}

func (loc Location) String() string { return loc.Path + ":" + strconv.Itoa(loc.Line) }
