package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/internal/phase"
)

// BenchmarkPairAgainstBareLoop grades the demo's gold pair at concurrency 1, in process through
// cli.Main, against the bare hardened loop that does the same two checks with nothing of
// Tender's (for each check: git archive | tar -x, git apply of the test patch and the fix, and
// docker run --rm --network none, without capabilities, of pytest on the check's tests, over a
// read-only bind mount). The two alternate, one pair of runs an iteration (use -benchtime 5x),
// and it reports the median of the pairwise ratios, and logs each phase's median wall and CPU
// time per run (internal/phase) beside the bare loop's.
//
// Tender runs each check under the suite's verifier.cpus (1 by default), the bare loop with no
// CPU limit. To compare at equal limits, or to see what the limit costs:
//
//	go test -run '^$' -bench PairAgainstBareLoop -benchtime 5x ./integration/cli/ -args -bare-cpus 1
//	go test -run '^$' -bench PairAgainstBareLoop -benchtime 5x ./integration/cli/ -args -verifier-cpus 2
func BenchmarkPairAgainstBareLoop(b *testing.B) {
	suiteDir := e2e.OrderedSuite(b, "gold-fix")
	repo := clitest.DemoClone(b, repoRoot)
	doc := e2e.ReadSuiteDoc(b, suiteDir)
	if *verifierCPUs > 0 {
		doc.Verifier.CPUs = *verifierCPUs
		e2e.WriteSuiteDoc(b, suiteDir, doc)
	}
	gold := doc.Pairs[0]
	patches := []string{filepath.Join(suiteDir, gold.TestPatch), filepath.Join(suiteDir, gold.Patch)}
	image := doc.Verifier.Image
	bare := func() time.Duration { return barePair(b, repo, image, patches, gold) }
	grade := func(p *phase.Profile) time.Duration { return gradeIn(b, p, suiteDir, 1) }
	grade(&phase.Profile{}) // warm: the image's digest, the page cache
	bare()
	var tender, base, ratios []float64
	var profiles []*phase.Profile
	for i := 0; b.Loop(); i++ {
		p := &phase.Profile{}
		var t, l time.Duration
		if i%2 == 0 {
			t, l = grade(p), bare()
		} else {
			l, t = bare(), grade(p)
		}
		profiles = append(profiles, p)
		tender, base = append(tender, t.Seconds()), append(base, l.Seconds())
		ratios = append(ratios, t.Seconds()/l.Seconds())
	}
	b.ReportMetric(median(tender), "s/tender-pair")
	b.ReportMetric(median(base), "s/bare-pair")
	b.ReportMetric(median(ratios), "ratio")
	b.Logf("ratios %.2f; one pair, median of %d runs:\n%s", ratios, len(profiles), profileTable(profiles,
		median(tender), median(base)))
}

