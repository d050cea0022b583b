package junit

// finish decides each case's status and ID and counts the cases into every enclosing suite.
func (p *parser) finish() {
	ids := newIDMaker(p.opts)
	p.rep.Cases = make([]Case, 0, len(p.builds))
	for i := range p.builds {
		b := &p.builds[i]
		b.decide()
		ids.assign(b)
		p.count(b, p.testsWeight(i))
		p.rep.Cases = append(p.rep.Cases, b.c)
	}
}

// testsWeight is how many `tests` a case adds to its suite's declared total. It is 1, except
// for pytest, which counts a case whose teardown errored after its call finished twice (once
// for the call, once for the error) in a single element, and which writes a second element
// for a call failure followed by a teardown error but subtracts it from the total. Both were
// observed in real pytest 7.2 reports (testdata/pytest-xunit*.xml).
func (p *parser) testsWeight(i int) int {
	if p.opts.Runner != RunnerPytest || !p.builds[i].isTeardownError() {
		return 1
	}
	b := &p.builds[i]
	if i > 0 {
		prev := &p.builds[i-1]
		if prev.c.ClassName == b.c.ClassName && prev.c.Name == b.c.Name && prev.flags().failure &&
			prev.c.Suite == b.c.Suite && !b.flags().failure {
			return 0
		}
	}
	return 2
}

func (p *parser) count(b *caseBuild, weight int) {
	f := b.flags()
	for s := b.c.Suite; s >= 0; s = p.rep.Suites[s].Parent {
		t := &p.rep.Suites[s].Counted
		t.Tests += weight
		t.Failures += btoi(f.failure)
		t.Errors += btoi(f.err)
		t.Skipped += btoi(f.skipped)
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
	sum, top := 0, 0
	for _, s := range r.Suites {
		if s.Depth != 1 {
			continue
		}
		if s.Has&HasTests == 0 {
			return Mismatch{}, false
		}
		sum += s.Declared.Tests
		top++
	}
	if top == 0 || sum == r.Suites[0].Counted.Tests {
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
