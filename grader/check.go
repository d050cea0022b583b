package grader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/restore"
	"github.com/tender-grader/tender/internal/scratch"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/junit"
	"github.com/tender-grader/tender/sandbox"
)

// check runs one verifier (target or regression) in a brand-new workspace. It returns the
// check record and whether the tested tree equals the candidate's submission. A returned
// error carries a verdict (integrity violation or error) and ends the pair.
func (pl *pipeline) check(ctx context.Context, name string, ids []string) (report.Check, bool, error) {
	chk := report.Check{Name: name, Backend: pl.opts.Backend.Name()}
	root, err := scratch.MkdirTemp(pl.opts.WorkDir, "tender-check-")
	if err != nil {
		return chk, false, infraStop(report.CodeWorkspaceFailed, err)
	}
	defer os.RemoveAll(root)
	tree, support := filepath.Join(root, "workspace"), filepath.Join(root, "support")

	fp, err := pl.repo.repo.Materialize(ctx, pl.executed, tree)
	if err != nil {
		if errors.Is(err, gitsafe.ErrUnsafeTree) {
			return chk, false, stop(report.Error, report.CodeUnsafeTree, err.Error())
		}
		return chk, false, infraStop(report.CodeWorkspaceFailed, err)
	}
	chk.Fingerprint = report.Fingerprint{Commit: fp.Commit, Tree: fp.Tree, IndexDigest: fp.IndexDigest, Clean: fp.Clean}
	if err := pl.applyCandidate(ctx, tree); err != nil {
		return chk, false, err
	}
	submitted, err := pl.restore(ctx, tree)
	if err != nil {
		return chk, false, err
	}
	sent, err := pl.addEvaluatorFiles(ctx, tree, support, ids)
	if err != nil {
		return chk, false, err
	}
	spec := pl.spec(name, tree, support, ids, sent)
	res, err := pl.opts.Backend.Run(ctx, spec)
	if err != nil {
		return chk, false, stop(report.Error, report.CodeVerifierFailed, err.Error())
	}
	if res.Killed {
		return chk, false, stop(report.Error, report.CodeVerifierKilled, "the verifier died of a signal Tender did not send; no verdict")
	}
	if err := pl.judge(&chk, res, tree, ids, sent); err != nil {
		return chk, false, err
	}
	return chk, submitted, nil
}

// applyCandidate applies the candidate's patch; instance validation runs without one.
func (pl *pipeline) applyCandidate(ctx context.Context, tree string) error {
	if pl.patch == nil {
		return nil
	}
	err := gitsafe.Apply(ctx, pl.patch, tree)
	switch {
	case errors.Is(err, gitsafe.ErrUnsafePath):
		// git read the patch differently from the parser, or a path runs through a symlink.
		return stop(report.IntegrityViolation, report.CodeUnsafePath, err.Error())
	case errors.Is(err, gitsafe.ErrPatchFailed):
		return stop(report.Unresolved, report.CodePatchFailed, err.Error())
	case err != nil:
		return stop(report.Error, report.CodeWorkspaceFailed, err.Error())
	}
	return nil
}

// restore resets the evaluator's paths to the base content after the candidate's patch.
func (pl *pipeline) restore(ctx context.Context, tree string) (bool, error) {
	base, err := pl.pristine(ctx)
	if err != nil {
		return false, infraStop(report.CodeWorkspaceFailed, fmt.Errorf("materializing the base for restore: %w", err))
	}
	out, err := restore.Restore(tree, base, pl.suite.Restored)
	if err != nil {
		return false, stop(report.Error, report.CodeWorkspaceFailed, "restoring evaluator paths: "+err.Error())
	}
	if len(out.Violations) > 0 {
		return false, &verdictError{verdict: report.IntegrityViolation, reasons: out.Violations}
	}
	return out.TestedAsSubmitted, nil
}

