package grader

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader/suite"
)

// validPair is the demo's instance with its reference patch: the fixed side can be checked.
func validPair(t *testing.T, id string) testPair {
	p := demoTestPair(t, id)
	p.reference = string(demo(t, "gold-fix").ReferencePatch)
	return p
}

// required are the pair's fail_to_pass and pass_to_pass tests, which a sound baseline collects.
func required(p testPair) []string { return slices.Concat(p.failToPass, p.passToPass) }

// soundInstance is what a sound instance's verifiers report: the baseline collects its tests,
// fail_to_pass fails on the base commit and pass_to_pass passes there, and with the reference
// patch every required test passes.
func soundInstance(p testPair) map[string]verifier {
	return map[string]verifier{
		p.id + "/baseline": collects(0, required(p)...), p.id + "/base": reply(failing(p.failToPass...)),
		p.id + "/target": reply(), p.id + "/regression": reply(),
	}
}

// validate validates the pairs' suite against the verifiers. Each test has a run of its own:
// baselines are kept per run, and the pairs of these tests share an instance.
func validate(t *testing.T, vo ValidateOptions, verifiers map[string]verifier, pairs ...testPair) []InstanceReport {
	t.Helper()
	s := writeTestSuite(t, pairs...)
	opts := testOptions(t, newFakeBackend(t, verifiers))
	opts.RunID = "validate-" + strings.ReplaceAll(t.Name(), "/", "-")
	reports, err := ValidateInstances(context.Background(), s, opts, vo)
	if err != nil {
		t.Fatal(err)
	}
	return reports
}

// TestValidateSoundInstance: a sound instance passes every check; pairs that differ only in
// their candidate patch are one instance, checked once and reported for each pair.
func TestValidateSoundInstance(t *testing.T) {
	p, same := validPair(t, "p"), validPair(t, "same")
	same.patch = demoPatch(t, "wrong-fix")
	var progress []int
	vo := ValidateOptions{
		Progress: func(done, total int, r InstanceReport) { progress = append(progress, done, total) },
	}
	reports := validate(t, vo, soundInstance(p), p, same)
	if len(reports) != 2 || reports[0].ID != "p" || reports[1].ID != "same" {
		t.Fatalf("reports %+v, want one for each pair", reports)
	}
	for _, r := range reports {
		if !r.OK || len(r.Problems) != 0 || r.Unstable || !slices.Equal(r.Runs, []string{"resolved"}) ||
			r.Cause() != "" {
			t.Errorf("%s: %+v, want a sound instance", r.ID, r)
		}
	}
	if !slices.Equal(progress, []int{1, 1}) {
		t.Errorf("progress %v, want one call for the one instance", progress)
	}
}

