package grader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/integrity"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/phase"
	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report"
)

// pipeline grades one pair.
type pipeline struct {
	suite *suite.Suite
	pair  *suite.Pair
	repo  repoHandle
	opts  Options

	executed  string
	patch     *gitsafe.Patch
	testPatch *gitsafe.Patch

	notes []report.Reason // what decides nothing but belongs in the result, after the reasons

	unpatched bool // the checks run now are on the base commit: the candidate's patch is not applied
	// plain: the checks run now plant no forgery sentinels (validation on the base commit, where
	// no candidate code runs).
	plain bool
	// baseFrom, when set, is the pipeline whose pristine base this one uses (and leaves to it
	// to remove): the runs of one instance's validation share it.
	baseFrom *pipeline
	links    *integrity.Links // the base tree's symlinks, read once (treeLinks)

	applied      gitsafe.Applied     // how the candidate patch applied (apply.go)
	chainApplies gitsafe.ApplyMethod // under apply: strict, how SWE-bench's chain applies a refused patch

	share bundleShare // what the pair's files take in the bundle

	baseOnce sync.Once
	base     *baseTree
	baseErr  error
}

// verdictError stops the pipeline with a verdict and its reasons.
type verdictError struct {
	verdict report.Verdict
	reasons []report.Reason
}

func (e *verdictError) Error() string { return string(e.verdict) + ": " + string(e.reasons[0].Code) }

// stop ends the pipeline with one reason, and the verdict the registry says its code leads to.
func stop(code report.Code, detail string) *verdictError {
	return stopWith([]report.Reason{{Code: code, Detail: detail}})
}

// stopWith ends the pipeline with reasons, and the verdict the registry says they lead to
// (reasonsVerdict). A stop whose reasons are all notes is a bug in the grader: it would end a
// pair as resolved without running it, so it panics, and the pair ends as internal_panic.
func stopWith(rs []report.Reason) *verdictError {
	v := reasonsVerdict(rs)
	if v == report.Resolved {
		panic(fmt.Sprintf("grader: a stop with only notes (%v) would resolve the pair", report.DistinctCodes(rs)))
	}
	return &verdictError{verdict: v, reasons: rs}
}

// reasonsVerdict is the verdict reasons lead to, as the registry says of each code: an error
// over an integrity violation over unresolved. Notes decide nothing; with only notes (or none)
// it is Resolved, which only the checks can confirm. A code the registry does not know makes
// it Error: no verdict can stand on a reason nobody defined.
func reasonsVerdict(rs []report.Reason) report.Verdict {
	decided := report.Resolved
	for _, r := range rs {
		ci, ok := report.Lookup(r.Code)
		switch {
		case !ok || ci.Verdict == report.Error:
			return report.Error
		case ci.IsNote():
		case ci.Verdict == report.IntegrityViolation:
			decided = ci.Verdict
		case decided == report.Resolved:
			decided = ci.Verdict
		}
	}
	return decided
}

// checksVerdict is the verdict of checks that all ran: what their reasons lead to, as the
// registry says. A failed check is never resolved, so reasons that are all notes (or none)
// still leave it unresolved.
func checksVerdict(failed bool, rs []report.Reason) report.Verdict {
	v := reasonsVerdict(rs)
	if failed && v == report.Resolved {
		return report.Unresolved
	}
	return v
}

func (pl *pipeline) run(ctx context.Context, start time.Time) report.PairResult {
	defer phase.Start(ctx, "pair")()
	r := newResult(pl.pair, start)
	defer pl.cleanup()
	done := phase.Start(ctx, "grader: prepare")
	err := pl.prepare(ctx, &r)
	if err == nil {
		err = pl.resolveTestIDs(ctx, &r)
	}
	done()
	if err == nil {
		err = pl.runChecks(ctx, &r)
	}
	pl.recordApply(&r)
	var ve *verdictError
	if err != nil && !errors.As(err, &ve) {
		ve = stop(report.CodeVerifierFailed, err.Error())
	}
	if ve != nil {
		r.Verdict, r.Reasons = ve.verdict, append(r.Reasons, ve.reasons...)
	}
	if ctx.Err() != nil && r.Verdict == report.Error {
		r.Reasons = append(r.Reasons, report.Reason{Code: report.CodeInterrupted, Detail: ctx.Err().Error()})
	}
	r.Reasons = report.CapReasons(append(r.Reasons, pl.notes...), report.MaxPairReasons)
	return r
}

// prepare does everything that happens before any verifier starts: the repository checks, the
// patch validation and the integrity pre-scan.
func (pl *pipeline) prepare(ctx context.Context, r *report.PairResult) error {
	if err := pl.prepareRepo(ctx, r); err != nil {
		return err
	}
	if err := pl.prepareTestPatch(); err != nil {
		return err
	}
	p := pl.pair
	if p.PatchOversize {
		return stop(report.CodePatchTooLarge,
			fmt.Sprintf("%s is over %d bytes; it was not parsed or applied", p.PatchPath, suite.MaxPatch))
	}
	if len(bytes.TrimSpace(p.Patch)) == 0 {
		r.EmptyPatch = true
		return stop(report.CodeEmptyPatch, "the candidate patch is empty; nothing was run")
	}
	return pl.preparePatch(ctx, p.Patch)
}

