package pyboot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
)

// TestJudgeUnguarded: an unguarded copy (the required test with its early-return guards turned
// off) that fails after the original passed fails the target check and is only noted in the
// regression check; it never makes the report forged, and agrees with its original otherwise.
func TestJudgeUnguarded(t *testing.T) {
	report1 := []byte("<testsuite/>")
	plan := `{"v":2,"sentinels":[` +
		`{"id":"t.py::test_u","kind":"unguarded","of":"t.py::test_a"},{"id":"t.py::test_b","kind":"twin","of":"t.py::test_a"}],` +
		`"shifts":{},"lines":{"t.py::test_a":7}}`
	tests := []struct {
		name             string
		a, u             junit.Status
		regression       bool
		failed, notes    int
		wantFailedDetail string
	}{
		{name: "the guard was not taken: both pass", a: junit.Passed, u: junit.Passed},
		{name: "the original passed by returning early: the check fails", a: junit.Passed, u: junit.Failed,
			failed: 1, wantFailedDetail: "t.py::test_a: passed only by returning early"},
		{
			name:   "the copy errored (a missing dependency): the check fails, nothing forged",
			a:      junit.Passed,
			u:      junit.Errored,
			failed: 1,
		},
		{name: "the original failed: its copy says nothing", a: junit.Failed, u: junit.Failed},
		{name: "regression check: only a note", a: junit.Passed, u: junit.Failed, regression: true, notes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rep(map[string]junit.Status{"t.py::test_a": tt.a, "t.py::test_b": tt.a, "t.py::test_u": tt.u})
			end := "TENDER-CONTROL " + nonce + " end " + fmt.Sprintf(
				`{"exit":1,"junit_sha256":"%s","outcomes":%d,"passed_sha256":"%s","stream_ended":true}`,
				digest(report1),
				len(r.Cases),
				passedDigest(r),
			)
			c := Read(ctl(startLine, end), nonce)
			c.Plan = planOf(t, plan)
			f := c.Judge(Run{Report: r, JUnit: report1, Exit: 1, Ended: true, Regression: tt.regression})
			if f.Broken != "" || len(f.Forged) != 0 {
				t.Fatalf("broken %q, forged %+v: an unguarded copy never decides forgery", f.Broken, f.Forged)
			}
			if len(f.Failed) != tt.failed || len(f.Notes) != tt.notes {
				t.Fatalf("failed %+v, notes %+v; want %d, %d", f.Failed, f.Notes, tt.failed, tt.notes)
			}
			for _, r := range f.Failed {
				if r.Code != report.CodeTestFailed || r.Path != "t.py" || r.Line != 7 {
					t.Errorf("reason %+v: want test_failed at t.py:7", r)
				}
				if strings.Contains(r.Detail, "test_u") || !strings.Contains(r.Detail, tt.wantFailedDetail) {
					t.Errorf("detail %q: must say %q and never name the copy", r.Detail, tt.wantFailedDetail)
				}
			}
		})
	}
}
