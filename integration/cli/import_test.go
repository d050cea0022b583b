package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/swebench"
	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestImportSWEBench imports a hand-written, three-instance SWE-bench file with predictions
// (a gold patch, a wrong one and an empty one), then grades the suite it wrote.
func TestImportSWEBench(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	gold := clitest.ReadFile(t, repoRoot+"/fixtures/demo/shared/reference.diff")
	testPatch := clitest.ReadFile(t, repoRoot+"/fixtures/demo/shared/test.diff")
	wrong := clitest.ReadFile(t, repoRoot+"/fixtures/demo/pairs/wrong-fix/patch.diff")
	f2p := `["tests/test_formatting.py::test_group_digits_negative",` +
		` "tests/test_formatting.py::test_format_number_negative_int"]`
	inst := func(id string) map[string]any {
		return map[string]any{"instance_id": id, "repo": "acme/calc", "base_commit": clitest.DemoBase, "patch": gold,
			"test_patch": testPatch, "problem_statement": "format_number puts a comma after the minus sign",
			"FAIL_TO_PASS": f2p, "PASS_TO_PASS": []string{"tests/test_arithmetic.py::test_mean"}, "version": "0.3"}
	}
	clitest.WriteJSONL(t, filepath.Join(work, "instances.jsonl"),
		[]map[string]any{inst("acme__calc-1"), inst("acme__calc-2"), inst("acme__calc-3"), inst("acme__calc-4")})
	clitest.WriteJSONL(t, filepath.Join(work, "preds.jsonl"), []map[string]any{
		{"instance_id": "acme__calc-1", "model_patch": gold, "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-2", "model_patch": wrong, "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-3", "model_patch": "", "model_name_or_path": "model-x"},
	})
	suite := filepath.Join(work, "suite")
	out, errOut, code := e2e.RunTender(t, "import", "swebench", "--instances", filepath.Join(work, "instances.jsonl"),
		"--predictions", filepath.Join(work, "preds.jsonl"), "--repo", "acme/calc="+clone, "--out", suite)
	if code != cli.ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"wrote suite", "3 pair(s) of model model-x", "empty model patch: acme__calc-3",
		"no prediction: acme__calc-4"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	manifest := clitest.ReadFile(t, filepath.Join(suite, "tender.yaml"))
	for _, want := range []string{"bundle: repos/acme__calc.bundle", "id: acme__calc-1",
		"base_commit: " + clitest.DemoBase,
		"tests/test_formatting.py::test_format_number_negative_int", "reference_patch: pairs/acme__calc-1/reference.diff"} {
		if !strings.Contains(manifest, want) {
			t.Errorf("tender.yaml lacks %q:\n%s", want, manifest)
		}
	}

	bundle := filepath.Join(work, "graded")
	out, errOut, code = e2e.RunTender(t, "grade", suite, "--out", bundle, "--concurrency", "2")
	if code != cli.ExitOK {
		t.Fatalf("grade: exit %d\n%s%s", code, out, errOut)
	}
	results, err := report.ReadResults(filepath.Join(bundle, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]report.Verdict{}
	for _, r := range results {
		got[r.ID] = r.Verdict
		if r.ID == "acme__calc-3" && (!r.EmptyPatch || len(r.Checks) != 0) {
			t.Errorf("empty patch: empty_patch=%v with %d checks; it must be recorded and never run",
				r.EmptyPatch, len(r.Checks))
		}
	}
	want := map[string]report.Verdict{"acme__calc-1": report.Resolved, "acme__calc-2": report.Unresolved,
		"acme__calc-3": report.Unresolved}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: verdict %s, want %s", id, got[id], v)
		}
	}
	var sum swebench.RunReport
	summary := clitest.ReadFile(t, filepath.Join(bundle, "swebench-summary.json"))
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		t.Fatal(err)
	}
	// acme__calc-4 has no prediction: SWE-bench counts it in total_instances and incomplete_ids.
	if sum.TotalInstances != 4 || sum.SubmittedInstances != 3 ||
		!slices.Equal(sum.IncompleteIDs, []string{"acme__calc-4"}) ||
		!slices.Equal(sum.EmptyPatchIDs, []string{"acme__calc-3"}) ||
		!slices.Equal(sum.ResolvedIDs, []string{"acme__calc-1"}) {
		t.Errorf("swebench-summary.json: %+v", sum)
	}
	var res report.Results
	if err := json.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(bundle, "results.json"))), &res); err != nil {
		t.Fatal(err)
	}
	if res.Model != "model-x" || !slices.Equal(res.NoPrediction, []string{"acme__calc-4"}) {
		t.Errorf("results.json: model %q, no_prediction %v", res.Model, res.NoPrediction)
	}
	md := clitest.ReadFile(t, filepath.Join(bundle, "summary.md"))
	for _, want := range []string{"model model\\-x", "1 instance(s) without a prediction (incomplete)**",
		"Verdict (Tender's rule)", "SWE-bench's rule, same run"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if strings.Contains(md, "pairs/acme__calc-3/") {
		t.Error("summary.md links the empty-patch pair's directory, which the bundle does not hold")
	}
	rep := clitest.ReadFile(t, filepath.Join(bundle, "pairs", "acme__calc-2", "report.json"))
	if !strings.Contains(rep, `"patch_successfully_applied": true`) {
		t.Errorf("wrong-fix report.json:\n%s", rep)
	}
}
