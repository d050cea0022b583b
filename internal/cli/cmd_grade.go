package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

const gradeUsage = "grade SUITE [--out DIR] [--concurrency N] [--repo ID=PATH]... [--shard k/n [--durations BUNDLE]] " +
	"[--reruns N] [--resume DIR] [--signing-key FILE] [--baseline BUNDLE [--baseline-key PUB]] [--engine URL]... " +
	"[--trust-local-execution] [--mirror URL [--keyring FILE]] [--image-cache DIR]"

// gradeFlags are the options of `tender grade`, also filled by the Action.
type gradeFlags struct {
	out         string
	concurrency int
	repos       multiFlag
	trustLocal  bool
	shard       string
	durations   string // a bundle whose recorded durations balance the shards
	signingKey  string
	resume      string
	pinned      bool
	reruns      int
	engines     multiFlag
	baseline    baselineFlags
	outSet      bool       // --out was given, not defaulted
	images      imageFlags // how missing verifier images are made
}

func cmdGrade(ctx context.Context, inv *invocation, args []string) error {
	var f gradeFlags
	fs := newFlags(inv, "grade", gradeUsage)
	fs.StringVar(&f.out, "out", "tender-out", "output `directory`: the evidence bundle (must be new or empty)")
	fs.IntVar(&f.concurrency, "concurrency", runtime.NumCPU(), "pairs graded at once (at least 1)")
	fs.Var(&f.repos, "repo", "map a repository `ID=PATH` to a local clone (repeatable)")
	fs.BoolVar(
		&f.trustLocal,
		"trust-local-execution",
		false,
		"run verifiers as local subprocesses: NOT isolated; trusted fixtures only",
	)
	fs.StringVar(&f.shard, "shard", "", "grade only shard `k/n` of the pairs")
	fs.StringVar(&f.durations, "durations", "",
		"with --shard: balance the shards by the pair durations recorded in `BUNDLE`, an earlier grade's bundle")
	fs.StringVar(
		&f.signingKey,
		"signing-key",
		"",
		"ed25519 private key `file` to sign the bundle (or TENDER_SIGNING_KEY)",
	)
	fs.StringVar(&f.resume, "resume", "", "continue an interrupted run in `DIR`, keeping its finished pairs")
	fs.IntVar(
		&f.reruns,
		"reruns",
		0,
		fmt.Sprintf(
			"rerun a check whose required tests failed up to `N` more times (0-%d) to catch flaky tests",
			grader.MaxReruns,
		),
	)
	fs.Var(&f.engines, "engine", engineFlagUsage)
	fs.BoolVar(&f.pinned, "pinned", false, "for --repo clones, require HEAD to equal each pair's base commit")
	f.baseline.register(fs)
	f.images.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("grade takes one SUITE directory; usage: tender %s", gradeUsage)
	}
	fs.Visit(func(fl *flag.Flag) { f.outSet = f.outSet || fl.Name == "out" })
	return gradeSuite(ctx, inv, pos[0], f)
}

