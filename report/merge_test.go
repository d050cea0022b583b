package report

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report/bundle"
)

// writeShardDir writes r into a new directory as `grade` leaves it (every batch output, a log
// per pair, and the extra files given), seals it unsigned and returns the directory.
func writeShardDir(t *testing.T, r Results, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutputs(dir, r, SWEBenchOutputs{}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range r.Pairs {
		files[CheckLog(p.ID, "target")] = "log of " + p.ID + "\n"
	}
	for name, body := range extra {
		files[name] = body
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := bundle.Inputs{Tool: r.Tool, Files: map[string]string{"suite/tender.yaml": strings.Repeat("e", 64)},
		Options: map[string]string{"backend": r.Backend, "shard": r.Shard},
		Images:  map[string]string{"tender-verifier/pytest": "sha256:" + strings.Repeat("a", 64)}}
	if _, err := bundle.Seal(dir, in, nil, clock); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openShard reads a bundle as tender merge does: verified first, then its results.json.
func openShard(t *testing.T, dir string) ShardBundle {
	t.Helper()
	m, err := bundle.Verify(dir, nil, bundle.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ReadResultsJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ShardBundle{Dir: dir, Manifest: m, Results: res}
}

// shardsOf splits whole the way `grade --shard k/n` does. Shard k starts n-k seconds after the
// whole and finishes n-k seconds before it: the last shard, not the first, spans the whole.
func shardsOf(t *testing.T, whole Results, n int) []ShardBundle {
	t.Helper()
	var out []ShardBundle
	for k := 1; k <= n; k++ {
		part := whole
		part.Shard = fmt.Sprintf("%d/%d", k, n)
		part.Started = whole.Started.Add(time.Duration(n-k) * time.Second)
		part.Finished = whole.Finished.Add(-time.Duration(n-k) * time.Second)
		part.Pairs = nil
		for _, p := range whole.Pairs {
			if (Shard{K: k, N: n}).Holds(p.ID) {
				part.Pairs = append(part.Pairs, p)
			}
		}
		out = append(out, openShard(t, writeShardDir(t, part, nil)))
	}
	return out
}

// treeOf maps every file under dir but the envelope to its content.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == bundle.EnvelopeName {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestMergeIsTheUnshardedBundle: the merge of three shards holds byte for byte the files an
// unsharded run of the same batch writes, and its statement names every shard's envelope.
func TestMergeIsTheUnshardedBundle(t *testing.T) {
	whole := fixtureResults()
	shards := shardsOf(t, whole, 3)
	plan, err := PlanMerge([]ShardBundle{shards[2], shards[0], shards[1]})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Shards() != 3 || len(plan.Results.Pairs) != len(whole.Pairs) {
		t.Fatalf("plan of %d shards, %d pairs; want 3 and %d", plan.Shards(), len(plan.Results.Pairs), len(whole.Pairs))
	}
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	m, err := plan.Write(context.Background(), out, SWEBenchOutputs{}, key, clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Verify(out, pub, bundle.VerifyOptions{RequireSignature: true}); err != nil {
		t.Fatalf("the merged bundle does not verify: %v", err)
	}
	if d := cmp.Diff(treeOf(t, writeShardDir(t, whole, nil)), treeOf(t, out)); d != "" {
		t.Errorf("the merged bundle differs from the unsharded one (-unsharded +merged):\n%s", d)
	}
	want := map[string]string{"backend": "docker", "shard": "", "merged_shards": "3"}
	if d := cmp.Diff(want, m.Inputs.Options); d != "" {
		t.Errorf("merged options (-want +got):\n%s", d)
	}
	for k, s := range shards {
		name := fmt.Sprintf("shard/%d/%s", k+1, bundle.EnvelopeName)
		if got := m.Inputs.Files[name]; got != s.Manifest.EnvelopeSHA256 {
			t.Errorf("input %s = %q, want shard %d's envelope digest %s", name, got, k+1, s.Manifest.EnvelopeSHA256)
		}
	}
	if len(m.Inputs.Images) != 1 || m.Inputs.Files["suite/tender.yaml"] == "" {
		t.Errorf("the shards' inputs were not carried: files %v, images %v", m.Inputs.Files, m.Inputs.Images)
	}
}

// TestPlanMergeRefuses: every set that is not one whole run is refused before anything is
// written, with a message that names what is wrong.
func TestPlanMergeRefuses(t *testing.T) {
	whole := fixtureResults()
	three := shardsOf(t, whole, 3)
	two := shardsOf(t, whole, 2)
	with := func(edit func(*Results)) []ShardBundle {
		r := whole
		edit(&r)
		return shardsOf(t, r, 3)
	}
	other := with(func(r *Results) { r.SuiteDigest = "sha256:07her" })
	newer := with(func(r *Results) { r.Tool = "tender 0.2.0" })
	local := with(func(r *Results) { r.Backend = "local" })
	unsharded := openShard(t, writeShardDir(t, whole, nil))
	bad := whole
	bad.Shard = "4/3"
	badShard := openShard(t, writeShardDir(t, bad, nil))
	misplaced := whole
	misplaced.Shard = "1/3" // every pair, of which some belong to shards 2 and 3
	misplacedDir := openShard(t, writeShardDir(t, misplaced, nil))
	// A pair of shard 1 also recorded by shard 2.
	dup := whole
	dup.Shard, dup.Pairs = "2/3", append(slices.Clone(three[1].Results.Pairs), three[0].Results.Pairs[0])
	dupDir := openShard(t, writeShardDir(t, dup, nil))
	// A file outside any pair's directory, in two shards.
	stray := map[string]string{"notes.txt": "mine\n"}
	var strays []ShardBundle
	for _, s := range three {
		r := s.Results
		strays = append(strays, openShard(t, writeShardDir(t, r, stray)))
	}
	cases := []struct {
		name    string
		bundles []ShardBundle
		want    string
	}{
		{"no bundle", nil, "no bundle given"},
		{"a gap", []ShardBundle{three[0], three[2]}, "shard(s) 2/3 missing"},
		{"two gaps", []ShardBundle{three[1]}, "shard(s) 1/3, 3/3 missing"},
		{"an overlap", []ShardBundle{three[0], three[1], three[1], three[2]}, "shard 2/3 is given twice: "},
		{"a pair in two shards", []ShardBundle{three[0], dupDir, three[2]}, "pair " + three[0].Results.Pairs[0].ID +
			" is in both " + three[0].Dir + " and " + dupDir.Dir},
		{"a pair in the wrong shard", []ShardBundle{misplacedDir, three[1], three[2]}, "which belongs to shard"},
		{"shards of different n", []ShardBundle{three[0], three[1], three[2], two[1]}, "is shard 2/2"},
		{
			"different suite digests",
			[]ShardBundle{three[0], other[1], three[2]},
			"graded suite demo@1 (sha256:5u17e) but " +
				other[1].Dir + " graded demo@1 (sha256:07her)",
		},
		{"another tool", []ShardBundle{three[0], three[1], newer[2]}, "were graded differently (tender 0.1.0/"},
		{"another backend", []ShardBundle{local[0], three[1], three[2]}, "/local/"},
		{"an unsharded bundle", []ShardBundle{unsharded}, "was graded without --shard"},
		{"an unsharded bundle among shards", []ShardBundle{three[0], unsharded, three[2]}, unsharded.Dir +
			" was graded without --shard"},
		{"a shard out of range", []ShardBundle{badShard}, `shard "4/3" is not k/n`},
		{"a file in two shards", strays, "both hold notes.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanMerge(tc.bundles)
			if !errors.Is(err, ErrShards) || plan != nil {
				t.Fatalf("PlanMerge = %v, %v; want a refusal wrapping ErrShards", plan, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestMergeWriteRefuses: what changed in a shard after it verified is not copied, and the
// merge writes no envelope; nor does it overwrite a file already in out.
func TestMergeWriteRefuses(t *testing.T) {
	whole := fixtureResults()
	victim := CheckLog(whole.Pairs[0].ID, "target")
	cases := []struct {
		name   string
		change func(t *testing.T, shardDir, out string)
		ctx    func() context.Context
		is     error
		want   string
	}{
		{name: "a log rewritten after the shard verified", is: bundle.ErrTampered, want: victim,
			change: func(t *testing.T, shardDir, _ string) {
				mustWriteFile(t, filepath.Join(shardDir, victim), "forged\n")
			}},
		{name: "a log swapped for a symlink to the same bytes", want: victim,
			change: func(t *testing.T, shardDir, _ string) {
				path := filepath.Join(shardDir, victim)
				copyTo := filepath.Join(t.TempDir(), "same.log")
				mustWriteFile(t, copyTo, "log of "+whole.Pairs[0].ID+"\n")
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(copyTo, path); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a file already in out", want: "exists already",
			change: func(t *testing.T, _, out string) { mustWriteFile(t, filepath.Join(out, victim), "mine\n") }},
		{name: "a cancelled run", is: context.Canceled, change: func(*testing.T, string, string) {},
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shards := shardsOf(t, whole, 2)
			plan, err := PlanMerge(shards)
			if err != nil {
				t.Fatal(err)
			}
			owner := shards[0].Dir
			if !(Shard{K: 1, N: 2}).Holds(whole.Pairs[0].ID) {
				owner = shards[1].Dir
			}
			out := t.TempDir()
			tc.change(t, owner, out)
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			_, err = plan.Write(ctx, out, SWEBenchOutputs{}, nil, clock)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write = %v; want an error wrapping %v that names %q", err, tc.is, tc.want)
			}
			if _, err := os.Lstat(filepath.Join(out, bundle.EnvelopeName)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused merge sealed %s (%v)", out, err)
			}
			if b, err := os.ReadFile(filepath.Join(out, victim)); err == nil && string(b) != "mine\n" {
				t.Errorf("%s in out holds %q, which no verified shard listed", victim, b)
			}
		})
	}
}

func mustWriteFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// balancedShardsOf splits whole as `grade --shard k/n --durations` does with durations, each
// shard recording the plan; place, when set, decides instead which shard holds a pair.
func balancedShardsOf(t *testing.T, whole Results, n int, durations map[string]int64,
	place func(Shard, string) bool) []ShardBundle {
	t.Helper()
	var ids []string
	for _, p := range whole.Pairs {
		ids = append(ids, p.ID)
	}
	var out []ShardBundle
	for k := 1; k <= n; k++ {
		s := Shard{K: k, N: n}.Balance(ids, durations, "source")
		part := whole
		part.Shard, part.ShardPlan, part.Pairs = s.String(), s.Plan(), nil
		for _, p := range whole.Pairs {
			if place == nil && s.Holds(p.ID) || place != nil && place(s, p.ID) {
				part.Pairs = append(part.Pairs, p)
			}
		}
		out = append(out, openShard(t, writeShardDir(t, part, nil)))
	}
	return out
}

func fixtureDurations(whole Results) map[string]int64 {
	d := map[string]int64{}
	for _, p := range whole.Pairs {
		d[p.ID] = p.DurationMillis
	}
	return d
}

// TestMergeOfBalancedShards: shards balanced by durations merge into the unsharded bundle;
// the plan is the shards' own, not the merged bundle's.
func TestMergeOfBalancedShards(t *testing.T) {
	whole := fixtureResults()
	shards := balancedShardsOf(t, whole, 3, fixtureDurations(whole), nil)
	plan, err := PlanMerge([]ShardBundle{shards[1], shards[2], shards[0]})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := plan.Write(context.Background(), out, SWEBenchOutputs{}, nil, clock); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(treeOf(t, writeShardDir(t, whole, nil)), treeOf(t, out)); d != "" {
		t.Errorf("the merged bundle differs from the unsharded one (-unsharded +merged):\n%s", d)
	}
	got, err := ReadResultsJSON(shards[0].Dir)
	if err != nil || got.ShardPlan == nil || got.ShardPlan.Source != "source" ||
		len(got.ShardPlan.Durations) != len(whole.Pairs) {
		t.Errorf("a shard's results.json does not record its plan: %+v, %v", got.ShardPlan, err)
	}
}

// TestPlanMergeRefusesBalancedShards: merge computes the plan again, so shards placed another
// way, balanced by other durations, or missing a pair are refused.
func TestPlanMergeRefusesBalancedShards(t *testing.T) {
	whole := fixtureResults()
	durations := fixtureDurations(whole)
	balanced := balancedShardsOf(t, whole, 3, durations, nil)
	hashed := shardsOf(t, whole, 3)
	other := maps.Clone(durations)
	other[whole.Pairs[0].ID]++
	otherDurations := balancedShardsOf(t, whole, 3, other, nil)
	byHash := balancedShardsOf(t, whole, 3, durations, func(s Shard, id string) bool { return ShardOf(id, 3) == s.K-1 })
	moved := false
	for k, s := range balanced {
		for _, p := range s.Results.Pairs {
			moved = moved || ShardOf(p.ID, 3) != k
		}
	}
	if !moved {
		t.Fatal("the fixture's plan places no pair away from its hash shard: the test would prove nothing")
	}
	lost := whole.Pairs[len(whole.Pairs)-1].ID
	lossy := balancedShardsOf(t, whole, 3, durations,
		func(s Shard, id string) bool { return id != lost && s.Holds(id) })
	tampered := balancedShardsOf(t, whole, 3, durations, nil)
	for i := range tampered {
		tampered[i].Results.ShardPlan.Durations[lost] += 1000
	}
	cases := []struct {
		name    string
		bundles []ShardBundle
		want    string
	}{
		{"one shard by the hash", []ShardBundle{balanced[0], hashed[1], balanced[2]},
			balanced[0].Dir + " was balanced by --durations but " + hashed[1].Dir + " was not"},
		{"other durations", []ShardBundle{balanced[0], balanced[1], otherDurations[2]},
			"were balanced by different --durations"},
		{"placed by the hash", byHash, "which belongs to shard"},
		{"a pair lost", lossy, fmt.Sprintf("its shards were balanced over %d pair(s), but together they hold %d "+
			"(missing: %s)", len(whole.Pairs), len(whole.Pairs)-1, lost)},
		{"a plan edited", tampered, "its digest is not that of its pairs and durations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanMerge(tc.bundles)
			if !errors.Is(err, ErrShards) || plan != nil {
				t.Fatalf("PlanMerge = %v, %v; want a refusal wrapping ErrShards", plan, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}
