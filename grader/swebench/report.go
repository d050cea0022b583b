package swebench

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tender-grader/tender/report"
)

// RunReport is swebench-summary.json: the fields of SWE-bench's make_run_report (schema_version
// 2, with the newer harness's infra and ambiguous failure fields), filled from Tender's
// verdicts, so tools written for SWE-bench can read a Tender run. The ids are Tender's grade,
// not SWE-bench's looser one: a pair is in resolved_ids only when Tender resolved it. Following
// make_run_report, a pair with an empty patch is only in empty_patch_ids, and a pair with
// verdict error (no grade at all) is in error_ids; neither is completed. Each error pair is
// also in infra_failure_ids or ambiguous_failure_ids, with the reason code that decided it in
// failure_reasons (failureKind): here both lists are subsets of error_ids, since Tender gives
// such a pair no grade. integrity_violation_ids is Tender's addition; those pairs are also in
// completed_ids and unresolved_ids, as SWE-bench counts a patch that was graded and not
// resolved.
//
// Instances of an imported file that are not pairs count as make_run_report counts its whole
// dataset: one without a prediction is in incomplete_ids (and not submitted); one that import
// skipped (--keep-going) had a candidate that could not be run, so it is submitted and in
// error_ids (and in neither failure list: no run failed). total_instances counts both.
type RunReport struct {
	TotalInstances            int               `json:"total_instances"`
	SubmittedInstances        int               `json:"submitted_instances"`
	CompletedInstances        int               `json:"completed_instances"`
	ResolvedInstances         int               `json:"resolved_instances"`
	UnresolvedInstances       int               `json:"unresolved_instances"`
	InfraFailureInstances     int               `json:"infra_failure_instances"`
	AmbiguousFailureInstances int               `json:"ambiguous_failure_instances"`
	EmptyPatchInstances       int               `json:"empty_patch_instances"`
	ErrorInstances            int               `json:"error_instances"`
	CompletedIDs              []string          `json:"completed_ids"`
	IncompleteIDs             []string          `json:"incomplete_ids"`
	EmptyPatchIDs             []string          `json:"empty_patch_ids"`
	SubmittedIDs              []string          `json:"submitted_ids"`
	ResolvedIDs               []string          `json:"resolved_ids"`
	UnresolvedIDs             []string          `json:"unresolved_ids"`
	InfraFailureIDs           []string          `json:"infra_failure_ids"`
	AmbiguousFailureIDs       []string          `json:"ambiguous_failure_ids"`
	FailureReasons            map[string]string `json:"failure_reasons"`
	ErrorIDs                  []string          `json:"error_ids"`
	IntegrityViolationIDs     []string          `json:"integrity_violation_ids"`
	SchemaVersion             int               `json:"schema_version"`
}

// InstanceReport is the value in a pair's report.json, keyed by pair ID as
// SWE-bench's get_eval_report does. Resolution is Tender's addition: what
// SWE-bench's rules make of the same test statuses, for comparison with Resolved.
//
// PatchApplied is null when Tender never tried the patch: the integrity pre-scan rejected it
// first. SWE-bench has no pre-scan; it would have applied the patch, so its own field says only
// whether git apply worked. false means Tender tried the patch and it did not apply.
type InstanceReport struct {
	PatchIsNone  bool             `json:"patch_is_None"`
	PatchExists  bool             `json:"patch_exists"`
	PatchApplied *bool            `json:"patch_successfully_applied"`
	Resolved     bool             `json:"resolved"`
	InfraFailure bool             `json:"infra_failure"` // always false: a pair with a report.json was graded
	TestsStatus  *TestsStatus     `json:"tests_status,omitempty"`
	Resolution   ResolutionStatus `json:"swebench_resolution,omitempty"`
}

// MakeRunReport builds swebench-summary.json from a batch.
func MakeRunReport(r report.Results) RunReport {
	rep := RunReport{SchemaVersion: 2, FailureReasons: map[string]string{}}
	for _, ls := range []*[]string{&rep.CompletedIDs, &rep.IncompleteIDs, &rep.EmptyPatchIDs, &rep.SubmittedIDs,
		&rep.ResolvedIDs, &rep.UnresolvedIDs, &rep.InfraFailureIDs, &rep.AmbiguousFailureIDs, &rep.ErrorIDs,
		&rep.IntegrityViolationIDs} {
		*ls = []string{}
	}
	for _, p := range r.Pairs {
		rep.SubmittedIDs = append(rep.SubmittedIDs, p.ID)
		switch {
		case p.EmptyPatch:
			rep.EmptyPatchIDs = append(rep.EmptyPatchIDs, p.ID)
		case p.Verdict == report.Error:
			rep.ErrorIDs = append(rep.ErrorIDs, p.ID)
			rep.addFailure(p)
		case p.Verdict == report.Resolved:
			rep.CompletedIDs = append(rep.CompletedIDs, p.ID)
			rep.ResolvedIDs = append(rep.ResolvedIDs, p.ID)
		default:
			rep.CompletedIDs = append(rep.CompletedIDs, p.ID)
			rep.UnresolvedIDs = append(rep.UnresolvedIDs, p.ID)
			if p.Verdict == report.IntegrityViolation {
				rep.IntegrityViolationIDs = append(rep.IntegrityViolationIDs, p.ID)
			}
		}
	}
	for _, ls := range [][]string{rep.CompletedIDs, rep.EmptyPatchIDs, rep.SubmittedIDs,
		rep.ResolvedIDs, rep.UnresolvedIDs, rep.InfraFailureIDs, rep.AmbiguousFailureIDs, rep.ErrorIDs,
		rep.IntegrityViolationIDs} {
		slices.Sort(ls)
	}
	rep.IncompleteIDs = append(rep.IncompleteIDs, r.NoPrediction...)
	rep.ErrorIDs = append(rep.ErrorIDs, r.NotImported...)
	rep.SubmittedIDs = append(rep.SubmittedIDs, r.NotImported...)
	for _, ls := range [][]string{rep.IncompleteIDs, rep.ErrorIDs, rep.SubmittedIDs} {
		slices.Sort(ls)
	}
	rep.TotalInstances = len(r.Pairs) + len(r.NoPrediction) + len(r.NotImported)
	rep.SubmittedInstances = len(rep.SubmittedIDs)
	rep.CompletedInstances = len(rep.CompletedIDs)
	rep.ResolvedInstances = len(rep.ResolvedIDs)
	rep.UnresolvedInstances = len(rep.UnresolvedIDs)
	rep.EmptyPatchInstances = len(rep.EmptyPatchIDs)
	rep.ErrorInstances = len(rep.ErrorIDs)
	rep.InfraFailureInstances = len(rep.InfraFailureIDs)
	rep.AmbiguousFailureInstances = len(rep.AmbiguousFailureIDs)
	return rep
}

