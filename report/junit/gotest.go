package junit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrGoTestJSON is returned when `go test -json` output cannot be read.
var ErrGoTestJSON = errors.New("junit: unreadable go test -json output")

const (
	maxGoLine      = 4 << 20  // one JSON event
	maxCaseOutput  = 16 << 10 // output kept per failed or skipped test (the tail)
	packageCase    = "TestMain"
	packageFailMsg = "package failed outside any test"
)

// goEvent is one line of `go test -json` (cmd/test2json).
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

type goTest struct {
	name    string
	outcome string // "pass", "fail", "skip"; "" when the test never finished
	elapsed float64
	output  tail
}

type goPackage struct {
	name    string
	outcome string
	elapsed float64
	tests   []*goTest
	byName  map[string]*goTest
	output  tail
}

// FromGoTestJSON converts `go test -json` output into a JUnit document: one <testsuite> per
// package and one <testcase> per test and subtest, with the package as classname. A test that
// started but never finished (the binary died) is an error. A package that failed without a
// failing test (a build failure, a panic in TestMain) gets a failing "TestMain" case, as
// gotestsum does, so its failure is never silent. Lines that are not JSON are ignored.
func FromGoTestJSON(r io.Reader) ([]byte, error) {
	c := newGoCollector()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxGoLine)
	line := 0
	for sc.Scan() {
		line++
		if err := c.line(sc.Bytes()); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrGoTestJSON, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: after line %d: %v", ErrGoTestJSON, line, err)
	}
	return c.marshal()
}

type goCollector struct {
	pkgs   []*goPackage
	byName map[string]*goPackage
	builds map[string]*tail // build output by ImportPath
}

func newGoCollector() *goCollector {
	return &goCollector{byName: map[string]*goPackage{}, builds: map[string]*tail{}}
}

func (c *goCollector) line(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var ev goEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return err
	}
	c.event(ev)
	return nil
}

func (c *goCollector) event(ev goEvent) {
	if ev.Action == "build-output" {
		c.buildTail(ev.ImportPath).write(ev.Output)
		return
	}
	if ev.Package == "" {
		return
	}
	p := c.pkg(ev.Package)
	if ev.Test == "" {
		c.packageEvent(p, ev)
		return
	}
	t := p.test(ev.Test)
	switch ev.Action {
	case "output":
		t.output.write(ev.Output)
	case "pass", "fail", "skip":
		t.outcome, t.elapsed = ev.Action, ev.Elapsed
	}
}

func (c *goCollector) packageEvent(p *goPackage, ev goEvent) {
	switch ev.Action {
	case "output":
		p.output.write(ev.Output)
	case "pass", "fail", "skip":
		p.outcome, p.elapsed = ev.Action, ev.Elapsed
		if ev.FailedBuild != "" {
			if b := c.builds[ev.FailedBuild]; b != nil {
				p.output.write(b.String())
			}
		}
	}
}

func (c *goCollector) buildTail(importPath string) *tail {
	t := c.builds[importPath]
	if t == nil {
		t = &tail{}
		c.builds[importPath] = t
	}
	return t
}

func (c *goCollector) pkg(name string) *goPackage {
	p := c.byName[name]
	if p == nil {
		p = &goPackage{name: name, byName: map[string]*goTest{}}
		c.byName[name] = p
		c.pkgs = append(c.pkgs, p)
	}
	return p
}

func (p *goPackage) test(name string) *goTest {
	t := p.byName[name]
	if t == nil {
		t = &goTest{name: name}
		p.byName[name] = t
		p.tests = append(p.tests, t)
	}
	return t
}

// tail keeps the last maxCaseOutput bytes written to it. It compacts only when its buffer
// reaches twice that, so many small writes cost linear time.
type tail struct {
	buf     []byte
	dropped bool
}

func (t *tail) write(s string) {
	t.buf = append(t.buf, s...)
	if len(t.buf) >= 2*maxCaseOutput {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-maxCaseOutput:]...)
		t.dropped = true
	}
}

func (t *tail) kept() []byte {
	if len(t.buf) > maxCaseOutput {
		return t.buf[len(t.buf)-maxCaseOutput:]
	}
	return t.buf
}

func (t *tail) String() string {
	if t.dropped || len(t.buf) > maxCaseOutput {
		return "[earlier output dropped]\n" + string(t.kept())
	}
	return string(t.buf)
}

// The JUnit shapes written; encoding/xml escapes every text and attribute.
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Skipped  int       `xml:"skipped,attr"`
	Time     string    `xml:"time,attr"`
	Cases    []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	ClassName string     `xml:"classname,attr"`
	Name      string     `xml:"name,attr"`
	Time      string     `xml:"time,attr"`
	Failure   *xmlResult `xml:"failure,omitempty"`
	Error     *xmlResult `xml:"error,omitempty"`
	Skipped   *xmlResult `xml:"skipped,omitempty"`
}

type xmlResult struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (c *goCollector) marshal() ([]byte, error) {
	doc := xmlSuites{}
	var total float64
	for _, p := range c.pkgs {
		s := p.suite()
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		total += p.elapsed
	}
	doc.Time = secs(total)
	out, err := xml.MarshalIndent(doc, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("junit: writing JUnit from go test -json: %w", err)
	}
	return append(append([]byte(xml.Header), out...), '\n'), nil
}

func (p *goPackage) suite() xmlSuite {
	s := xmlSuite{Name: p.name, Time: secs(p.elapsed)}
	failedTest := false
	for _, t := range p.tests {
		tc := t.testcase(p.name)
		failedTest = failedTest || t.outcome == "fail" || t.outcome == ""
		s.add(tc)
	}
	if p.outcome == "fail" && !failedTest {
		s.add(xmlCase{ClassName: p.name, Name: packageCase, Time: secs(p.elapsed),
			Failure: &xmlResult{Message: packageFailMsg, Text: p.output.String()}})
	}
	return s
}

func (s *xmlSuite) add(tc xmlCase) {
	s.Cases = append(s.Cases, tc)
	s.Tests++
	s.Failures += btoi(tc.Failure != nil)
	s.Errors += btoi(tc.Error != nil)
	s.Skipped += btoi(tc.Skipped != nil)
}

func (t *goTest) testcase(pkg string) xmlCase {
	tc := xmlCase{ClassName: pkg, Name: t.name, Time: secs(t.elapsed)}
	switch t.outcome {
	case "pass":
	case "fail":
		tc.Failure = &xmlResult{Message: "Failed", Text: t.output.String()}
	case "skip":
		tc.Skipped = &xmlResult{Message: skipMessage(t.output.String()), Text: t.output.String()}
	default:
		tc.Error = &xmlResult{Message: "test started but never finished", Text: t.output.String()}
	}
	return tc
}

// skipMessage is the first line the test logged, which for t.Skip is its reason.
func skipMessage(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		return clip(l, 200)
	}
	return "Skipped"
}

func secs(f float64) string {
	return strconv.FormatFloat(f, 'f', 3, 64)
}
