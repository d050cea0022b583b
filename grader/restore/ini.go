package restore

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/ini.v1"
)

// iniOptions make ini.v1 read setup.cfg and tox.ini the way pytest's iniconfig and Python's
// configparser do, as far as it can: see the package doc.
var iniOptions = ini.LoadOptions{
	IgnoreInlineComment:        true,
	IgnoreContinuation:         true,
	AllowPythonMultilineValues: true,
	PreserveSurroundedQuote:    true,
	AllowNonUniqueSections:     true,
	AllowShadows:               true,
	AllowDuplicateShadowValues: true,
	PreserveEmptyShadowValues:  true,
	KeyValueDelimiters:         "=:",
}

// iniEntry is one key of one section occurrence, with every value it was given.
type iniEntry struct {
	Section string
	Key     string
	Values  []string
}

// iniDoc is a parsed INI file: entries in file order, and how often each section occurs.
type iniDoc struct {
	entries  []iniEntry
	sections map[string]int
}

func parseINI(data []byte) (iniDoc, error) {
	f, err := ini.LoadSources(iniOptions, data)
	if err != nil {
		return iniDoc{}, err
	}
	doc := iniDoc{sections: map[string]int{}}
	for _, s := range f.Sections() {
		doc.sections[s.Name()]++
		for _, k := range s.Keys() {
			doc.entries = append(doc.entries, iniEntry{s.Name(), k.Name(), k.ValueWithShadows()})
		}
	}
	return doc, nil
}

// split returns the entries of section name and the entries of every other section.
func (d iniDoc) split(name string) (in, out []iniEntry) {
	for _, e := range d.entries {
		if e.Section == name {
			in = append(in, e)
		} else {
			out = append(out, e)
		}
	}
	return in, out
}

func iniHas(name string) func([]byte) (bool, error) {
	return func(data []byte) (bool, error) {
		doc, err := parseINI(data)
		return doc.sections[name] > 0, err
	}
}

func iniReset(name string) func(base, cand []byte) ([]byte, string) {
	return func(base, cand []byte) ([]byte, string) {
		return resetINI(name, base, cand)
	}
}

// resetINI splices base's [name] section text into cand in place of cand's, then checks the
// result by value.
func resetINI(name string, base, cand []byte) ([]byte, string) {
	c, problem := checkedINI("the candidate's file", name, cand)
	if problem != "" {
		return nil, problem
	}
	b := iniDoc{sections: map[string]int{}}
	baseText := ""
	if base != nil {
		if b, problem = checkedINI("the base file", name, base); problem != "" {
			return nil, problem
		}
		baseText = iniSectionText(string(base), name)
	}
	out := spliceINI(string(cand), name, baseText)
	r, problem := checkedINI("the reset file", name, []byte(out))
	if problem != "" {
		return nil, problem
	}
	rIn, rOut := r.split(name)
	bIn, _ := b.split(name)
	_, cOut := c.split(name)
	if r.sections[name] != b.sections[name] || !slices.EqualFunc(rIn, bIn, equalEntry) ||
		!slices.EqualFunc(rOut, cOut, equalEntry) {
		return nil, fmt.Sprintf("after the reset [%s] is not exactly the base's, or other values changed", name)
	}
	return []byte(out), ""
}

func equalEntry(a, b iniEntry) bool {
	return a.Section == b.Section && a.Key == b.Key && slices.Equal(a.Values, b.Values)
}

// checkedINI parses data and refuses the odd forms of section name: a duplicate section, a
// duplicate key in it, or an indented header line for it.
func checkedINI(what, name string, data []byte) (iniDoc, string) {
	doc, err := parseINI(data)
	if err != nil {
		return doc, fmt.Sprintf("%s does not parse: %v", what, err)
	}
	if doc.sections[name] > 1 {
		return doc, fmt.Sprintf("%s has [%s] %d times", what, name, doc.sections[name])
	}
	in, _ := doc.split(name)
	for _, e := range in {
		if len(e.Values) > 1 {
			return doc, fmt.Sprintf("%s sets %q in [%s] more than once", what, e.Key, name)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimLeft(line, " \t\f\v")
		if t != line && strings.HasPrefix(t, "["+name+"]") {
			return doc, fmt.Sprintf("%s has an indented [%s] header, which INI readers disagree on", what, name)
		}
	}
	return doc, ""
}

// iniHeader returns the section name if line is a header in column 0, else "".
func iniHeader(line string) (string, bool) {
	line = strings.TrimRight(line, "\r")
	if !strings.HasPrefix(line, "[") {
		return "", false
	}
	end := strings.LastIndexByte(line, ']')
	if end < 0 {
		return "", false
	}
	return line[1:end], true
}

// iniChunks splits text into a preamble and chunks that each start at a header line.
func iniChunks(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	var chunks []string
	cur := ""
	for _, l := range lines {
		if _, ok := iniHeader(l); ok {
			chunks = append(chunks, cur)
			cur = ""
		}
		cur += l
	}
	return append(chunks, cur) // chunks[0] is the preamble
}

func iniSectionText(text, name string) string {
	for _, c := range iniChunks(text)[1:] {
		if n, _ := iniHeader(firstLine(c)); n == name {
			return withNewline(c)
		}
	}
	return ""
}

func spliceINI(cand, name, baseText string) string {
	chunks := iniChunks(cand)
	sections := chunks[1:]
	return splice(chunks[0], sections, func(i int) bool {
		n, _ := iniHeader(firstLine(sections[i]))
		return n == name
	}, baseText)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
