package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
)

func mergeIDs(n int) []string {
	var ids []string
	for i := 1; i <= n; i++ {
		ids = append(ids, fmt.Sprintf("pair-%02d", i))
	}
	return ids
}

// shardBundles splits a batch the way `grade --shard k/n` does and seals one bundle per shard.
func shardBundles(t *testing.T, whole report.Results, n int) []string {
	t.Helper()
	var dirs []string
	for k := 1; k <= n; k++ {
		part := whole
		part.Shard = fmt.Sprintf("%d/%d", k, n)
		part.Pairs, part.Counts = nil, map[report.Verdict]int{}
		for _, p := range whole.Pairs {
			if grader.ShardOf(p.ID, n) == k-1 {
				part.Pairs = append(part.Pairs, p)
				part.Counts[p.Verdict]++
			}
		}
		dirs = append(dirs, sealPubBundle(t, part, nil))
	}
	return dirs
}

func TestMergeRoundTrip(t *testing.T) {
	whole := pubResults("demo", "", mergeIDs(12)...)
	keyPub, _ := pubKeyPair(t)
	keyDir := filepath.Dir(keyPub)
	dirs := shardBundles(t, whole, 3)
	out := filepath.Join(t.TempDir(), "merged")
	p := &pubRun{env: map[string]string{}}
	args := append([]string{"--out", out, "--signing-key", filepath.Join(keyDir, "k.key")}, dirs...)
	if err := cmdMerge(context.Background(), p.inv(), args); err != nil {
		t.Fatalf("merge: %v\n%s", err, p.stderr.String())
	}
	pub, err := bundle.LoadPublicKey(keyPub)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bundle.Verify(out, pub, bundle.VerifyOptions{RequireSignature: true})
	if err != nil {
		t.Fatalf("the merged bundle does not verify: %v", err)
	}
	got := clitest.ReadResults(t, out)
	if d := cmp.Diff(whole.Pairs, got.Pairs); d != "" {
		t.Errorf("merged pairs differ from the unsharded batch (-want +got):\n%s", d)
	}
	if d := cmp.Diff(whole.Counts, got.Counts); d != "" || got.Shard != "" {
		t.Errorf("counts (-want +got):\n%s\nshard %q", d, got.Shard)
	}
	for _, id := range mergeIDs(12) {
		if _, err := os.Stat(filepath.Join(out, "pairs", id, "target.log")); err != nil {
			t.Errorf("pair %s's log was not merged: %v", id, err)
		}
	}
	deps, subjects := map[string]bool{}, map[string]bool{}
	for _, s := range m.Dependencies {
		deps[s.Name] = true
	}
	for _, s := range m.Files {
		subjects[s.Name] = true
	}
	for k := 1; k <= 3; k++ {
		name := fmt.Sprintf("shard/%d/%s", k, bundle.EnvelopeName)
		if !deps[name] || subjects[name] {
			t.Errorf("shard %d's envelope must be a resolved dependency of the merged statement and no subject; "+
				"dependencies %v", k, m.Dependencies)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	whole := pubResults("demo", "", mergeIDs(9)...)
	dirs := shardBundles(t, whole, 3)
	other := pubResults("demo", "", mergeIDs(9)...)
	other.SuiteDigest = strings.Repeat("f", 64)
	otherDirs := shardBundles(t, other, 3)
	two := shardBundles(t, whole, 2)
	misplaced := whole
	misplaced.Shard = "1/3"
	misplacedDir := sealPubBundle(t, misplaced, nil) // claims shard 1 but holds every pair
	tampered := shardBundles(t, whole, 3)
	os.WriteFile(filepath.Join(tampered[1], "results.json"), []byte(`{"schema":"x"}`), 0o644)
	unsharded := sealPubBundle(t, whole, nil)
	cases := []struct {
		name string
		dirs []string
		code int
	}{
		{"overlapping shards", []string{dirs[0], dirs[0], dirs[1], dirs[2]}, exitUsage},
		{"missing shard", []string{dirs[0], dirs[2]}, exitUsage},
		{"shards of different n", []string{dirs[0], dirs[1], dirs[2], two[1]}, exitUsage},
		{"another suite", []string{dirs[0], otherDirs[1], dirs[2]}, exitUsage},
		{"pair in the wrong shard", []string{misplacedDir, dirs[1], dirs[2]}, exitUsage},
		{"an unsharded bundle", []string{unsharded}, exitUsage},
		{"a shard that does not verify", []string{tampered[0], tampered[1], tampered[2]}, exitFailure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			p := &pubRun{env: map[string]string{}}
			err := cmdMerge(context.Background(), p.inv(), append([]string{"--out", out}, tc.dirs...))
			if code := exitCode(context.Background(), err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if tc.code == exitUsage && !errors.Is(err, report.ErrShards) {
				t.Errorf("error %v does not wrap report.ErrShards", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused merge wrote %s", out)
			}
		})
	}
}

func TestMergeRefusesNonEmptyOut(t *testing.T) {
	dirs := shardBundles(t, pubResults("demo", "", mergeIDs(4)...), 2)
	out := t.TempDir()
	clitest.WriteFile(t, filepath.Join(out, "keep.txt"), "mine")
	p := &pubRun{env: map[string]string{}}
	err := cmdMerge(context.Background(), p.inv(), append([]string{"--out", out}, dirs...))
	if code := exitCode(context.Background(), err); code != exitUsage {
		t.Fatalf("exit %d (%v), want %d", code, err, exitUsage)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "keep.txt")); string(b) != "mine" {
		t.Error("merge touched an existing file")
	}
}
