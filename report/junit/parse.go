package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxMessage caps Case.Message; the full text stays in the raw report.
const maxMessage = 2048

// Parse reads one JUnit report. It refuses DOCTYPE, entity references beyond the five that XML
// predefines, reports larger than the cap and documents whose root is not <testsuites> or
// <testsuite>.
func Parse(data []byte, opts Options) (*Report, error) {
	if limit := opts.maxBytes(); int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %d bytes, the cap is %d", ErrTooLarge, len(data), limit)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmpty
	}
	dec, err := newDecoder(data)
	if err != nil {
		return nil, err
	}
	p := &parser{opts: opts, rep: &Report{}}
	if err := p.run(dec); err != nil {
		return nil, err
	}
	p.finish()
	return p.rep, nil
}

// ParseReader reads at most the size cap from r and parses it.
func ParseReader(r io.Reader, opts Options) (*Report, error) {
	limit := opts.maxBytes()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("junit: reading report: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return Parse(data, opts)
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

type frameKind int

const (
	suiteFrame frameKind = iota
	caseFrame
	resultFrame
	otherFrame
)

type frame struct {
	kind  frameKind
	suite int // suite index for suiteFrame
}

// result is one child of <testcase> that says how it went.
type result struct {
	tag     string
	message string
	typ     string
	text    strings.Builder
}

// caseBuild is a <testcase> being read.
type caseBuild struct {
	c       Case
	hasLine bool
	results []*result
	tags    tagCounts // every result element, those past maxResults included
	status  string    // the testcase's status attribute (JUnit writers of C++ and PHP)
	result  string    // the testcase's result attribute (googletest)
}

// tagCounts counts a case's result elements by kind; the totals count these.
type tagCounts struct {
	failure, err, skipped, flaky int
}

type parser struct {
	opts     Options
	rep      *Report
	stack    []frame
	suites   []int // enclosing suite indexes, innermost last
	cur      *caseBuild
	rootDone bool
	builds   []caseBuild
}

func (p *parser) run(dec *xml.Decoder) error {
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return p.atEOF()
		}
		if err != nil {
			return decodeError(err)
		}
		if err := p.token(tok); err != nil {
			return fmt.Errorf("%w (line %d)", err, lineOf(dec))
		}
	}
}

func lineOf(dec *xml.Decoder) int {
	line, _ := dec.InputPos()
	return line
}

func (p *parser) atEOF() error {
	if !p.rootDone {
		if len(p.rep.Suites) == 0 {
			return fmt.Errorf("%w: no <testsuites> or <testsuite> element", ErrNotJUnit)
		}
		return fmt.Errorf("%w: the document ends inside an element", ErrMalformed)
	}
	return nil
}

func decodeError(err error) error {
	if errors.Is(err, ErrEncoding) {
		return err
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		if strings.HasPrefix(se.Msg, "invalid character entity") {
			return fmt.Errorf("%w: line %d: %s", ErrEntity, se.Line, se.Msg)
		}
		return fmt.Errorf("%w: line %d: %s", ErrMalformed, se.Line, se.Msg)
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

func (p *parser) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		return p.start(t)
	case xml.EndElement:
		p.end()
	case xml.CharData:
		return p.charData(t)
	case xml.Directive:
		return directiveError(t)
	}
	return nil
}

// directiveError refuses every <!...> declaration. A DOCTYPE that declares entities wraps
// both ErrDoctype and ErrEntity.
func directiveError(d xml.Directive) error {
	word := firstWord(d)
	hasEntity := bytes.Contains(bytes.ToUpper(d), []byte("ENTITY"))
	switch {
	case strings.EqualFold(word, "DOCTYPE") && hasEntity:
		return fmt.Errorf("%w, and %w: found <!DOCTYPE declaring entities", ErrDoctype, ErrEntity)
	case hasEntity:
		return fmt.Errorf("%w: found a <!ENTITY declaration", ErrEntity)
	}
	return fmt.Errorf("%w: found <!%s", ErrDoctype, word)
}

func firstWord(d []byte) string {
	f := bytes.Fields(d)
	if len(f) == 0 {
		return ""
	}
	return clip(string(f[0]), 20)
}

func (p *parser) charData(t xml.CharData) error {
	if len(p.stack) == 0 {
		if p.rootDone && len(bytes.TrimSpace(t)) > 0 {
			return fmt.Errorf("%w: text after the root element", ErrMalformed)
		}
		return nil
	}
	if top := p.stack[len(p.stack)-1]; top.kind == resultFrame && p.cur != nil {
		r := p.cur.results[len(p.cur.results)-1]
		if room := maxMessage - r.text.Len(); room > 0 {
			r.text.Write(t[:min(room, len(t))])
		}
	}
	return nil
}

