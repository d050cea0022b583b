package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

const validateUsage = "validate SUITE [--repo ID=PATH]... [--run [--out DIR] [--repeat N] [--concurrency N] [--engine URL]... [--trust-local-execution]]"

func cmdValidate(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "validate", validateUsage)
	var repoFlags multiFlag
	fs.Var(&repoFlags, "repo", "map a repository `ID=PATH` to a local clone (repeatable)")
	runInstances := fs.Bool(
		"run",
		false,
		"also check every instance in verifiers: its tests are collected, fail_to_pass fails on the base, all pass with the reference patch",
	)
	trustLocal := fs.Bool(
		"trust-local-execution",
		false,
		"with --run: run verifiers as local subprocesses (NOT isolated)",
	)
	out := fs.String("out", "", "with --run: a new `DIR` for the logs of every run and validation.json")
	var engines multiFlag
	fs.Var(&engines, "engine", "with --run: "+engineFlagUsage)
	repeat := fs.Int(
		"repeat",
		1,
		"with --run: run the reference patch `N` times and flag instances whose outcome differs",
	)
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "with --run: instances checked at once (at least 1)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("validate takes one SUITE directory; usage: tender %s", validateUsage)
	}
	if *repeat < 1 || *repeat > 100 {
		return usageError("--repeat %d is out of range; give a number of runs from 1 to 100", *repeat)
	}
	if *concurrency < 1 {
		return usageError("--concurrency %d: give at least 1", *concurrency)
	}
	runOnly := false // a flag that means something with --run alone was given
	fs.Visit(func(fl *flag.Flag) {
		runOnly = runOnly || slices.Contains([]string{"out", "repeat", "concurrency", "engine"}, fl.Name)
	})
	if !*runInstances && runOnly {
		return usageError("--out, --repeat, --concurrency and --engine need --run")
	}
	repos, err := parseRepoFlags(repoFlags)
	if err != nil {
		return err
	}
	s, err := loadSuite(pos[0], repos)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "suite %s %s: %d pair(s), %d repositor(ies), %d file(s) digested, digest %s\n",
		s.Name, s.Version, len(s.Pairs), len(s.Repositories), len(s.Files), s.Digest[:16])
	printSuspectIDs(inv, s)
	if !*runInstances {
		return nil
	}
	return validateRun(ctx, inv, s, *trustLocal, engineList(inv, engines), *out, *repeat, *concurrency)
}

// printSuspectIDs names, per pair, the test IDs that look cut at a space: each is resolved
// against the base collection before any check.
func printSuspectIDs(inv *invocation, s *suite.Suite) {
	for _, p := range s.Pairs {
		if ids := p.SuspectIDs(); len(ids) > 0 && s.VerifierFor(p).Runner == suite.RunnerPytest {
			fmt.Fprintf(
				inv.Stdout,
				"%s\n",
				capText(
					fmt.Sprintf(
						"truncated %s: %d test ID(s) look cut at a space and are resolved against the base collection: %q",
						p.ID,
						len(ids),
						ids,
					),
					300,
				),
			)
		}
	}
}

func validateRun(ctx context.Context, inv *invocation, s *suite.Suite, trustLocal bool, engines []string,
	outPath string, repeat, concurrency int) error {
	var out *outDir
	if outPath != "" {
		var err error
		if out, err = newOut(outPath); err != nil {
			return err
		}
		defer out.Close()
	}
	backend, err := openBackend(ctx, inv, trustLocal, engines, s, s.Pairs, imageFlags{})
	if err != nil {
		return err
	}
	defer closeBackend(ctx, inv, backend)
	opts := grader.Options{Backend: backend, Concurrency: concurrency, RunID: newRunID(), Getenv: inv.Getenv}
	if out != nil {
		opts.LogDir = out.path
	}
	start := time.Now()
	prog := &gradeRun{inv: inv, start: start}
	fmt.Fprintf(
		inv.Stderr,
		"tender: validating the instances of %s with the %s backend, %d at a time, the reference patch %d time(s)\n",
		s.Name,
		backend.Name(),
		opts.Concurrency,
		repeat,
	)
	reports, err := grader.ValidateInstances(ctx, s, opts, grader.ValidateOptions{Repeat: repeat,
		Progress: func(done, total int, r grader.InstanceReport) {
			v := report.Verdict(wordSound)
			if !r.OK {
				v = wordBroken
			}
			prog.progress(done, total, report.PairResult{ID: r.ID, Verdict: v, DurationMillis: r.Millis})
		}})
	prog.endProgress()
	if out != nil {
		if werr := writeValidation(out.path, s, start, repeat, reports); werr != nil && err == nil {
			err = werr
		}
	}
	broken := printInstances(inv, reports, out)
	if err != nil {
		return err
	}
	if broken > 0 {
		return withCode(exitFailure, fmt.Errorf("%d of %d instance(s) are broken", broken, len(reports)))
	}
	fmt.Fprintf(inv.Stdout, "all %d instance(s) are %s\n", len(reports), wordSound)
	return nil
}

// The words for an instance, in progress and result lines alike (validation.json keeps "ok").
const (
	wordSound  = "sound"
	wordBroken = "BROKEN"
)

// printInstances prints one short line per instance; a broken one with its first cause.
func printInstances(inv *invocation, reports []grader.InstanceReport, out *outDir) int {
	broken := 0
	for _, r := range reports {
		for _, from := range slices.Sorted(maps.Keys(r.Resolved)) {
			fmt.Fprintf(
				inv.Stdout,
				"%s\n",
				capText(fmt.Sprintf("resolved %s: %q is %q", r.ID, from, r.Resolved[from]), 300),
			)
		}
		for _, from := range slices.Sorted(maps.Keys(r.StandIns)) {
			line := fmt.Sprintf("resolved %s: %q stands for %d tests (ambiguous_ids: all)", r.ID, from,
				len(r.StandIns[from]))
			fmt.Fprintf(inv.Stdout, "%s\n", capText(line, 300))
		}
		if r.OK {
			fmt.Fprintf(inv.Stdout, "%-8s%s\n", wordSound, r.ID)
			continue
		}
		broken++
		more := ""
		if n := len(r.Problems) - 1; n > 0 && out != nil {
			more = fmt.Sprintf(" (and %d more in %s)", n, filepath.Join(out.path, report.ValidationJSON))
		} else if n > 0 {
			more = fmt.Sprintf(" (and %d more; --out DIR keeps them all)", n)
		}
		fmt.Fprintf(inv.Stdout, "%-8s%s: %s%s\n", wordBroken, r.ID, r.Cause(), more)
	}
	return broken
}

// writeValidation writes DIR/validation.json: every instance with all its problems.
func writeValidation(dir string, s *suite.Suite, start time.Time, repeat int, reports []grader.InstanceReport) error {
	doc := map[string]any{"suite": s.Name, "suite_version": s.Version, "suite_digest": s.Digest, "started": start,
		"finished": time.Now(), "repeat": repeat, "instances": reports}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, report.ValidationJSON), append(data, '\n'), 0o644)
}

// capText keeps a line of Tender's output short.
func capText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
