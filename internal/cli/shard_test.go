package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader"
)

// TestDurationsFlag: --durations needs --shard and a bundle, each refused as one line naming
// the flag; given both, the shard is balanced by the bundle's durations and says what it is
// estimated to cost against the mean.
func TestDurationsFlag(t *testing.T) {
	demo := repoRoot + "/fixtures/demo"
	missing := filepath.Join(t.TempDir(), "nope")
	checkBadInputs(t, []badInput{
		{"without --shard", []string{"grade", demo, "--durations", missing},
			[]string{"--durations balances the shards of --shard k/n; give --shard too, or drop --durations"}, nil},
		{"no bundle there", []string{"grade", demo, "--shard", "1/2", "--durations", missing},
			[]string{"--durations " + missing + ": ", "give the bundle directory of an earlier grade of this suite"},
			[]string{"bad results file"}},
	})

	s, err := loadSuite(demo, nil)
	if err != nil {
		t.Fatal(err)
	}
	earlier := pubResults(
		"demo",
		"",
		"gold-fix",
		"wrong-fix",
		"no-apply",
		"empty-patch",
		"edits-test",
		"touches-tender",
	)
	for i, ms := range []int64{40000, 30000, 40, 1, 70000, 3} {
		earlier.Pairs[i].DurationMillis = ms
		earlier.Pairs[i].Verdict = "resolved" // pubResults makes every fourth an error, whose duration is not used
	}
	dir := sealPubBundle(t, earlier, nil)
	got := map[string]int{}
	for k := 1; k <= 3; k++ {
		p := &pubRun{env: map[string]string{}}
		shard, err := balanceShard(p.inv(), gradeFlags{durations: dir}, s, grader.Shard{K: k, N: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range shard.Select(s.Pairs) {
			got[pr.ID] = k
		}
		if want := "tender: shard " + shard.String() + " balanced by the durations in " + dir +
			": 6 of 6 pair(s) have one"; !strings.HasPrefix(p.stderr.String(), want) ||
			!strings.Contains(p.stderr.String(), "the mean 47s, the slowest 1m10s") {
			t.Errorf("stderr %q, want it to start %q and give the mean and the slowest", p.stderr.String(), want)
		}
	}
	// The three pairs that run a verifier each get a shard of their own.
	if got["edits-test"] == got["gold-fix"] || got["gold-fix"] == got["wrong-fix"] ||
		got["wrong-fix"] == got["edits-test"] ||
		len(got) != 6 {
		t.Errorf("assignment %v: want each of edits-test, gold-fix and wrong-fix in a shard of its own", got)
	}
}
