package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/report"
)

// cmdMerge joins the bundles of `grade --shard k/n` jobs; report.PlanMerge holds the rules.
func cmdMerge(ctx context.Context, inv *invocation, args []string) error {
	fset := newFlags(inv, "merge",
		"merge --out DIR [--key PUB] [--signing-key FILE] [--baseline BUNDLE [--baseline-key PUB]] BUNDLE...")
	out := fset.String("out", "", "output `directory` for the merged bundle (must be new or empty)")
	keyFile := fset.String("key", "", "ed25519 public key `file`; when given, every shard's signature must verify")
	signFile := fset.String("signing-key", "",
		"ed25519 private key `file` to sign the merged bundle (or TENDER_SIGNING_KEY)")
	var bf baselineFlags
	bf.register(fset)
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
	base, err := bf.load()
	if err != nil {
		return err
	}
	var shards []report.ShardBundle
	for _, dir := range pos {
		m, res, err := loadVerifiedBundle(dir, *keyFile)
		if err != nil {
			return err
		}
		shards = append(shards, report.ShardBundle{Dir: dir, Manifest: m, Results: res})
	}
	plan, err := report.PlanMerge(shards)
	if err != nil {
		return withCode(exitUsage, err)
	}
	plan.Results.Comparison = base.compare(plan.Results)
	if err := prepareMergeOut(*out); err != nil {
		return err
	}
	m, err := plan.Write(ctx, *out, swebench.Outputs(), key, time.Now())
	if errors.Is(err, report.ErrShards) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "merged %d shards, %d pairs, into %s (%s)\n", plan.Shards(), len(plan.Results.Pairs), *out,
		m.SignatureStatus())
	printComparison(inv.Stdout, plan.Results.Comparison)
	return nil
}

// prepareMergeOut makes --out, which must be new or empty, in a place merge can write.
func prepareMergeOut(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case err == nil && len(entries) > 0:
		return usageError("--out %s is not empty; merge writes a new bundle, so choose a new directory", out)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		if fi, serr := os.Stat(out); serr == nil && !fi.IsDir() {
			return usageError("--out %s is not a directory; name a new directory for the merged bundle", out)
		}
		return usageError("--out %s: cannot read the directory (%s); choose another place", out, pathErrText(err))
	}
	return makeOutDir("--out", out)
}
