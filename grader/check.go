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
}

// check runs one verifier (target or regression) in a brand-new workspace. A returned error
// carries a verdict (integrity violation or error) and ends the pair; the check record comes
// back with it when a verifier ran, so the evidence of a forged report is kept.
func (pl *pipeline) check(ctx context.Context, name string, ids []string) (*checkRun, error) {
	cr := &checkRun{Check: report.Check{Name: name, Backend: pl.opts.Backend.Name()}}
	if msg := pl.suite.Failure(pl.pair); msg != "" {
		return cr, stop(report.CodeVerifierFailed, msg)
	}
	root, err := scratch.MkdirTemp(pl.opts.WorkDir, "tender-check-")
	if err != nil {
		return cr, infraStop(report.CodeWorkspaceFailed, err)
	}
	defer scratch.Remove(root)
	tree, support := filepath.Join(root, "workspace"), filepath.Join(root, "support")

	fp, err := pl.repo.repo.Materialize(ctx, pl.executed, tree)
	if err != nil {
		if errors.Is(err, gitsafe.ErrUnsafeTree) {
			return cr, stop(report.CodeUnsafeTree, err.Error())
		}
		return cr, infraStop(report.CodeWorkspaceFailed, err)
	}
	cr.Fingerprint = report.Fingerprint{Commit: fp.Commit, Tree: fp.Tree, IndexDigest: fp.IndexDigest, Clean: fp.Clean}
	if err := pl.applyCandidate(ctx, tree); err != nil {
		return cr, err
	}
	if cr.reset, err = pl.restore(ctx, tree); err != nil {
		return cr, err
	}
	if err := pl.addEvaluatorFiles(ctx, tree, support); err != nil {
		return cr, err
	}
	spec, boot := pl.spec(name, tree, support, ids)
	res, err := pl.opts.Backend.Run(ctx, spec)
	if err != nil {
		return cr, stop(report.CodeVerifierFailed, err.Error())
	}
	cr.ran = true
	if res.Killed {
		return cr, stop(report.CodeVerifierKilled, "the verifier died of a signal Tender did not send; no verdict")
	}
	return cr, pl.judge(cr, res, tree, ids, boot)
}