// TestValidateFindsProblems: each way an instance is not sound is a problem that says what
// is wrong, and the checks that can still tell something run.
func TestValidateFindsProblems(t *testing.T) {
	p := validPair(t, "p")
	f2p, p2p := p.failToPass, p.passToPass
	for _, tt := range []struct {
		name     string
		pair     func(*testPair)
		edit     func(v map[string]verifier) // of soundInstance's verifiers
		problems []string                    // a prefix of each problem, in order
	}{
		{"fail_to_pass passes on the base", nil,
			func(v map[string]verifier) { v["p/base"] = reply(failing(f2p[1:]...)) },
			[]string{"on the base commit " + f2p[0] + " is passed; a fail_to_pass test must fail there"}},
		{"pass_to_pass tests fail on the base", nil,
			func(v map[string]verifier) { v["p/base"] = reply(failing()) },
			[]string{"on the base commit 6 pass_to_pass tests do not pass (\"" + p2p[0] + ": failed\", "}},
		{"the base check cannot run", nil,
			func(v map[string]verifier) { v["p/base"] = fails(errors.New("docker is down")) },
			[]string{"base: error: verifier_failed"}},
		{"the reference does not resolve", nil, func(v map[string]verifier) { v["p/target"] = reply(failing(f2p[0])) },
			[]string{"with the reference patch the verdict is unresolved (test_failed: target: " + f2p[0]}},
		{"a required test is not collected", nil,
			func(v map[string]verifier) { v["p/baseline"] = collects(0, required(p)[1:]...) },
			[]string{"1 required test(s) are not collected on the base commit with the test patch: \"" + f2p[0] + "\""}},
		{"a required test's file is not in the tree", func(p *testPair) {
			p.passToPass = append(slices.Clone(p2p), "tests/test_gone.py::test_x")
		}, func(v map[string]verifier) {
			v["p/baseline"] = collects(0, required(p)...) // all but the one in the file that is not there
		}, []string{"tests/test_gone.py is named by a required test but is not in the base commit",
			"1 required test(s) are not collected on the base commit with the test patch: \"tests/test_gone.py::test_x\""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := validPair(t, "p")
			if tt.pair != nil {
				tt.pair(&p)
			}
			v := soundInstance(p)
			tt.edit(v)
			r := validate(t, ValidateOptions{}, v, p)[0]
			if r.OK || len(r.Problems) != len(tt.problems) {
				t.Fatalf("problems %q, want %d starting %q", r.Problems, len(tt.problems), tt.problems)
			}
			for i, want := range tt.problems {
				if !strings.HasPrefix(r.Problems[i], want) {
					t.Errorf("problem %d %q, want it to start %q", i, r.Problems[i], want)
				}
			}
			if r.Cause() != r.Problems[0] && !strings.HasSuffix(r.Cause(), "…") {
				t.Errorf("cause %q is not the first problem", r.Cause())
			}
		})
	}
}

// TestValidateStopsEarly: without a way to collect the tests, or with a truncated ID that
// names no test, the base and reference checks would say nothing and do not run; without a
// reference patch the fixed side is not checked.
func TestValidateStopsEarly(t *testing.T) {
	broken := validPair(t, "broken")
	truncated := validPair(t, "truncated")
	truncated.failToPass = []string{"tests/test_formatting.py::test_group_digits_negative[a"}
	noRef := validPair(t, "noref")
	noRef.reference = ""
	for _, tt := range []struct {
		p         testPair
		verifiers map[string]verifier
		want      string
	}{
		{broken, map[string]verifier{"broken/baseline": collects(2)},
			"environment_broken: the tests cannot be collected on the base commit with the test patch alone"},
		{truncated, map[string]verifier{"truncated/baseline": collects(0, required(truncated)...)},
			`test_id_unresolved: test ID "tests/test_formatting.py::test_group_digits_negative[a" looks truncated`},
		{noRef, map[string]verifier{"noref/baseline": collects(0, required(noRef)...),
			"noref/base": reply(failing(noRef.failToPass...))}, "no reference_patch: the fixed side was not checked"},
	} {
		t.Run(tt.p.id, func(t *testing.T) {
			r := validate(t, ValidateOptions{}, tt.verifiers, tt.p)[0]
			if r.OK || len(r.Problems) != 1 || !strings.HasPrefix(r.Problems[0], tt.want) {
				t.Errorf("problems %q, want one starting %q", r.Problems, tt.want)
			}
		})
	}
}