// prepareRepo refuses a run whose repository or base commit cannot be trusted.
func (pl *pipeline) prepareRepo(ctx context.Context, r *report.PairResult) error {
	if pl.repo.err != nil {
		return infraStop(report.CodeRepositoryRefused, pl.repo.err)
	}
	executed, err := pl.repo.verify(ctx, pl.pair.BaseCommit, pl.opts.Pinned)
	switch {
	case errors.Is(err, gitsafe.ErrCommitNotFound):
		return stop(report.CodeBaseMissing, err.Error())
	case errors.Is(err, gitsafe.ErrDirty):
		return stop(report.CodeSourceDirty, err.Error())
	case errors.Is(err, gitsafe.ErrHeadMismatch):
		return stop(report.CodeHeadMismatch, err.Error())
	case err != nil:
		return infraStop(report.CodeRepositoryRefused, err)
	}
	pl.executed, r.ExecutedCommit = executed, executed
	return nil
}

func (pl *pipeline) prepareTestPatch() error {
	if len(bytes.TrimSpace(pl.pair.TestPatch)) == 0 {
		return nil
	}
	var err error
	if pl.testPatch, err = gitsafe.ParsePatchWith(pl.pair.TestPatch, pl.patchOptions()); err != nil {
		return stop(report.CodeTestPatchInvalid, fmt.Sprintf("%s: %v", pl.pair.TestPatchPath, err))
	}
	return nil
}

// preparePatch parses a patch and runs the integrity pre-scan on it.
func (pl *pipeline) preparePatch(ctx context.Context, data []byte) error {
	var err error
	if pl.patch, err = gitsafe.ParsePatchWith(data, pl.patchOptions()); err != nil {
		return patchError(err)
	}
	links, err := pl.treeLinks(ctx)
	if err != nil {
		if errors.Is(err, gitsafe.ErrUnsafeTree) {
			return stop(report.CodeUnsafeTree, err.Error())
		}
		return infraStop(report.CodeWorkspaceFailed, err)
	}
	if err := pl.patch.CheckLinks(links.Base); err != nil {
		return patchError(err)
	}
	policy := pl.policy()
	policy.Links = links
	if v := integrity.Scan(changesOf(pl.patch), policy); len(v) > 0 {
		return stopWith(v)
	}
	return nil
}

// patchError classifies a candidate patch that gitsafe refused to parse.
func patchError(err error) error {
	var ue *gitsafe.UnsafeError
	if errors.As(err, &ue) || errors.Is(err, gitsafe.ErrUnsafePath) {
		code := report.CodeUnsafePath
		if errors.Is(err, gitsafe.ErrGitPath) {
			code = report.CodeGitPath
		}
		ve := stop(code, err.Error())
		if ue != nil {
			ve.reasons[0].Path = ue.Path
		}
		return ve
	}
	return stop(report.CodePatchFailed, "the patch cannot be parsed: "+err.Error())
}

func changesOf(p *gitsafe.Patch) []integrity.Change {
	out := make([]integrity.Change, 0, len(p.Files))
	for _, f := range p.Files {
		out = append(
			out,
			integrity.Change{OldPath: f.OldPath, NewPath: f.NewPath, Line: f.Line, Binary: f.IsBinary, Mode: f.NewMode,
				LinkTarget: f.LinkTarget},
		)
	}
	return out
}

// policy is the integrity policy of this pair: the suite's patterns plus every path the
// evaluator writes (test patch and hidden assets). A test-patch path under restored_paths is
// left to the restore: the candidate's change there is undone, not refused, so a candidate
// that edits a test file is graded (and stays unresolved) rather than rejected.
func (pl *pipeline) policy() integrity.Policy {
	var eval []string
	if pl.testPatch != nil {
		for _, p := range pl.testPatch.Paths() {
			if !pl.suite.Restored.Match(p) {
				eval = append(eval, p)
			}
		}
	}
	for _, a := range pl.pair.Assets {
		eval = append(eval, a.Path)
	}
	return integrity.Policy{Protected: pl.suite.Protected, Restored: pl.suite.Restored, Evaluator: eval}
}

