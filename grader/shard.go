package grader

import (
	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/report"
)

// Shard selects a deterministic part of a suite's pairs. The partition is report.Shard's,
// the one `tender merge` checks each shard's bundle against; the zero Shard selects every
// pair.
type Shard report.Shard

// ParseShard parses "k/n".
func ParseShard(s string) (Shard, error) {
	sh, err := report.ParseShard(s)
	return Shard(sh), err
}

func (s Shard) String() string { return report.Shard(s).String() }

// Balance places the suite's pairs over the shards by their recorded durations (pair id ->
// ms; report.ShardPlan has the rule); source is the digest of the file they came from.
func (s Shard) Balance(st *suite.Suite, durations map[string]int64, source string) Shard {
	ids := make([]string, len(st.Pairs))
	for i, p := range st.Pairs {
		ids[i] = p.ID
	}
	return Shard(report.Shard(s).Balance(ids, durations, source))
}

// Plan is how the pairs were balanced, or nil when they are placed by the hash.
func (s Shard) Plan() *report.ShardPlan { return report.Shard(s).Plan() }

// ShardOf is the 0-based shard of a pair id among n (report.ShardOf).
func ShardOf(pairID string, n int) int { return report.ShardOf(pairID, n) }

// Select returns the pairs of this shard, in suite order.
func (s Shard) Select(pairs []*suite.Pair) []*suite.Pair {
	if s.N == 0 {
		return pairs
	}
	var out []*suite.Pair
	for _, p := range pairs {
		if report.Shard(s).Holds(p.ID) {
			out = append(out, p)
		}
	}
	return out
}
