package grader

import (
	"context"

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
	return chk, nil
}

// environmentBroken: a check whose pytest could not collect the tests (status 2-5) is held
// against the candidate only when the baseline (the base commit with the test patch, no
// candidate code) collects them. When the baseline fails too, the environment is broken and
// the pair has no verdict. The candidate cannot reach that outcome: its patch takes no part in
// the baseline, so breaking collection itself leaves the check failed.
func (pl *pipeline) environmentBroken(ctx context.Context, chk report.Check) error {
	if pl.verifier().Runner != RunnerPytest || !collectionFailed(chk) {
		return nil
	}
	b, err := pl.baseline(ctx)
	if err != nil {
		return err
	}
	if b.broken() {
		return stop(report.Error, report.CodeEnvironmentBroken, b.cause(pl))
	}
	return nil
}

// collectionFailed: pytest's statuses for a run that never got to run the tests as asked
// (2 interrupted or collection errors, 3 internal error, 4 usage error, 5 nothing collected).
func collectionFailed(chk report.Check) bool {
	return !chk.Passed && chk.ExitCode >= 2 && chk.ExitCode <= 5
}
