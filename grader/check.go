package grader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/pyboot"
	"github.com/tender-grader/tender/grader/restore"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/phase"
	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
)

// checkRun is one check as it ran.
type checkRun struct {
	report.Check
	ran   bool            // a verifier started: the record belongs in the result, whatever the verdict
	reset restore.Outcome // what the restore changed back to the base content
	notes []report.Reason // what decides nothing but should be seen: tripwires
	// failures are the report's messages of the required tests that failed, and python the
	// Python version the runner's output names: validate's hint on the base commit.
	failures map[string]string
	python   string
}

// check runs one verifier (target or regression) in a brand-new workspace. A returned error
// carries a verdict (integrity violation or error) and ends the pair; the check record comes
// back with it when a verifier ran, so the evidence of a forged report is kept.
func (pl *pipeline) check(ctx context.Context, name string, ids []string) (*checkRun, error) {
	return pl.runReady(ctx, pl.ready(ctx, name, ids))
}

// readyCheck is a check whose workspace is written and whose verifier is prepared
// (sandbox.Prepare): everything before its command gets its input.
type readyCheck struct {
	cr   *checkRun
	ids  []string
	root string // the workspace and the support directory on the host
	tree string
	boot *pyboot.Config
	box  sandbox.Prepared
	err  error // what stopped the check before its verifier was ready
}

// ready materializes a check's workspace, applies the candidate's patch, restores the
// evaluator's paths, adds the evaluator's files and prepares the verifier. It runs no
// command of the check's: a pipeline prepares its next check while the current one runs.
func (pl *pipeline) ready(ctx context.Context, name string, ids []string) *readyCheck {
	rc := &readyCheck{cr: &checkRun{Check: report.Check{Name: name, Backend: pl.opts.Backend.Name()}}, ids: ids}
	rc.err = pl.fill(ctx, rc)
	if rc.err != nil {
		rc.close()
	}
	return rc
}

func (pl *pipeline) fill(ctx context.Context, rc *readyCheck) error {
	if msg := pl.suite.Failure(pl.pair); msg != "" {
		return stop(report.CodeVerifierFailed, msg)
	}
	root, err := scratch.MkdirTemp(pl.opts.WorkDir, "tender-check-")
	if err != nil {
		return infraStop(report.CodeWorkspaceFailed, err)
	}
	rc.root, rc.tree = root, filepath.Join(root, "workspace")
	support := filepath.Join(root, "support")

	done := phase.Start(ctx, "grader: materialize")
	fp, err := pl.repo.repo.Materialize(ctx, pl.executed, rc.tree)
	done()
	if err != nil {
		if errors.Is(err, gitsafe.ErrUnsafeTree) {
			return stop(report.CodeUnsafeTree, err.Error())
		}
		return infraStop(report.CodeWorkspaceFailed, err)
	}
	cr := rc.cr
	cr.Fingerprint = report.Fingerprint{Commit: fp.Commit, Tree: fp.Tree, IndexDigest: fp.IndexDigest, Clean: fp.Clean}
	links := linkTable(fp)
	done = phase.Start(ctx, "grader: apply, restore, evaluator files")
	err = pl.applyCandidate(ctx, rc.tree, cr, links)
	if err == nil {
		cr.reset, err = pl.restore(ctx, rc.tree)
	}
	if err == nil {
		err = pl.addEvaluatorFiles(ctx, rc.tree, support, links)
	}
	done()
	if err != nil {
		return err
	}
	spec, boot := pl.spec(cr.Name, rc.tree, support, rc.ids, links)
	rc.boot = boot
	done = phase.Start(ctx, "verifier (every container phase)")
	rc.box, err = sandbox.Prepare(ctx, pl.opts.Backend, spec)
	done()
	return verifierError(err)
}

// verifierError is the verdict of a backend's error: a step of Tender's that failed inside
// the verifier (the bootstrap's planter), or a verifier that could not run.
func verifierError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sandbox.ErrStep):
		return stop(report.CodeBootstrap, err.Error())
	default:
		return stop(report.CodeVerifierFailed, err.Error())
	}
}

// close removes the check's workspace on the host; the verifier is released apart.
func (rc *readyCheck) close() {
	if rc.root != "" {
		scratch.Remove(rc.root)
		rc.root = ""
	}
}