func gradeSuite(ctx context.Context, inv *invocation, dir string, f gradeFlags) error {
	if f.concurrency < 1 {
		return usageError("--concurrency %d: give at least 1", f.concurrency)
	}
	if f.reruns < 0 || f.reruns > grader.MaxReruns {
		return usageError("--reruns %d: give 0 to %d (each rerun is a whole verifier run)", f.reruns, grader.MaxReruns)
	}
	if err := f.images.check(); err != nil {
		return err
	}
	shard, err := parseShardFlag(f.shard)
	if err != nil {
		return err
	}
	repos, err := parseRepoFlags(f.repos)
	if err != nil {
		return err
	}
	key, err := signingKey(inv, f.signingKey)
	if err != nil {
		return err
	}
	if f.baseline.dir != "" && f.shard != "" {
		return withCode(exitUsage, errBaselineShard)
	}
	base, err := f.baseline.load()
	if err != nil {
		return err
	}
	s, err := loadSuite(dir, repos)
	if err != nil {
		return err
	}
	if shard, err = balanceShard(inv, f, s, shard); err != nil {
		return err
	}
	out, err := openOut(inv, f, s, shard)
	if err != nil {
		return err
	}
	defer out.Close()
	backend, err := openBackend(ctx, inv, f.trustLocal, engineList(inv, f.engines), s, shard.Select(s.Pairs),
		f.images)
	if err != nil && ctx.Err() != nil {
		return interruptedBeforeGrading(f, out.path)
	}
	if err != nil {
		return err
	}
	defer closeBackend(ctx, inv, backend)
	runID := newRunID()
	g := &gradeRun{inv: inv, suite: s, out: out, start: time.Now(), baseline: base}
	results, err := g.grade(ctx, grader.Options{
		Backend: backend, Concurrency: f.concurrency, RunID: runID, Pinned: f.pinned, Shard: shard,
		Skip: out.skip, LogDir: out.path, Getenv: inv.Getenv, Reruns: f.reruns,
	})
	if err != nil {
		g.resumeHint(ctx, err)
		return err
	}
	return g.finish(results, backend, shard, key)
}

// interruptedBeforeGrading is the one line of a run stopped while the backend was being
// opened: no verifier ran, and nothing was recorded.
func interruptedBeforeGrading(f gradeFlags, dir string) error {
	if f.resume != "" {
		return withCode(exitInterrupted, fmt.Errorf("interrupted before grading began; nothing new was recorded; "+
			"continue with --resume %s", dir))
	}
	return withCode(exitInterrupted, fmt.Errorf("interrupted before grading began; nothing was recorded and %s is "+
		"empty; run the same command again", dir))
}

// balanceShard places the pairs by the durations of --durations, when it is given, and says
// what this shard is estimated to cost against the mean.
func balanceShard(inv *invocation, f gradeFlags, s *suite.Suite, shard grader.Shard) (grader.Shard, error) {
	if f.durations == "" {
		return shard, nil
	}
	if shard.N == 0 {
		return shard, usageError("--durations balances the shards of --shard k/n; give --shard too, " +
			"or drop --durations")
	}
	durations, source, err := report.ReadDurations(f.durations)
	if err != nil {
		return shard, usageError("--durations %s: %v; give the bundle directory of an earlier grade of this suite "+
			"(a merged bundle holds every pair)", f.durations, unwrapResults(err))
	}
	shard = shard.Balance(s, durations, source)
	plan := shard.Plan()
	cost := plan.Cost()
	var sum int64
	for _, c := range cost {
		sum += c
	}
	mean := time.Duration(sum/int64(len(cost))) * time.Millisecond
	fmt.Fprintf(inv.Stderr, "tender: shard %s balanced by the durations in %s: %d of %d pair(s) have one (the others "+
		"are placed by the hash); this shard's estimate %s, the mean %s, the slowest %s\n", shard, f.durations,
		plan.Known(), plan.Pairs, (time.Duration(cost[shard.K-1]) * time.Millisecond).Round(time.Second),
		mean.Round(time.Second), (time.Duration(slices.Max(cost)) * time.Millisecond).Round(time.Second))
	return shard, nil
}

// unwrapResults drops report's "bad results file" prefix: the flag is named already.
func unwrapResults(err error) string {
	return strings.TrimPrefix(err.Error(), report.ErrResults.Error()+": ")
}

func parseShardFlag(s string) (grader.Shard, error) {
	if s == "" {
		return grader.Shard{}, nil
	}
	sh, err := grader.ParseShard(s)
	if err != nil {
		return sh, usageError("--shard: %v", err)
	}
	return sh, nil
}

