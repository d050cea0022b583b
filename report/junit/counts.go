package junit

// finish decides each case's status and ID and counts the cases into every enclosing suite.
func (p *parser) finish() {
	ids := newIDMaker(p.opts)
	p.rep.Cases = make([]Case, 0, len(p.builds))
	for i := range p.builds {
		b := &p.builds[i]
		b.decide()
		ids.assign(b)
		p.count(b, p.tally(i))
		p.rep.Cases = append(p.rep.Cases, b.c)
	}
	if p.opts.Runner == RunnerPytest {
		p.rep.findUnwritten()
	}
}

// tally is what one case adds to its suites' totals, counted the way its runner counts.
func (p *parser) tally(i int) Totals {
	f := p.builds[i].tags
	if p.opts.Runner != RunnerPytest {
		return Totals{Tests: 1, Failures: btoi(f.failure > 0), Errors: btoi(f.err > 0), Skipped: btoi(f.skipped > 0)}
	}
	return Totals{Tests: p.pytestTests(i), Failures: f.failure, Errors: f.err, Skipped: f.skipped}
}

// pytestTests is how many `tests` a case adds to pytest's declared total. pytest counts
// every failure, error and skip element it writes, and every passing call report; a passing
// call writes no element. So a case adds one test per result element, or one for a plain
// pass. A subtest (pytest ≥ 9, pytest-subtests) is a call report of its own within its
// test's <testcase>: a failed or skipped one adds an element and is counted here, a passing
// one adds nothing (see Suite.Unwritten).
//
// Two pytest teardown forms, observed in real pytest 7.2 reports (testdata/pytest-xunit*.xml):
// a case whose teardown errored after its call passed is one element holding only the
// error, counted twice (the pass and the error); a call failure followed by a teardown error
// is written as a second element for the error, which pytest subtracts from the total.
func (p *parser) pytestTests(i int) int {
	b := &p.builds[i]
	n := b.tags.failure + b.tags.err + b.tags.skipped
	switch {
	case n == 0:
		return 1
	case !b.isTeardownError():
		return n
	case i > 0 && p.splitTeardown(&p.builds[i-1], b):
		return n - 1
	case b.tags.failure == 0 && b.tags.skipped == 0:
		return n + 1
	}
	return n
}

// splitTeardown reports the second element pytest writes for a call failure followed by a
// teardown error in the same test.
func (p *parser) splitTeardown(prev, b *caseBuild) bool {
	return prev.c.ClassName == b.c.ClassName && prev.c.Name == b.c.Name && prev.tags.failure > 0 &&
		prev.c.Suite == b.c.Suite && b.tags.failure == 0
}

func (p *parser) count(b *caseBuild, add Totals) {
	for s := b.c.Suite; s >= 0; s = p.rep.Suites[s].Parent {
		t := &p.rep.Suites[s].Counted
		t.Tests += add.Tests
		t.Failures += add.Failures
		t.Errors += add.Errors
		t.Skipped += add.Skipped
	}
}

// findUnwritten sets Suite.Unwritten where a pytest suite declares more tests than its
// elements show and nothing else can explain the difference. pytest writes no count of
// subtests anywhere in the report: its only statement is `tests`, which counts passing
// subtests, beside failures, errors and skipped, which count elements that are all in the
// report. When all three are declared and each matches the elements exactly, every failure,
// error and skip pytest counted is a case Tender has read, and the surplus in `tests` can
// only be passes. A surplus is never a failure hidden: a deleted failing case leaves
// `failures` short, a failed subtest is a <failure> that fails its test, and a case added to
// the report makes a deficit, which is never accepted.
func (r *Report) findUnwritten() {
	const all = HasTests | HasFailures | HasErrors | HasSkipped
	for i := range r.Suites {
		s := &r.Suites[i]
		d, c := s.Declared, s.Counted
		if s.Has&all == all && d.Tests > c.Tests && d.Failures == c.Failures && d.Errors == c.Errors &&
			d.Skipped == c.Skipped {
			s.Unwritten = d.Tests - c.Tests
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Mismatch is one suite whose declared totals differ from its cases.
type Mismatch struct {
	Suite    int // index into Report.Suites
	Field    string
	Declared int
	Counted  int
}

// Mismatches lists every declared total, in every suite, that its cases do not add up to.
// Totals a suite does not declare are not compared.
func (r *Report) Mismatches() []Mismatch {
	var out []Mismatch
	for i, s := range r.Suites {
		for _, f := range []struct {
			name     string
			bit      Attrs
			dec, cnt int
		}{
			{"tests", HasTests, s.Declared.Tests, s.Counted.Tests},
			{"failures", HasFailures, s.Declared.Failures, s.Counted.Failures},
			{"errors", HasErrors, s.Declared.Errors, s.Counted.Errors},
			{"skipped", HasSkipped, s.Declared.Skipped, s.Counted.Skipped},
		} {
			if f.name == "tests" && f.dec == f.cnt+s.Unwritten {
				continue
			}
			if s.Has&f.bit != 0 && f.dec != f.cnt {
				out = append(out, Mismatch{Suite: i, Field: f.name, Declared: f.dec, Counted: f.cnt})
			}
		}
	}
	if m, ok := r.wholeReport(); ok {
		out = append(out, m)
	}
	return out
}

// wholeReport checks a root <testsuites> that declares no `tests` of its own: the suites
// directly inside it must then declare tests that add up to every case in the report, so a
// case placed outside any suite is still caught.
func (r *Report) wholeReport() (Mismatch, bool) {
	if len(r.Suites) == 0 || r.Suites[0].Has&HasTests != 0 {
		return Mismatch{}, false
	}
	sum, top, unwritten := 0, 0, 0
	for _, s := range r.Suites {
		if s.Depth != 1 {
			continue
		}
		if s.Has&HasTests == 0 {
			return Mismatch{}, false
		}
		sum += s.Declared.Tests
		unwritten += s.Unwritten
		top++
	}
	if top == 0 || sum == r.Suites[0].Counted.Tests+unwritten {
		return Mismatch{}, false
	}
	return Mismatch{Suite: 0, Field: "tests", Declared: sum, Counted: r.Suites[0].Counted.Tests}, true
}

// DeclaresTests reports whether any suite declares a `tests` total.
func (r *Report) DeclaresTests() bool {
	for _, s := range r.Suites {
		if s.Has&HasTests != 0 {
			return true
		}
	}
	return false
}

// Unwritten is how many passes pytest counted without writing a <testcase> for them
// (passing subtests), over the whole report: the root's own figure when it declares `tests`,
// else the sum over the suites directly inside it. It is zero for every other runner.
func (r *Report) Unwritten() int {
	if len(r.Suites) == 0 {
		return 0
	}
	if r.Suites[0].Has&HasTests != 0 {
		return r.Suites[0].Unwritten
	}
	n := 0
	for _, s := range r.Suites {
		if s.Depth == 1 {
			n += s.Unwritten
		}
	}
	return n
}
