package grader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tender-grader/tender/gitsafe"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/sandbox"
)

// Options configure one grading run. None of them come from the suite or a candidate.
type Options struct {
	Backend     sandbox.Backend
	Concurrency int                          // > 0
	RunID       string                       // labels every verifier of the run
	Pinned      bool                         // clone sources: HEAD must equal the base commit
	Shard       Shard                        // zero value: every pair
	Skip        map[string]report.PairResult // finished pairs to keep (from --resume), by id
	WorkDir     string                       // parent of private snapshots and workspaces; os.TempDir() when ""
	LogDir      string                       // where per-check logs and JUnit files go (bundle-relative names are recorded)
	Now         func() time.Time
	Getenv      func(string) string // host environment, read only for the suite's pass_env names
	// Reruns is how many more times a check whose required tests failed is run, each in a
	// fresh verifier, to tell a flaky test from a failing one (0 to MaxReruns). A rerun never
	// improves a fail_to_pass verdict.
	Reruns int
	// Rerunning, when set, is told before each rerun of a check (what is "rerun" or "base":
	// a run on the base commit under flaky: excluded), so that the operator sees the work.
	Rerunning func(pair, check, what string, n, of int)
	// Sink receives each pair's result as soon as the pair ends; it must be safe to call from
	// several goroutines. Progress is called after Sink with the count of pairs done.
	Sink     func(report.PairResult) error
	Progress func(done, total int, r report.PairResult)
}

// MaxReruns caps Options.Reruns: each rerun is a whole verifier run.
const MaxReruns = 10

// ErrNoPairs means the shard or the filters left nothing to grade.
var ErrNoPairs = errors.New("no pairs to grade")

// Grade runs every selected pair and returns their results in suite order. A pair's failure
// is recorded as its verdict; the returned error is only for the batch itself (a sink that
// cannot write, a cancelled context).
func Grade(ctx context.Context, s *suite.Suite, opts Options) ([]report.PairResult, error) {
	if opts.Concurrency <= 0 {
		return nil, fmt.Errorf("concurrency must be at least 1, got %d", opts.Concurrency)
	}
	if opts.Reruns < 0 || opts.Reruns > MaxReruns {
		return nil, fmt.Errorf("reruns must be 0 to %d, got %d", MaxReruns, opts.Reruns)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	pairs := opts.Shard.Select(s.Pairs)
	if len(pairs) == 0 {
		return nil, ErrNoPairs
	}
	repos, err := openRepos(ctx, s, pairs, opts.WorkDir)
	if err != nil {
		return nil, err
	}
	defer repos.close()

	results := make([]report.PairResult, len(pairs))
	rec := &recorder{sink: opts.Sink, progress: opts.Progress, total: len(pairs)}
	bctx, stopBatch := context.WithCancel(ctx)
	defer stopBatch()
	g, gctx := errgroup.WithContext(bctx)
	g.SetLimit(opts.Concurrency)
	for i, p := range pairs {
		if prev, ok := opts.Skip[p.ID]; ok && prev.InputDigest == p.InputDigest {
			results[i] = prev
			rec.skipped()
			continue
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			r := gradeSafely(gctx, s, p, repos, opts)
			if gctx.Err() != nil {
				// Interrupted: the pair may have been cut short (a killed verifier looks like a
				// failed one), so it is not recorded, and --resume grades it again.
				return gctx.Err()
			}
			results[i] = r
			// Recording waits for the disk; the pair's slot goes to the next pair meanwhile.
			rec.wg.Go(func() { rec.record(r, stopBatch) })
			return nil
		})
	}
	err = g.Wait()
	rec.wg.Wait()
	if err := rec.err(); err != nil {
		return results, err // the batch stopped because its results could not be recorded
	}
	if err != nil {
		return results, err
	}
	return results, ctx.Err()
}

// recorder hands each finished pair to the sink, then to progress. A sink that fails stops
// the batch: a pair that cannot be recorded is not worth grading.
type recorder struct {
	sink     func(report.PairResult) error
	progress func(done, total int, r report.PairResult)
	total    int
	wg       sync.WaitGroup

	mu      sync.Mutex
	done    int
	sinkErr error // the first; the pairs after it fail the same way
}

func (rc *recorder) skipped() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.done++
}

// record sinks r and counts it, one pair at a time: the progress calls come in the order the
// results were recorded.
func (rc *recorder) record(r report.PairResult, stopBatch context.CancelFunc) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.sink != nil {
		if err := rc.sink(r); err != nil {
			if rc.sinkErr == nil {
				rc.sinkErr = err
			}
			stopBatch()
			return
		}
	}
	rc.done++
	if rc.progress != nil {
		rc.progress(rc.done, rc.total, r)
	}
}

func (rc *recorder) err() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.sinkErr
}

