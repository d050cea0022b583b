package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

var cheapPairs = flag.Int("cheap-pairs", 10000, "pairs graded by BenchmarkCheapPairs")

// cheapSuite writes a copy of the demo suite with n pairs that run nothing: empty patches
// and patches the pre-scan rejects (a protected path), in turn. No workspace is written and
// no verifier starts: grading them is bookkeeping.
func cheapSuite(tb testing.TB, n int) string {
	tb.Helper()
	suiteDir := tb.TempDir()
	if err := os.CopyFS(suiteDir, os.DirFS(repoRoot+"/fixtures/demo")); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(suiteDir, "tender.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var doc suite.SuiteDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	// The pairs share their fields through YAML anchors and merge keys, so 10,000 of them fit
	// under the manifest's 1 MiB cap.
	fields := map[string]string{}
	for _, p := range doc.Pairs {
		ids, _ := json.Marshal(*p.FailToPass)
		fields[p.ID] = fmt.Sprintf(
			"repository: calc, base_commit: %s, issue: %s, patch: %s, test_patch: %s, fail_to_pass: %s",
			p.BaseCommit,
			p.Issue,
			p.Patch,
			p.TestPatch,
			ids,
		)
	}
	var b strings.Builder
	b.WriteString("name: cheap\nversion: \"1\"\nrepositories: {calc: {fast_export: repos/calc.fi}}\npairs:\n")
	cycle := []string{"empty-patch", "touches-tender"}
	for i := range n {
		kind := cycle[i%len(cycle)]
		if i < len(cycle) {
			fmt.Fprintf(&b, "- &%s {id: c%05d, %s}\n", kind, i, fields[kind])
			continue
		}
		fmt.Fprintf(&b, "- {<<: *%s, id: c%05d}\n", kind, i)
	}
	if err := os.WriteFile(filepath.Join(suiteDir, "tender.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return suiteDir
}

// BenchmarkCheapPairs grades 10,000 pairs (-cheap-pairs) that run nothing, end to end through cli.Main (load,
// grade, results.jsonl, every output, the seal), and reports the cost per pair. The
// baseline, in the same process, is the part of that work no implementation can skip:
// encoding each pair's record and appending it to a file, synced, one line at a time.
func BenchmarkCheapPairs(b *testing.B) {
	n := *cheapPairs
	suite := cheapSuite(b, n)
	var baseline, tender time.Duration
	for i := 0; b.Loop(); i++ {
		base := baselineAppend(b, n)
		out := filepath.Join(b.TempDir(), "out")
		start := time.Now()
		var stdout, stderr strings.Builder
		code := cli.Main(context.Background(), "dev", []string{"grade", suite, "--out", out, "--concurrency", "2"},
			[]string{"PATH=" + os.Getenv("PATH")}, strings.NewReader(""), &stdout, &stderr)
		tender += time.Since(start)
		baseline += base
		if code != cli.ExitOK {
			b.Fatalf("grade: exit %d\n%s", code, stderr.String())
		}
		if got := e2e.CountLines(filepath.Join(out, report.ResultsJSONL)); got != n {
			b.Fatalf("results.jsonl has %d lines, want %d", got, n)
		}
	}
	per := tender / time.Duration(b.N*n)
	b.ReportMetric(float64(tender.Milliseconds())/float64(b.N), "ms/grade")
	b.ReportMetric(float64(per.Microseconds()), "µs/pair")
	b.ReportMetric(float64((baseline / time.Duration(b.N*n)).Microseconds()), "baseline-µs/pair")
	b.ReportMetric(float64(tender)/float64(baseline), "ratio")
}

// baselineAppend encodes n records like a cheap pair's and appends each to a file with a
// sync, as results.jsonl is written; it returns how long that took.
func baselineAppend(b *testing.B, n int) time.Duration {
	f, err := os.Create(filepath.Join(b.TempDir(), "baseline.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := report.PairResult{
		Schema:          report.SchemaVersion,
		Verdict:         report.Unresolved,
		Reasons:         []report.Reason{{Code: report.CodeEmptyPatch}},
		RequestedCommit: clitest.DemoBase,
		FailToPass:      []string{"tests/test_formatting.py::test_group_digits_negative"},
	}
	start := time.Now()
	for i := range n {
		r.ID = fmt.Sprintf("c%05d", i)
		line, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
