package report

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tender-grader/tender/report/bundle"
)

// ErrShards is the cause of every refusal to merge a set of shards.
var ErrShards = errors.New("the bundles are not one complete set of shards")

// ShardBundle is the bundle of one `grade --shard k/n` job as read once bundle.Verify has
// accepted it: its directory, the manifest Verify returned, and its results.json.
type ShardBundle struct {
	Dir      string
	Manifest *bundle.Manifest
	Results  Results
}

// ShardMerge is a set of shard bundles checked to be one whole run, ready to be written.
type ShardMerge struct {
	shards []shardPart // by K
	// Results is the whole batch: the shards' pairs (WriteOutputs sorts them), counted again,
	// with the earliest start and the latest finish.
	Results Results
}

type shardPart struct {
	ShardBundle
	shard Shard
}

// PlanMerge checks that bundles are every shard of one N exactly once, of one suite graded
// the same way, with each pair once and in the shard it belongs to, and no per-pair file in
// two shards. Every refusal wraps ErrShards.
func PlanMerge(bundles []ShardBundle) (*ShardMerge, error) {
	if len(bundles) == 0 {
		return nil, shardErr("no bundle given")
	}
	var parts []shardPart
	for _, b := range bundles {
		if b.Results.Shard == "" {
			return nil, shardErr("bundle %s was graded without --shard; merge joins the bundles of grade --shard k/n",
				b.Dir)
		}
		s, err := ParseShard(b.Results.Shard)
		if err != nil {
			return nil, shardErr("bundle %s: %v", b.Dir, err)
		}
		parts = append(parts, shardPart{ShardBundle: b, shard: s})
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].shard.K < parts[j].shard.K })
	if err := checkShards(parts); err != nil {
		return nil, err
	}
	if err := checkFiles(parts); err != nil {
		return nil, err
	}
	return &ShardMerge{shards: parts, Results: mergedResults(parts)}, nil
}

// Shards is how many bundles the merge joins.
func (m *ShardMerge) Shards() int { return len(m.shards) }

// checkShards refuses overlapping, missing and foreign shards, and pairs in the wrong shard:
// by the hash, or by the plan the shards were balanced by, computed again.
func checkShards(shards []shardPart) error {
	first := shards[0]
	n := first.shard.N
	seen := map[int]string{}
	for _, s := range shards {
		if err := sameRun(first, s); err != nil {
			return err
		}
		if prev, ok := seen[s.shard.K]; ok {
			return shardErr("shard %s is given twice: %s and %s", s.shard, prev, s.Dir)
		}
		seen[s.shard.K] = s.Dir
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return shardErr("shard(s) %s missing", strings.Join(missing, ", "))
	}
	plan, err := balancedPlan(shards)
	if err != nil {
		return err
	}
	pairs := map[string]string{}
	for i := range shards {
		s := &shards[i]
		s.shard.plan = plan
		for _, p := range s.Results.Pairs {
			if prev, ok := pairs[p.ID]; ok {
				return shardErr("pair %s is in both %s and %s", p.ID, prev, s.Dir)
			}
			pairs[p.ID] = s.Dir
			if !s.shard.Holds(p.ID) {
				return shardErr("bundle %s (shard %s) holds pair %s, which belongs to shard %d/%d",
					s.Dir, s.shard, p.ID, s.shard.Of(p.ID)+1, n)
			}
		}
	}
	return nil
}

// balancedPlan checks that every shard was placed the same way, all by the hash or all by
// one plan (grade --durations), and computes that plan again over the pairs the shards hold:
// a pair lost or added since fails it. It returns nil for the hash.
func balancedPlan(shards []shardPart) (*ShardPlan, error) {
	first := shards[0]
	var ids []string
	for _, s := range shards {
		a, b := first.Results.ShardPlan, s.Results.ShardPlan
		switch {
		case (a == nil) != (b == nil):
			balanced, hashed := first.Dir, s.Dir
			if a == nil {
				balanced, hashed = hashed, balanced
			}
			return nil, shardErr("%s was balanced by --durations but %s was not; grade every shard with the same "+
				"--durations", balanced, hashed)
		case a != nil && a.Digest != b.Digest:
			return nil, shardErr("%s and %s were balanced by different --durations (plans %.12s and %.12s); grade "+
				"every shard with the same --durations", first.Dir, s.Dir, a.Digest, b.Digest)
		}
		for _, p := range s.Results.Pairs {
			ids = append(ids, p.ID)
		}
	}
	if first.Results.ShardPlan == nil {
		return nil, nil
	}
	plan, err := first.Results.ShardPlan.replan(ids, first.shard.N)
	if err != nil {
		return nil, shardErr("the plan the shards were balanced by (--durations) does not hold: %v", err)
	}
	return plan, nil
}

func sameRun(a, b shardPart) error {
	ra, rb := a.Results, b.Results
	switch {
	case a.shard.N != b.shard.N:
		return shardErr("%s is shard %s but %s is shard %s", a.Dir, a.shard, b.Dir, b.shard)
	case ra.Suite != rb.Suite || ra.SuiteVersion != rb.SuiteVersion || ra.SuiteDigest != rb.SuiteDigest:
		return shardErr("%s graded suite %s@%s (%s) but %s graded %s@%s (%s)",
			a.Dir, ra.Suite, ra.SuiteVersion, ra.SuiteDigest, b.Dir, rb.Suite, rb.SuiteVersion, rb.SuiteDigest)
	case ra.Backend != rb.Backend || ra.Tool != rb.Tool || ra.Schema != rb.Schema:
		return shardErr("%s and %s were graded differently (%s/%s/%s vs %s/%s/%s)",
			a.Dir, b.Dir, ra.Tool, ra.Backend, ra.Schema, rb.Tool, rb.Backend, rb.Schema)
	}
	return nil
}

// checkFiles refuses a file that two shards would both copy into the merged bundle, unless it
// describes the environments (sharedFile) and both hold the same bytes.
func checkFiles(shards []shardPart) error {
	owner := map[string]string{}
	sum := map[string]string{}
	for _, s := range shards {
		for _, f := range s.Manifest.Files {
			if mergedAggregate(f.Name) {
				continue
			}
			prev, ok := owner[f.Name]
			switch {
			case ok && sharedFile(f.Name) && sum[f.Name] != f.SHA256:
				return shardErr("%s and %s hold different %s: their environment's image was built twice, "+
					"differently; grade every shard with the same images", prev, s.Dir, f.Name)
			case ok && !sharedFile(f.Name):
				return shardErr("%s and %s both hold %s", prev, s.Dir, f.Name)
			}
			owner[f.Name], sum[f.Name] = s.Dir, f.SHA256
		}
	}
	return nil
}

// mergedAggregate reports whether a shard's file is rewritten for the merged whole rather
// than copied from its shard.
func mergedAggregate(name string) bool {
	return name == bundle.EnvelopeName || slices.Contains(Aggregates(), name)
}

func mergedResults(shards []shardPart) Results {
	res := shards[0].Results
	res.Shard, res.ShardPlan, res.Pairs = "", nil, nil
	for _, s := range shards {
		res.Pairs = append(res.Pairs, s.Results.Pairs...)
		if s.Results.Started.Before(res.Started) {
			res.Started = s.Results.Started
		}
		if s.Results.Finished.After(res.Finished) {
			res.Finished = s.Results.Finished
		}
	}
	res.Counts = Count(res.Pairs).Verdicts
	return res
}

func shardErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrShards, fmt.Sprintf(format, a...))
}
