package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// assignment is where a balanced Shard of n places each id, as shard k/n would select.
func assignment(ids []string, n int, durations map[string]int64) map[string]int {
	out := map[string]int{}
	for k := 1; k <= n; k++ {
		s := Shard{K: k, N: n}.Balance(ids, durations, "")
		for _, id := range ids {
			if s.Holds(id) {
				if _, twice := out[id]; twice {
					out[id] = -1
				} else {
					out[id] = k - 1
				}
			}
		}
	}
	return out
}

func TestBalanceRule(t *testing.T) {
	hash := func(id string, n int) int { return ShardOf(id, n) }
	cases := []struct {
		name      string
		ids       []string
		n         int
		durations map[string]int64
		want      map[string]int
	}{
		{"longest first, each to the cheapest shard", []string{"a", "b", "c", "d"}, 2,
			map[string]int64{"a": 10, "b": 9, "c": 8, "d": 1}, map[string]int{"a": 0, "b": 1, "c": 1, "d": 0}},
		{"equal costs: the shard with fewer pairs", []string{"a", "b", "c", "d"}, 2,
			map[string]int64{"a": 0, "b": 0, "c": 0, "d": 0}, map[string]int{"a": 0, "b": 1, "c": 0, "d": 1}},
		{"equal durations: by id", []string{"z", "y", "x"}, 3,
			map[string]int64{"x": 5, "y": 5, "z": 5}, map[string]int{"x": 0, "y": 1, "z": 2}},
		{"no durations: the hash", []string{"pair-01", "pair-02", "a", "b"}, 3, nil,
			map[string]int{
				"pair-01": hash("pair-01", 3),
				"pair-02": hash("pair-02", 3),
				"a":       hash("a", 3),
				"b":       hash("b", 3),
			}},
		{"one shard", []string{"a", "b"}, 1, map[string]int64{"a": 3}, map[string]int{"a": 0, "b": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, assignment(tc.ids, tc.n, tc.durations)); d != "" {
				t.Errorf("assignment (-want +got):\n%s", d)
			}
		})
	}
}

// TestBalanceWithoutDurations: a pair with no recorded duration keeps its hash shard, costed
// at the mean, and the pairs with one fill around it.
func TestBalanceWithoutDurations(t *testing.T) {
	ids := []string{"pair-01", "pair-02", "pair-03", "a", "b"}
	durations := map[string]int64{"a": 100, "b": 50, "pair-03": 30}
	s := Shard{K: 1, N: 3}.Balance(ids, durations, "")
	cost := make([]int64, 3)
	for _, id := range []string{"pair-01", "pair-02"} {
		if got, want := s.Of(id), ShardOf(id, 3); got != want {
			t.Errorf("%s: shard %d, want its hash shard %d", id, got, want)
		}
		cost[ShardOf(id, 3)] += 60 // the mean of 100, 50 and 30
	}
	for _, id := range []string{"a", "b", "pair-03"} {
		k := slices.Index(cost, slices.Min(cost))
		if got := s.Of(id); got != k {
			t.Errorf("%s: shard %d, want the cheapest, %d (costs %v)", id, got, k, cost)
		}
		cost[k] += durations[id]
	}
	if d := cmp.Diff(cost, s.Plan().Cost()); d != "" || s.Plan().Known() != 3 || s.Plan().Pairs != 5 {
		t.Errorf("plan cost (-want +got):\n%s; known %d, pairs %d", d, s.Plan().Known(), s.Plan().Pairs)
	}
}

