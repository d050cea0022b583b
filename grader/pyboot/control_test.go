package pyboot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

const startLine = "TENDER-CONTROL " + nonce + ` start {"v":2}`

// planOf parses a plan as the planter writes its public part.
func planOf(t *testing.T, js string) *Plan {
	t.Helper()
	var p Plan
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

const plan = `{"v":2,"sentinels":[{"id":"t.py::test_b_a","kind":"twin","of":"t.py::test_a"},` +
	`{"id":"t.py::test_e_a","kind":"negated","of":"t.py::test_a"}],"shifts":{"t.py":[[3,4],[10,5]]},` +
	`"lines":{"t.py::test_a":3}}`

// TestReadTrustsOnlyTheNonceAndTheOrder: lines without the nonce, a second start, hits before
// the start and anything after the end are not the bootstrap's.
func TestReadTrustsOnlyTheNonceAndTheOrder(t *testing.T) {
	out := ctl(
		"TENDER-CONTROL forged start "+`{"v":2}`,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"write","what":"report"}`, // before the start: ignored
		startLine,
		"pytest output TENDER-CONTROL "+nonce+" end {}",
		startLine,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"note:gc","what":"walked every object of the interpreter"}`,
		"TENDER-CONTROL "+nonce+" end "+`{"exit":1,"junit_sha256":"ab","held":[["tok","key",1,0,0,0]]}`,
		"TENDER-CONTROL "+nonce+" end "+`{"exit":0}`,
		"TENDER-CONTROL "+nonce+" hit "+`{"kind":"write","what":"tender"}`,
	)
	c := Read(out, nonce)
	if !c.Started || c.Plan != nil {
		t.Fatalf("started %v, plan %+v (the plan never comes from the control lines)", c.Started, c.Plan)
	}
	if diff := cmp.Diff([]Hit{{"note:gc", "walked every object of the interpreter"}}, c.Hits); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
	if c.End == nil || c.End.Exit != 1 || c.End.JUnitSHA256 != "ab" {
		t.Fatalf("end %+v", c.End)
	}
	if want := []HeldRecord{{Token: "tok", Key: "key", Matched: 1}}; !cmp.Equal(want, c.End.Held) {
		t.Errorf("held %+v, want %+v", c.End.Held, want)
	}
	if c.Stray != 3 {
		t.Errorf("stray lines %d, want 3 (a second start, a second end, a hit after the end)", c.Stray)
	}
	if got := Read(out, ""); got.Started {
		t.Error("an empty nonce must match nothing")
	}
}

// TestParsePlant: the planter's output, its error, and what does not parse.
func TestParsePlant(t *testing.T) {
	out := `{"public":` + plan + `,"private":{"held":{"tok":["==",["s","x"]]}},"ids":["t.py::test_b_a"],` +
		`"paths":["/w/tests"],"files":["/w/t.py"]}`
	p, err := ParsePlant([]byte(out))
	if err != nil || p.Plan == nil || len(p.Plan.Sentinels) != 2 || p.Error != "" {
		t.Fatalf("ParsePlant: %+v, %v", p, err)
	}
	cfg := NewConfig([]string{"t.py::test_a"}, nil, nil).WithPlant(p)
	if diff := cmp.Diff([]string{"t.py::test_a", "t.py::test_b_a"}, cfg.IDs); diff != "" {
		t.Errorf("ids to run (-want +got):\n%s", diff)
	}
	if string(cfg.Held) != `{"tok":["==",["s","x"]]}` || cfg.Watch[0] != "/w/t.py" || cfg.Paths[0] != "/w/tests" {
		t.Errorf("config %+v", cfg)
	}
	if strings.Contains(string(cfg.Stdin()), `"public"`) {
		t.Error("the bootstrap's configuration carries the public plan")
	}
	e, err := ParsePlant([]byte(`{"error":{"stage":"plan","type":"KeyError"}}`))
	if err != nil || e.Error != "stage plan (KeyError)" {
		t.Errorf("an error: %+v, %v", e, err)
	}
	for _, bad := range []string{"", "{", `{"public":{"v":1}}`, `TENDER-CONTROL x plan {}`} {
		if _, err := ParsePlant([]byte(bad)); err == nil {
			t.Errorf("ParsePlant(%q) is no error", bad)
		}
	}
}

func TestOriginalLine(t *testing.T) {
	p := planOf(t, plan)
	for _, tc := range []struct{ ran, want int }{
		{1, 1}, {3, 3}, {4, 0}, {7, 0}, {8, 4}, {14, 10}, {15, 0}, {19, 0}, {20, 11}, {100, 91},
	} {
		if got := p.OriginalLine("t.py", tc.ran); got != tc.want {
			t.Errorf("line %d maps to %d, want %d", tc.ran, got, tc.want)
		}
	}
	if got := p.OriginalLine("other.py", 9); got != 9 {
		t.Errorf("a module without sentinels keeps its lines: %d", got)
	}
}

