package grader

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/grader/restore"
	"github.com/tender-grader/tender/report"
)

// The candidate patch is applied under the suite's `apply` policy (gitsafe.ApplyWith): `strict`
// is git apply alone; `swebench` adds SWE-bench's fallbacks, git apply --reject and a fuzzed
// apply, each atomic, each writing only the patch's own paths. What a step changed is checked
// again before anything runs: every changed path goes through the pre-scan once more (a
// protected or evaluator path is an integrity violation, as it would have been before), and a
// hunk the fuzz step placed with its context cut short may not land on a file the evaluator
// resets (restored paths, the test-runner sections of mixed-purpose configs): a guess about
// where a change goes is never made on an evaluator file, so the patch is refused there.

// applyPatch applies the candidate patch in tree and says how. The error ends the pair.
func (pl *pipeline) applyPatch(ctx context.Context, tree string) (gitsafe.Applied, error) {
	applied, err := gitsafe.ApplyWith(ctx, pl.patch, tree, pl.suite.Apply)
	switch {
	case errors.Is(err, gitsafe.ErrUnsafePath):
		// git read the patch differently from the parser, or a path runs through a symlink.
		return applied, stop(report.CodeUnsafePath, err.Error())
	case errors.Is(err, gitsafe.ErrPatchFailed):
		return applied, stop(report.CodePatchFailed, err.Error()+pl.probeChain(ctx, tree))
	case err != nil:
		return applied, stop(report.CodeWorkspaceFailed, err.Error())
	}
	if err := pl.recheckApplied(applied); err != nil {
		return applied, err
	}
	pl.applied = applied
	return applied, nil
}

// recheckApplied checks what an apply step changed against the pair's integrity policy, and
// refuses a fuzzed hunk on a file the evaluator resets.
func (pl *pipeline) recheckApplied(a gitsafe.Applied) error {
	changes := make([]integrity.Change, 0, len(a.Changed))
	for _, p := range a.Changed {
		changes = append(changes, integrity.Change{NewPath: p})
	}
	if v := integrity.Scan(changes, pl.policy()); len(v) > 0 {
		for i := range v {
			v[i].Detail = fmt.Sprintf("apply: %s, changed by %s: %s", pl.suite.Apply, a.Method, v[i].Detail)
		}
		return stopWith(v)
	}
	var onEvaluator []string
	for _, h := range a.Hunks {
		if h.Fuzz > 0 && restore.Resets(h.Path, pl.suite.Restored) {
			onEvaluator = append(onEvaluator, fmt.Sprintf("%s hunk %d (fuzz %d)", h.Path, h.Hunk, h.Fuzz))
		}
	}
	if len(onEvaluator) == 0 {
		return nil
	}
	pl.chainApplies = a.Method // SWE-bench's chain applies it; Tender does not
	return stop(report.CodePatchFailed, fmt.Sprintf(
		"apply: %s: git apply refused the patch, and the fuzz step applies it only with hunks fuzzed onto files "+
			"the evaluator resets (%s); a fuzzed hunk may not land on an evaluator file, so the patch is refused",
		pl.suite.Apply, strings.Join(onEvaluator, ", ")))
}

// probeChain runs, under `apply: strict` and after git apply refused the patch, SWE-bench's chain
// on the same tree (thrown away with the check), so the result can say whether SWE-bench's way
// of applying takes the patch. It returns the words added to patch_failed's detail.
func (pl *pipeline) probeChain(ctx context.Context, tree string) string {
	if pl.suite.Apply != gitsafe.ApplyStrict || ctx.Err() != nil {
		return ""
	}
	a, err := gitsafe.ApplyWith(ctx, pl.patch, tree, gitsafe.ApplySWEBench)
	if err != nil {
		return ""
	}
	pl.chainApplies = a.Method
	if pl.recheckApplied(a) != nil {
		return fmt.Sprintf("\n(apply: strict) SWE-bench's fallback chain applies this patch (%s), but with a hunk "+
			"fuzzed onto a file the evaluator resets, which apply: swebench refuses as well", a.Method)
	}
	return fmt.Sprintf("\n(apply: strict) SWE-bench's fallback chain applies this patch (%s); "+
		"a suite with apply: swebench grades it", a.Method)
}

// recordApply writes into the result how the patch was applied: the method that succeeded,
// where the fuzz step put each hunk, or how SWE-bench's chain would have applied a patch
// git apply refused.
func (pl *pipeline) recordApply(r *report.PairResult) {
	r.ApplyMethod, r.SWEBenchApply = string(pl.applied.Method), string(pl.chainApplies)
	r.ApplyHunks = nil
	for _, h := range pl.applied.Hunks {
		r.ApplyHunks = append(r.ApplyHunks, report.ApplyHunk(h))
	}
}
