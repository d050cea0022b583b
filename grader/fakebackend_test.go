package grader

import (
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
)

// fakeBackend is a sandbox.Backend that starts no container. For each check it calls the
// verifier the test registered under the check's spec name ("pairID/target") and returns its
// canned result. A check with no verifier must never start, and a verifier must start: either
// way the test fails.
type fakeBackend struct {
	t         *testing.T
	verifiers map[string]verifier

	mu    sync.Mutex
	calls []fakeCall
}

var _ sandbox.Backend = (*fakeBackend)(nil)

// fakeCall is one Run the fake received.
type fakeCall struct {
	Spec  sandbox.Spec
	Proto checkProtocol
	t     *testing.T
}

// errorf fails the test from a verifier, which runs on the grader's goroutines.
func (c *fakeCall) errorf(format string, a ...any) {
	c.t.Helper()
	c.t.Errorf(format, a...)
}

// verifier is what the fake does for one check.
type verifier func(ctx context.Context, c *fakeCall) (*sandbox.Result, error)

// newFakeBackend returns a fake that also fails the test, when it ends, for every verifier
// that never started.
func newFakeBackend(t *testing.T, verifiers map[string]verifier) *fakeBackend {
	f := &fakeBackend{t: t, verifiers: verifiers}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, name := range slices.Sorted(maps.Keys(verifiers)) {
			if !slices.ContainsFunc(f.calls, func(c fakeCall) bool { return c.Spec.Name == name }) {
				t.Errorf("fake backend: the verifier for %s never started", name)
			}
		}
	})
	return f
}

func (f *fakeBackend) Name() string { return "fake" }

// Close has nothing to remove: the fake starts nothing.
func (f *fakeBackend) Close(context.Context) error { return nil }

// Run runs on the grader's goroutines: it reports with t.Errorf, never t.Fatal.
func (f *fakeBackend) Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error) {
	var proto checkProtocol
	var perr error
	if !strings.HasSuffix(spec.Name, "/baseline") { // the baseline collection has its own protocol (baseline_test.go)
		proto, perr = readProtocol(spec)
	}
	c := &fakeCall{Spec: spec, Proto: proto, t: f.t}
	f.mu.Lock()
	f.calls = append(f.calls, *c)
	f.mu.Unlock()
	v, ok := f.verifiers[spec.Name]
	if !ok {
		f.t.Errorf("fake backend: %s started a verifier, but the test registered none for it", spec.Name)
		return nil, errors.New("fake backend: unexpected call")
	}
	if perr != nil {
		f.t.Errorf("fake backend: %v", perr)
		return nil, perr
	}
	return v(ctx, c)
}

// callsFor returns the checks started for a pair, in order.
func (f *fakeBackend) callsFor(pairID string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if strings.HasPrefix(c.Spec.Name, pairID+"/") {
			out = append(out, c)
		}
	}
	return out
}

// fakeRun is the run a verifier reports, built honestly from the protocol and then edited.
type fakeRun struct {
	proto    checkProtocol
	cases    []fakeCase
	exit     *int // nil: what pytest would exit with for the cases (1 when one failed)
	noReport bool
	raw      []byte // a report to return as is, instead of the cases
	res      sandbox.Result
	ctl      controlOpts // how the bootstrap's control lines differ from an honest run's
}

type fakeCase struct {
	id       string
	status   junit.Status
	message  string // the failure's message; "": "assert 1 == 2"
	sentinel *sentinel
	line     int // the report's line attribute (0-based, as pytest writes it); 0: none
}

// edit changes the honest run into the one a test needs.
type edit func(*fakeRun)

// reply is a verifier that reports every required test passed and every sentinel as it must
// be, then applies the edits.
func reply(edits ...edit) verifier {
	return func(_ context.Context, c *fakeCall) (*sandbox.Result, error) {
		r := &fakeRun{
			proto: c.Proto,
			res:   sandbox.Result{Backend: "fake", Isolated: true, ImageID: "sha256:fake", Wall: time.Millisecond},
		}
		for _, id := range c.Proto.Required {
			r.cases = append(r.cases, fakeCase{id: id, status: junit.Passed})
		}
		for _, s := range c.Proto.Sentinels {
			st := junit.Failed
			if s.MustPass {
				st = junit.Passed
			}
			r.cases = append(r.cases, fakeCase{id: s.ID, status: st, sentinel: &s})
		}
		for _, e := range edits {
			e(r)
		}
		return r.result(), nil
	}
}

func (r *fakeRun) result() *sandbox.Result {
	res := r.res
	res.ExitCode = 0
	var out strings.Builder
	for _, c := range r.cases {
		if c.status == junit.Failed || c.status == junit.Errored {
			res.ExitCode = 1
			fmt.Fprintf(&out, "FAILED %s - assert 1 == 2\n", c.id)
		}
	}
	fmt.Fprintf(&out, "%d tests ran\n", len(r.cases))
	if r.exit != nil {
		res.ExitCode = *r.exit
	}
	switch {
	case r.noReport:
		res.JUnit = nil
	case r.raw != nil:
		res.JUnit = r.raw
	default:
		res.JUnit = pytestJUnit(r.cases)
	}
	ctl := r.ctl
	if res.TimedOut || res.OOMKilled {
		ctl.noEnd = true // the bootstrap was killed with its test process
	}
	// As in a verifier: the bootstrap's control lines on stdout, the test run's output on stderr.
	var passed []string
	for _, c := range r.cases {
		if c.status == junit.Passed {
			passed = append(passed, c.id)
		}
	}
	stdout := r.proto.control(res.ExitCode, res.JUnit, passed, ctl)
	if r.proto.Nonce != "" {
		res.Plant = r.proto.planted(ctl.lines)
	}
	res.Stdout = sandbox.Capture{Head: []byte(stdout), Total: int64(len(stdout))}
	res.Stderr = sandbox.Capture{Head: []byte(out.String()), Total: int64(out.Len())}
	return &res
}

