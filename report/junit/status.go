package junit

import (
	"fmt"
	"strings"
)

// pytest marks these in the report; the strings are pytest's own.
const (
	pytestXFailType      = "pytest.xfail"
	pytestStrictXPass    = "[XPASS(strict)]"                       // pytest ≥ 6: <failure message="[XPASS(strict)] ...">
	pytestOldStrictXPass = "xfail-marked test passes unexpectedly" // pytest < 6: <skipped message=...>
	pytestTeardownError  = "failed on teardown with "
)

func (t *tagCounts) add(tag string) {
	switch tag {
	case "failure":
		t.failure++
	case "error":
		t.err++
	case "skipped":
		t.skipped++
	case "flakyFailure", "flakyError":
		t.flaky++
	}
}

func (b *caseBuild) find(tag string) *result {
	for _, r := range b.results {
		if r.tag == tag {
			return r
		}
	}
	return nil
}

// decide sets Status and Message. An error outranks a failure, which outranks a skip.
// Surefire's rerunFailure/rerunError only accompany a failure or error, and a flaky
// failure alone is a pass on rerun, as Surefire itself counts it.
func (b *caseBuild) decide() {
	b.decideFromResults()
	b.decideFromAttributes()
}

func (b *caseBuild) decideFromResults() {
	f := b.tags
	c := &b.c
	c.Flaky = f.flaky > 0 && f.failure == 0 && f.err == 0
	switch {
	case f.err > 0:
		c.Status, c.Message = Errored, b.find("error").summary()
	case f.failure > 0:
		r := b.find("failure")
		c.Status, c.Message = Failed, r.summary()
		if strings.HasPrefix(r.message, pytestStrictXPass) {
			c.Status = XPass
		}
	case f.skipped > 0:
		r := b.find("skipped")
		c.Status, c.Message = Skipped, r.summary()
		switch {
		case r.typ == pytestXFailType:
			c.Status = XFail
		case r.message == pytestOldStrictXPass:
			c.Status = XPass
		}
	default:
		c.Status = Passed
	}
}

// summary is the message attribute, or else the first non-blank line of the text.
func (r *result) summary() string {
	m := strings.TrimSpace(r.message)
	if m == "" {
		for line := range strings.SplitSeq(r.text.String(), "\n") {
			if m = strings.TrimSpace(line); m != "" {
				break
			}
		}
	}
	return clip(m, maxMessage)
}

// isTeardownError reports a pytest case whose error came from a fixture's teardown.
func (b *caseBuild) isTeardownError() bool {
	r := b.find("error")
	return r != nil && strings.HasPrefix(r.message, pytestTeardownError)
}

// attrOutcome is what a testcase's status or result attribute says about it.
type attrOutcome int

const (
	attrRan     attrOutcome = iota // absent, or a value saying the test ran: its children decide
	attrNotRun                     // the test did not run
	attrFailed                     // the test failed
	attrErrored                    // the test errored
)

// Values seen in real reports: googletest writes status="run" or "notrun" and result=
// "completed", "skipped" or "suppressed"; CTest writes status="run", "fail", "notrun" and
// "disabled"; other C++ and PHP writers use "passed", "failed", "errored", "disabled" and
// "skipped". A value not listed here is read as "did not run": a test whose report Tender
// cannot read must not count as passed.
var attrOutcomes = map[string]attrOutcome{
	"run": attrRan, "passed": attrRan, "completed": attrRan,
	"notrun": attrNotRun, "not run": attrNotRun, "not_run": attrNotRun, "disabled": attrNotRun,
	"ignored": attrNotRun, "skipped": attrNotRun, "suppressed": attrNotRun,
	"fail": attrFailed, "failed": attrFailed, "failure": attrFailed,
	"error": attrErrored, "errored": attrErrored,
}

func readAttr(v string) attrOutcome {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return attrRan
	}
	if o, ok := attrOutcomes[v]; ok {
		return o
	}
	return attrNotRun
}

// rank orders statuses from best to worst, so that an attribute can only make a case worse.
func rank(s Status) int {
	switch s {
	case Passed:
		return 0
	case Skipped, XFail:
		return 1
	case Failed, XPass:
		return 2
	}
	return 3 // Errored
}

// decideFromAttributes lets the status and result attributes make a case worse than its
// children say, never better: a <failure> child fails the case whatever status="run" claims,
// and status="disabled" with no child is a skip, not a pass. The totals still count only the
// result elements, as the writers that use these attributes count them (googletest and
// CTest count a disabled test in `disabled`, not in `skipped`).
func (b *caseBuild) decideFromAttributes() {
	for _, a := range []struct{ name, value string }{{"status", b.status}, {"result", b.result}} {
		var st Status
		switch readAttr(a.value) {
		case attrRan:
			continue
		case attrNotRun:
			st = Skipped
		case attrFailed:
			st = Failed
		case attrErrored:
			st = Errored
		}
		if rank(st) > rank(b.c.Status) {
			b.c.Status = st
			b.c.Message = fmt.Sprintf("%s=%q", a.name, a.value)
		}
	}
}