// addFailure puts an error pair in infra_failure_ids or ambiguous_failure_ids, by the reason
// code that decided it, and records the code in failure_reasons.
func (rep *RunReport) addFailure(p report.PairResult) {
	code := errorCode(p)
	rep.FailureReasons[p.ID] = string(code)
	if failureKind(code) == ambiguousFailure {
		rep.AmbiguousFailureIDs = append(rep.AmbiguousFailureIDs, p.ID)
		return
	}
	rep.InfraFailureIDs = append(rep.InfraFailureIDs, p.ID)
}

// completed reports whether a pair gets a report.json: make_run_report counts exactly
// the instances that have one as completed.
func completed(p report.PairResult) bool {
	return !p.EmptyPatch && p.Verdict != report.Error
}

// MakeInstanceReport builds a pair's report.json value. The patch counts as applied
// when at least one check ran, since the grader records a check only after the patch applied.
func MakeInstanceReport(p report.PairResult) InstanceReport {
	rep := InstanceReport{
		PatchExists:  !p.EmptyPatch,
		PatchApplied: patchApplied(p),
		Resolved:     p.Verdict == report.Resolved,
	}
	if len(p.Checks) > 0 {
		res, ts := Resolution(p.FailToPass, p.PassToPass, Statuses(p))
		rep.TestsStatus, rep.Resolution = &ts, res
	}
	return rep
}

// patchApplied is true when a check ran (the patch applied first), false when Tender tried
// the patch and it did not apply or parse, and nil when it was never tried.
func patchApplied(p report.PairResult) *bool {
	applied := len(p.Checks) > 0
	if !applied && !slices.ContainsFunc(p.Reasons, func(r report.Reason) bool { return patchTried[r.Code] }) {
		return nil
	}
	return &applied
}

// patchTried are the codes that say the candidate patch was tried and did not apply. A patch
// over the size limit (patch_too_large) was never parsed, so it was not tried.
var patchTried = map[report.Code]bool{report.CodePatchFailed: true}

// MergedTests joins the per-test statuses of a pair's checks. Should two checks report the
// same ID, a status other than passed wins.
func MergedTests(p report.PairResult) map[string]report.TestStatus {
	m := map[string]report.TestStatus{}
	for _, c := range p.Checks {
		for id, st := range c.Tests {
			if old, ok := m[id]; !ok || old == report.TestPassed {
				m[id] = st
			}
		}
	}
	return m
}

// Statuses gives each required test ID, as the suite lists it, the status SWE-bench's log
// parser would record under it in this run. Tender's checks key tests by their full IDs;
// SWE-bench keys its log by the ID cut at its first space. So a cut ID Tender resolved
// (resolved_test_ids) has its one test's status, and a cut ID with several stand-ins
// (stand_in_test_ids) the status of the last line pytest -rA writes for them: its summary
// lists passed, skipped, xfailed, errors and failed tests in that order, and the parser keeps
// the last, so the worst wins.
func Statuses(p report.PairResult) map[string]report.TestStatus {
	m := MergedTests(p)
	for cut, full := range p.ResolvedTestIDs {
		if st, ok := m[full]; ok {
			m[cut] = st
		}
	}
	for cut, tests := range p.StandInTestIDs {
		if st, ok := lastLogged(tests, m); ok {
			m[cut] = st
		}
	}
	return m
}

// logOrder is where each of SWE-bench's statuses comes in pytest -rA's summary.
var logOrder = map[sweStatus]int{swePassed: 1, sweSkipped: 2, sweXFail: 3, sweError: 4, sweFailed: 5}

// lastLogged is the status of the tests' last line in pytest -rA's summary; false when none
// of them has a line SWE-bench reads.
func lastLogged(tests []string, m map[string]report.TestStatus) (report.TestStatus, bool) {
	var last report.TestStatus
	for _, t := range tests {
		if logOrder[toSWE(m[t])] > logOrder[toSWE(last)] {
			last = m[t]
		}
	}
	return last, last != ""
}

func encodeReport(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("report: encoding SWE-bench report: %w", err)
	}
	return append(b, '\n'), nil
}

func instanceReportJSON(p report.PairResult) ([]byte, error) {
	return encodeReport(map[string]InstanceReport{p.ID: MakeInstanceReport(p)})
}
