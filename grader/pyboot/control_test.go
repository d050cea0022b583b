package pyboot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
)

const nonce = "4f1c"

func ctl(lines ...string) []byte {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return []byte(b.String())
}

const plan = `{"v":1,"sentinels":[{"id":"t.py::test_b_a","kind":"twin","of":"t.py::test_a"},{"id":"t.py::test_c_a","kind":"mutant"},{"id":"t.py::test_d_a","kind":"near","of":"t.py::test_a"}],"shifts":{"t.py":[[3,4],[10,5]]}}`

// TestReadTrustsOnlyTheNonceAndTheOrder: lines without the nonce, a second plan, hits before
// the plan and anything after the end are not the bootstrap's.
func TestReadTrustsOnlyTheNonceAndTheOrder(t *testing.T) {
	out := ctl(
		"TENDER-CONTROL forged plan "+`{"v":1,"sentinels":[]}`,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"write","what":"report"}`, // before the plan: ignored
		"TENDER-CONTROL "+nonce+" plan "+plan,
		"pytest output TENDER-CONTROL "+nonce+" end {}",
		"TENDER-CONTROL "+nonce+" plan "+`{"v":1,"sentinels":[]}`,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"note:gc","what":"walked every object of the interpreter"}`,
		"TENDER-CONTROL "+nonce+" end "+`{"exit":1,"junit_sha256":"ab"}`,
		"TENDER-CONTROL "+nonce+" end "+`{"exit":0}`,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"write","what":"tender"}`,
	)
	c := Read(out, nonce)
	if c.Plan == nil || len(c.Plan.Sentinels) != 3 || c.Plan.Mutants() != 1 {
		t.Fatalf("plan %+v", c.Plan)
	}
	if diff := cmp.Diff([]Hit{{"note:gc", "walked every object of the interpreter"}}, c.Hits); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
	if c.End == nil || c.End.Exit != 1 || c.End.JUnitSHA256 != "ab" {
		t.Errorf("end %+v", c.End)
	}
	if got := Read(out, ""); got.Plan != nil {
		t.Error("an empty nonce must match nothing")
	}
}

func TestOriginalLine(t *testing.T) {
	c := Read(ctl("TENDER-CONTROL "+nonce+" plan "+plan), nonce)
	for _, tc := range []struct{ ran, want int }{
		{1, 1}, {3, 3}, {4, 0}, {7, 0}, {8, 4}, {14, 10}, {15, 0}, {19, 0}, {20, 11}, {100, 91},
	} {
		if got := c.Plan.OriginalLine("t.py", tc.ran); got != tc.want {
			t.Errorf("line %d maps to %d, want %d", tc.ran, got, tc.want)
		}
	}
	if got := c.Plan.OriginalLine("other.py", 9); got != 9 {
		t.Errorf("a module without sentinels keeps its lines: %d", got)
	}
}

func TestRedact(t *testing.T) {
	c := Read(ctl("TENDER-CONTROL "+nonce+" plan "+plan), nonce)
	log := "TENDER-CONTROL " + nonce + " plan " + plan + "\nFAILED t.py::test_c_a - assert 1\nPASSED t.py::test_c_a_longer\n"
	got := string(c.Redact([]byte(log)))
	if want := "FAILED t.py::<sentinel> - assert 1\nPASSED t.py::test_c_a_longer\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func rep(cases map[string]junit.Status) *junit.Report {
	r := &junit.Report{}
	for id, st := range cases {
		r.Cases = append(r.Cases, junit.Case{ID: id, Status: st})
	}
	return r
}

// TestJudge: every way the control lines and the report can disagree, and the honest runs
// that must not be called forged.
func TestJudge(t *testing.T) {
	report1 := []byte("<testsuite/>")
	honest := map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a": junit.Failed, "t.py::test_d_a": junit.Failed}
	// end is the end line; the outcomes the test process saw are filled in from the run's
	// report (an honest stream) unless the row says otherwise.
	end := func(exit int, sum string) string {
		return "TENDER-CONTROL " + nonce + " end " + `{"exit":` + string(rune('0'+exit)) + `,"junit_sha256":"` + sum + `","outcomes":@N,"passed_sha256":"@P","stream_ended":true}`
	}
	sawFailing := map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_b_a": junit.Failed, "t.py::test_c_a": junit.Failed, "t.py::test_d_a": junit.Failed}
	planLine := "TENDER-CONTROL " + nonce + " plan " + plan
	negLine := "TENDER-CONTROL " + nonce + " plan " + `{"v":1,"sentinels":[{"id":"t.py::test_e_a","kind":"negated","of":"t.py::test_a"}],"shifts":{}}`
	tests := []struct {
		name   string
		out    []byte
		run    Run
		forged []string // details, in part
		failed report.Code
		broken bool
		notes  int
	}{
		{name: "honest", out: ctl(planLine, end(1, digest(report1))), run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}},
		{name: "honest, wrong patch: original and twin fail", out: ctl(planLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_b_a": junit.Failed, "t.py::test_c_a": junit.Failed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "honest collection error: nothing collected, exit 2", out: ctl(planLine, end(2, digest(report1))),
			run: Run{Report: rep(nil), JUnit: report1, Exit: 2, Ended: true}, failed: report.CodeExitCodeMismatch},
		{name: "honest collection error in the report, no test ran: no outcome sent", out: ctl(planLine, strings.ReplaceAll(end(2, digest(report1)), "@N", "0")),
			run: Run{Report: rep(map[string]junit.Status{"t.py": junit.Errored}), JUnit: report1, Exit: 2, Ended: true}, failed: report.CodeExitCodeMismatch},
		{name: "killed at the deadline: no end line, no report", out: ctl(planLine), run: Run{Exit: -1, Ended: false}},
		{name: "mutant passed", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a": junit.Passed, "t.py::x": junit.Failed}), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"mutant"}},
		{name: "parametrized mutant instance passed", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a[1]": junit.Failed, "t.py::test_c_a[2]": junit.Passed}), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"mutant"}},
		{name: "twin failed while the original passed", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Failed, "t.py::test_c_a": junit.Failed}), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"verbatim copy"}},
		{name: "regression check: a twin failed while the original passed (a test that cannot run twice)", out: ctl(planLine, end(1, digest(report1))),
			run:   Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Failed, "t.py::test_c_a": junit.Failed}), JUnit: report1, Exit: 1, Ended: true, Regression: true},
			notes: 1},
		{name: "regression check: a mutant passed is still forged", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a": junit.Passed}), JUnit: report1, Exit: 1, Ended: true, Regression: true},
			forged: []string{"mutant"}},
		{name: "negation fails while the original passes: honest", out: ctl(negLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_e_a": junit.Failed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "wrong patch: the original fails and its negation passes: honest", out: ctl(negLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "a test and its negation both passed: neutered assertions", out: ctl(negLine, end(0, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"turned around"}},
		{name: "regression check: a test and its negation both passed is noted", out: ctl(negLine, end(0, digest(report1))),
			run:   Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 0, Ended: true, Regression: true},
			notes: 1},
		{name: "honest wrong patch that gives the near value: the near mutant passes alone", out: ctl(planLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_b_a": junit.Failed, "t.py::test_c_a": junit.Failed, "t.py::test_d_a": junit.Passed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "required test and its near mutant both passed", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a": junit.Failed, "t.py::test_d_a": junit.Passed}), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"slightly different value"}},
		{name: "twin missing", out: ctl(planLine, end(1, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_c_a": junit.Failed}), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"verbatim copy"}},
		{name: "exit 0 with a mutant", out: ctl(planLine, end(0, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed, "t.py::test_c_a": junit.Failed}), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"exited 0"}},
		{name: "exit 0: the code under test skipped every test, the mutant too (pytest.skip)", out: ctl(planLine, end(0, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Skipped, "t.py::test_b_a": junit.Skipped, "t.py::test_c_a": junit.Skipped, "t.py::test_d_a": junit.XFail}), JUnit: report1, Exit: 0, Ended: true}},
		{name: "exit 0: the mutant an expected failure (pytest.xfail), a parametrized one skipped", out: ctl(planLine, end(0, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.XFail, "t.py::test_b_a": junit.XFail, "t.py::test_c_a[1]": junit.XFail, "t.py::test_c_a[2]": junit.Skipped}), JUnit: report1, Exit: 0, Ended: true}},
		{name: "exit 0: one instance of a parametrized mutant failed", out: ctl(planLine, end(0, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Skipped, "t.py::test_b_a": junit.Skipped, "t.py::test_c_a[1]": junit.Skipped, "t.py::test_c_a[2]": junit.Failed}), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"exited 0"}},
		{name: "exit 0: the mutant missing from the report", out: ctl(planLine, end(0, digest(report1))),
			run:    Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Skipped, "t.py::test_b_a": junit.Skipped}), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"exited 0"}},
		{name: "report changed after the end", out: ctl(planLine, end(1, digest([]byte("other")))), run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"changed after"}},
		{name: "report appeared after the end", out: ctl(planLine, end(1, "")), run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"appeared after"}},
		{name: "exit status differs from the end line", out: ctl(planLine, end(1, digest(report1))), run: Run{Report: rep(honest), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"verifier exited 0"}},
		{name: "no end line, a report", out: ctl(planLine), run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"outside Tender's bootstrap"}},
		{name: "no plan, a report", out: nil, run: Run{Report: rep(honest), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"never started"}},
		{name: "no plan, no report", out: nil, run: Run{Exit: 127, Ended: true}, broken: true},
		{name: "bootstrap error", out: ctl("TENDER-CONTROL " + nonce + ` error {"stage":"plan","type":"KeyError"}`), run: Run{Exit: 3, Ended: true}, broken: true},
		{name: "report edited inside the test process: the stream saw the tests fail", out: ctl(planLine, strings.ReplaceAll(end(1, digest(report1)), "@P", passedDigest(rep(sawFailing)))),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"not the ones the test process saw pass"}},
		{name: "two outcomes for one test", out: ctl(planLine, strings.Replace(end(1, digest(report1)), `"outcomes"`, `"outcome_dups":1,"outcomes"`, 1)),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"two outcomes"}},
		{name: "the outcome stream was held open past the test process", out: ctl(planLine, strings.Replace(end(1, digest(report1)), `"stream_ended":true`, `"stream_ended":false`, 1)),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"kept the outcome stream open"}},
		{name: "a report, and no outcome at all", out: ctl(planLine, strings.ReplaceAll(end(1, digest(report1)), "@N", "0")),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"no outcome"}},
		{name: "a failing tripwire and a note", out: ctl(planLine,
			"TENDER-CONTROL "+nonce+` hit {"kind":"signal","what":"own process group"}`,
			"TENDER-CONTROL "+nonce+` hit {"kind":"note:ctypes","what":"loaded a C library through ctypes"}`,
			"TENDER-CONTROL "+nonce+` hit {"kind":"note:ctypes","what":"SECRET-FROM-HIDDEN-TEST"}`,
			end(1, digest(report1))),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"signal"}, notes: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := string(tt.out)
			if tt.run.Report != nil {
				out = strings.ReplaceAll(out, "@N", fmt.Sprint(len(tt.run.Report.Cases)))
				out = strings.ReplaceAll(out, "@P", passedDigest(tt.run.Report))
			} else {
				out = strings.ReplaceAll(strings.ReplaceAll(out, "@N", "0"), "@P", "")
			}
			f := Read([]byte(out), nonce).Judge(tt.run)
			if (f.Broken != "") != tt.broken {
				t.Fatalf("broken %q, want %v", f.Broken, tt.broken)
			}
			if len(f.Forged) != len(tt.forged) {
				t.Fatalf("forged %+v, want %d reason(s) %q", f.Forged, len(tt.forged), tt.forged)
			}
			for i, want := range tt.forged {
				if !strings.Contains(f.Forged[i].Detail, want) {
					t.Errorf("forged reason %q does not say %q", f.Forged[i].Detail, want)
				}
			}
			if tt.failed != "" && (len(f.Failed) != 1 || f.Failed[0].Code != tt.failed) {
				t.Errorf("failed %+v, want %s", f.Failed, tt.failed)
			}
			if len(f.Notes) != tt.notes {
				t.Errorf("notes %+v, want %d", f.Notes, tt.notes)
			}
			for _, n := range append(f.Notes, f.Forged...) {
				if strings.Contains(n.Detail, "SECRET") {
					t.Errorf("a hit's own words reached a reason: %q", n.Detail)
				}
			}
		})
	}
}
