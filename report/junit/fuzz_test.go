package junit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var validStatus = map[Status]bool{Passed: true, Failed: true, Errored: true, Skipped: true, XFail: true, XPass: true}

// FuzzParse is seeded from the refusal, subtest and status tables and every report in
// testdata.
func FuzzParse(f *testing.F) {
	for _, c := range refusalCases("/nonexistent/canary") {
		f.Add([]byte(c.data), string(RunnerCommand))
	}
	for _, c := range subtestTotalsCases() {
		f.Add([]byte(c.doc), string(c.runner))
	}
	for _, c := range statusCases() {
		f.Add([]byte(`<testsuite tests="1"><testcase name="t" `+c.attrs+`>`+c.child+`</testcase></testsuite>`),
			string(RunnerCommand))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, r := range []Runner{RunnerPytest, RunnerGo, RunnerCommand} {
			f.Add(b, string(r))
		}
	}
	f.Add(
		[]byte(
			`<testsuite tests="1"><testcase classname="a.b.TestC" name="t[x]" file="a/b.py" line="3"><skipped type="pytest.xfail"/></testcase></testsuite>`,
		),
		string(RunnerPytest),
	)
	f.Fuzz(func(t *testing.T, data []byte, runner string) {
		opts := Options{
			Runner:   Runner(runner),
			MaxBytes: 1 << 20,
			Files:    []string{"a/b.py", "a.b.py", "tests/test_x.py"},
		}
		rep, err := Parse(data, opts)
		if err != nil {
			if rep != nil {
				t.Fatal("report returned with an error")
			}
			if !isSentinel(err) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		checkReport(t, rep, opts)
	})
}

func isSentinel(err error) bool {
	for _, s := range []error{ErrTooLarge, ErrEmpty, ErrDoctype, ErrEntity, ErrMalformed, ErrNotJUnit, ErrTooDeep,
		ErrEncoding, ErrTotals} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func checkReport(t *testing.T, rep *Report, opts Options) {
	t.Helper()
	if len(rep.Suites) == 0 || rep.Suites[0].Depth != 0 {
		t.Fatalf("no root suite: %+v", rep.Suites)
	}
	for _, c := range rep.Cases {
		if !validStatus[c.Status] {
			t.Fatalf("case %q has status %q", c.ID, c.Status)
		}
		if c.Suite < 0 || c.Suite >= len(rep.Suites) {
			t.Fatalf("case %q points at suite %d of %d", c.ID, c.Suite, len(rep.Suites))
		}
		if len(c.Message) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes", len(c.Message))
		}
	}
	if opts.Runner != RunnerPytest && rep.Counted().Tests != len(rep.Cases) {
		t.Fatalf("root counts %d tests for %d cases", rep.Counted().Tests, len(rep.Cases))
	}
	checkUnwritten(t, rep, opts)
	_ = rep.Mismatches()
}

// checkUnwritten holds the subtest rule to its terms: only pytest, only a surplus, and only
// with every other total declared and adding up.
func checkUnwritten(t *testing.T, rep *Report, opts Options) {
	t.Helper()
	for i, s := range rep.Suites {
		if s.Unwritten == 0 {
			continue
		}
		d, c := s.Declared, s.Counted
		if opts.Runner != RunnerPytest || s.Unwritten < 0 || d.Tests != c.Tests+s.Unwritten ||
			d.Failures != c.Failures || d.Errors != c.Errors || d.Skipped != c.Skipped ||
			s.Has != HasTests|HasFailures|HasErrors|HasSkipped {
			t.Fatalf("suite %d: %d unwritten passes accepted against %+v", i, s.Unwritten, s)
		}
	}
}

// FuzzFromGoTestJSON checks that whatever go test -json says, the JUnit written from it parses
// and its totals add up.
func FuzzFromGoTestJSON(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("testdata", "gotest.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	for _, line := range strings.Split(string(real), "\n")[:20] {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"T"}` + "\n" + `{"Action":"fail","Package":"p"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := FromGoTestJSON(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrGoTestJSON) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		rep, err := Parse(out, Options{Runner: RunnerGo, MaxBytes: 1 << 30})
		if err != nil {
			t.Fatalf("our JUnit does not parse: %v\n%s", err, out)
		}
		if m := rep.Mismatches(); len(m) != 0 {
			t.Fatalf("our JUnit does not add up: %+v\n%s", m, out)
		}
	})
}
