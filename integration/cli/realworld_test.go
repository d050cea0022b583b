package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestRealWorldParse runs what a user runs on a real project, with no edit between the
// commands: fixtures/realworld/parse holds parse 1.20.2 from Debian's source package as a git
// bundle and two SWE-bench instances made from its upstream fixes (see its README). The test
// clones the bundle, imports the instances without an environment spec, validates them in real
// verifiers, then grades the reference patches (resolved) and empty predictions (unresolved,
// never run).
func TestRealWorldParse(t *testing.T) {
	fixture := filepath.Join(repoRoot, "fixtures", "realworld", "parse")
	instances := filepath.Join(fixture, "instances.jsonl")
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	bundle, err := filepath.Abs(filepath.Join(fixture, "r1chardj0n3s__parse.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, work, "", "clone", "-q", bundle, clone)

	ids := readInstanceIDs(t, instances)
	if len(ids) != 2 {
		t.Fatalf("%s: %d instances, want 2", instances, len(ids))
	}
	suite := filepath.Join(work, "suite")
	out, errOut, code := runTender(t, "import", "swebench", "--instances", instances,
		"--repo", "r1chardj0n3s__parse="+clone, "--out", suite)
	if code != cli.ExitOK || !strings.Contains(out, "wrote suite") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}

	out, errOut, code = runTender(t, "validate", "--run", suite)
	if code != cli.ExitOK {
		t.Fatalf("validate --run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, id := range ids {
		if !strings.Contains(out, "ok      "+id) {
			t.Errorf("validate --run does not call %s sound:\n%s", id, out)
		}
	}

	results, _ := gradeOK(t, suite, "--concurrency", "2")
	checkVerdicts(t, "gold", results, ids, report.Resolved)
	for _, r := range results {
		if len(r.Checks) != 2 || !r.TestedAsSubmitted {
			t.Errorf("gold %s: %d checks, tested_as_submitted %v; want the target and regression checks of the "+
				"patch as submitted", r.ID, len(r.Checks), r.TestedAsSubmitted)
		}
	}

	var preds []map[string]any
	for _, id := range ids {
		preds = append(preds, map[string]any{"instance_id": id, "model_patch": "", "model_name_or_path": "empty"})
	}
	clitest.WriteJSONL(t, filepath.Join(work, "empty.jsonl"), preds)
	emptySuite := filepath.Join(work, "empty-suite")
	out, errOut, code = runTender(t, "import", "swebench", "--instances", instances, "--predictions",
		filepath.Join(work, "empty.jsonl"), "--repo", "r1chardj0n3s__parse="+clone, "--out", emptySuite)
	if code != cli.ExitOK {
		t.Fatalf("import of empty predictions: exit %d\n%s%s", code, out, errOut)
	}
	results, _ = gradeOK(t, emptySuite)
	checkVerdicts(t, "empty", results, ids, report.Unresolved)
	for _, r := range results {
		if !r.EmptyPatch || len(r.Checks) != 0 {
			t.Errorf("empty %s: empty_patch=%v with %d checks; an empty patch is recorded and never run",
				r.ID, r.EmptyPatch, len(r.Checks))
		}
	}
}

// readInstanceIDs returns the instance_id of every line of a SWE-bench JSONL file.
func readInstanceIDs(t *testing.T, path string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(clitest.ReadFile(t, path)), "\n") {
		var inst struct {
			ID string `json:"instance_id"`
		}
		if err := json.Unmarshal([]byte(line), &inst); err != nil || inst.ID == "" {
			t.Fatalf("%s: a line without instance_id (%v): %.80s", path, err, line)
		}
		ids = append(ids, inst.ID)
	}
	return ids
}

// checkVerdicts wants exactly one result per id, each with the verdict want.
func checkVerdicts(t *testing.T, what string, results []report.PairResult, ids []string, want report.Verdict) {
	t.Helper()
	got := map[string]report.Verdict{}
	for _, r := range results {
		got[r.ID] = r.Verdict
	}
	if len(got) != len(ids) || len(results) != len(ids) {
		t.Errorf("%s: %d results for %d instances: %v", what, len(results), len(ids), got)
	}
	for _, id := range ids {
		if v, ok := got[id]; !ok || v != want {
			t.Errorf("%s %s: verdict %q, want %q", what, id, v, want)
		}
	}
}
