// Package junit reads JUnit XML reports written by test runners (pytest xunit1 and xunit2 with
// subtests, go-junit-report, gotestsum, Maven Surefire, jest-junit, googletest and CTest status
// attributes) into one flat list of test cases with IDs in the form the suite names its tests,
// and keeps the totals each suite declared so that a caller can check they add up. The rules
// are in docs/junit.md.
//
// The reports are untrusted: they were written inside the verifier by code the candidate
// controls. The package never expands entities, never follows a DOCTYPE, never reads past its
// size cap and never touches the file system.
package junit

import (
	"errors"
	"time"
)

// DefaultMaxBytes is the size cap used when Options.MaxBytes is zero.
const DefaultMaxBytes = 32 << 20

// maxDepth bounds element nesting; real reports nest a handful of levels.
const maxDepth = 64

// Count caps used when Options.MaxSuites or MaxCases is zero. A report past them is refused
// whole (ErrTooLarge): the candidate controls the report, and every suite and case costs the
// grader memory and, with totals that disagree, a reason each.
const (
	DefaultMaxSuites = 10_000
	DefaultMaxCases  = 100_000
	maxResults       = 16 // result elements kept per case; a real case has one
)

// Errors returned by Parse, always wrapped with %w and a detail saying where.
var (
	ErrTooLarge  = errors.New("junit: report exceeds the size cap")
	ErrEmpty     = errors.New("junit: report is empty")
	ErrDoctype   = errors.New("junit: DOCTYPE and markup declarations are not allowed")
	ErrEntity    = errors.New("junit: entity references other than the five predefined XML entities are not allowed")
	ErrMalformed = errors.New("junit: malformed XML")
	ErrNotJUnit  = errors.New("junit: not a JUnit report")
	ErrTooDeep   = errors.New("junit: elements nested too deeply")
	ErrEncoding  = errors.New("junit: the report's character encoding cannot be read")
	ErrTotals    = errors.New("junit: a suite total is not a count")
)

// Runner says how test IDs are written. Its values are the suite format's `runner` values.
type Runner string

const (
	// RunnerPytest gives pytest node IDs: tests/test_x.py::TestC::test_y[param].
	RunnerPytest Runner = "pytest"
	// RunnerGo gives Go IDs: import/path.TestName/subtest.
	RunnerGo Runner = "go"
	// RunnerCommand gives classname::name. It is also what the zero value means.
	RunnerCommand Runner = "command"
)

// Options control Parse.
type Options struct {
	// MaxBytes caps the report size; zero means DefaultMaxBytes.
	MaxBytes int64
	// MaxSuites and MaxCases cap the elements read; zero means the defaults.
	MaxSuites, MaxCases int
	// Runner picks the ID form.
	Runner Runner
	// Files lists the workspace's files as slash-separated paths relative to the workspace
	// root. pytest's classname turns both "a/b.py" and "a.b.py" into "a.b"; the file that
	// exists decides which one a case came from.
	Files []string
}

// Status is the outcome of one test case.
type Status string

const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Errored Status = "error"
	Skipped Status = "skipped"
	XFail   Status = "xfail"
	XPass   Status = "xpass"
)

// Totals are the four counts a JUnit suite declares.
type Totals struct {
	Tests    int
	Failures int
	Errors   int
	Skipped  int
}

// Attrs says which of the four totals a suite declared.
type Attrs uint8

const (
	HasTests Attrs = 1 << iota
	HasFailures
	HasErrors
	HasSkipped
)

// Suite is one <testsuites> or <testsuite> element.
type Suite struct {
	Name   string
	Kind   string // "testsuites" or "testsuite"
	Depth  int    // 0 for the root element
	Parent int    // index of the enclosing suite; -1 for the root
	// Declared holds the totals from the element's attributes; Has says which were present.
	Declared Totals
	Has      Attrs
	// Counted holds the totals of the cases inside the element, nested suites included,
	// counted the way the report's runner counts them.
	Counted Totals
	// Unwritten is how many passes pytest counted in `tests` without writing a <testcase>
	// for them: passing subtests (pytest ≥ 9, pytest-subtests), and a test's own pass when
	// one of its subtests failed or was skipped. It is set only for runner pytest, and only
	// when the suite declares failures, errors and skipped and each adds up exactly to the
	// result elements read, so that nothing but a pass can be missing (see Mismatches).
	Unwritten int
}

// Case is one <testcase> element.
type Case struct {
	ID        string
	ClassName string
	Name      string
	File      string
	Line      int // 1-based; 0 when unknown
	Status    Status
	Message   string // from the element that decided Status, capped
	Time      time.Duration
	Flaky     bool // Surefire flakyFailure/flakyError: failed, then passed on a rerun
	Suite     int  // index into Report.Suites of the innermost enclosing suite
}

// Report is a parsed JUnit file.
type Report struct {
	Suites []Suite
	Cases  []Case
}

// Counted returns the totals of every case in the report.
func (r *Report) Counted() Totals {
	if len(r.Suites) > 0 && r.Suites[0].Depth == 0 {
		return r.Suites[0].Counted
	}
	return Totals{}
}
