package junit

import "strings"

// pytest marks these in the report; the strings are pytest's own.
const (
	pytestXFailType      = "pytest.xfail"
	pytestStrictXPass    = "[XPASS(strict)]"                       // pytest ≥ 6: <failure message="[XPASS(strict)] ...">
	pytestOldStrictXPass = "xfail-marked test passes unexpectedly" // pytest < 6: <skipped message=...>
	pytestTeardownError  = "failed on teardown with "
)

// flags says which result elements a case carries; the totals count these.
type flags struct {
	failure, err, skipped, flaky bool
}

func (b *caseBuild) flags() flags {
	var f flags
	for _, r := range b.results {
		switch r.tag {
		case "failure":
			f.failure = true
		case "error":
			f.err = true
		case "skipped":
			f.skipped = true
		case "flakyFailure", "flakyError":
			f.flaky = true
		}
	}
	return f
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
	f := b.flags()
	c := &b.c
	c.Flaky = f.flaky && !f.failure && !f.err
	switch {
	case f.err:
		c.Status, c.Message = Errored, b.find("error").summary()
	case f.failure:
		r := b.find("failure")
		c.Status, c.Message = Failed, r.summary()
		if strings.HasPrefix(r.message, pytestStrictXPass) {
			c.Status = XPass
		}
	case f.skipped:
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