func (p *parser) start(t xml.StartElement) error {
	if len(p.stack) >= maxDepth {
		return fmt.Errorf("%w: more than %d levels", ErrTooDeep, maxDepth)
	}
	if len(p.stack) == 0 {
		return p.startRoot(t)
	}
	switch top := p.stack[len(p.stack)-1]; top.kind {
	case suiteFrame:
		return p.startInSuite(t)
	case caseFrame:
		p.startInCase(t)
	default:
		p.push(frame{kind: otherFrame})
	}
	return nil
}

func (p *parser) push(f frame) { p.stack = append(p.stack, f) }

func (p *parser) startRoot(t xml.StartElement) error {
	if p.rootDone {
		return fmt.Errorf("%w: a second root element <%s>", ErrMalformed, clip(t.Name.Local, 40))
	}
	if t.Name.Local != "testsuites" && t.Name.Local != "testsuite" {
		return fmt.Errorf("%w: the root element is <%s>, want <testsuites> or <testsuite>",
			ErrNotJUnit, clip(t.Name.Local, 40))
	}
	return p.startSuite(t)
}

func (p *parser) startInSuite(t xml.StartElement) error {
	switch t.Name.Local {
	case "testsuite", "testsuites":
		return p.startSuite(t)
	case "testcase":
		return p.startCase(t)
	}
	p.push(frame{kind: otherFrame})
	return nil
}

func (p *parser) startSuite(t xml.StartElement) error {
	s := Suite{Name: attr(t, "name"), Kind: t.Name.Local, Depth: len(p.suites), Parent: -1}
	if len(p.suites) > 0 {
		s.Parent = p.suites[len(p.suites)-1]
	}
	if err := readTotals(t, &s); err != nil {
		return err
	}
	idx := len(p.rep.Suites)
	if idx >= orDefault(p.opts.MaxSuites, DefaultMaxSuites) {
		return fmt.Errorf("%w: more than %d suites", ErrTooLarge, orDefault(p.opts.MaxSuites, DefaultMaxSuites))
	}
	p.rep.Suites = append(p.rep.Suites, s)
	p.suites = append(p.suites, idx)
	p.push(frame{kind: suiteFrame, suite: idx})
	return nil
}

func readTotals(t xml.StartElement, s *Suite) error {
	fields := []struct {
		name string
		bit  Attrs
		dst  *int
	}{
		{"tests", HasTests, &s.Declared.Tests},
		{"failures", HasFailures, &s.Declared.Failures},
		{"errors", HasErrors, &s.Declared.Errors},
		{"skipped", HasSkipped, &s.Declared.Skipped},
	}
	for _, f := range fields {
		v, ok := lookup(t, f.name)
		if !ok || strings.TrimSpace(v) == "" {
			continue // an empty total says nothing, as if it were absent
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("%w: <%s> attribute %s=%q is not a whole number of tests",
				ErrTotals, t.Name.Local, f.name, clip(v, 40))
		}
		*f.dst = n
		s.Has |= f.bit
	}
	return nil
}

func (p *parser) startCase(t xml.StartElement) error {
	if n := orDefault(p.opts.MaxCases, DefaultMaxCases); len(p.builds) >= n {
		return fmt.Errorf("%w: more than %d test cases", ErrTooLarge, n)
	}
	c := Case{
		ClassName: attr(t, "classname"),
		Name:      attr(t, "name"),
		File:      attr(t, "file"),
		Suite:     p.suites[len(p.suites)-1],
		Time:      seconds(attr(t, "time")),
	}
	b := &caseBuild{status: clip(attr(t, "status"), 40), result: clip(attr(t, "result"), 40)}
	if v, ok := lookup(t, "line"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			c.Line, b.hasLine = n, true
		}
	}
	b.c = c
	p.cur = b
	p.push(frame{kind: caseFrame})
	return nil
}

func seconds(v string) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

var resultTags = map[string]bool{
	"failure": true, "error": true, "skipped": true,
	"flakyFailure": true, "flakyError": true, "rerunFailure": true, "rerunError": true,
}

func (p *parser) startInCase(t xml.StartElement) {
	if !resultTags[t.Name.Local] {
		p.push(frame{kind: otherFrame})
		return
	}
	p.cur.tags.add(t.Name.Local)
	// Past maxResults a case's later results add nothing but memory: their text goes to the
	// last one kept.
	if len(p.cur.results) < maxResults {
		p.cur.results = append(
			p.cur.results,
			&result{tag: t.Name.Local, message: attr(t, "message"), typ: attr(t, "type")},
		)
	}
	p.push(frame{kind: resultFrame})
}

func (p *parser) end() {
	if len(p.stack) == 0 {
		return
	}
	top := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	switch top.kind {
	case suiteFrame:
		p.suites = p.suites[:len(p.suites)-1]
	case caseFrame:
		p.builds = append(p.builds, *p.cur)
		p.cur = nil
	}
	if len(p.stack) == 0 {
		p.rootDone = true
	}
}

func attr(t xml.StartElement, name string) string {
	v, _ := lookup(t, name)
	return v
}

func lookup(t xml.StartElement, name string) (string, bool) {
	for _, a := range t.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
