package swebench

import (
	"strings"

	"github.com/tender-grader/tender/report"
)

// Outputs are SWE-bench's part of a batch's outputs, for report.WriteOutputs, which writes
// them into the bundle before it is sealed: swebench-summary.json (MakeRunReport), a
// report.json for each pair SWE-bench counts as completed (MakeInstanceReport), and each
// pair's Grade for summary.md.
func Outputs() report.SWEBenchOutputs {
	return report.SWEBenchOutputs{
		Summary: func(r report.Results) ([]byte, error) { return encodeReport(MakeRunReport(r)) },
		Report:  pairReport,
		Grade:   Grade,
		Differ:  Differences,
	}
}

// pairReport is a pair's report.json, or nil when SWE-bench would not count the pair as
// completed: make_run_report counts exactly the instances that have one.
func pairReport(p report.PairResult) ([]byte, error) {
	if !completed(p) {
		return nil, nil
	}
	return instanceReportJSON(p)
}

// Grade is what SWE-bench's rules make of the tests of a pair's run (Resolution) without the
// RESOLVED_ prefix: FULL, PARTIAL or NO. It is "" when SWE-bench would not grade the pair (an
// empty patch, an error) or no check ran.
func Grade(p report.PairResult) string {
	if !completed(p) || len(p.Checks) == 0 {
		return ""
	}
	res, _ := Resolution(p.FailToPass, p.PassToPass, Statuses(p))
	return strings.TrimPrefix(string(res), "RESOLVED_")
}