// TestValidateResolvesTruncatedIDs: a truncated ID that names one collected test is resolved,
// the report says to what, and the checks require the full ID.
func TestValidateResolvesTruncatedIDs(t *testing.T) {
	p := validPair(t, "p")
	full := "tests/test_formatting.py::test_group_digits_negative[a b]"
	p.failToPass = []string{"tests/test_formatting.py::test_group_digits_negative[a"}
	asksBaseFull := func(c *fakeCall) {
		if !slices.Equal(c.Proto.Required, append([]string{full}, p.passToPass...)) {
			c.errorf("%s requires %q, want the resolved ID and the pass_to_pass tests", c.Spec.Name, c.Proto.Required)
		}
	}
	asksFull := func(c *fakeCall) {
		if !slices.Equal(c.Proto.Required, []string{full}) {
			c.errorf("%s requires %q, want the resolved ID", c.Spec.Name, c.Proto.Required)
		}
	}
	v := soundInstance(p)
	v["p/baseline"] = collects(0, append([]string{full}, p.passToPass...)...)
	v["p/base"] = inspecting(asksBaseFull, reply(failing(full)))
	v["p/target"] = inspecting(asksFull, reply())
	r := validate(t, ValidateOptions{}, v, p)[0]
	if !r.OK || !cmp.Equal(r.Resolved, map[string]string{p.failToPass[0]: full}) {
		t.Errorf("report %+v, want a sound instance with the ID resolved", r)
	}
}

// TestValidateRepeatFindsUnstableReferences: with Repeat, the reference patch runs again in
// verifiers of its own; an outcome that changes makes the instance unstable, naming the test.
func TestValidateRepeatFindsUnstableReferences(t *testing.T) {
	p := validPair(t, "p")
	v := soundInstance(p)
	v["p.run2/target"] = reply(failing(p.failToPass[0]))
	v["p.run2/regression"] = reply()
	v["p.run3/target"] = reply()
	v["p.run3/regression"] = reply()
	r := validate(t, ValidateOptions{Repeat: 3}, v, p)[0]
	if !r.Unstable || r.OK || !slices.Equal(r.Runs, []string{"resolved", "unresolved", "resolved"}) {
		t.Fatalf("report %+v, want unstable runs resolved, unresolved, resolved", r)
	}
	want := "unstable: 3 runs with the reference patch gave resolved, unresolved, resolved; tests that changed: \"" +
		p.failToPass[0] + " (failed 1, passed 2)\""
	if len(r.Problems) != 2 || r.Problems[0] != want || !strings.HasPrefix(r.Problems[1], "with the reference patch") {
		t.Errorf("problems %q, want %q and the failed run", r.Problems, want)
	}
}

// TestValidateRefusals: a base commit that is not in the repository is the instance's
// problem; a concurrency under 1 and a cancelled run are the batch's errors.
func TestValidateRefusals(t *testing.T) {
	p := validPair(t, "p")
	p.base = strings.Repeat("ab", 20)
	r := validate(t, ValidateOptions{}, map[string]verifier{}, p)[0]
	if r.OK || len(r.Problems) != 1 || !strings.HasPrefix(r.Problems[0], "base: error: base_commit_missing") {
		t.Errorf("problems %q, want the missing base commit", r.Problems)
	}

	s := writeTestSuite(t, validPair(t, "q"))
	opts := testOptions(t, newFakeBackend(t, map[string]verifier{}))
	opts.Concurrency = 0
	if _, err := ValidateInstances(context.Background(), s, opts, ValidateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "concurrency must be at least 1") {
		t.Errorf("concurrency 0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts.Concurrency = 1
	reports, err := ValidateInstances(ctx, s, opts, ValidateOptions{})
	if !errors.Is(err, context.Canceled) || len(reports) != 0 {
		t.Errorf("cancelled: %v, %d reports; want the context's error and no report", err, len(reports))
	}
}

func TestInstanceKeyIgnoresOnlyTheCandidate(t *testing.T) {
	p := &suite.Pair{Repository: "r", BaseCommit: "c", FailToPass: []string{"a"}, Patch: []byte("one")}
	q := *p
	q.Patch, q.ID = []byte("two"), "other"
	if instanceKey(p) != instanceKey(&q) {
		t.Error("pairs that differ only in their candidate are different instances")
	}
	q.PassToPass = []string{"b"}
	if instanceKey(p) == instanceKey(&q) {
		t.Error("pairs with different required tests are one instance")
	}
}