func parseRepoFlags(flags []string) (map[string]string, error) {
	repos := map[string]string{}
	for _, r := range flags {
		id, path, ok := strings.Cut(r, "=")
		if !ok || id == "" || path == "" {
			return nil, usageError("--repo %q: write it as ID=PATH", r)
		}
		// The repository ID is canonical (OWNER__NAME for an imported suite); SWE-bench's
		// OWNER/NAME is accepted as its spelling of the same ID.
		id = swebench.RepoID(id)
		if _, dup := repos[id]; dup {
			return nil, usageError("--repo %s is given twice", id)
		}
		repos[id] = path
	}
	return repos, nil
}

// loadSuite loads a suite, mapping suite errors to exit code 2.
func loadSuite(dir string, repos map[string]string) (*suite.Suite, error) {
	s, err := suite.Load(dir, suite.LoadOptions{Repos: repos})
	if errors.Is(err, suite.ErrBadSuite) {
		return nil, withCode(exitUsage, err)
	}
	return s, err
}

func signingKey(inv *invocation, file string) (ed25519.PrivateKey, error) {
	switch {
	case file != "":
		k, err := bundle.LoadPrivateKey(file)
		return k, withCode(exitUsage, err)
	case inv.Getenv("TENDER_SIGNING_KEY") != "":
		k, err := bundle.ParsePrivateKey([]byte(inv.Getenv("TENDER_SIGNING_KEY")))
		if err != nil {
			return nil, usageError("TENDER_SIGNING_KEY: %v", err)
		}
		return k, nil
	}
	return nil, nil
}

// openBackend opens the verifier backend: Docker by default, the local one only when trusted.
// With Docker, every image that pairs (the ones this run grades: a shard's) run in is ready, or
// marked failed, on return; another shard's environments are not built.
func openBackend(ctx context.Context, inv *invocation, trustLocal bool, engines []string, s *suite.Suite,
	pairs []*suite.Pair, img imageFlags) (sandbox.Backend, error) {
	if trustLocal && len(engines) > 0 {
		return nil, usageError("--trust-local-execution runs no engine; drop --engine (or TENDER_ENGINES)")
	}
	sweepScratch(inv)
	if len(engines) > 0 {
		return openPool(ctx, inv, engines, s, pairs, img)
	}
	if trustLocal {
		fmt.Fprintln(
			inv.Stderr,
			"tender: --trust-local-execution: verifiers run as local subprocesses. local backend: not isolated",
		)
		if len(s.UsedEnvironments(pairs)) > 0 {
			fmt.Fprintln(
				inv.Stderr,
				"tender: local backend: the environments' images are not used (their python_path and setup are)",
			)
		}
		return sandbox.NewLocal(true)
	}
	d, err := docker.New(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err() // a signal, not the engine
	}
	if err != nil {
		return nil, fmt.Errorf("the Docker engine is needed for the default backend: %w", err)
	}
	if removed, err := d.Sweep(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(inv.Stderr, "tender: sweeping containers of dead runs:", err)
	} else if len(removed) > 0 {
		fmt.Fprintf(inv.Stderr, "tender: removed %d container(s) left by dead runs\n", len(removed))
	}
	d.ImageCache = img.cache
	if needsSuiteImage(pairs) {
		if _, err := ensureVerifierImage(ctx, d, s.Verifier.Image, img, inv.Stderr); err != nil {
			d.Close(context.WithoutCancel(ctx))
			if ctx.Err() != nil {
				return nil, ctx.Err() // a signal, not the image
			}
			return nil, fmt.Errorf("verifier image %s: %w", s.Verifier.Image, err)
		}
	}
	prepareEnvironments(ctx, inv.Stderr, d, s, s.UsedEnvironments(pairs), img.mirrorOptions)
	if err := ctx.Err(); err != nil {
		d.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return d, nil
}

// closeBackend removes what the backend started, even after an interrupt.
func closeBackend(ctx context.Context, inv *invocation, b sandbox.Backend) {
	if err := b.Close(ctx); err != nil {
		fmt.Fprintln(inv.Stderr, "tender: cleaning up the verifiers:", err)
	}
}

func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return strconv.FormatInt(time.Now().Unix(), 36) + "-" + hex.EncodeToString(b)
}
