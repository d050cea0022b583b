package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tender-grader/tender/grader"
	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
)

// errShards is the cause of every refusal to merge a set of shards.
var errShards = errors.New("the bundles are not one complete set of shards")

// aggregateFiles are rewritten for the merged whole; every other file is copied from its shard.
func aggregateFile(name string) bool {
	return name == bundle.EnvelopeName || slices.Contains(report.Aggregates(), name)
}

type shardBundle struct {
	dir      string
	manifest *bundle.Manifest
	results  report.Results
	shard    grader.Shard
}

func cmdMerge(ctx context.Context, inv *invocation, args []string) error {
	fset := newFlags(inv, "merge", "merge --out DIR [--key PUB] [--signing-key FILE] BUNDLE...")
	out := fset.String("out", "", "output `directory` for the merged bundle (must be new or empty)")
	keyFile := fset.String("key", "", "ed25519 public key `file`; when given, every shard's signature must verify")
	signFile := fset.String("signing-key", "", "ed25519 private key `file` to sign the merged bundle (or TENDER_SIGNING_KEY)")
	pos, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	if *out == "" || len(pos) == 0 {
		return usageError("merge needs --out DIR and the shard bundles")
	}
	key, err := signingKey(inv, *signFile)
	if err != nil {
		return err
	}
	shards, err := loadShards(pos, *keyFile)
	if err != nil {
		return err
	}
	m, res, err := mergeShards(ctx, *out, shards, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "merged %d shards, %d pairs, into %s (%s)\n", len(shards), len(res.Pairs), *out, m.SignatureStatus())
	return nil
}

func loadShards(dirs []string, keyFile string) ([]shardBundle, error) {
	var shards []shardBundle
	for _, dir := range dirs {
		m, res, err := loadVerifiedBundle(dir, keyFile)
		if err != nil {
			return nil, err
		}
		s, err := grader.ParseShard(res.Shard)
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("%w: bundle %s: %v", errShards, dir, err))
		}
		shards = append(shards, shardBundle{dir: dir, manifest: m, results: res, shard: s})
	}
	sort.Slice(shards, func(i, j int) bool { return shards[i].shard.K < shards[j].shard.K })
	return shards, checkShards(shards)
}