// applyCandidate applies the candidate's patch; instance validation runs without one.
func (pl *pipeline) applyCandidate(ctx context.Context, tree string) error {
	if pl.patch == nil || pl.unpatched {
		return nil
	}
	err := gitsafe.Apply(ctx, pl.patch, tree)
	switch {
	case errors.Is(err, gitsafe.ErrUnsafePath):
		// git read the patch differently from the parser, or a path runs through a symlink.
		return stop(report.CodeUnsafePath, err.Error())
	case errors.Is(err, gitsafe.ErrPatchFailed):
		return stop(report.CodePatchFailed, err.Error())
	case err != nil:
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	return nil
}

// restore resets the evaluator's paths to the base content after the candidate's patch.
func (pl *pipeline) restore(ctx context.Context, tree string) (restore.Outcome, error) {
	base, err := pl.pristine(ctx)
	if err != nil {
		return restore.Outcome{}, infraStop(report.CodeWorkspaceFailed, fmt.Errorf("materializing the base for restore: %w", err))
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
		rs = append(rs, report.Reason{Code: report.CodeEvaluatorReset, Path: p, Detail: "the candidate's change to this evaluator file was reset to the base content"})
	}
	for _, p := range out.Removed {
		rs = append(rs, report.Reason{Code: report.CodeEvaluatorReset, Path: p, Detail: "the candidate added this file under a restored path; it was removed"})
	}
	for _, sec := range out.Sections {
		rs = append(rs, report.Reason{Code: report.CodeEvaluatorReset, Detail: "the candidate's test-runner section was reset: " + sec})
	}
	return rs
}

// addEvaluatorFiles applies the test patch and writes the hidden assets, into the workspace
// and into the support directory. (The pytest bootstrap writes the forgery sentinels itself,
// inside the verifier, so that no file the grader writes names them.)
func (pl *pipeline) addEvaluatorFiles(ctx context.Context, tree, support string) error {
	if pl.testPatch != nil {
		if err := gitsafe.Apply(ctx, pl.testPatch, tree); err != nil {
			return stop(report.CodeTestPatchFailed, fmt.Sprintf("%s: %v", pl.pair.TestPatchPath, err))
		}
	}
	for _, a := range pl.pair.Assets {
		for _, dst := range []string{filepath.Join(tree, filepath.FromSlash(a.Path)), filepath.Join(support, "assets", filepath.FromSlash(a.Path))} {
			if err := writeFile(dst, a.Data, a.Mode); err != nil {
				return stop(report.CodeWorkspaceFailed, err.Error())
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(support, "out"), 0o755); err != nil {
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	return nil
}

// writeFile writes an evaluator file, replacing whatever the candidate left there.
func writeFile(path string, data []byte, mode uint32) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	os.Remove(path)
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	return os.WriteFile(path, data, perm)
}

// spec is the verifier of one check. For pytest it also returns the bootstrap's
// configuration, which travels on the command's standard input.
func (pl *pipeline) spec(name, tree, support string, ids []string) (sandbox.Spec, *pyboot.Config) {
	v := pl.suite.VerifierFor(pl.pair)
	spec := sandbox.Spec{
		RunID:     pl.opts.RunID,
		Name:      pl.pair.ID + "/" + name,
		Image:     v.Image,
		Workspace: tree,
		Support:   support,
		Command:   command(v, ids),
		Env:       verifierEnv(v, pl.opts.Getenv),
		Limits: sandbox.Limits{Timeout: v.Timeout, CPUs: v.CPUs, Memory: v.Memory, Pids: v.Pids,
			DiskBytes: v.Disk, OutputBytes: maxLogBytes},
	}
	if v.Runner != suite.RunnerPytest {
		return spec, nil
	}
	boot := pyboot.NewConfig(ids, v.Plugins, v.PythonPath)
	boot.NegatedAfter = name == "regression"
	spec.Stdin = boot.Stdin()
	return spec, &boot
}

// maxLogBytes caps each captured stream (head and tail kept).
const maxLogBytes = 256 << 10

// judge reads the verifier's report and decides the check. For pytest, the bootstrap's
// control lines decide whether the report can be believed at all.
func (pl *pipeline) judge(cr *checkRun, res *sandbox.Result, tree string, ids []string, boot *pyboot.Config) error {
	cr.Isolated, cr.ImageID, cr.ExitCode = res.Isolated, res.ImageID, res.ExitCode
	cr.Resources = report.Resources{WallMillis: res.Wall.Milliseconds(), PeakMemory: res.PeakMemory, OOMKilled: res.OOMKilled,
		TimedOut: res.TimedOut, StdoutBytes: res.Stdout.Total, StderrBytes: res.Stderr.Total,
		OutputTruncated: res.Stdout.Truncated || res.Stderr.Truncated}
	data, err := pl.reportBytes(res)
	var rep *junit.Report
	if err == nil && data != nil {
		rep, err = junit.Parse(data, junit.Options{Runner: junit.Runner(pl.suite.Verifier.Runner), Files: listFiles(tree)})
	}
	var ctl pyboot.Control
	if boot != nil {
		ctl = pyboot.Read([]byte(res.Stdout.String()), boot.Nonce)
	}
	if err := pl.saveLogs(&cr.Check, res, data, ctl); err != nil {
		return stop(report.CodeWorkspaceFailed, err.Error())
	}
	out := report.Reconcile(rep, err, ids, res.ExitCode)
	cr.Passed, cr.Tests, cr.Reasons = out.Passed, out.Tests, out.Reasons
	if res.TimedOut {
		cr.Passed = false
		cr.Reasons = append([]report.Reason{{Code: report.CodeTimeout, Detail: fmt.Sprintf("killed after %s", pl.suite.Verifier.Timeout)}}, cr.Reasons...)
	}
	if res.OOMKilled {
		cr.Passed = false
		cr.Reasons = append([]report.Reason{{Code: report.CodeOOM, Detail: fmt.Sprintf("out of memory (limit %d bytes)", pl.suite.Verifier.Memory)}}, cr.Reasons...)
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
		SetupFailed: setupFailed(res.Stderr.String()), Regression: cr.Name == "regression"})
	cr.notes = f.Notes
	remapLines(cr.Reasons, ctl.Plan)
	if f.Broken != "" {
		return stop(report.CodeBootstrap, f.Broken)
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

// remapLines puts the lines of failing tests back in the numbering of the test module as the
// suite has it (the bootstrap inserted sentinels into it).
func remapLines(rs []report.Reason, plan *pyboot.Plan) {
	for i := range rs {
		if rs[i].Path != "" && rs[i].Line > 0 {
			rs[i].Line = plan.OriginalLine(rs[i].Path, rs[i].Line)
		}
	}
}

// limitReasons records the limits a check ran into. They explain a failure; they never make
// a check pass or fail on their own (the report and exit code decide).
func limitReasons(res *sandbox.Result, v suite.Verifier) []report.Reason {
	var rs []report.Reason
	if res.PidsLimitHit {
		rs = append(rs, report.Reason{Code: report.CodePidsLimit, Detail: fmt.Sprintf("the process limit (%d) was reached", v.Pids)})
	}
	if res.DiskFull {
		rs = append(rs, report.Reason{Code: report.CodeDiskFull, Detail: fmt.Sprintf("a tmpfs filled up (cap %d bytes)", v.Disk)})
	}
	if res.JUnitTooLarge {
		rs = append(rs, report.Reason{Code: report.CodeReportTooLarge, Detail: "the JUnit report was over the size cap and was not read"})
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

// setupFailed reports whether the surfaces script said a setup command failed (its line
// starts stderr's account of the check, before any test code ran).
func setupFailed(stderr string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "tender: setup command ") && strings.Contains(line, " exited ") {
			return true
		}
	}
	return false
}
