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
	return chk, nil
}