// gradeSafely turns a panic in one pair into that pair's error verdict.
func gradeSafely(ctx context.Context, s *suite.Suite, p *suite.Pair, repos *repoSet,
	opts Options) (r report.PairResult) {
	start := opts.Now()
	defer func() {
		if v := recover(); v != nil {
			r = newResult(p, start)
			r.Reasons = []report.Reason{{Code: report.CodeInternalPanic, Detail: panicNote(opts.LogDir, p.ID, v)}}
			r.Verdict = reasonsVerdict(r.Reasons)
		}
		r.DurationMillis = opts.Now().Sub(start).Milliseconds()
		r.ExpectMet = expectMet(p.Expect, r.Verdict)
	}()
	ctx, cancel := context.WithTimeout(ctx, pairDeadline(s, opts.Reruns))
	defer cancel()
	pl := &pipeline{suite: s, pair: p, repo: repos.get(p.Repository), opts: opts}
	return pl.run(ctx, start)
}

// pairDeadline bounds a whole pair: two checks, each with its timeout plus room to set up,
// and each run up to 2*reruns more times (reruns, then the base-commit runs of flaky: excluded).
func pairDeadline(s *suite.Suite, reruns int) time.Duration {
	return time.Duration(2*(1+2*reruns))*(s.Verifier.Timeout+90*time.Second) + time.Minute
}

func expectMet(want, got report.Verdict) *bool {
	if want == "" {
		return nil
	}
	ok := want == got
	return &ok
}

func newResult(p *suite.Pair, start time.Time) report.PairResult {
	return report.PairResult{
		Schema: report.SchemaVersion, ID: p.ID, Repository: p.Repository, Expect: p.Expect,
		RequestedCommit: p.BaseCommit, Digests: p.Digests, FailToPass: p.FailToPass, PassToPass: p.PassToPass,
		Started: start, InputDigest: p.InputDigest, Line: p.Line,
		SuiteFile: suite.SuiteFile, PatchFile: p.PatchPath,
	}
}

// repoSet holds one private snapshot per repository ID, shared by that repository's pairs.
type repoSet struct {
	repos    map[string]*gitsafe.Repo
	errs     map[string]error
	verified map[string]*verifiedCommits
}

func openRepos(ctx context.Context, s *suite.Suite, pairs []*suite.Pair, workDir string) (*repoSet, error) {
	set := &repoSet{
		repos:    map[string]*gitsafe.Repo{},
		errs:     map[string]error{},
		verified: map[string]*verifiedCommits{},
	}
	for _, p := range pairs {
		id := p.Repository
		if _, ok := set.repos[id]; ok {
			continue
		}
		if _, ok := set.errs[id]; ok {
			continue
		}
		repo, err := gitsafe.Snapshot(ctx, sourceOf(s, id), workDir)
		if err != nil {
			if ctx.Err() != nil {
				set.close()
				return nil, ctx.Err()
			}
			set.errs[id] = err
			continue
		}
		repo.SetSymlinks(s.Repositories[id].Symlinks)
		set.repos[id] = repo
		set.verified[id] = &verifiedCommits{}
	}
	return set, nil
}

func (rs *repoSet) get(id string) repoHandle {
	return repoHandle{repo: rs.repos[id], err: rs.errs[id], verified: rs.verified[id]}
}

func (rs *repoSet) close() {
	for _, r := range rs.repos {
		r.Close()
	}
}

type repoHandle struct {
	repo     *gitsafe.Repo
	err      error // why the snapshot was refused
	verified *verifiedCommits
}

// sourceOf maps a repository ID to a gitsafe source, resolving suite-relative paths.
func sourceOf(s *suite.Suite, id string) gitsafe.Source {
	src := s.Repositories[id]
	inSuite := func(rel string) string { return s.Dir + string(os.PathSeparator) + rel }
	switch {
	case src.Clone != "":
		return gitsafe.Source{Kind: gitsafe.SourceClone, Path: src.Clone}
	case src.Bundle != "":
		return gitsafe.Source{Kind: gitsafe.SourceBundle, Path: inSuite(src.Bundle)}
	default:
		return gitsafe.Source{Kind: gitsafe.SourceFastExport, Path: inSuite(src.FastExport)}
	}
}

// panicNote keeps the panic's value and stack in the pair's operator log (a value may hold
// the candidate's text) and returns what the result says.
func panicNote(logDir, id string, v any) string {
	if logDir != "" {
		dir := filepath.Join(logDir, filepath.FromSlash(report.PairDir(id)))
		if os.MkdirAll(dir, 0o755) == nil &&
			os.WriteFile(filepath.Join(dir, "panic.log"), fmt.Appendf(nil, "%v\n%s", v, debug.Stack()), 0o644) == nil {
			return "Tender failed on this pair (a bug); the stack is in " + report.PairDir(id) + "/panic.log"
		}
	}
	return "Tender failed on this pair (a bug)"
}
