package report

import (
	"fmt"
	"os"
	"path/filepath"
)

// SWEBenchOutputs are the SWE-bench part of a batch's outputs. grader/swebench makes them
// (swebench.Outputs); WriteOutputs writes them where the layout puts them and summary.md links
// and shows them. report knows their places and their column, and none of SWE-bench's rules.
// A nil func leaves its part out: no file, no link, "—" in the column.
type SWEBenchOutputs struct {
	Summary func(r Results) ([]byte, error)    // swebench-summary.json
	Report  func(p PairResult) ([]byte, error) // pairs/<id>/report.json; nil bytes: the pair gets none
	Grade   func(p PairResult) string          // SWE-bench's grade of the pair's run for summary.md; "" shows "—"
	// Differ names the rules that made the difference when Tender's verdict and SWE-bench's
	// rule disagree on a pair (nil when they agree): a line of summary.md each.
	Differ func(p PairResult) []RuleDifference
}

// RuleDifference is one rule by which Tender's verdict of a pair and SWE-bench's rule differ:
// its name (such as "skipped test") and what it did in this pair.
type RuleDifference struct {
	Rule   string
	Detail string
}

// WriteOutputs writes every batch-level output into dir: results.json, swe's files
// (swebench-summary.json and the pairs' report.json), tender-results.xml and summary.md.
// results.jsonl is not among them: the ResultsWriter appends it while the batch runs. The
// writers read no clock: every time in the outputs comes from r.
func WriteOutputs(dir string, r Results, swe SWEBenchOutputs) error {
	r = normalized(r)
	for _, p := range r.Pairs {
		if err := checkPairID(p.ID); err != nil {
			return err
		}
	}
	if err := WriteResultsJSON(dir, r); err != nil {
		return err
	}
	reports, err := writePairReports(dir, r, swe.Report)
	if err != nil {
		return err
	}
	if swe.Summary != nil {
		summary, err := swe.Summary(r)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, SWEBenchSummary), summary); err != nil {
			return err
		}
	}
	xml, err := tenderJUnit(r)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, TenderJUnit), xml); err != nil {
		return err
	}
	md := summaryMarkdown(r, SummaryMaxBytes, sweView{grade: swe.Grade, reports: reports, differ: swe.Differ})
	return writeFileAtomic(filepath.Join(dir, SummaryMarkdown), md)
}

// writePairReports writes each pair's report.json that pairReport gives, and says which pairs
// have one.
func writePairReports(dir string, r Results, pairReport func(PairResult) ([]byte, error)) (map[string]bool, error) {
	written := map[string]bool{}
	if pairReport == nil {
		return written, nil
	}
	for _, p := range r.Pairs {
		b, err := pairReport(p)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		pdir := filepath.Join(dir, filepath.FromSlash(PairDir(p.ID)))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		if err := writeDerived(filepath.Join(pdir, PairReport), b); err != nil {
			return nil, err
		}
		written[p.ID] = true
	}
	return written, nil
}
