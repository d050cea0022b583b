package grader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// settle decides what a failed check means before it counts against the candidate: whether
// the environment is broken on the base commit as well (then the pair has no verdict), or
// whether a failing required test is flaky (rerun in fresh verifiers). It returns the check
// as it should be recorded, or an error that ends the pair with a verdict.
func (pl *pipeline) settle(ctx context.Context, name string, ids []string, chk report.Check) (report.Check, error) {
	if err := pl.environmentBroken(ctx, chk); err != nil {
		return chk, err
	}
	return pl.settleFlaky(ctx, name, ids, chk)
}

// settleFlaky reruns a check whose required tests failed, up to Options.Reruns times, each in
// a fresh verifier on a freshly materialized tree. A required test whose outcome differs
// across the runs is flaky. The verdict can only stay or get worse from a rerun, except in
// one case: under `flaky: excluded`, a flaky pass_to_pass test that also fails on the base
// commit (without the candidate's patch) is dropped from the required set. A fail_to_pass
// test is never dropped, and a check whose every required test would be dropped fails.
func (pl *pipeline) settleFlaky(
	ctx context.Context,
	name string,
	ids []string,
	chk report.Check,
) (report.Check, error) {
	if pl.opts.Reruns <= 0 || chk.Passed || everyPassed(chk.Tests) {
		return chk, nil // nothing a rerun could tell: no required test failed
	}
	runs, stopped, err := pl.rerun(ctx, name, ids, chk)
	if err != nil {
		return chk, err
	}
	flaky := flakyTests(runs)
	if len(flaky) == 0 {
		if stopped != nil {
			chk.Reasons = append(chk.Reasons, *stopped)
		}
		return chk, nil
	}
	excluded, why := pl.excludable(ctx, name, ids, flaky)
	out := chk
	out.Reasons = slices.Clone(chk.Reasons)
	pass, left := passesWithout(runs, excluded, ids)
	onBase := "it also fails on the base commit, but the check fails on other grounds: it counts as failed"
	switch {
	case pass && (left > 0 || len(pl.pair.FailToPass) > 0):
		out.Passed, out.Reasons = true, nil
		out.Tests = excludedTests(chk.Tests, excluded)
		onBase = "it also fails on the base commit without the candidate's patch: excluded from the required set (flaky: excluded)"
	case pass:
		onBase = "every required test would be excluded as flaky: nothing is left to decide the pair, so it counts as failed"
	}
	for _, id := range flaky {
		what := why
		if slices.Contains(excluded, id) {
			what = onBase
		}
		out.Reasons = append(
			out.Reasons,
			report.Reason{
				Code:   report.CodeFlaky,
				Detail: fmt.Sprintf("%s is flaky (runs: %s); %s", id, outcomes(runs, id), what),
			},
		)
	}
	if stopped != nil {
		out.Reasons = append(out.Reasons, *stopped)
	}
	return out, nil
}

// run is one run of a check: the status of each required test, and whether every failure
// reason named a test (no report problem, no tampering, no limit).
type run struct {
	tests     map[string]report.TestStatus
	testsOnly bool
}

func runOf(chk report.Check) run {
	only := true
	for _, r := range chk.Reasons {
		if info, ok := report.Lookup(r.Code); ok && info.IsNote() {
			continue
		}
		only = only && (r.Code == report.CodeTestFailed || r.Code == report.CodeTestError)
	}
	return run{tests: chk.Tests, testsOnly: only}
}

// rerun runs the check again until every test that failed in the first run has passed in a
// rerun (nothing more to learn) or the reruns are used up. A rerun that shows a forged report
// ends the pair; one that cannot run for another reason stops the reruns and is noted (the
// runs so far stand: an infrastructure failure never turns an unresolved pair into an error).
func (pl *pipeline) rerun(
	ctx context.Context,
	name string,
	ids []string,
	first report.Check,
) ([]run, *report.Reason, error) {
	runs := []run{runOf(first)}
	for i := 1; i <= pl.opts.Reruns && !learned(runs); i++ {
		pl.rerunning(name, "rerun", i)
		cr, err := pl.check(ctx, fmt.Sprintf("%s-rerun%d", name, i), ids)
		if note, stop := rerunFailed(err, fmt.Sprintf("rerun %d", i)); stop != nil || note != nil {
			return runs, note, stop
		}
		runs = append(runs, runOf(cr.Check))
	}
	return runs, nil, nil
}

func (pl *pipeline) rerunning(check, what string, n int) {
	if pl.opts.Rerunning != nil {
		pl.opts.Rerunning(pl.pair.ID, check, what, n, pl.opts.Reruns)
	}
}

// rerunFailed sorts a rerun's error: an integrity violation ends the pair; anything else
// stops the reruns with a note.
func rerunFailed(err error, which string) (note *report.Reason, stop error) {
	if err == nil {
		return nil, nil
	}
	var ve *verdictError
	if errors.As(err, &ve) && ve.verdict == report.IntegrityViolation {
		return nil, err
	}
	return &report.Reason{
		Code:   report.CodeFlaky,
		Detail: which + " could not run, so the reruns stopped (the runs before it stand): " + err.Error(),
	}, nil
}

// learned: every test that failed in the first run has passed in a later one.
func learned(runs []run) bool {
	for id, st := range runs[0].tests {
		if st != report.TestPassed &&
			!slices.ContainsFunc(runs[1:], func(r run) bool { return r.tests[id] == report.TestPassed }) {
			return false
		}
	}
	return true
}