// TestLocate: the line of a required test is the plan's, whatever the report says; a case the
// plan has no line for gets none, and each case's file is its ID's.
func TestLocate(t *testing.T) {
	p := planOf(t, `{"v":2,"sentinels":[],"shifts":{},"lines":{"tests/t.py::test_a":12,"tests/t.py::test_p[1]":20}}`)
	r := &junit.Report{Cases: []junit.Case{
		{ID: "tests/t.py::test_a", File: "secret.py", Line: 7331},
		{ID: "tests/t.py::test_p[1]", File: "tests/t.py", Line: 20},
		{ID: "tests/t.py::test_other", File: "tests/t.py", Line: 65},
	}}
	p.Locate(r)
	want := []junit.Case{
		{ID: "tests/t.py::test_a", File: "tests/t.py", Line: 12},
		{ID: "tests/t.py::test_p[1]", File: "tests/t.py", Line: 20},
		{ID: "tests/t.py::test_other", File: "tests/t.py"},
	}
	if diff := cmp.Diff(want, r.Cases); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	var none *Plan
	none.Locate(r)
	if r.Cases[0].Line != 0 {
		t.Errorf("without a plan a case keeps line %d", r.Cases[0].Line)
	}
}

func TestRedact(t *testing.T) {
	c := Control{Plan: planOf(t, plan)}
	log := startLine + "\nFAILED t.py::test_b_a - assert 1\nPASSED t.py::test_b_a_longer\n"
	got := string(c.Redact([]byte(log)))
	if want := "FAILED t.py::<sentinel> - assert 1\nPASSED t.py::test_b_a_longer\n"; got != want {
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

// TestJudge: every way the control lines, the held records and the report can disagree, and
// the honest runs that must not be called forged.
func TestJudge(t *testing.T) {
	report1 := []byte("<testsuite/>")
	honest := map[string]junit.Status{
		"t.py::test_a":   junit.Passed,
		"t.py::test_b_a": junit.Passed,
		"t.py::test_e_a": junit.Failed,
	}
	// end is the end line; the outcomes the test process saw are filled in from the run's
	// report (an honest stream) unless the row says otherwise, and @H is the held records.
	end := func(exit int, sum string) string {
		return "TENDER-CONTROL " + nonce + " end " + `{"exit":` + string(rune('0'+exit)) + `,"junit_sha256":"` + sum +
			`","outcomes":@N,"passed_sha256":"@P","stream_ended":true,"held":[@H]}`
	}
	sawFailing := map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_b_a": junit.Failed}
	heldPlan := `{"v":2,"sentinels":[],"shifts":{},"lines":{"t.py::test_a":3,"t.py::test_p[1]":9},"held":{` +
		`"t.py::test_a":{"tokens":["k1","k2"],"full":true},"t.py::test_p[1]":{"tokens":["k3"],"full":true}}}`
	rec := func(tok, id string, counts ...int) string {
		return fmt.Sprintf(`["%s","%s",%d,%d,%d,%d]`, tok, TestKey(id), counts[0], counts[1], counts[2], counts[3])
	}
	matched := rec("k1", "t.py::test_a", 1, 0, 0, 0) + "," + rec("k2", "t.py::test_a", 1, 0, 0, 0) + "," +
		rec("k3", "t.py::test_p[1]", 1, 0, 0, 0)
	heldPassed := map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_p[1]": junit.Passed}
	tests := []struct {
		name       string
		out        []byte
		plan       string // the planter's public plan; empty is plan
		held       string // the end line's held records
		run        Run
		forged     []string // details, in part
		failed     report.Code
		broken     bool
		brokenCode report.Code
		notes      int
	}{
		{
			name: "honest",
			out:  ctl(startLine, end(1, digest(report1))),
			run:  Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
		},
		{name: "honest, wrong patch: original and twin fail", out: ctl(startLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Failed, "t.py::test_b_a": junit.Failed,
				"t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "honest collection error: nothing collected, exit 2", out: ctl(startLine, end(2, digest(report1))),
			run: Run{Report: rep(nil), JUnit: report1, Exit: 2, Ended: true}, failed: report.CodeExitCodeMismatch},
		{
			name: "honest collection error in the report, no test ran: no outcome sent",
			out:  ctl(startLine, strings.ReplaceAll(end(2, digest(report1)), "@N", "0")),
			run: Run{Report: rep(map[string]junit.Status{"t.py": junit.Errored}), JUnit: report1, Exit: 2,
				Ended: true},
			failed: report.CodeExitCodeMismatch,
		},
		{name: "killed at the deadline: no end line, no report", out: ctl(startLine), run: Run{Exit: -1, Ended: false}},
		{name: "twin failed while the original passed", out: ctl(startLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Failed}),
				JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"must pass did not"}},
		{
			name: "regression check: a twin failed while the original passed (a test that cannot run twice)",
			out:  ctl(startLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Failed}),
				JUnit: report1, Exit: 1, Ended: true, Regression: true},
			notes: 1,
		},
		{name: "rephrased copy failed while the original passed", out: ctl(startLine, end(1, digest(report1))),
			plan: strings.Replace(plan, `"kind":"twin"`, `"kind":"rephrased"`, 1),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Failed}),
				JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"must pass did not"}},
		{name: "twin missing", out: ctl(startLine, end(1, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_e_a": junit.Failed}),
				JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"must pass did not"}},
		{name: "a test and its negation both passed: neutered assertions", out: ctl(startLine, end(0, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed,
				"t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"turned around"}},
		{
			name: "regression check: a test and its negation both passed is noted",
			out:  ctl(startLine, end(0, digest(report1))),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Passed, "t.py::test_b_a": junit.Passed,
				"t.py::test_e_a": junit.Passed}), JUnit: report1, Exit: 0, Ended: true, Regression: true},
			notes: 1,
		},
		{
			name:   "report changed after the end",
			out:    ctl(startLine, end(1, digest([]byte("other")))),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"changed after"},
		},
		{
			name:   "report appeared after the end",
			out:    ctl(startLine, end(1, "")),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"appeared after"},
		},
		{
			name:   "exit status differs from the end line",
			out:    ctl(startLine, end(1, digest(report1))),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"verifier exited 0"},
		},
		{
			name:   "no end line, a report",
			out:    ctl(startLine),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"control channel broke"},
		},
		// The parent killed before its end line: the same verdict whether or not the report was
		// written in time (r2-kill-parent came out unresolved once, on a loaded machine).
		{name: "no end line, no report", out: ctl(startLine), run: Run{Exit: 137, Ended: true},
			forged: []string{"control channel broke"}},
		{name: "no end line, no report, Tender stopped the run", out: ctl(startLine), run: Run{Exit: -1, Ended: false}},
		{name: "a forged start and end before the bootstrap's own", out: ctl(
			startLine, end(0, digest(report1)), startLine),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 0, Ended: true}, forged: []string{"did not write"}},
		{
			name:   "a line after the end",
			out:    ctl(startLine, end(1, digest(report1)), "TENDER-CONTROL "+nonce+` hit {"kind":"x","what":"y"}`),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"did not write"},
		},
		{name: "stdout flooded past its cap", out: ctl(startLine, end(1, digest(report1))),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true, StdoutCut: true},
			forged: []string{"flooded"}},
		{name: "an error line after the start (the child died before reading its configuration)",
			out: ctl(startLine, "TENDER-CONTROL "+nonce+` error {"stage":"config","type":"BrokenPipeError"}`),
			run: Run{Exit: 3, Ended: true}, broken: true, brokenCode: report.CodeBootstrap},
		{name: "no start, a report", out: nil, run: Run{Report: rep(honest), JUnit: report1, Exit: 0, Ended: true},
			forged: []string{"never started"}},
		{name: "no start, no report", out: nil, run: Run{Exit: 127, Ended: true}, broken: true},
		{
			name:   "bootstrap error",
			out:    ctl("TENDER-CONTROL " + nonce + ` error {"stage":"config","type":"KeyError"}`),
			run:    Run{Exit: 3, Ended: true},
			broken: true,
		},
		{
			name:   "report edited inside the test process: the stream saw the tests fail",
			out:    ctl(startLine, strings.ReplaceAll(end(1, digest(report1)), "@P", passedDigest(rep(sawFailing)))),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"not the ones the test process saw pass"},
		},
		{
			name:   "two outcomes for one test",
			out:    ctl(startLine, strings.Replace(end(1, digest(report1)), `"outcomes"`, `"outcome_dups":1,"outcomes"`, 1)),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"two outcomes"},
		},
		{
			name: "the outcome stream was held open past the test process",
			out: ctl(startLine,
				strings.Replace(end(1, digest(report1)), `"stream_ended":true`, `"stream_ended":false`, 1)),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"kept the outcome stream open"},
		},
		{
			name:   "a report, and no outcome at all",
			out:    ctl(startLine, strings.ReplaceAll(end(1, digest(report1)), "@N", "0")),
			run:    Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true},
			forged: []string{"no outcome"},
		},
		{name: "a failing tripwire and a note", out: ctl(startLine,
			"TENDER-CONTROL "+nonce+` hit {"kind":"signal","what":"own process group"}`,
			"TENDER-CONTROL "+nonce+` hit {"kind":"note:ctypes","what":"loaded a C library through ctypes"}`,
			"TENDER-CONTROL "+nonce+` hit {"kind":"note:ctypes","what":"SECRET-FROM-HIDDEN-TEST"}`,
			end(1, digest(report1))),
			run: Run{Report: rep(honest), JUnit: report1, Exit: 1, Ended: true}, forged: []string{"signal"}, notes: 2},
		// Held comparisons: the parent's own record of each top-level assertion.
		{name: "held: every assertion held as it ran", out: ctl(startLine, end(0, digest(report1))), plan: heldPlan,
			held: matched, run: Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}},
		{name: "held: a wrong patch, the assertion did not hold and the test failed", out: ctl(startLine,
			end(1, digest(report1))), plan: heldPlan, held: rec("k1", "t.py::test_a", 0, 1, 0, 0),
			run: Run{Report: rep(map[string]junit.Status{"t.py::test_a": junit.Failed,
				"t.py::test_p[1]": junit.Failed}), JUnit: report1, Exit: 1, Ended: true}},
		{name: "held: the report says passed, the assertion did not hold", out: ctl(startLine, end(0, digest(report1))),
			plan: heldPlan, held: strings.Replace(matched, rec("k2", "t.py::test_a", 1, 0, 0, 0),
				rec("k2", "t.py::test_a", 0, 1, 0, 0), 1),
			run: Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}, forged: []string{"did not hold"}},
		{name: "held: a test passed without its held assertion running (a wrapper that skips it)",
			out: ctl(startLine, end(0, digest(report1))), plan: heldPlan,
			held: rec("k3", "t.py::test_p[1]", 1, 0, 0, 0),
			run:  Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}, failed: report.CodeTestFailed},
		{name: "held: asked only while another test ran", out: ctl(startLine, end(0, digest(report1))), plan: heldPlan,
			held: rec("k1", "t.py::test_p[1]", 1, 0, 0, 0) + "," + rec("k2", "t.py::test_p[1]", 1, 0, 0, 0) + "," +
				rec("k3", "t.py::test_p[1]", 1, 0, 0, 0),
			run: Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}, failed: report.CodeTestFailed},
		{name: "held: never asked in the regression check is noted", out: ctl(startLine, end(0, digest(report1))),
			plan: heldPlan, held: rec("k3", "t.py::test_p[1]", 1, 0, 0, 0),
			run:   Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true, Regression: true},
			notes: 1},
		{name: "held: a value that claimed to equal a decoy", out: ctl(startLine, end(0, digest(report1))),
			plan: heldPlan, held: strings.Replace(matched, rec("k3", "t.py::test_p[1]", 1, 0, 0, 0),
				rec("k3", "t.py::test_p[1]", 0, 0, 0, 1), 1),
			run: Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}, forged: []string{"lies"}},
		{name: "held: decided by the value's own equality is noted", out: ctl(startLine, end(0, digest(report1))),
			plan: heldPlan, held: strings.Replace(matched, rec("k3", "t.py::test_p[1]", 1, 0, 0, 0),
				rec("k3", "t.py::test_p[1]", 0, 0, 1, 0), 1),
			run: Run{Report: rep(heldPassed), JUnit: report1, Exit: 0, Ended: true}, notes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := strings.ReplaceAll(string(tt.out), "@H", tt.held)
			if tt.run.Report != nil {
				out = strings.ReplaceAll(out, "@N", fmt.Sprint(len(tt.run.Report.Cases)))
				out = strings.ReplaceAll(out, "@P", passedDigest(tt.run.Report))
			} else {
				out = strings.ReplaceAll(strings.ReplaceAll(out, "@N", "0"), "@P", "")
			}
			c := Read([]byte(out), nonce)
			if tt.plan == "" {
				tt.plan = plan
			}
			c.Plan = planOf(t, tt.plan)
			f := c.Judge(tt.run)
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
			if tt.brokenCode != "" && f.BrokenCode != tt.brokenCode {
				t.Errorf("broken code %q, want %q", f.BrokenCode, tt.brokenCode)
			}
			if tt.failed != "" && (len(f.Failed) != 1 || f.Failed[0].Code != tt.failed) {
				t.Errorf("failed %+v, want %s", f.Failed, tt.failed)
			}
			if tt.failed == "" && len(f.Failed) > 0 && f.Failed[0].Code != report.CodeExitCodeMismatch {
				t.Errorf("failed %+v, want none", f.Failed)
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
