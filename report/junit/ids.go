package junit

import (
	"path"
	"slices"
	"strings"
)

// maxClassName bounds the pytest classnames that are split into a path; longer ones are kept
// whole, so a hostile report cannot make each case cost a split into millions of parts.
const maxClassName = 4096

// idMaker turns classname and name into the ID form of the suite's runner.
type idMaker struct {
	runner   Runner
	modules  map[string][]string // pytest's dotted module name -> workspace files
	maxParts int                 // the most dot-separated parts of any key in modules
}

func newIDMaker(o Options) *idMaker {
	m := &idMaker{runner: o.Runner}
	if o.Runner == RunnerPytest {
		m.modules = indexModules(o.Files)
		for k := range m.modules {
			m.maxParts = max(m.maxParts, strings.Count(k, ".")+1)
		}
	}
	return m
}

// indexModules maps each file to the dotted name pytest's junitxml derives from its path:
// slashes become dots and a trailing ".py" is dropped.
func indexModules(files []string) map[string][]string {
	idx := make(map[string][]string, len(files))
	for _, f := range files {
		f = path.Clean(strings.TrimPrefix(f, "./"))
		if f == "." || path.IsAbs(f) || f == ".." || strings.HasPrefix(f, "../") {
			continue
		}
		k := dotted(f)
		if !slices.Contains(idx[k], f) {
			idx[k] = append(idx[k], f)
		}
	}
	for _, v := range idx {
		slices.Sort(v)
	}
	return idx
}

func dotted(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
}

func (m *idMaker) assign(b *caseBuild) {
	c := &b.c
	switch m.runner {
	case RunnerPytest:
		c.ID, c.File = m.pytestID(c)
		if b.hasLine {
			c.Line++ // pytest writes 0-based line numbers
		}
	case RunnerGo:
		c.ID = joinID(c.ClassName, ".", c.Name)
	default:
		c.ID = joinID(c.ClassName, "::", c.Name)
	}
}

func joinID(class, sep, name string) string {
	if class == "" {
		return name
	}
	if name == "" {
		return class
	}
	return class + sep + name
}

// pytestID rebuilds a node ID. pytest writes classname "tests.test_x.TestC" and name
// "test_y[param]" for tests/test_x.py::TestC::test_y[param]; a collection error has an empty
// classname and the dotted module as its name.
func (m *idMaker) pytestID(c *Case) (id, file string) {
	dottedName := c.ClassName
	name := c.Name
	if dottedName == "" {
		dottedName, name = c.Name, ""
	}
	file, rest := m.pytestFile(dottedName, c.File)
	parts := append([]string{file}, rest...)
	if name != "" {
		parts = append(parts, name)
	}
	return strings.Join(parts, "::"), file
}

// pytestFile splits a dotted classname into a file and the classes after it. It trusts the
// report's own file attribute (xunit1) only when the classname starts with that file's dotted
// form, since pytest records the defining file, which differs for inherited tests.
func (m *idMaker) pytestFile(classname, reported string) (string, []string) {
	if len(classname) > maxClassName {
		return classname, nil // no real module path is this long; the ID matches nothing
	}
	parts := strings.Split(classname, ".")
	if reported != "" {
		d := dotted(path.Clean(reported))
		if classname == d || strings.HasPrefix(classname, d+".") {
			return path.Clean(reported), splitRest(strings.TrimPrefix(classname[len(d):], "."))
		}
	}
	if f, k, ok := m.lookupModule(parts); ok {
		return f, parts[k:]
	}
	k := guessModuleEnd(parts)
	return strings.Join(parts[:k], "/") + ".py", parts[k:]
}

func splitRest(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// lookupModule finds the longest dotted prefix naming a workspace file. When two files share
// that dotted form ("a/b.py" and "a.b.py"), the first in byte order is taken, so a report is
// always read the same way. Only prefixes as long as some file's dotted form are tried, so a
// classname made of a million dots costs no more than a short one.
func (m *idMaker) lookupModule(parts []string) (string, int, bool) {
	for k := min(len(parts), m.maxParts); k >= 1; k-- {
		if files := m.modules[strings.Join(parts[:k], ".")]; len(files) > 0 {
			return files[0], k, true
		}
	}
	return "", 0, false
}

// guessModuleEnd is used without a file list: the module is the longest prefix whose last
// part has pytest's default test-file form (test_*.py or *_test.py).
func guessModuleEnd(parts []string) int {
	for k := len(parts); k >= 1; k-- {
		p := parts[k-1]
		if strings.HasPrefix(p, "test_") || strings.HasSuffix(p, "_test") {
			return k
		}
	}
	return len(parts)
}
