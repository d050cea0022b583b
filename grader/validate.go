package grader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// InstanceReport says whether one pair is a sound instance: its tests are collected on the
// base commit with the test patch, its fail_to_pass tests fail there, its pass_to_pass tests
// pass there, and all pass with the reference patch (every time, with Repeat).
type InstanceReport struct {
	ID       string            `json:"id"`
	OK       bool              `json:"ok"`
	Problems []string          `json:"problems,omitempty"`
	Resolved map[string]string `json:"resolved_test_ids,omitempty"` // truncated ID -> the test it names
	// StandIns: truncated ID -> every test it names, all required (ambiguous_ids: all).
	StandIns map[string][]string `json:"stand_in_test_ids,omitempty"`
	Unstable bool                `json:"unstable,omitempty"`       // the reference patch's outcome changed between runs
	Runs     []string            `json:"reference_runs,omitempty"` // each run's verdict with the reference patch
	Millis   int64               `json:"duration_ms"`
}

// Cause is the instance's first problem in one short line.
func (r InstanceReport) Cause() string {
	if len(r.Problems) == 0 {
		return ""
	}
	return capLine(r.Problems[0])
}

// ValidateOptions are validation's own settings.
type ValidateOptions struct {
	// Repeat runs the reference patch this many times (at least 1) and flags an instance
	// whose outcome differs between runs.
	Repeat int
	// Progress is called as each instance is done, with the count done.
	Progress func(done, total int, r InstanceReport)
}