// flakyTests are the required tests that passed in some runs and not in others, sorted.
func flakyTests(runs []run) []string {
	var out []string
	for id := range runs[0].tests {
		passed := 0
		for _, r := range runs {
			if r.tests[id] == report.TestPassed {
				passed++
			}
		}
		if passed > 0 && passed < len(runs) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// excludable returns the flaky tests the suite lets go, and why the others are kept when
// the policy would have dropped them.
func (pl *pipeline) excludable(ctx context.Context, name string, ids, flaky []string) ([]string, string) {
	if pl.suite.Flaky != suite.FlakyExcluded {
		return nil, "the suite's flaky policy is failed: it counts as failed"
	}
	if name != "regression" {
		return nil, "a fail_to_pass test is never excluded: it counts as failed"
	}
	flaky = slices.DeleteFunc(
		slices.Clone(flaky),
		func(id string) bool { return slices.Contains(pl.pair.FailToPass, id) },
	)
	if pl.patch == nil || len(flaky) == 0 {
		return flaky, "a fail_to_pass test is never excluded: it counts as failed" // validation runs on the base already
	}
	return pl.failsOnBase(ctx, name, ids, flaky)
}

// failsOnBase runs the check on the base commit (test patch and assets, no candidate patch)
// up to Reruns times and returns the flaky tests that failed there at least once: only those
// are flaky through no doing of the candidate's. A candidate that made a pass_to_pass test
// it broke pass now and then gets no exclusion.
func (pl *pipeline) failsOnBase(ctx context.Context, name string, ids, flaky []string) ([]string, string) {
	pl.unpatched = true
	defer func() { pl.unpatched = false }()
	seen := map[string]bool{}
	note := fmt.Sprintf(
		"it never failed on the base commit in %d runs without the candidate's patch: it counts as failed",
		pl.opts.Reruns,
	)
	for i := 1; i <= pl.opts.Reruns && len(seen) < len(flaky); i++ {
		pl.rerunning(name, "base", i)
		cr, err := pl.check(ctx, fmt.Sprintf("%s-base%d", name, i), ids)
		if err != nil {
			note = fmt.Sprintf("base run %d could not run (%v): it counts as failed", i, err)
			break
		}
		for _, id := range flaky {
			if st, ok := cr.Tests[id]; ok && st != report.TestPassed {
				seen[id] = true
			}
		}
	}
	var out []string
	for _, id := range flaky {
		if seen[id] {
			out = append(out, id)
		}
	}
	return out, note
}

// passesWithout: with the excluded tests dropped, every run's failures were test failures
// of excluded tests only. left is how many required tests remain.
func passesWithout(runs []run, excluded, ids []string) (pass bool, left int) {
	if len(excluded) == 0 {
		return false, len(ids)
	}
	for _, r := range runs {
		if !r.testsOnly {
			return false, 0
		}
		for id, st := range r.tests {
			if st != report.TestPassed && !slices.Contains(excluded, id) {
				return false, 0
			}
		}
	}
	n := 0
	for _, id := range ids {
		if !slices.Contains(excluded, id) {
			n++
		}
	}
	return true, n
}

func excludedTests(tests map[string]report.TestStatus, excluded []string) map[string]report.TestStatus {
	out := make(map[string]report.TestStatus, len(tests))
	for id, st := range tests {
		out[id] = st
		if slices.Contains(excluded, id) {
			out[id] = report.TestExcluded
		}
	}
	return out
}

// outcomes lists a test's status run by run.
func outcomes(runs []run, id string) string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = string(r.tests[id])
	}
	return strings.Join(out, ", ")
}

func everyPassed(tests map[string]report.TestStatus) bool {
	for _, st := range tests {
		if st != report.TestPassed {
			return false
		}
	}
	return true
}

// environmentBroken: a check whose pytest could not collect the tests (status 2-5) is held
// against the candidate only when the baseline (the base commit with the test patch, no
// candidate code) collects them. When the baseline fails too, the environment is broken and
// the pair has no verdict. The candidate cannot reach that outcome: its patch takes no part in
// the baseline, so breaking collection itself leaves the check failed.
func (pl *pipeline) environmentBroken(ctx context.Context, chk report.Check) error {
	if pl.verifier().Runner != suite.RunnerPytest || !collectionFailed(chk) {
		return nil
	}
	_, err := pl.healthyBaseline(ctx)
	return err
}

// healthyBaseline is the baseline collection, or the end of the pair when even the base commit
// with the test patch cannot collect its tests: environment_broken, with the first error line.
func (pl *pipeline) healthyBaseline(ctx context.Context) (*baseline, error) {
	b, err := pl.baseline(ctx)
	if err != nil {
		return nil, err
	}
	if b.broken() {
		return nil, stop(report.CodeEnvironmentBroken, b.cause(pl))
	}
	return b, nil
}

// collectionFailed: pytest's statuses for a run that never got to run the tests as asked
// (2 interrupted or collection errors, 3 internal error, 4 usage error, 5 nothing collected).
// A failed setup command is not pytest's status: its exit code is the setup's, and the check
// stays setup_failed.
func collectionFailed(chk report.Check) bool {
	if slices.ContainsFunc(chk.Reasons, func(r report.Reason) bool { return r.Code == report.CodeSetupFailed }) {
		return false
	}
	return !chk.Passed && chk.ExitCode >= 2 && chk.ExitCode <= 5
}
