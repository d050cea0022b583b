package grader

import (
	"fmt"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
)

// TestShardsPartitionAndAreStable: every pair is in exactly one shard, and adding pairs never
// moves an existing one.
func TestShardsPartitionAndAreStable(t *testing.T) {
	var pairs []*suite.Pair
	for i := range 200 {
		pairs = append(pairs, &suite.Pair{ID: fmt.Sprintf("pair-%d", i)})
	}
	const n = 3
	where := map[string]int{}
	for k := 1; k <= n; k++ {
		sel := Shard{K: k, N: n}.Select(pairs)
		if len(sel) < 40 {
			t.Errorf("shard %d/%d has only %d of 200 pairs", k, n, len(sel))
		}
		for _, p := range sel {
			if prev, dup := where[p.ID]; dup {
				t.Fatalf("%s is in shards %d and %d", p.ID, prev, k)
			}
			where[p.ID] = k
		}
	}
	if len(where) != len(pairs) {
		t.Fatalf("%d of %d pairs are in a shard", len(where), len(pairs))
	}
	more := append(pairs, &suite.Pair{ID: "new-1"}, &suite.Pair{ID: "new-2"})
	for k := 1; k <= n; k++ {
		for _, p := range (Shard{K: k, N: n}).Select(more) {
			if old, ok := where[p.ID]; ok && old != k {
				t.Errorf("%s moved from shard %d to %d when pairs were added", p.ID, old, k)
			}
		}
	}
	if got := (Shard{}).Select(pairs); len(got) != len(pairs) {
		t.Errorf("the zero shard selects %d of %d", len(got), len(pairs))
	}
}
