package grader

import (
	"context"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// TestResumable: a record --resume may keep is one whose every derivable part agrees with the
// pair and with itself. Each row edits one real record (graded through the fake backend) the
// way a stale, foreign or hand-edited line would differ, and must be refused.
func TestResumable(t *testing.T) {
	t.Parallel()
	verifiers := map[string]verifier{"ok/target": reply(), "bad/target": reply(failing())}
	b := newBatch(t, []string{"ok", "bad"}, verifiers)
	results, err := Grade(context.Background(), b.suite, b.options(t))
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string]*suite.Pair{}
	for _, p := range b.suite.Pairs {
		pairs[p.ID] = p
	}
	good, bad := results[0], results[1]
	if good.Verdict != report.Resolved || bad.Verdict != report.Unresolved {
		t.Fatalf("verdicts %s, %s; want resolved, unresolved", good.Verdict, bad.Verdict)
	}
	for _, r := range results {
		if err := Resumable(pairs[r.ID], r); err != nil {
			t.Errorf("the record of %s as graded: %v", r.ID, err)
		}
	}
	for _, tc := range []struct {
		name string
		base report.PairResult
		edit func(r *report.PairResult)
		want string
	}{
		{"unresolved made resolved", bad, func(r *report.PairResult) { r.Verdict = report.Resolved }, "does not follow"},
		{"resolved made unresolved", good, func(r *report.PairResult) { r.Verdict = report.Unresolved }, "does not follow"},
		{"resolved made a violation", good, func(r *report.PairResult) { r.Verdict = report.IntegrityViolation }, "does not follow"},
		{"reasons dropped", bad, func(r *report.PairResult) { r.Verdict, r.Reasons = report.Resolved, nil }, "does not follow"},
		{"check flipped to passed", bad, func(r *report.PairResult) {
			r.Verdict, r.Reasons, r.Checks[0].Passed = report.Resolved, nil, true
		}, "does not follow"},
		{"a check missing", good, func(r *report.PairResult) { r.Checks = nil }, "does not follow"},
		{"a required test missing", good, func(r *report.PairResult) {
			r.Checks[0].Tests = map[string]report.TestStatus{}
		}, "does not follow"},
		{"an unknown code", bad, func(r *report.PairResult) { r.Reasons[0].Code = "made_up" }, "does not follow"},
		{"error verdict", bad, func(r *report.PairResult) { r.Verdict = report.Error }, "graded again"},
		{"other inputs", good, func(r *report.PairResult) { r.InputDigest = strings.Repeat("0", 64) }, "inputs changed"},
		{"other patch digest", good, func(r *report.PairResult) { r.Digests.Patch = strings.Repeat("0", 64) }, "input digests"},
		{"other base commit", good, func(r *report.PairResult) { r.RequestedCommit = strings.Repeat("0", 40) }, "commit"},
		{"other required tests", good, func(r *report.PairResult) { r.FailToPass = r.FailToPass[1:] }, "required tests"},
		{"other schema", good, func(r *report.PairResult) { r.Schema = "tender.results/v0" }, "schema"},
		{"expectation added", good, func(r *report.PairResult) { yes := true; r.ExpectMet = &yes }, "expectation"},
		{"log outside its place", good, func(r *report.PairResult) { r.Checks[0].LogFile = "../../etc/passwd" }, "outside its place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cloneResult(tc.base)
			tc.edit(&r)
			err := Resumable(pairs[r.ID], r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Resumable = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// cloneResult copies the parts of a record the rows edit.
func cloneResult(r report.PairResult) report.PairResult {
	r.Reasons = append([]report.Reason(nil), r.Reasons...)
	r.Checks = append([]report.Check(nil), r.Checks...)
	for i, c := range r.Checks {
		tests := map[string]report.TestStatus{}
		for k, v := range c.Tests {
			tests[k] = v
		}
		r.Checks[i].Tests = tests
	}
	return r
}

// TestResumeReadsEveryCodeFromTheRegistry: a resolved record given one reason of a code
// derives the verdict the registry gives that code, and a note leaves it resolved; stop ends a
// pair with the same verdict, and refuses (panics) to end one on a note, which would resolve a
// pair that never ran; a failed check with that reason gets the same verdict from the pipeline
// and from resume (unresolved for a note).
func TestResumeReadsEveryCodeFromTheRegistry(t *testing.T) {
	p := &suite.Pair{ID: "p", FailToPass: []string{"t.py::a"}}
	passed := report.PairResult{ID: "p", Verdict: report.Resolved, Checks: []report.Check{
		{Name: "target", Passed: true, Tests: map[string]report.TestStatus{"t.py::a": report.TestPassed}},
	}}
	if got := derivedVerdict(p, passed); got != report.Resolved {
		t.Fatalf("a record with no reasons and its check passed derives %s, want resolved", got)
	}
	for _, ci := range report.Codes() {
		r := passed
		r.Reasons = []report.Reason{{Code: ci.Code, Detail: "d"}}
		want := ci.Verdict
		if ci.IsNote() {
			want = report.Resolved
		}
		if got := derivedVerdict(p, r); got != want {
			t.Errorf("a resolved record with a %s reason derives %s; the registry says %s", ci.Code, got, ci.Verdict)
		}
		if got := stopVerdict(t, ci.Code); got != ci.Verdict {
			t.Errorf("stop(%s) ends the pair as %s; the registry says %s", ci.Code, got, ci.Verdict)
		}
		// A check that failed with this reason: the pipeline and resume must agree on it.
		failed := r
		failed.Checks = []report.Check{{Name: "target", Tests: map[string]report.TestStatus{"t.py::a": report.TestFailed}}}
		if ci.IsNote() {
			want = report.Unresolved
		}
		if got := checksVerdict(true, failed.Reasons); got != want || derivedVerdict(p, failed) != got {
			t.Errorf("a failed check with a %s reason: the pipeline says %s, resume %s; want %s",
				ci.Code, got, derivedVerdict(p, failed), want)
		}
	}
}

// stopVerdict is the verdict stop ends a pair with, or Note when it panics.
func stopVerdict(t *testing.T, code report.Code) (v report.Verdict) {
	t.Helper()
	defer func() {
		if recover() != nil {
			v = report.Note
		}
	}()
	return stop(code, "d").verdict
}

// TestReasonsVerdict: several reasons end a pair with the gravest verdict among them, and a
// code the registry does not know leaves no verdict.
func TestReasonsVerdict(t *testing.T) {
	r := func(codes ...report.Code) []report.Reason {
		var rs []report.Reason
		for _, c := range codes {
			rs = append(rs, report.Reason{Code: c})
		}
		return rs
	}
	for _, tc := range []struct {
		name    string
		reasons []report.Reason
		want    report.Verdict
	}{
		{"none", nil, report.Resolved},
		{"notes only", r(report.CodeTripwire, report.CodeFlaky), report.Resolved},
		{"unresolved beside a note", r(report.CodeTripwire, report.CodeTestFailed), report.Unresolved},
		{"a violation over unresolved", r(report.CodeTestFailed, report.CodeReportForged), report.IntegrityViolation},
		{"unresolved after a violation", r(report.CodeTampering, report.CodeTimeout), report.IntegrityViolation},
		{"an error over a violation", r(report.CodeProtected, report.CodeVerifierFailed), report.Error},
		{"an unknown code", r(report.CodeTestFailed, "made_up"), report.Error},
	} {
		if got := reasonsVerdict(tc.reasons); got != tc.want {
			t.Errorf("%s: reasonsVerdict = %s, want %s", tc.name, got, tc.want)
		}
	}
}
