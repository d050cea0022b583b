package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSWEBenchReportCountsInstancesWithoutAPair: as make_run_report counts its whole dataset,
// an instance without a prediction is total but incomplete (not submitted), and one the
// import skipped is total, submitted and an error.
func TestSWEBenchReportCountsInstancesWithoutAPair(t *testing.T) {
	r := fixtureResults()
	r.NoPrediction = []string{"no-pred-b", "no-pred-a"}
	r.NotImported = []string{"skipped-1"}
	r = normalized(r)
	rep := MakeSWEBenchRunReport(r)
	got := []int{rep.TotalInstances, rep.SubmittedInstances, rep.CompletedInstances, rep.ErrorInstances}
	if diff := cmp.Diff([]int{9, 7, 4, 2}, got); diff != "" {
		t.Errorf("total, submitted, completed, error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"no-pred-a", "no-pred-b"}, rep.IncompleteIDs); diff != "" {
		t.Errorf("incomplete_ids (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(rep.ErrorIDs, ","), "skipped-1") || !strings.Contains(strings.Join(rep.SubmittedIDs, ","), "skipped-1") {
		t.Errorf("a skipped instance must be submitted and an error: error_ids %v, submitted_ids %v", rep.ErrorIDs, rep.SubmittedIDs)
	}
	for _, id := range rep.SubmittedIDs {
		if strings.HasPrefix(id, "no-pred") {
			t.Errorf("%s has no prediction but is in submitted_ids", id)
		}
	}
	sum := string(summaryMarkdown(r, SummaryMaxBytes))
	for _, want := range []string{"2 instance(s) without a prediction (incomplete)**, not graded: no\\-pred\\-a\\, no\\-pred\\-b",
		"1 instance(s) skipped by the import (error)**, not graded: skipped\\-1"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

// TestPatchSuccessfullyApplied: true when a check ran, false only when Tender tried the patch
// and it did not apply, null when the pre-scan refused it before it was tried.
func TestPatchSuccessfullyApplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    PairResult
		want string
	}{
		{"checks ran", PairResult{ID: "a", Verdict: Unresolved, Checks: []Check{{Name: "target"}}}, "true"},
		{"did not apply", PairResult{ID: "a", Verdict: Unresolved, Reasons: []Reason{{Code: CodePatchFailed}}}, "false"},
		{"pre-scan refused", PairResult{ID: "a", Verdict: IntegrityViolation, Reasons: []Reason{{Code: CodeProtected}}}, "null"},
		{"too large: never parsed", PairResult{ID: "a", Verdict: IntegrityViolation, Reasons: []Reason{{Code: CodePatchTooLarge}}}, "null"},
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

var reLink = regexp.MustCompile(`\]\(([^)]+)\)`)

// TestSummaryLinksExist: every link in summary.md points to a file or directory of the
// bundle, so a pair that wrote nothing (an empty patch, an error before any verifier) gets
// no link.
func TestSummaryLinksExist(t *testing.T) {
	dir := t.TempDir()
	r := fixtureResults()
	for i := range r.Pairs {
		for j, c := range r.Pairs[i].Checks {
			if c.LogFile != "" { // as the grader writes each check's log
				c.LogFile = CheckLog(r.Pairs[i].ID, c.Name)
				r.Pairs[i].Checks[j] = c
				must(t, os.MkdirAll(filepath.Join(dir, PairDir(r.Pairs[i].ID)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(c.LogFile)), []byte("log\n"), 0o644))
			}
		}
	}
	if err := WriteOutputs(dir, r); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	links := reLink.FindAllStringSubmatch(string(md), -1)
	if len(links) == 0 {
		t.Fatal("summary.md has no links")
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l[1]))); err != nil {
			t.Errorf("summary.md links to %s, which the bundle does not hold", l[1])
		}
	}
	if !strings.Contains(string(md), "| empty | unresolved |  | — | empty\\_patch") || strings.Contains(string(md), "pairs/empty/") {
		t.Errorf("the empty-patch row must have no link:\n%s", md)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