// checkShards refuses overlapping, missing and foreign shards, and pairs in the wrong shard.
func checkShards(shards []shardBundle) error {
	first := shards[0]
	n := first.shard.N
	seen := map[int]string{}
	pairs := map[string]string{}
	for _, s := range shards {
		if err := sameRun(first, s); err != nil {
			return err
		}
		if prev, ok := seen[s.shard.K]; ok {
			return shardErr("shard %s is given twice: %s and %s", s.shard, prev, s.dir)
		}
		seen[s.shard.K] = s.dir
		for _, p := range s.results.Pairs {
			if prev, ok := pairs[p.ID]; ok {
				return shardErr("pair %s is in both %s and %s", p.ID, prev, s.dir)
			}
			pairs[p.ID] = s.dir
			if got := grader.ShardOf(p.ID, n) + 1; got != s.shard.K {
				return shardErr("bundle %s (shard %s) holds pair %s, which belongs to shard %d/%d", s.dir, s.shard, p.ID, got, n)
			}
		}
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
	return nil
}

func sameRun(a, b shardBundle) error {
	ra, rb := a.results, b.results
	switch {
	case a.shard.N != b.shard.N:
		return shardErr("%s is shard %s but %s is shard %s", a.dir, a.shard, b.dir, b.shard)
	case ra.Suite != rb.Suite || ra.SuiteVersion != rb.SuiteVersion || ra.SuiteDigest != rb.SuiteDigest:
		return shardErr("%s graded suite %s@%s (%s) but %s graded %s@%s (%s)", a.dir, ra.Suite, ra.SuiteVersion, ra.SuiteDigest, b.dir, rb.Suite, rb.SuiteVersion, rb.SuiteDigest)
	case ra.Backend != rb.Backend || ra.Tool != rb.Tool || ra.Schema != rb.Schema:
		return shardErr("%s and %s were graded differently (%s/%s/%s vs %s/%s/%s)", a.dir, b.dir, ra.Tool, ra.Backend, ra.Schema, rb.Tool, rb.Backend, rb.Schema)
	}
	return nil
}

func shardErr(format string, a ...any) error {
	return withCode(exitUsage, fmt.Errorf("%w: %s", errShards, fmt.Sprintf(format, a...)))
}

func mergeShards(ctx context.Context, out string, shards []shardBundle, key ed25519.PrivateKey) (*bundle.Manifest, report.Results, error) {
	res := mergedResults(shards)
	if err := prepareMergeOut(out); err != nil {
		return nil, res, err
	}
	for _, s := range shards {
		if err := ctx.Err(); err != nil {
			return nil, res, err
		}
		if err := copyShardFiles(s, out); err != nil {
			return nil, res, err
		}
	}
	if err := report.WriteOutputs(out, res, swebench.Outputs()); err != nil {
		return nil, res, err
	}
	m, err := bundle.Seal(out, mergedInputs(shards), key, time.Now())
	if err != nil {
		return nil, res, fmt.Errorf("sealing the merged bundle: %w", err)
	}
	return m, res, nil
}

func mergedResults(shards []shardBundle) report.Results {
	res := shards[0].results
	res.Shard, res.Pairs, res.Counts = "", nil, map[report.Verdict]int{}
	for _, s := range shards {
		res.Pairs = append(res.Pairs, s.results.Pairs...)
		if s.results.Started.Before(res.Started) {
			res.Started = s.results.Started
		}
		if s.results.Finished.After(res.Finished) {
			res.Finished = s.results.Finished
		}
	}
	sort.Slice(res.Pairs, func(i, j int) bool { return res.Pairs[i].ID < res.Pairs[j].ID })
	for _, p := range res.Pairs {
		res.Counts[p.Verdict]++
	}
	return res
}

// mergedInputs carries the shards' inputs (which must agree), their options without the
// shard, and the digest of every shard's envelope, so the merged statement names its sources.
func mergedInputs(shards []shardBundle) bundle.Inputs {
	in := bundle.Inputs{Files: map[string]string{}, Options: map[string]string{}, Images: map[string]string{},
		Tool: shards[0].manifest.Inputs.Tool}
	for _, s := range shards {
		for k, v := range s.manifest.Inputs.Files {
			in.Files[k] = v
		}
		for k, v := range s.manifest.Inputs.Options {
			in.Options[k] = v
		}
		for k, v := range s.manifest.Inputs.Images {
			in.Images[k] = v
		}
		in.Files["shard/"+strconv.Itoa(s.shard.K)+"/"+bundle.EnvelopeName] = s.manifest.EnvelopeSHA256
	}
	n := shards[0].shard.N
	in.Options["shard"] = ""
	in.Options["merged_shards"] = strconv.Itoa(n)
	return in
}

func prepareMergeOut(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(out, 0o755)
	case err != nil:
		return withCode(exitUsage, fmt.Errorf("--out %s: %w", out, err))
	case len(entries) > 0:
		return usageError("--out %s is not empty; merge writes a new bundle", out)
	}
	return nil
}

// copyShardFiles copies the per-pair files of s into out, refusing to overwrite anything. The
// shard verified just before, so every file copied is one its envelope lists.
func copyShardFiles(s shardBundle, out string) error {
	for _, f := range s.manifest.Files {
		if aggregateFile(f.Name) {
			continue
		}
		if err := copyFileNew(filepath.Join(s.dir, filepath.FromSlash(f.Name)), filepath.Join(out, filepath.FromSlash(f.Name))); err != nil {
			return fmt.Errorf("merging %s: %w", s.dir, err)
		}
	}
	return nil
}

func copyFileNew(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return shardErr("two shards both hold %s", dst)
	}
	if err != nil {
		return err
	}
	_, err = io.Copy(o, in)
	return errors.Join(err, o.Close())
}
