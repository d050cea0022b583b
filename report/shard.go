package report

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Shard is part K of N of a batch, as `grade --shard k/n` grades it and Results.Shard
// records it: pair p belongs to shard ShardOf(p, N) + 1. A pair's shard depends on its id
// alone, so adding pairs never moves the others. The zero Shard is the whole batch.
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

// String is "k/n", or "" for the whole batch.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Holds reports whether the pair belongs to this shard; the zero Shard holds every pair.
func (s Shard) Holds(pairID string) bool {
	return s.N == 0 || ShardOf(pairID, s.N) == s.K-1
}

// ShardOf is the 0-based shard of a pair id among n.
func ShardOf(pairID string, n int) int {
	sum := sha256.Sum256([]byte(pairID))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}
