package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/internal/phase"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox"
)

// gradeRun is one `tender grade`: it streams results to disk, shows progress, and writes the
// bundle at the end.
type gradeRun struct {
	inv   *invocation
	suite *suite.Suite
	out   *outDir
	start time.Time
	w     *report.ResultsWriter
	// baseline is the bundle the results are compared with (--baseline); nil for none.
	baseline *baseline

	mu      sync.Mutex
	lastLen int
	kept    atomic.Int64 // records in results.jsonl that a resume would keep: appended, or kept from before
}

func (g *gradeRun) grade(ctx context.Context, opts grader.Options) ([]report.PairResult, error) {
	w, err := report.OpenResults(g.out.path)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	g.w = w
	g.kept.Store(int64(len(opts.Skip)))
	opts.Sink = func(r report.PairResult) error {
		defer phase.Start(ctx, "record (results.jsonl)")()
		err := w.Append(r)
		if err == nil {
			g.kept.Add(1)
		}
		return err
	}
	opts.Progress = g.progress
	opts.Rerunning = g.rerunning
	total := len(opts.Shard.Select(g.suite.Pairs))
	if total == 0 {
		// An empty shard is a whole bundle: merge needs one from every shard.
		fmt.Fprintf(
			g.inv.Stderr,
			"tender: shard %s selects none of the %d pair(s) of %s; writing an empty bundle\n",
			opts.Shard,
			len(g.suite.Pairs),
			g.suite.Name,
		)
		return []report.PairResult{}, nil
	}
	fmt.Fprintf(
		g.inv.Stderr,
		"tender: grading %d pair(s) of %s with the %s backend, %d at a time\n",
		total,
		g.suite.Name,
		opts.Backend.Name(),
		opts.Concurrency,
	)
	results, err := grader.Grade(ctx, g.suite, opts)
	g.endProgress()
	if err == nil {
		err = g.recorded()
	}
	return results, err
}

// recorded fails when what the run recorded is no longer where the bundle is sealed: the
// output directory or results.jsonl was removed or replaced, or an append failed.
func (g *gradeRun) recorded() error {
	if g.w != nil {
		if err := g.w.Err(); err != nil {
			return err
		}
	}
	return g.out.lock.Check()
}

// resumeHint says, after a run that stopped early, what was kept and how to go on.
func (g *gradeRun) resumeHint(ctx context.Context, err error) {
	dir := g.out.path
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(
			g.inv.Stderr,
			"tender: interrupted; finished pairs are in %s/%s; continue with --resume %s\n",
			dir,
			report.ResultsJSONL,
			dir,
		)
	case g.kept.Load() == 0:
		// Nothing was recorded: there is nothing to resume, and err says what failed.
	case errors.Is(err, report.ErrOutGone):
		fmt.Fprintf(
			g.inv.Stderr,
			"tender: %s was removed or replaced while the run wrote to it; no bundle was sealed; grade again into a new --out\n",
			dir,
		)
	case errors.Is(err, syscall.ENOSPC):
		fmt.Fprintf(
			g.inv.Stderr,
			"tender: the disk of %s is full; the pairs recorded so far are in %s/%s; free some space, then continue with --resume %s\n",
			dir,
			dir,
			report.ResultsJSONL,
			dir,
		)
	default:
		fmt.Fprintf(
			g.inv.Stderr,
			"tender: the run stopped; the pairs recorded so far are in %s/%s; continue with --resume %s\n",
			dir,
			report.ResultsJSONL,
			dir,
		)
	}
}

// progress shows pairs done out of total and the time left: one updating line on a terminal,
// one line per pair elsewhere (CI logs).
func (g *gradeRun) progress(done, total int, r report.PairResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	elapsed := time.Since(g.start)
	left := time.Duration(float64(elapsed) / float64(done) * float64(total-done)).Round(time.Second)
	line := fmt.Sprintf(
		"[%d/%d] %s: %s (%s)  · about %s left",
		done,
		total,
		r.ID,
		r.Verdict,
		time.Duration(r.DurationMillis)*time.Millisecond,
		left,
	)
	if g.inv.Getenv("GITHUB_ACTIONS") == "true" {
		actionsGroup(g.inv.Stdout, line, r)
		return
	}
	if !g.inv.TTY {
		fmt.Fprintln(g.inv.Stderr, line)
		return
	}
	pad := ""
	if n := g.lastLen - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(g.inv.Stderr, "\r%s%s", line, pad)
	g.lastLen = len(line)
}

// rerunning says that a pair's check is being run again (--reruns), on its own line: a pair
// with reruns takes several times as long. Ids are restricted at load and check names are
// Tender's, so the line carries no candidate text.
func (g *gradeRun) rerunning(pair, check, what string, n, of int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	line := fmt.Sprintf("tender: %s: %s check failed; rerun %d of at most %d", pair, check, n, of)
	if what == "base" {
		line = fmt.Sprintf(
			"tender: %s: %s check: flaky tests; base-commit run %d of at most %d (flaky: excluded)",
			pair,
			check,
			n,
			of,
		)
	}
	if g.inv.TTY && g.lastLen > 0 {
		line = "\r" + line + strings.Repeat(" ", max(g.lastLen-len(line), 0))
		g.lastLen = 0
	}
	fmt.Fprintln(g.inv.Stderr, line)
}