// addEvaluatorFiles applies the test patch, writes the hidden assets and, for pytest, the
// forgery sentinels, then Tender's own runner configuration in the support directory.
func (pl *pipeline) addEvaluatorFiles(ctx context.Context, tree, support string, ids []string) (*sentinels, error) {
	if pl.testPatch != nil {
		if err := gitsafe.Apply(ctx, pl.testPatch, tree); err != nil {
			return nil, stop(report.Error, report.CodeTestPatchFailed, fmt.Sprintf("%s: %v", pl.pair.TestPatchPath, err))
		}
	}
	for _, a := range pl.pair.Assets {
		for _, dst := range []string{filepath.Join(tree, filepath.FromSlash(a.Path)), filepath.Join(support, "assets", filepath.FromSlash(a.Path))} {
			if err := writeFile(dst, a.Data, a.Mode); err != nil {
				return nil, stop(report.Error, report.CodeWorkspaceFailed, err.Error())
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(support, "out"), 0o755); err != nil {
		return nil, stop(report.Error, report.CodeWorkspaceFailed, err.Error())
	}
	if pl.suite.Verifier.Runner != RunnerPytest {
		return nil, nil
	}
	sent, err := newSentinels(tree, ids)
	if err == nil {
		err = sent.write(tree)
	}
	if err == nil {
		err = writeFile(filepath.Join(support, "pytest.ini"), []byte(pytestIni), 0o644)
	}
	if err != nil {
		return nil, stop(report.Error, report.CodeWorkspaceFailed, err.Error())
	}
	return sent, nil
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

func (pl *pipeline) spec(name, tree, support string, ids []string, sent *sentinels) sandbox.Spec {
	v := pl.suite.Verifier
	return sandbox.Spec{
		RunID:     pl.opts.RunID,
		Name:      pl.pair.ID + "/" + name,
		Image:     v.Image,
		Workspace: tree,
		Support:   support,
		Command:   command(v, ids, sent),
		Env:       verifierEnv(v, pl.opts.Getenv),
		Limits: sandbox.Limits{Timeout: v.Timeout, CPUs: v.CPUs, Memory: v.Memory, Pids: v.Pids,
			DiskBytes: v.Disk, OutputBytes: maxLogBytes},
	}
}

// maxLogBytes caps each captured stream (head and tail kept).
const maxLogBytes = 256 << 10

// judge reads the verifier's report and decides the check.
func (pl *pipeline) judge(chk *report.Check, res *sandbox.Result, tree string, ids []string, sent *sentinels) error {
	chk.Isolated, chk.ImageID, chk.ExitCode = res.Isolated, res.ImageID, res.ExitCode
	chk.Resources = report.Resources{WallMillis: res.Wall.Milliseconds(), PeakMemory: res.PeakMemory, OOMKilled: res.OOMKilled,
		TimedOut: res.TimedOut, StdoutBytes: res.Stdout.Total, StderrBytes: res.Stderr.Total,
		OutputTruncated: res.Stdout.Truncated || res.Stderr.Truncated}
	data, err := pl.reportBytes(res)
	var rep *junit.Report
	if err == nil && data != nil {
		rep, err = junit.Parse(data, junit.Options{Runner: junit.Runner(pl.suite.Verifier.Runner), Files: listFiles(tree)})
	}
	if err := pl.saveLogs(chk, res, data, sent); err != nil {
		return stop(report.Error, report.CodeWorkspaceFailed, err.Error())
	}
	if sent != nil && rep != nil && err == nil {
		if forged := sent.verify(rep, res.ExitCode); len(forged) > 0 {
			return &verdictError{verdict: report.IntegrityViolation, reasons: forged}
		}
	}
	out := report.Reconcile(rep, err, ids, res.ExitCode)
	chk.Passed, chk.Tests, chk.Reasons = out.Passed, out.Tests, pl.withholdAssetOutput(out.Reasons)
	if res.TimedOut {
		chk.Passed = false
		chk.Reasons = append([]report.Reason{{Code: report.CodeTimeout, Detail: fmt.Sprintf("killed after %s", pl.suite.Verifier.Timeout)}}, chk.Reasons...)
	}
	if res.OOMKilled {
		chk.Passed = false
		chk.Reasons = append([]report.Reason{{Code: report.CodeOOM, Detail: fmt.Sprintf("out of memory (limit %d bytes)", pl.suite.Verifier.Memory)}}, chk.Reasons...)
	}
	chk.Reasons = append(chk.Reasons, limitReasons(res, pl.suite.Verifier)...)
	return nil
}

// withholdAssetOutput drops what a hidden evaluator test printed from the reasons, which
// reach the summary and the check run: the candidate may read those, and must not learn the
// hidden tests from them. The raw report and the log stay in the bundle for the operator.
func (pl *pipeline) withholdAssetOutput(reasons []report.Reason) []report.Reason {
	hidden := map[string]bool{}
	for _, a := range pl.pair.Assets {
		hidden[a.Path] = true
	}
	for i, r := range reasons {
		if r.Path != "" && hidden[r.Path] {
			reasons[i].Detail = "a hidden evaluator test did not pass; its output is withheld"
		}
	}
	return reasons
}

// limitReasons records the limits a check ran into. They explain a failure; they never make
// a check pass or fail on their own (the report and exit code decide).
func limitReasons(res *sandbox.Result, v Verifier) []report.Reason {
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
	if res.JUnit == nil || pl.suite.Verifier.Runner != RunnerGo {
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