// BenchmarkThroughputAgainstBareLoop grades six copies of the demo's gold pair at
// --concurrency 2, against the bare loop grading the same six pairs two at a time (each of
// its two workers takes the next pair and runs its two checks, as in
// BenchmarkPairAgainstBareLoop). The two alternate, one pair of runs an iteration; it reports
// the median of the pairwise ratios of wall time, and pairs a minute.
//
//	go test -run '^$' -bench ThroughputAgainstBareLoop -benchtime 5x ./integration/cli/
func BenchmarkThroughputAgainstBareLoop(b *testing.B) {
	const pairs, workers = 6, 2
	suiteDir := e2e.OrderedSuite(b, slices.Repeat([]string{"gold-fix"}, pairs)...)
	repo := clitest.DemoClone(b, repoRoot)
	doc := e2e.ReadSuiteDoc(b, suiteDir)
	gold := doc.Pairs[0]
	patches := []string{filepath.Join(suiteDir, gold.TestPatch), filepath.Join(suiteDir, gold.Patch)}
	bare := func() time.Duration {
		start := time.Now()
		var g errgroup.Group
		g.SetLimit(workers)
		for range pairs {
			g.Go(func() error { _, err := tryBarePair(b, repo, doc.Verifier.Image, patches, gold); return err })
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	grade := func() time.Duration { return gradeIn(b, &phase.Profile{}, suiteDir, workers) }
	grade()
	bare()
	var tender, base, ratios []float64
	for i := 0; b.Loop(); i++ {
		var t, l time.Duration
		if i%2 == 0 {
			t, l = grade(), bare()
		} else {
			l, t = bare(), grade()
		}
		tender, base = append(tender, t.Seconds()), append(base, l.Seconds())
		ratios = append(ratios, t.Seconds()/l.Seconds())
	}
	b.ReportMetric(60*pairs/median(tender), "tender-pairs/min")
	b.ReportMetric(60*pairs/median(base), "bare-pairs/min")
	b.ReportMetric(median(ratios), "ratio")
	b.Logf("%d pairs, %d at a time: ratios %.2f; median wall %.1f s (Tender) against %.1f s (bare)", pairs, workers,
		ratios, median(tender), median(base))
}

// gradeIn grades suiteDir in process through cli.Main at the given concurrency, timing the
// phases in p, and returns its wall time.
func gradeIn(b *testing.B, p *phase.Profile, suiteDir string, concurrency int) time.Duration {
	out := filepath.Join(b.TempDir(), "out")
	start := time.Now()
	var stdout, stderr strings.Builder
	code := cli.Main(phase.With(context.Background(), p), "dev",
		[]string{"grade", suiteDir, "--out", out, "--concurrency", fmt.Sprint(concurrency)},
		[]string{"PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitOK {
		b.Fatalf("grade: exit %d\n%s", code, stderr.String())
	}
	return time.Since(start)
}

// barePair is the bare loop's pair: its target check, then its regression check.
func barePair(b *testing.B, repo, image string, patches []string, pair suite.PairDoc) time.Duration {
	d, err := tryBarePair(b, repo, image, patches, pair)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func tryBarePair(b *testing.B, repo, image string, patches []string, pair suite.PairDoc) (time.Duration, error) {
	t, err := bareCheck(b, repo, image, patches, *pair.FailToPass)
	if err != nil {
		return 0, err
	}
	r, err := bareCheck(b, repo, image, patches, *pair.PassToPass)
	return t + r, err
}

// profileTable is the median of each phase over the runs, as a Markdown table: wall and CPU
// per run (a phase timed twice a pair, once a check, is the sum of both), the whole grade and
// the bare loop's pair last.
func profileTable(profiles []*phase.Profile, whole, bare float64) string {
	var names []string
	walls, cpus, counts := map[string][]float64{}, map[string][]float64{}, map[string]int{}
	for _, p := range profiles {
		for _, r := range p.Rows() {
			if _, ok := walls[r.Name]; !ok {
				names = append(names, r.Name)
			}
			walls[r.Name] = append(walls[r.Name], r.Wall.Seconds())
			cpus[r.Name] = append(cpus[r.Name], r.CPU.Seconds())
			counts[r.Name] = r.Count
		}
	}
	var t strings.Builder
	t.WriteString("| phase | times a pair | wall (ms) | Tender's CPU (ms) |\n| --- | ---: | ---: | ---: |\n")
	for _, n := range names {
		fmt.Fprintf(&t, "| %s | %d | %.0f | %.0f |\n", n, counts[n], 1000*median(walls[n]), 1000*median(cpus[n]))
	}
	fmt.Fprintf(&t, "| the whole grade (cli.Main) | 1 | %.0f | |\n| the bare loop's pair | 1 | %.0f | |\n",
		1000*whole, 1000*bare)
	return t.String()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var (
	verifierCPUs = flag.Float64("verifier-cpus", 0,
		"BenchmarkPairAgainstBareLoop: the suite's verifier.cpus for Tender's checks (0: the demo's, the default of 1)")
	bareCPUs = flag.Float64("bare-cpus", 0, "BenchmarkPairAgainstBareLoop: docker run --cpus of the bare loop (0: none)")
)

// bareCheck is one check of the bare loop: a fresh tree from git archive, the test patch and
// the fix applied with git apply, and pytest on ids in a new hardened container.
func bareCheck(b *testing.B, repo, image string, patches, ids []string) (time.Duration, error) {
	start := time.Now()
	ws := b.TempDir()
	archive := fmt.Sprintf("git -C %s archive %s | tar -x -C %s", repo, clitest.DemoBase, ws)
	if out, err := exec.Command("sh", "-c", archive).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", archive, err, out)
	}
	for _, p := range patches {
		cmd := exec.Command("git", "apply", p)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("git apply %s: %v\n%s", p, err, out)
		}
	}
	args := []string{"run", "--rm", "--network", "none", "--cap-drop", "ALL", "--security-opt",
		"no-new-privileges", "--pids-limit", "512", "--memory", "2g", "--read-only", "--tmpfs", "/tmp",
		"-e", "PYTHONDONTWRITEBYTECODE=1", "-v", ws + ":/workspace:ro", "-w", "/workspace", image,
		"python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=/tmp/junit.xml"}
	if *bareCPUs > 0 {
		args = slices.Insert(args, 1, "--cpus", fmt.Sprint(*bareCPUs))
	}
	out, err := exec.Command("docker", append(args, ids...)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("docker run pytest: %v\n%s", err, out)
	}
	return time.Since(start), nil
}