// actionsGroup writes one collapsible log group per pair in GitHub Actions. Only Tender's own
// words go in it (ids are restricted at load, codes are constants): candidate text such as a
// failure message could carry a workflow command, so it stays in the bundle's logs.
func actionsGroup(w io.Writer, line string, r report.PairResult) {
	fmt.Fprintf(w, "::group::%s\n", line)
	fmt.Fprintf(w, "reasons: %s\n", reasonCodes(r.Reasons))
	for _, c := range r.Checks {
		fmt.Fprintf(
			w,
			"check %s: passed=%v exit=%d wall=%dms isolated=%v log=%s\n",
			c.Name,
			c.Passed,
			c.ExitCode,
			c.Resources.WallMillis,
			c.Isolated,
			c.LogFile,
		)
	}
	fmt.Fprintln(w, "::endgroup::")
}

func (g *gradeRun) endProgress() {
	if g.inv.TTY && g.lastLen > 0 {
		fmt.Fprintln(g.inv.Stderr)
	}
}

// finish writes every output, seals the bundle, prints the table, and decides the exit code.
func (g *gradeRun) finish(
	results []report.PairResult,
	backend sandbox.Backend,
	shard grader.Shard,
	key ed25519.PrivateKey,
) error {
	res := report.Results{
		Schema: report.SchemaVersion, Tool: g.inv.Version, Suite: g.suite.Name, SuiteVersion: g.suite.Version,
		SuiteDigest: g.suite.Digest, Shard: shard.String(), Backend: backend.Name(),
		Started: g.start, Finished: time.Now(), Pairs: results,
		Model: g.suite.Import.Model, ShardPlan: shard.Plan(),
	}
	if sw := g.suite.Import.SWEBench; sw != nil {
		res.NoPrediction, res.NotImported = sw.NoPrediction, sw.NotImported
	}
	tally := report.Count(results)
	res.Counts = tally.Verdicts
	for _, env := range g.suite.BuildOrder(g.suite.UsedEnvironments(shard.Select(g.suite.Pairs))) {
		if env.NetworkRecord == nil {
			continue
		}
		if err := report.WriteBuildNetwork(g.out.path, env.Name, env.NetworkRecord); err != nil {
			g.resumeHint(context.Background(), err)
			return err
		}
	}
	res.Comparison = g.baseline.compare(res)
	if err := report.WriteOutputs(g.out.path, res, swebench.Outputs()); err != nil {
		g.resumeHint(context.Background(), err)
		return err
	}
	m, err := bundle.Seal(g.out.path, g.inputs(backend, shard, results), key, time.Now())
	if err != nil {
		g.resumeHint(context.Background(), err)
		return fmt.Errorf("sealing the evidence bundle: %w", err)
	}
	if err := g.out.lock.Check(); err != nil {
		return err // what was sealed is not where the run wrote
	}
	printTable(g.inv.Stdout, results)
	fmt.Fprintf(g.inv.Stdout, "\nbundle: %s (%s)\n", g.out.path, m.SignatureStatus())
	printComparison(g.inv.Stdout, res.Comparison)
	var missed []string
	for _, r := range tally.Missed {
		missed = append(missed, fmt.Sprintf("%s (expected %s, got %s)", r.ID, r.Expect, r.Verdict))
	}
	if len(missed) > 0 {
		return withCode(exitMismatch, fmt.Errorf("expect not met: %s", strings.Join(missed, ", ")))
	}
	return nil
}

// inputs lists every input of the run for the bundle manifest.
func (g *gradeRun) inputs(backend sandbox.Backend, shard grader.Shard, results []report.PairResult) bundle.Inputs {
	in := bundle.Inputs{Files: map[string]string{}, Tool: g.inv.Version, Images: map[string]string{},
		Options: map[string]string{
			"backend": backend.Name(),
			"shard":   shard.String(),
			"runner":  g.suite.Verifier.Runner,
		}}
	if plan := shard.Plan(); plan != nil {
		in.Options["shard_plan"] = plan.Digest
	}
	for path, sum := range g.suite.Files {
		in.Files["suite/"+path] = sum
	}
	pairs := map[string]*suite.Pair{}
	for _, p := range g.suite.Pairs {
		pairs[p.ID] = p
	}
	for _, r := range results {
		for _, c := range r.Checks {
			if p := pairs[r.ID]; p != nil && c.ImageID != "" {
				in.Images[g.suite.ImageLabel(p)] = c.ImageID
			}
		}
	}
	return in
}

// printTable writes the human-readable table of verdicts.
func printTable(w io.Writer, results []report.PairResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PAIR\tVERDICT\tEXPECT\tREASONS\tTIME")
	for _, r := range results {
		expect := "-"
		if r.ExpectMet != nil {
			expect = "ok"
			if r.MissedExpect() {
				expect = "MISMATCH (" + string(r.Expect) + ")"
			}
		}
		fmt.Fprintf(
			tw,
			"%s\t%s\t%s\t%s\t%s\n",
			r.ID,
			r.Verdict,
			expect,
			reasonCodes(r.Reasons),
			(time.Duration(r.DurationMillis) * time.Millisecond).Round(100*time.Millisecond),
		)
	}
	tw.Flush()
}

func reasonCodes(rs []report.Reason) string {
	codes := report.DistinctCodes(rs)
	if len(codes) == 0 {
		return "-"
	}
	return strings.Join(codes, ",")
}
