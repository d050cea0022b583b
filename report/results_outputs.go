package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// ErrUnsafePairID marks a pair ID that cannot name a directory safely.
var ErrUnsafePairID = errors.New("report: unsafe pair id")

var pairIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// checkPairID refuses IDs that could leave pairs/ or collide after cleaning: the suite format
// allows [A-Za-z0-9._-]+, which still admits "." and "..".
func checkPairID(id string) error {
	if !pairIDPattern.MatchString(id) || id == "." || id == ".." || len(id) > 200 {
		return fmt.Errorf("%w: %q", ErrUnsafePairID, id)
	}
	return nil
}

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
		pdir := filepath.Join(dir, PairsDir, p.ID)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := writeFileAtomic(filepath.Join(pdir, PairReport), b); err != nil {
			return err
		}
	}
	return nil
}
