package report

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Shard is part K of N of a batch, as `grade --shard k/n` grades it and Results.Shard
// records it. By default pair p belongs to shard ShardOf(p, N) + 1: a pair's shard depends on
// its id alone, so adding pairs never moves the others. A Shard balanced by cost (Balance)
// places pairs by their recorded durations instead. The zero Shard is the whole batch.
type Shard struct {
	K, N int // 1-based K of N

	plan *ShardPlan // nil: by the hash of the pair id
}

// ParseShard parses "k/n".
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n || n > 1000 {
		return Shard{}, fmt.Errorf("shard %q is not k/n with 1 <= k <= n <= 1000", s)
	}
	return Shard{K: k, N: n}, nil
}

// String is "k/n", or "" for the whole batch.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Holds reports whether the pair belongs to this shard; the zero Shard holds every pair.
func (s Shard) Holds(pairID string) bool {
	return s.N == 0 || s.Of(pairID) == s.K-1
}

// Of is the 0-based shard, among N, that a pair belongs to: by the plan when the shard is
// balanced, else by the hash.
func (s Shard) Of(pairID string) int {
	if k, ok := s.plan.shardOf(pairID); ok {
		return k
	}
	return ShardOf(pairID, s.N)
}

// Plan is the record of how the pairs were balanced, or nil for the hash.
func (s Shard) Plan() *ShardPlan { return s.plan }

// ShardOf is the 0-based shard of a pair id among n.
func ShardOf(pairID string, n int) int {
	sum := sha256.Sum256([]byte(pairID))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}
