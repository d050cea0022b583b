package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tender-grader/tender/report"
)

// baselineFlags are --baseline and --baseline-key, shared by grade, merge and publish: an
// earlier bundle whose results this batch is compared with (report.Compare).
type baselineFlags struct {
	dir, key string
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.dir, "baseline", "",
		"compare the results with those of `BUNDLE`, an earlier bundle (the last night's, the base branch's)")
	fs.StringVar(&b.key, "baseline-key", "",
		"ed25519 public key `file`; when given, the baseline's signature must verify")
}

// baseline is a verified baseline bundle's results and envelope digest.
type baseline struct {
	results report.Results
	digest  string
}

// load verifies the baseline bundle and reads its results; nil when --baseline is not given.
// It runs before any grading, so a wrong --baseline costs nothing.
func (b baselineFlags) load() (*baseline, error) {
	if b.dir == "" {
		if b.key != "" {
			return nil, usageError("--baseline-key needs --baseline BUNDLE")
		}
		return nil, nil
	}
	if fi, err := os.Stat(b.dir); err != nil || !fi.IsDir() {
		return nil, usageError("--baseline %s: not a bundle directory; give an earlier grade's bundle, "+
			"or leave --baseline out for no comparison", b.dir)
	}
	m, res, err := loadVerifiedBundle(b.dir, b.key)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return &baseline{results: res, digest: m.EnvelopeSHA256}, nil
}

// compare returns cur compared with the baseline; nil without one.
func (bl *baseline) compare(cur report.Results) *report.Comparison {
	if bl == nil {
		return nil
	}
	return report.Compare(bl.results, cur, bl.digest)
}

// printComparison writes one line of what changed since the baseline.
func printComparison(w io.Writer, c *report.Comparison) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "compared with the baseline (bundle %.12s): %d regressed, %d improved, %d changed, %d new, "+
		"%d gone, %d unchanged\n", c.Baseline.BundleSHA256, c.Counts[report.Regressed], c.Counts[report.Improved],
		c.Counts[report.Changed], c.Counts[report.New], c.Counts[report.Gone], c.Unchanged)
}

var errBaselineShard = errors.New("--baseline with --shard: a shard holds only part of the pairs, " +
	"so every other pair would count as gone; compare the merged bundle (merge --baseline, or publish --baseline)")