// withControl changes the bootstrap's control lines.
func withControl(set func(*controlOpts)) edit { return func(r *fakeRun) { set(&r.ctl) } }

// failing reports the given required tests failed; with no IDs, every required test.
func failing(ids ...string) edit {
	return withStatus(junit.Failed, ids...)
}

// withStatus reports the given required tests with st; with no IDs, every required test.
func withStatus(st junit.Status, ids ...string) edit {
	return func(r *fakeRun) {
		for i, c := range r.cases {
			if c.sentinel == nil && (len(ids) == 0 || slices.Contains(ids, c.id)) {
				r.cases[i].status = st
			}
		}
	}
}

// failingWith reports the given required tests failed with the message msg.
func failingWith(msg string, ids ...string) edit {
	return func(r *fakeRun) {
		for i, c := range r.cases {
			if c.sentinel == nil && slices.Contains(ids, c.id) {
				r.cases[i].status, r.cases[i].message = junit.Failed, msg
			}
		}
	}
}

// duplicated reports the first required test a second time.
func duplicated() edit {
	return func(r *fakeRun) { r.cases = append(r.cases, r.cases[0]) }
}

// sentinelsReported sets the status of the sentinels of one kind, as a forger would.
func sentinelsReported(mustPass bool, st junit.Status) edit {
	return func(r *fakeRun) {
		for i, c := range r.cases {
			if c.sentinel != nil && c.sentinel.MustPass == mustPass {
				r.cases[i].status = st
			}
		}
	}
}

// sentinelsDropped leaves every sentinel out of the report.
func sentinelsDropped() edit {
	return func(r *fakeRun) {
		var kept []fakeCase
		for _, c := range r.cases {
			if c.sentinel == nil {
				kept = append(kept, c)
			}
		}
		r.cases = kept
	}
}

// reportedLine gives every case of the report the line attribute n, as code that sets
// compat_co_firstlineno on the tests would.
func reportedLine(n int) edit {
	return func(r *fakeRun) {
		for i := range r.cases {
			r.cases[i].line = n
		}
	}
}

func exitCode(n int) edit { return func(r *fakeRun) { r.exit = &n } }

func noReport() edit { return func(r *fakeRun) { r.noReport = true } }

func rawReport(doc string) edit { return func(r *fakeRun) { r.raw = []byte(doc) } }

// result sets fields of the backend's result (limits hit, timeout, OOM).
func result(set func(*sandbox.Result)) edit { return func(r *fakeRun) { set(&r.res) } }

// timedOut is a check killed at its deadline: no report, as the Docker backend returns it.
func timedOut() edit {
	return func(r *fakeRun) { r.res.TimedOut, r.noReport = true, true; exitCode(-1)(r) }
}

// oomKilled is a check the kernel killed for memory: exit 137 and no report.
func oomKilled() edit {
	return func(r *fakeRun) { r.res.OOMKilled, r.noReport = true, true; exitCode(137)(r) }
}

// fails is a verifier whose infrastructure fails: Run returns an error.
func fails(err error) verifier {
	return func(context.Context, *fakeCall) (*sandbox.Result, error) { return nil, err }
}

// panics is a verifier that panics inside the backend.
func panics(v any) verifier {
	return func(context.Context, *fakeCall) (*sandbox.Result, error) { panic(v) }
}

// inspecting runs look on the check's spec (its workspace, support dir and command) before v.
// look reports problems with t.Errorf.
func inspecting(look func(c *fakeCall), v verifier) verifier {
	return func(ctx context.Context, c *fakeCall) (*sandbox.Result, error) {
		look(c)
		return v(ctx, c)
	}
}

// pytestJUnit writes the cases as pytest's junitxml (xunit1) would: classname is the dotted
// module (and classes), name the test, file the module's path; the totals add up.
func pytestJUnit(cases []fakeCase) []byte {
	s := xmlSuite{Name: "pytest", Tests: len(cases)}
	for _, c := range cases {
		file, rest, _ := strings.Cut(c.id, "::")
		parts := strings.Split(rest, "::")
		class := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		if len(parts) > 1 {
			class += "." + strings.Join(parts[:len(parts)-1], ".")
		}
		xc := xmlCase{ClassName: class, Name: parts[len(parts)-1], File: file}
		if c.line > 0 {
			xc.Line = strconv.Itoa(c.line)
		}
		msg := &xmlMsg{Message: cmp.Or(c.message, "assert 1 == 2")}
		switch c.status {
		case junit.Failed:
			xc.Failure, s.Failures = msg, s.Failures+1
		case junit.Errored:
			xc.Error, s.Errors = msg, s.Errors+1
		case junit.Skipped:
			xc.Skipped, s.Skipped = &xmlMsg{Message: "skipped"}, s.Skipped+1
		}
		s.Cases = append(s.Cases, xc)
	}
	out, err := xml.Marshal(xmlSuites{Suite: s})
	if err != nil {
		panic(err) // the types above always marshal
	}
	return append([]byte(xml.Header), out...)
}

type xmlSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suite   xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Skipped  int       `xml:"skipped,attr"`
	Cases    []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	ClassName string  `xml:"classname,attr"`
	Name      string  `xml:"name,attr"`
	File      string  `xml:"file,attr"`
	Line      string  `xml:"line,attr,omitempty"`
	Failure   *xmlMsg `xml:"failure"`
	Error     *xmlMsg `xml:"error"`
	Skipped   *xmlMsg `xml:"skipped"`
}

type xmlMsg struct {
	Message string `xml:"message,attr"`
}