// ValidateInstances checks the suite's own instances in verifiers, as SWE-bench validates its
// datasets. Pairs that differ only in their candidate patch are one instance and are checked
// once. Pairs without a reference patch are reported as such.
func ValidateInstances(ctx context.Context, s *suite.Suite, opts Options,
	vo ValidateOptions) ([]InstanceReport, error) {
	if opts.Concurrency <= 0 {
		return nil, fmt.Errorf("concurrency must be at least 1, got %d", opts.Concurrency)
	}
	vo.Repeat = max(vo.Repeat, 1)
	pairs := opts.Shard.Select(s.Pairs)
	repos, err := openRepos(ctx, s, pairs, opts.WorkDir)
	if err != nil {
		return nil, err
	}
	defer repos.close()
	first := map[string]*suite.Pair{} // instance key -> the pair checked for it
	for _, p := range pairs {
		if _, seen := first[instanceKey(p)]; !seen {
			first[instanceKey(p)] = p
		}
	}
	done := map[string]InstanceReport{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, p := range pairs {
		key := instanceKey(p)
		if first[key] != p {
			continue
		}
		g.Go(func() error {
			start := time.Now()
			r := validatePair(gctx, s, p, repos, opts, vo.Repeat)
			if gctx.Err() != nil {
				return gctx.Err() // cut short: what failed says nothing about the instance
			}
			r.Millis = time.Since(start).Milliseconds()
			mu.Lock()
			defer mu.Unlock()
			done[key] = r
			if vo.Progress != nil {
				vo.Progress(len(done), len(first), r)
			}
			return nil
		})
	}
	err = g.Wait()
	out := make([]InstanceReport, 0, len(pairs))
	for _, p := range pairs {
		r, ok := done[instanceKey(p)]
		if !ok {
			continue
		}
		r.ID = p.ID
		out = append(out, r)
	}
	return out, err
}

// instanceKey is everything that defines an instance, apart from the candidate's patch.
func instanceKey(p *suite.Pair) string {
	doc, _ := json.Marshal([]any{p.Repository, p.BaseCommit, p.Digests.TestPatch, p.Digests.Assets,
		sha(p.ReferencePatch), p.FailToPass, p.PassToPass, p.Environment})
	return sha(doc)
}

func validatePair(ctx context.Context, s *suite.Suite, p *suite.Pair, repos *repoSet, opts Options,
	repeat int) InstanceReport {
	r := InstanceReport{ID: p.ID}
	pl := &pipeline{suite: s, pair: p, repo: repos.get(p.Repository), opts: opts}
	defer pl.cleanup()
	var pr report.PairResult
	if err := pl.prepareRepo(ctx, &pr); err != nil {
		return r.fail("base: " + err.Error())
	}
	if err := pl.prepareTestPatch(); err != nil {
		return r.fail("base: " + err.Error())
	}
	if s.VerifierFor(p).Runner == suite.RunnerPytest {
		if !validateCollection(ctx, pl, &r) {
			return r
		}
	}
	r.Problems = append(r.Problems, validateBase(ctx, pl)...)
	if len(p.ReferencePatch) == 0 {
		return r.fail("no reference_patch: the fixed side was not checked")
	}
	validateReference(ctx, pl, repos, opts, repeat, &r)
	r.OK = len(r.Problems) == 0
	return r
}

// verdictText is an error that ends a pair as a problem's words: its first reason's code and
// detail (the path and the fix, where the code alone would say only unsafe_tree).
func verdictText(err error) string {
	var ve *verdictError
	if errors.As(err, &ve) {
		return fmt.Sprintf("%s: %s", ve.reasons[0].Code, ve.reasons[0].Detail)
	}
	return err.Error()
}

func (r InstanceReport) fail(problem string) InstanceReport {
	r.Problems = append(r.Problems, problem)
	r.OK = false
	return r
}

// validateCollection checks the baseline: the tests are collected, every truncated ID names
// one test, and every required ID is among the collected tests. It resolves the pair's IDs
// for the checks that follow, and says false when they cannot run to any purpose.
func validateCollection(ctx context.Context, pl *pipeline, r *InstanceReport) bool {
	b, err := pl.baseline(ctx)
	if err != nil {
		*r = r.fail("baseline collection: " + verdictText(err))
		return false
	}
	if b.broken() {
		*r = r.fail(fmt.Sprintf("%s: %s", report.CodeEnvironmentBroken, b.cause(pl)))
		return false
	}
	var pr report.PairResult
	if err := pl.resolveTestIDs(ctx, &pr); err != nil {
		*r = r.fail(verdictText(err))
		return false
	}
	r.Resolved, r.StandIns = pr.ResolvedTestIDs, pr.StandInTestIDs
	for _, f := range b.Absent {
		r.Problems = append(
			r.Problems,
			fmt.Sprintf("%s is named by a required test but is not in the base commit with the test patch", f),
		)
	}
	var uncollected []string
	for _, id := range slices.Concat(pl.pair.FailToPass, pl.pair.PassToPass) {
		if !slices.Contains(b.Collected, id) {
			uncollected = append(uncollected, id)
		}
	}
	if len(uncollected) > 0 {
		r.Problems = append(
			r.Problems,
			fmt.Sprintf(
				"%d required test(s) are not collected on the base commit with the test patch: %s",
				len(uncollected),
				listSome(uncollected, 3),
			),
		)
	}
	return true
}

// validateBase runs the base commit plus the test patch, in one verifier for both lists:
// fail_to_pass must fail, pass_to_pass must pass. No forgery sentinels are planted there: they
// guard a report against a candidate's code, and no candidate's code runs on the base; without
// them each required test runs once, not up to eight times.
func validateBase(ctx context.Context, pl *pipeline) []string {
	p := pl.pair
	var ids []string
	for _, id := range slices.Concat(p.FailToPass, p.PassToPass) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	pl.plain = true
	defer func() { pl.plain = false }()
	chk, err := pl.check(ctx, "base", ids)
	if err != nil {
		return []string{fmt.Sprintf("base: %v", err)}
	}
	var problems []string
	for _, c := range []struct {
		ids      []string
		wantPass bool
	}{{p.FailToPass, false}, {p.PassToPass, true}} {
		var wrong []string
		for _, id := range c.ids {
			if passed := chk.Tests[id] == report.TestPassed; passed != c.wantPass {
				wrong = append(wrong, id)
			}
		}
		hint := ""
		if c.wantPass {
			hint = mismatchHint(missingIn(chk.failures, wrong), chk.python, len(p.Assets) == 0)
		}
		if hint != "" {
			hint += "; " // first, so that the instance's one line shows it
		}
		switch {
		case len(wrong) == 1:
			problems = append(problems, fmt.Sprintf("%son the base commit %s is %s; a %s test must %s there",
				hint, wrong[0], chk.Tests[wrong[0]], listName(c.wantPass), want(c.wantPass)))
		case len(wrong) > 1:
			problems = append(problems, fmt.Sprintf("%son the base commit %d %s tests do not %s (%s)",
				hint, len(wrong), listName(c.wantPass), want(c.wantPass), statusList(wrong, chk.Tests)))
		}
	}
	return problems
}

// validateReference grades the reference patch as if it were the candidate, repeat times: it
// must resolve every time. Outcomes that differ between runs make the instance unstable. Each
// run is a pipeline of its own, as a grade's is, but the instance's (inst) materialized base
// serves them all, as its baseline collection does.
func validateReference(ctx context.Context, inst *pipeline, repos *repoSet, opts Options, repeat int,
	r *InstanceReport) {
	s, p := inst.suite, inst.pair
	outcomes := map[string]map[report.TestStatus]int{} // test -> status -> runs
	var failed []string
	for i := range repeat {
		ref := *p
		ref.Patch, ref.PatchOversize = p.ReferencePatch, false
		if i > 0 {
			ref.ID = fmt.Sprintf("%s.run%d", p.ID, i+1) // its own logs
		}
		pl := &pipeline{suite: s, pair: &ref, repo: repos.get(p.Repository), opts: opts, baseFrom: inst}
		res := pl.run(ctx, time.Now())
		r.Runs = append(r.Runs, string(res.Verdict))
		for _, c := range res.Checks {
			for id, st := range c.Tests {
				if outcomes[id] == nil {
					outcomes[id] = map[report.TestStatus]int{}
				}
				outcomes[id][st]++
			}
		}
		if res.Verdict != report.Resolved && len(failed) == 0 {
			failed = append(
				failed,
				fmt.Sprintf(
					"with the reference patch the verdict is %s (%s), not resolved",
					res.Verdict,
					reasonList(res.Reasons, 2),
				),
			)
		}
	}
	var differ []string
	for _, id := range slices.Sorted(maps.Keys(outcomes)) {
		if len(outcomes[id]) > 1 {
			differ = append(differ, id+" "+countList(outcomes[id]))
		}
	}
	if runsDiffer(r.Runs) || len(differ) > 0 {
		r.Unstable = true
		r.Problems = append(
			r.Problems,
			fmt.Sprintf("unstable: %d runs with the reference patch gave %s; tests that changed: %s",
				repeat, strings.Join(r.Runs, ", "), listSome(differ, 3)),
		)
	}
	r.Problems = append(r.Problems, failed...)
}

func runsDiffer(runs []string) bool {
	for _, v := range runs {
		if v != runs[0] {
			return true
		}
	}
	return false
}

func countList(m map[report.TestStatus]int) string {
	var parts []string
	for st, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", st, n))
	}
	sort.Strings(parts)
	return "(" + strings.Join(parts, ", ") + ")"
}

func statusList(ids []string, tests map[string]report.TestStatus) string {
	items := make([]string, len(ids))
	for i, id := range ids {
		items[i] = id + ": " + string(tests[id])
	}
	return listSome(items, 3)
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

// reasonList names the first n reasons and counts the rest.
func reasonList(rs []report.Reason, n int) string {
	first := make([]string, 0, min(n, len(rs)))
	for _, r := range rs[:min(n, len(rs))] {
		line := string(r.Code)
		if r.Detail != "" {
			line += ": " + capLine(r.Detail)
		}
		first = append(first, line)
	}
	return joinSome(first, len(rs), "; ")
}