// runReady runs a check that ready prepared, releases its verifier, and judges it.
func (pl *pipeline) runReady(ctx context.Context, rc *readyCheck) (*checkRun, error) {
	defer rc.close()
	cr := rc.cr
	if rc.err != nil {
		return cr, rc.err
	}
	done := phase.Start(ctx, "verifier (every container phase)")
	res, err := rc.box.Run(ctx)
	done()
	release(rc)
	if err != nil {
		return cr, verifierError(err)
	}
	cr.ran = true
	if res.Killed {
		return cr, stop(report.CodeVerifierKilled, "the verifier died of a signal Tender did not send; no verdict")
	}
	defer phase.Start(ctx, "grader: judge")()
	return cr, pl.judge(cr, res, rc.tree, rc.ids, rc.boot)
}

// release removes a check's verifier. Removing it in the background, during the next check,
// was measured and gains nothing on two cores (docs/benchmarks.md).
func release(rc *readyCheck) {
	if box := rc.box; box != nil {
		rc.box = nil
		box.Release()
	}
}

// applyCandidate applies the candidate's patch under the suite's apply policy (apply.go),
// records the method that succeeded, and adds the links the patch creates to the workspace's
// table; instance validation runs without a patch.
func (pl *pipeline) applyCandidate(ctx context.Context, tree string, cr *checkRun, links map[string]string) error {
	if pl.patch == nil || pl.unpatched {
		return nil
	}
	if err := pl.patch.CheckLinks(links); err != nil {
		if errors.Is(err, gitsafe.ErrUnsafePath) {
			return stop(report.CodeUnsafePath, err.Error())
		}
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	applied, err := pl.applyPatch(ctx, tree)
	cr.ApplyMethod = string(applied.Method)
	if err == nil {
		addLinks(links, pl.patch)
	}
	return err
}

// restore resets the evaluator's paths to the base content after the candidate's patch. A
// tree no patch was applied to is the base itself: there is nothing to reset.
func (pl *pipeline) restore(ctx context.Context, tree string) (restore.Outcome, error) {
	if pl.patch == nil || pl.unpatched {
		return restore.Outcome{TestedAsSubmitted: true}, nil
	}
	base, err := pl.pristine(ctx)
	if err != nil {
		return restore.Outcome{}, infraStop(
			report.CodeWorkspaceFailed,
			fmt.Errorf("materializing the base for restore: %w", err),
		)
	}
	out, err := restore.Restore(tree, base, pl.suite.Restored)
	if err != nil {
		return out, stop(report.CodeWorkspaceFailed, "restoring evaluator paths: "+err.Error())
	}
	if len(out.Violations) > 0 {
		return out, stopWith(out.Violations)
	}
	return out, nil
}

// resetNotes names what the restore changed back, for the result: a blocked cheat looks
// blocked.
func resetNotes(out restore.Outcome) []report.Reason {
	var rs []report.Reason
	for _, p := range out.Restored {
		rs = append(
			rs,
			report.Reason{
				Code:   report.CodeEvaluatorReset,
				Path:   p,
				Detail: "the candidate's change to this evaluator file was reset to the base content",
			},
		)
	}
	for _, p := range out.Removed {
		rs = append(
			rs,
			report.Reason{
				Code:   report.CodeEvaluatorReset,
				Path:   p,
				Detail: "the candidate added this file under a restored path; it was removed",
			},
		)
	}
	for _, sec := range out.Sections {
		rs = append(
			rs,
			report.Reason{
				Code:   report.CodeEvaluatorReset,
				Detail: "the candidate's test-runner section was reset: " + sec,
			},
		)
	}
	return rs
}

// addEvaluatorFiles applies the test patch and writes the hidden assets, into the workspace
// and into the support directory, and adds the links the test patch creates to the
// workspace's table. (The pytest bootstrap writes the forgery sentinels itself, inside the
// verifier, so that no file the grader writes names them.)
func (pl *pipeline) addEvaluatorFiles(ctx context.Context, tree, support string, links map[string]string) error {
	if pl.testPatch != nil {
		err := pl.testPatch.CheckLinks(links)
		if err == nil {
			err = gitsafe.Apply(ctx, pl.testPatch, tree)
		}
		if err != nil {
			return stop(report.CodeTestPatchFailed, fmt.Sprintf("%s: %v", pl.pair.TestPatchPath, err))
		}
		addLinks(links, pl.testPatch)
	}
	for _, a := range pl.pair.Assets {
		if err := os.MkdirAll(filepath.Join(support, "assets"), 0o755); err != nil {
			return stop(report.CodeWorkspaceFailed, err.Error())
		}
		if err := writeAsset(tree, a.Path, a.Data, a.Mode, links); err != nil {
			return stop(report.CodeWorkspaceFailed, err.Error())
		}
		if err := writeAsset(filepath.Join(support, "assets"), a.Path, a.Data, a.Mode, nil); err != nil {
			return stop(report.CodeWorkspaceFailed, err.Error())
		}
	}
	if err := os.MkdirAll(filepath.Join(support, "out"), 0o755); err != nil {
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	return nil
}

// spec is the verifier of one check. For pytest it also returns the bootstrap's
// configuration, which the planter's output completes before it travels on the command's
// standard input.
func (pl *pipeline) spec(name, tree, support string, ids []string, links map[string]string) (sandbox.Spec,
	*pyboot.Config) {
	v := pl.suite.VerifierFor(pl.pair)
	spec := sandbox.Spec{
		RunID:     pl.opts.RunID,
		Name:      pl.pair.ID + "/" + name,
		Image:     v.Image,
		Workspace: tree,
		Links:     links,
		Support:   support,
		Command:   command(v, ids),
		Env:       verifierEnv(v, pl.opts.Getenv),
		Limits: sandbox.Limits{Timeout: v.Timeout, CPUs: v.CPUs, Memory: v.Memory, Pids: v.Pids,
			DiskBytes: v.Disk, OutputBytes: maxLogBytes},
		Setup: v.Setup,
	}
	if v.Runner != suite.RunnerPytest {
		spec.Evaluator = pl.evaluatorFiles(tree, nil, links)
		return spec, nil
	}
	spec.Evaluator = pl.evaluatorFiles(tree, pyboot.Modules(ids), links)
	boot := pyboot.NewConfig(ids, v.Plugins, v.PythonPath)
	boot.PytestOptions = v.PytestOptions()
	boot.ProjectCopy = v.ProjectCopy
	spec.Plant = &sandbox.Step{
		Command: pyboot.PlantCommand(v.Interpreter()),
		Files:   pyboot.PlantFiles(ids, !pl.plain), // validation's checks on the base plant no copies
		Stdin:   boot.FromPlant,
	}
	spec.StdinFirst = true // the bootstrap's child imports pytest while its parent reads the configuration
	return spec, &boot
}

// maxLogBytes caps each captured stream (head and tail kept).
const maxLogBytes = 256 << 10

// judge reads the verifier's report and decides the check. For pytest, the bootstrap's
// control lines decide whether the report can be believed at all.
func (pl *pipeline) judge(cr *checkRun, res *sandbox.Result, tree string, ids []string, boot *pyboot.Config) error {
	cr.Isolated, cr.ImageID, cr.ExitCode = res.Isolated, res.ImageID, res.ExitCode
	_, cr.python = missingName(res.Stderr.String(), res.Stdout.String())
	cr.Resources = report.Resources{
		WallMillis:      res.Wall.Milliseconds(),
		PeakMemory:      res.PeakMemory,
		OOMKilled:       res.OOMKilled,
		TimedOut:        res.TimedOut,
		StdoutBytes:     res.Stdout.Total,
		StderrBytes:     res.Stderr.Total,
		OutputTruncated: res.Stdout.Truncated || res.Stderr.Truncated,
	}
	data, err := pl.reportBytes(res)
	var rep *junit.Report
	if err == nil && data != nil {
		rep, err = junit.Parse(
			data,
			junit.Options{Runner: junit.Runner(pl.suite.Verifier.Runner), Files: listFiles(tree)},
		)
	}
	var ctl pyboot.Control
	if boot != nil {
		ctl = pyboot.Read([]byte(res.Stdout.String()), boot.Nonce)
		if planted, perr := pyboot.ParsePlant(res.Plant); perr == nil {
			ctl.Plan = planted.Plan
		}
		ctl.Plan.Locate(rep) // the lines shown are the planter's, never the report's
	}
	if err := pl.saveLogs(&cr.Check, res, data, err != nil, ctl); err != nil {
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	if !res.Ran() {
		cr.Passed, cr.Reasons = false, []report.Reason{{Code: report.CodeSetupFailed, Detail: setupDetail(res)}}
		return nil
	}
	cr.failures = failureMessages(rep, ids)
	out := report.Reconcile(rep, err, ids, res.ExitCode)
	cr.Passed, cr.Tests, cr.Reasons = out.Passed, out.Tests, out.Reasons
	if res.TimedOut {
		cr.Passed = false
		cr.Reasons = append(
			[]report.Reason{
				{Code: report.CodeTimeout, Detail: fmt.Sprintf("killed after %s", pl.suite.Verifier.Timeout)},
			},
			cr.Reasons...)
	}
	if res.OOMKilled {
		cr.Passed = false
		cr.Reasons = append(
			[]report.Reason{
				{Code: report.CodeOOM, Detail: fmt.Sprintf("out of memory (limit %d bytes)", pl.suite.Verifier.Memory)},
			},
			cr.Reasons...)
	}
	cr.Reasons = append(cr.Reasons, limitReasons(res, pl.suite.VerifierFor(pl.pair))...)
	if boot == nil {
		cr.Reasons = report.CapReasons(cr.Reasons, report.MaxCheckReasons)
		return nil
	}
	if err != nil {
		rep = nil
	}
	f := ctl.Judge(pyboot.Run{Report: rep, JUnit: res.JUnit, Exit: res.ExitCode, Ended: !res.TimedOut && !res.OOMKilled,
		StdoutCut: res.Stdout.Truncated, Regression: cr.Name == "regression"})
	cr.notes = f.Notes
	if f.Broken != "" {
		return stop(f.BrokenCode, f.Broken)
	}
	if len(f.Failed) > 0 {
		cr.Passed = false
		cr.Reasons = append(cr.Reasons, f.Failed...)
	}
	cr.Reasons = report.CapReasons(cr.Reasons, report.MaxCheckReasons)
	if len(f.Forged) > 0 {
		cr.Passed = false
		cr.Reasons = report.CapReasons(append(f.Forged, cr.Reasons...), report.MaxCheckReasons)
		return stopWith(f.Forged)
	}
	return nil
}

// limitReasons records the limits a check ran into. They explain a failure; they never make
// a check pass or fail on their own (the report and exit code decide).
func limitReasons(res *sandbox.Result, v suite.Verifier) []report.Reason {
	var rs []report.Reason
	if res.PidsLimitHit {
		rs = append(
			rs,
			report.Reason{
				Code:   report.CodePidsLimit,
				Detail: fmt.Sprintf("the process limit (%d) was reached", v.Pids),
			},
		)
	}
	if res.DiskFull {
		rs = append(
			rs,
			report.Reason{Code: report.CodeDiskFull, Detail: fmt.Sprintf("a tmpfs filled up (cap %d bytes)", v.Disk)},
		)
	}
	if res.JUnitTooLarge {
		rs = append(
			rs,
			report.Reason{
				Code:   report.CodeReportTooLarge,
				Detail: "the JUnit report was over the size cap and was not read",
			},
		)
	}
	return rs
}

// reportBytes returns the JUnit document of a check, converting go test -json output.
func (pl *pipeline) reportBytes(res *sandbox.Result) ([]byte, error) {
	if res.JUnit == nil || pl.suite.Verifier.Runner != suite.RunnerGo {
		return res.JUnit, nil
	}
	return junit.FromGoTestJSON(strings.NewReader(string(res.JUnit)))
}

// listFiles lists a workspace's files, slash-separated, to map report entries to files.
func listFiles(root string) []string {
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files
}

// setupDetail says why a check's tests did not run: a setup command failed, or left a process
// that outlived every kill.
func setupDetail(res *sandbox.Result) string {
	if res.SetupLeftover {
		return "a process a setup command started outlived the setup commands and every kill; the tests did not start"
	}
	return fmt.Sprintf("a setup command exited %d; the tests did not run", res.SetupExit)
}
