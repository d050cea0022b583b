package grader

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/tender-grader/tender/grader/suite"
)

// Shard selects a deterministic part of a suite's pairs: pair p belongs to shard
// ShardOf(p.ID, N) + 1. A pair's shard depends on its id alone, so adding pairs never moves
// the others. The zero Shard selects every pair.
type Shard struct {
	K, N int // 1-based K of N
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

func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// ShardOf is the 0-based shard of a pair id among n.
func ShardOf(pairID string, n int) int {
	sum := sha256.Sum256([]byte(pairID))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}

// Select returns the pairs of this shard, in suite order.
func (s Shard) Select(pairs []*suite.Pair) []*suite.Pair {
	if s.N == 0 {
		return pairs
	}
	var out []*suite.Pair
	for _, p := range pairs {
		if ShardOf(p.ID, s.N) == s.K-1 {
			out = append(out, p)
		}
	}
	return out
}
