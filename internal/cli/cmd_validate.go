package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/tender-grader/tender/grader"
)

const validateUsage = "validate SUITE [--repo ID=PATH]... [--run [--trust-local-execution]]"

func cmdValidate(ctx context.Context, inv *invocation, args []string) error {
	fs := newFlags(inv, "validate", validateUsage)
	var repoFlags multiFlag
	fs.Var(&repoFlags, "repo", "map a repository `ID=PATH` to a local clone (repeatable)")
	runInstances := fs.Bool("run", false, "also check every instance in verifiers: fail_to_pass fails on the base, all pass with the reference patch")
	trustLocal := fs.Bool("trust-local-execution", false, "with --run: run verifiers as local subprocesses (NOT isolated)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("validate takes one SUITE directory; usage: tender %s", validateUsage)
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
	if !*runInstances {
		return nil
	}
	backend, err := openBackend(ctx, inv, *trustLocal, s)
	if err != nil {
		return err
	}
	defer closeBackend(ctx, inv, backend)
	reports, err := grader.ValidateInstances(ctx, s, grader.Options{Backend: backend, Concurrency: runtime.NumCPU(), RunID: newRunID(), Getenv: inv.Getenv})
	broken := 0
	for _, r := range reports {
		if r.OK {
			fmt.Fprintf(inv.Stdout, "ok      %s\n", r.ID)
			continue
		}
		broken++
		for _, p := range r.Problems {
			fmt.Fprintf(inv.Stdout, "BROKEN  %s: %s\n", r.ID, p)
		}
	}
	if err != nil {
		return err
	}
	if broken > 0 {
		return withCode(exitFailure, fmt.Errorf("%d of %d instance(s) are broken", broken, len(reports)))
	}
	fmt.Fprintf(inv.Stdout, "all %d instance(s) are sound\n", len(reports))
	return nil
}
