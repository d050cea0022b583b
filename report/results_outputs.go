package report

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteOutputs writes every batch-level output into dir: results.json,
// swebench-summary.json, pairs/<id>/report.json for each pair SWE-bench would count as
// completed, tender-results.xml and summary.md. results.jsonl is not among them: the
// ResultsWriter appends it while the batch runs. The writers read no clock: every time in
// the outputs comes from r.
func WriteOutputs(dir string, r Results) error {
	r = normalized(r)
	for _, p := range r.Pairs {
		if err := checkPairID(p.ID); err != nil {
			return err
		}
	}
	if err := WriteResultsJSON(dir, r); err != nil {
		return err
	}
	if err := writePairReports(dir, r); err != nil {
		return err
	}
	summary, err := swebenchJSON(MakeSWEBenchRunReport(r))
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, SWEBenchSummary), summary); err != nil {
		return err
	}
	xml, err := tenderJUnit(r)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, TenderJUnit), xml); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, SummaryMarkdown), summaryMarkdown(r, SummaryMaxBytes))
}

func writePairReports(dir string, r Results) error {
	for _, p := range r.Pairs {
		if !swebenchCompleted(p) {
			continue
		}
		b, err := instanceReportJSON(p)
		if err != nil {
			return err
		}
		pdir := filepath.Join(dir, filepath.FromSlash(PairDir(p.ID)))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := writeDerived(filepath.Join(pdir, PairReport), b); err != nil {
			return err
		}
	}
	return nil
}
