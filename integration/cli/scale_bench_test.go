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

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

var cheapPairs = flag.Int("cheap-pairs", 10000, "pairs graded by BenchmarkCheapPairs")

// BenchmarkCheapPairs grades 10,000 pairs (-cheap-pairs) that run nothing, end to end through cli.Main (load,
// grade, results.jsonl, every output, the seal), and reports the cost per pair. The
// baseline, in the same process, is the part of that work no implementation can skip:
// encoding each pair's record and appending it to a file, synced, one line at a time.
func BenchmarkCheapPairs(b *testing.B) {
	n := *cheapPairs
	suite := e2e.CheapSuite(b, n)
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
