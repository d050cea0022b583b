package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tender-grader/tender/report"
)

// InstanceReport says whether one pair is a sound instance: its fail_to_pass tests fail on the
// base commit with the test patch, its pass_to_pass tests pass there, and all pass with the
// reference patch.
type InstanceReport struct {
	ID       string
	OK       bool
	Problems []string
}

// ValidateInstances checks the suite's own instances in verifiers, as SWE-bench validates its
// datasets. Pairs that differ only in their candidate patch are one instance and are checked
// once. Pairs without a reference patch are reported as such.
func ValidateInstances(ctx context.Context, s *Suite, opts Options) ([]InstanceReport, error) {
	if opts.Concurrency <= 0 {
		return nil, fmt.Errorf("concurrency must be at least 1, got %d", opts.Concurrency)
	}
	pairs := opts.Shard.Select(s.Pairs)
	repos, err := openRepos(ctx, s, pairs, opts.WorkDir)
	if err != nil {
		return nil, err
	}
	defer repos.close()
	first := map[string]*Pair{} // instance key -> the pair checked for it
	problems := map[string][]string{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, p := range pairs {
		key := instanceKey(p)
		if _, seen := first[key]; seen {
			continue
		}
		first[key] = p
		g.Go(func() error {
			probs := validatePair(gctx, s, p, repos, opts)
			if gctx.Err() != nil {
				return gctx.Err() // cut short: what failed says nothing about the instance
			}
			mu.Lock()
			problems[key] = probs
			mu.Unlock()
			return gctx.Err()
		})
	}
	err = g.Wait()
	out := make([]InstanceReport, 0, len(pairs))
	for _, p := range pairs {
		probs, done := problems[instanceKey(p)]
		if !done {
			continue
		}
		out = append(out, InstanceReport{ID: p.ID, OK: len(probs) == 0, Problems: probs})
	}
	return out, err
}

// instanceKey is everything that defines an instance, apart from the candidate's patch.
func instanceKey(p *Pair) string {
	doc, _ := json.Marshal([]any{p.Repository, p.BaseCommit, p.Digests.TestPatch, p.Digests.Assets,
		sha(p.ReferencePatch), p.FailToPass, p.PassToPass})
	return sha(doc)
}

func validatePair(ctx context.Context, s *Suite, p *Pair, repos *repoSet, opts Options) []string {
	problems := validateBase(ctx, s, p, repos, opts)
	if len(p.ReferencePatch) == 0 {
		return append(problems, "no reference_patch: the fixed side was not checked")
	}
	return append(problems, validateReference(ctx, s, p, repos, opts)...)
}

// validateBase runs the base commit plus the test patch: fail_to_pass must fail, pass_to_pass
// must pass.
func validateBase(ctx context.Context, s *Suite, p *Pair, repos *repoSet, opts Options) []string {
	pl := &pipeline{suite: s, pair: p, repo: repos.get(p.Repository), opts: opts}
	defer pl.cleanup()
	var r report.PairResult
	if err := pl.prepareRepo(ctx, &r); err != nil {
		return []string{"base: " + err.Error()}
	}
	if err := pl.prepareTestPatch(); err != nil {
		return []string{"base: " + err.Error()}
	}
	var problems []string
	for _, c := range []struct {
		name     string
		ids      []string
		wantPass bool
	}{{"target", p.FailToPass, false}, {"regression", p.PassToPass, true}} {
		if len(c.ids) == 0 {
			continue
		}
		chk, err := pl.check(ctx, "base-"+c.name, c.ids)
		if err != nil {
			problems = append(problems, fmt.Sprintf("base %s: %v", c.name, err))
			continue
		}
		for _, id := range c.ids {
			if passed := chk.Tests[id] == report.TestPassed; passed != c.wantPass {
				problems = append(problems, fmt.Sprintf("on the base commit %s is %s; a %s test must %s there",
					id, chk.Tests[id], listName(c.wantPass), want(c.wantPass)))
			}
		}
	}
	return problems
}

// validateReference grades the reference patch as if it were the candidate: it must resolve.
func validateReference(ctx context.Context, s *Suite, p *Pair, repos *repoSet, opts Options) []string {
	ref := *p
	ref.Patch, ref.PatchOversize = p.ReferencePatch, false
	pl := &pipeline{suite: s, pair: &ref, repo: repos.get(p.Repository), opts: opts}
	r := pl.run(ctx, time.Now())
	if r.Verdict == report.Resolved {
		return nil
	}
	return []string{fmt.Sprintf("with the reference patch the verdict is %s (%s), not resolved", r.Verdict, reasonList(r.Reasons))}
}

func listName(pass bool) string {
	if pass {
		return "pass_to_pass"
	}
	return "fail_to_pass"
}

func want(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func reasonList(rs []report.Reason) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "; "
		}
		s += string(r.Code)
		if r.Detail != "" {
			s += ": " + r.Detail
		}
	}
	return s
}
