package report

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The shapes of tender-results.xml: the grading itself as JUnit, one test case per pair.
// encoding/xml escapes all text and attributes, and replaces characters XML cannot carry.
type gradeSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []gradeSuite `xml:"testsuite"`
}

type gradeSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []gradeProperty `xml:"properties>property"`
	Cases      []gradeCase     `xml:"testcase"`
}

type gradeProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type gradeCase struct {
	ClassName string       `xml:"classname,attr"`
	Name      string       `xml:"name,attr"`
	Time      string       `xml:"time,attr"`
	Failure   *gradeResult `xml:"failure,omitempty"`
	Error     *gradeResult `xml:"error,omitempty"`
}

type gradeResult struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// tenderJUnit renders tender-results.xml: a failure for unresolved, an error for error and
// integrity_violation, the reasons in the message and body.
func tenderJUnit(r Results) ([]byte, error) {
	s := gradeSuite{
		Name:       strings.TrimSpace(r.Suite + " " + r.SuiteVersion),
		Time:       seconds(r.Finished.Sub(r.Started)),
		Timestamp:  timestamp(r.Started),
		Properties: suiteProperties(r),
	}
	for _, p := range r.Pairs {
		c := pairCase(p)
		s.Cases = append(s.Cases, c)
		s.Tests++
		s.Failures += boolInt(c.Failure != nil)
		s.Errors += boolInt(c.Error != nil)
	}
	doc := gradeSuites{Name: "tender", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors,
		Time: s.Time, Suites: []gradeSuite{s}}
	out, err := xml.MarshalIndent(doc, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("report: encoding %s: %w", TenderJUnit, err)
	}
	return append(append([]byte(xml.Header), out...), '\n'), nil
}

func suiteProperties(r Results) []gradeProperty {
	props := []gradeProperty{
		{"schema", r.Schema}, {"tool", r.Tool}, {"suite", r.Suite}, {"suite_version", r.SuiteVersion},
		{"suite_digest", r.SuiteDigest}, {"backend", r.Backend},
	}
	if r.Shard != "" {
		props = append(props, gradeProperty{"shard", r.Shard})
	}
	return props
}

func pairCase(p PairResult) gradeCase {
	c := gradeCase{
		ClassName: p.Repository,
		Name:      p.ID,
		Time:      seconds(time.Duration(p.DurationMillis) * time.Millisecond),
	}
	if p.Verdict == Resolved {
		return c
	}
	res := &gradeResult{Type: string(p.Verdict), Message: verdictMessage(p), Text: reasonLines(p)}
	if p.Verdict == Unresolved {
		c.Failure = res
	} else {
		c.Error = res
	}
	return c
}

// verdictMessage is "verdict: code, code", naming each code once.
func verdictMessage(p PairResult) string {
	codes := DistinctCodes(p.Reasons)
	msg := string(p.Verdict)
	if len(codes) > 0 {
		msg += ": " + strings.Join(codes, ", ")
	}
	return clipText(msg, maxDetail)
}

func reasonLines(p PairResult) string {
	var b strings.Builder
	for _, r := range p.Reasons {
		b.WriteString(reasonText(r))
		b.WriteByte('\n')
	}
	if p.MissedExpect() {
		fmt.Fprintf(&b, "expected verdict %s, got %s\n", p.Expect, p.Verdict)
	}
	return b.String()
}

// reasonText is "code: detail (path:line)".
func reasonText(r Reason) string {
	s := string(r.Code)
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	switch {
	case r.Path != "" && r.Line > 0:
		s += fmt.Sprintf(" (%s:%d)", r.Path, r.Line)
	case r.Path != "":
		s += " (" + r.Path + ")"
	}
	return s
}

func seconds(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