func (pl *pipeline) runChecks(ctx context.Context, r *report.PairResult) error {
	r.TestedAsSubmitted = true
	var checks []plannedCheck
	for _, c := range []plannedCheck{{"target", pl.pair.FailToPass}, {"regression", pl.pair.PassToPass}} {
		if len(c.ids) > 0 {
			checks = append(checks, c)
		}
	}
	failed := false
	var notes []report.Reason
	var next *pending // the next check, made ready in the background
	defer func() {
		if next != nil {
			<-next.done
			if next.rc != nil {
				discard(next.rc) // not needed: the pair ended before it (a verdict, or a panic)
			}
		}
	}()
	for i, c := range checks {
		var rc *readyCheck
		if next != nil {
			rc, next = next.wait(), nil
		} else {
			rc = pl.ready(ctx, c.name, c.ids)
		}
		if i+1 < len(checks) && rc.err == nil {
			next = pl.readyAhead(ctx, checks[i+1])
		}
		cr, err := pl.runReady(ctx, rc)
		if next != nil && !cr.Passed && err == nil {
			// The settling below may rerun this check on the same pipeline: the next one
			// must be ready first, as nothing of the pipeline's is shared with a check
			// being made ready.
			next.wait()
		}
		if err == nil && !cr.Passed {
			cr.Check, err = pl.settle(ctx, c.name, c.ids, cr.Check)
			if err == nil && cr.Passed {
				notes = append(notes, prefixed(c.name, cr.Reasons)...) // settled: only notes are left
			}
		}
		if len(r.Checks) == 0 && (cr.ran || err == nil) {
			notes = append(notes, resetNotes(cr.reset)...) // the same in every check
		}
		notes = append(notes, prefixed(c.name, cr.notes)...)
		if cr.ran {
			r.Checks = append(r.Checks, cr.Check)
			r.TestedAsSubmitted = r.TestedAsSubmitted && cr.reset.TestedAsSubmitted
		}
		if err != nil {
			var ve *verdictError
			if errors.As(err, &ve) {
				ve.reasons = prefixed(c.name, ve.reasons)
			}
			pl.notes = append(pl.notes, notes...)
			return err
		}
		if !cr.Passed {
			failed = true
			r.Reasons = append(r.Reasons, prefixed(c.name, cr.Reasons)...)
		}
	}
	r.Verdict = checksVerdict(failed, r.Reasons)
	pl.notes = append(pl.notes, notes...)
	return nil
}

// plannedCheck is one of a pair's checks: its name and its required tests.
type plannedCheck struct {
	name string
	ids  []string
}

// readyAhead makes check c ready in the background, while the pipeline runs the one before
// it: the next verifier is created, filled and planted during the current one's tests.
func (pl *pipeline) readyAhead(ctx context.Context, c plannedCheck) *pending {
	p := &pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer func() {
			if v := recover(); v != nil {
				p.panicked = fmt.Sprintf("%v\n(made ready ahead, in a goroutine of its own:)\n%s", v, debug.Stack())
			}
		}()
		p.rc = pl.ready(ctx, c.name, c.ids)
	}()
	return p
}

// pending is a check readyAhead is making ready: the check once done is closed, or the panic
// that stopped it.
type pending struct {
	done     chan struct{}
	rc       *readyCheck
	panicked any
}

// wait waits for the check, as often as asked. A panic of readyAhead's goroutine is raised
// again on the pipeline's, where gradeSafely makes it the pair's verdict, with the stack of
// the goroutine it happened in.
func (p *pending) wait() *readyCheck {
	<-p.done
	if p.panicked != nil {
		panic(p.panicked)
	}
	return p.rc
}

// discard lets go of a check made ready that will not run.
func discard(rc *readyCheck) {
	release(rc)
	rc.close()
}

// prefixed names the check a reason came from.
func prefixed(check string, rs []report.Reason) []report.Reason {
	out := make([]report.Reason, len(rs))
	for i, r := range rs {
		r.Detail = check + ": " + r.Detail
		out[i] = r
	}
	return out
}

func (pl *pipeline) cleanup() {
	if pl.base != nil {
		_ = scratch.Remove(pl.base.root)
	}
}

// baseTree is the pristine base commit of a pair, materialized once and used to restore the
// evaluator's paths in every check.
type baseTree struct {
	root  string // removed when the pair ends
	dir   string // the tree, inside root
	files []string
}

func (b *baseTree) Files() []string { return b.files }

func (b *baseTree) ReadFile(path string) ([]byte, error) {
	if !filepath.IsLocal(path) {
		return nil, fmt.Errorf("base path %q is not local", path)
	}
	return os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(path)))
}

// FileMode lets the restore keep the base's executable bits.
func (b *baseTree) FileMode(path string) (fs.FileMode, error) {
	if !filepath.IsLocal(path) {
		return 0, fmt.Errorf("base path %q is not local", path)
	}
	info, err := os.Lstat(filepath.Join(b.dir, filepath.FromSlash(path)))
	if err != nil {
		return 0, err
	}
	return info.Mode(), nil
}

func (pl *pipeline) pristine(ctx context.Context) (*baseTree, error) {
	if pl.baseFrom != nil {
		return pl.baseFrom.pristine(ctx)
	}
	pl.baseOnce.Do(func() {
		dir, err := scratch.MkdirTemp(pl.opts.WorkDir, "tender-base-")
		if err != nil {
			pl.baseErr = err
			return
		}
		pl.base = &baseTree{root: dir, dir: filepath.Join(dir, "t")}
		if _, err := pl.repo.repo.Materialize(ctx, pl.executed, pl.base.dir); err != nil {
			pl.baseErr = err
			return
		}
		entries, err := pl.repo.repo.ListFiles(ctx, pl.executed)
		for _, e := range entries {
			pl.base.files = append(pl.base.files, e.Path)
		}
		sort.Strings(pl.base.files)
		pl.baseErr = err
	})
	return pl.base, pl.baseErr
}