// TestBalanceIsOneAssignment: every shard computes the same assignment from the same inputs,
// whatever order the suite lists its pairs in: each pair is in exactly one shard, and the
// digest is the same; it changes with n, the pairs or a duration.
func TestBalanceIsOneAssignment(t *testing.T) {
	ids, durations := mixedSuite(40)
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	for _, n := range []int{1, 2, 3, 7} {
		a, b := assignment(ids, n, durations), assignment(reversed, n, durations)
		if d := cmp.Diff(a, b); d != "" || len(a) != len(ids) {
			t.Errorf("n=%d: the order of the pairs changed the assignment (-a +b):\n%s", n, d)
		}
		for id, k := range a {
			if k < 0 {
				t.Errorf("n=%d: %s is in two shards", n, id)
			}
		}
		digests := map[string]bool{}
		for k := 1; k <= n; k++ {
			digests[Shard{K: k, N: n}.Balance(ids, durations, "").Plan().Digest] = true
			digests[Shard{K: k, N: n}.Balance(reversed, durations, "").Plan().Digest] = true
		}
		if len(digests) != 1 {
			t.Errorf("n=%d: %d digests, want one", n, len(digests))
		}
	}
	base := Shard{K: 1, N: 3}.Balance(ids, durations, "").Plan().Digest
	changed := map[string]string{
		"n":         Shard{K: 1, N: 4}.Balance(ids, durations, "").Plan().Digest,
		"a pair":    Shard{K: 1, N: 3}.Balance(ids[1:], durations, "").Plan().Digest,
		"durations": Shard{K: 1, N: 3}.Balance(ids, map[string]int64{ids[0]: 1}, "").Plan().Digest,
	}
	for what, d := range changed {
		if d == base {
			t.Errorf("the digest does not change with %s", what)
		}
	}
}

// mixedSuite is n pairs whose durations range from 5 s to 70 s, as real instances do: most
// short, a tail of long ones, in an order that has nothing to do with the ids.
func mixedSuite(n int) ([]string, map[string]int64) {
	var ids []string
	durations := map[string]int64{}
	for i := range n {
		id := fmt.Sprintf("repo__name-%05d", 1000+i*37)
		ids = append(ids, id)
		x := int64((i*7919 + 13) % 100) // 0..99, scattered
		ms := 5000 + x*x*65000/9801     // 5 s .. 70 s, skewed short
		durations[id] = ms
	}
	return ids, durations
}

// spread is the slowest shard's cost over the mean, for a placement of ids by of.
func spread(ids []string, durations map[string]int64, n int, of func(string) int) float64 {
	cost := make([]int64, n)
	var sum int64
	for _, id := range ids {
		cost[of(id)] += durations[id]
		sum += durations[id]
	}
	return float64(slices.Max(cost)) / (float64(sum) / float64(n))
}

// TestBalancedShardsOfMixedDurations: on a suite of mixed durations the slowest balanced
// shard is close to the mean, and never slower than the hash's slowest.
func TestBalancedShardsOfMixedDurations(t *testing.T) {
	for _, tc := range []struct {
		pairs, n int
		within   float64 // slowest balanced shard / mean
	}{{60, 4, 1.02}, {60, 8, 1.05}, {300, 16, 1.02}, {300, 64, 1.10}, {2000, 256, 1.10}} {
		ids, durations := mixedSuite(tc.pairs)
		hashed := spread(ids, durations, tc.n, func(id string) int { return ShardOf(id, tc.n) })
		s := Shard{K: 1, N: tc.n}.Balance(ids, durations, "")
		balanced := spread(ids, durations, tc.n, s.Of)
		t.Logf("%d pairs, %d shards: slowest/mean hash %.3f, balanced %.3f", tc.pairs, tc.n, hashed, balanced)
		if balanced > tc.within || balanced > hashed {
			t.Errorf("%d pairs, %d shards: balanced slowest/mean %.3f, want at most %.2f and the hash's %.3f",
				tc.pairs, tc.n, balanced, tc.within, hashed)
		}
	}
}

// TestReadDurations reads a bundle's durations, leaving out error verdicts, from the bundle
// directory or its results.json; anything else is refused.
func TestReadDurations(t *testing.T) {
	r := fixtureResults()
	r.Pairs[1].Verdict = Error
	dir := writeShardDir(t, r, nil)
	got, sum, err := ReadDurations(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, p := range r.Pairs {
		if p.Verdict != Error {
			want[p.ID] = p.DurationMillis
		}
	}
	if _, ok := got[r.Pairs[1].ID]; ok || len(want) < 2 {
		t.Errorf("the error verdict's duration was read: %v", got)
	}
	if d := cmp.Diff(want, got); d != "" || len(sum) != 64 {
		t.Errorf("durations (-want +got):\n%s\ndigest %q", d, sum)
	}
	if again, sum2, err := ReadDurations(filepath.Join(dir, ResultsJSON)); err != nil || sum2 != sum ||
		!cmp.Equal(again, got) {
		t.Errorf("from results.json: %v, %q, %v", again, sum2, err)
	}
	other := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(other, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{t.TempDir(), other} {
		if _, _, err := ReadDurations(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ReadDurations(%s) = %v, want an error naming it", bad, err)
		}
	}
}
