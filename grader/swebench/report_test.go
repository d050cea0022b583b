package swebench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/golden"
	"github.com/tender-grader/tender/report"
)

// TestSWEBenchReportCountsInstancesWithoutAPair: as make_run_report counts its whole dataset,
// an instance without a prediction is total but incomplete (not submitted), and one the
// import skipped is total, submitted and an error.
func TestSWEBenchReportCountsInstancesWithoutAPair(t *testing.T) {
	r := fixtureResults(t)
	r.NoPrediction = []string{"no-pred-b", "no-pred-a"}
	r.NotImported = []string{"skipped-1"}
	rep := MakeRunReport(r)
	got := []int{rep.TotalInstances, rep.SubmittedInstances, rep.CompletedInstances, rep.ErrorInstances}
	if diff := cmp.Diff([]int{9, 7, 4, 2}, got); diff != "" {
		t.Errorf("total, submitted, completed, error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"no-pred-a", "no-pred-b"}, rep.IncompleteIDs); diff != "" {
		t.Errorf("incomplete_ids (-want +got):\n%s", diff)
	}
	if !slices.Contains(rep.ErrorIDs, "skipped-1") || !slices.Contains(rep.SubmittedIDs, "skipped-1") {
		t.Errorf("a skipped instance must be submitted and an error: error_ids %v, submitted_ids %v",
			rep.ErrorIDs, rep.SubmittedIDs)
	}
	for _, id := range rep.SubmittedIDs {
		if strings.HasPrefix(id, "no-pred") {
			t.Errorf("%s has no prediction but is in submitted_ids", id)
		}
	}
}

// TestPatchSuccessfullyApplied: true when a check ran, false only when Tender tried the patch
// and it did not apply, null when the pre-scan refused it before it was tried.
func TestPatchSuccessfullyApplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    report.PairResult
		want string
	}{
		{"checks ran", report.PairResult{ID: "a", Verdict: report.Unresolved,
			Checks: []report.Check{{Name: "target"}}}, "true"},
		{"did not apply", report.PairResult{ID: "a", Verdict: report.Unresolved,
			Reasons: []report.Reason{{Code: report.CodePatchFailed}}}, "false"},
		{"pre-scan refused", report.PairResult{ID: "a", Verdict: report.IntegrityViolation,
			Reasons: []report.Reason{{Code: report.CodeProtected}}}, "null"},
		{"too large: never parsed", report.PairResult{ID: "a", Verdict: report.IntegrityViolation,
			Reasons: []report.Reason{{Code: report.CodePatchTooLarge}}}, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := instanceReportJSON(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if got := string(m["a"]["patch_successfully_applied"]); got != tc.want {
				t.Errorf("patch_successfully_applied = %s, want %s", got, tc.want)
			}
		})
	}
}

// fixtureResults is report's fixture batch, as its golden results.json holds it.
func fixtureResults(t *testing.T) report.Results {
	t.Helper()
	r, err := report.ReadResultsJSON(filepath.Join("testdata", "outputs"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMakeRunReportCounts(t *testing.T) {
	rep := MakeRunReport(fixtureResults(t))
	got := []int{rep.TotalInstances, rep.SubmittedInstances, rep.CompletedInstances, rep.ResolvedInstances,
		rep.UnresolvedInstances, rep.EmptyPatchInstances, rep.ErrorInstances}
	if diff := cmp.Diff([]int{6, 6, 4, 1, 3, 1, 1}, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if rep.CompletedInstances != rep.ResolvedInstances+rep.UnresolvedInstances {
		t.Error("completed != resolved + unresolved")
	}
}

// TestOutputsGolden writes report's fixture batch with SWE-bench's outputs, as tender grade
// does, and checks what they add: swebench-summary.json, a report.json for each completed pair
// (and only those), and SWE-bench's column and links in summary.md.
func TestOutputsGolden(t *testing.T) {
	dir := t.TempDir()
	if err := report.WriteOutputs(dir, fixtureResults(t), Outputs()); err != nil {
		t.Fatal(err)
	}
	var written []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			written = append(written, filepath.ToSlash(rel))
		}
		return err
	})
	want := []string{
		"pairs/evil-paths/report.json", "pairs/gold-fix/report.json", "pairs/skip-p2p/report.json",
		"pairs/wrong-fix/report.json", "results.json", "summary.md", "swebench-summary.json", "tender-results.xml",
	}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	for _, name := range written {
		if name == report.ResultsJSON || name == report.TenderJUnit {
			continue // report's own, checked by its golden test
		}
		t.Run(name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "outputs/"+name+".golden", got)
		})
	}
}
