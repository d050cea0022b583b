package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/report"
)

// TestImportSWEBench imports a hand-written, three-instance SWE-bench file with predictions
// (a gold patch, a wrong one and an empty one), then grades the suite it wrote.
func TestImportSWEBench(t *testing.T) {
	clone := demoClone(t)
	work := t.TempDir()
	gold := readFile(t, repoRoot+"/fixtures/demo/shared/reference.diff")
	testPatch := readFile(t, repoRoot+"/fixtures/demo/shared/test.diff")
	wrong := readFile(t, repoRoot+"/fixtures/demo/pairs/wrong-fix/patch.diff")
	f2p := `["tests/test_formatting.py::test_group_digits_negative", "tests/test_formatting.py::test_format_number_negative_int"]`
	inst := func(id string) map[string]any {
		return map[string]any{"instance_id": id, "repo": "acme/calc", "base_commit": demoBase, "patch": gold,
			"test_patch": testPatch, "problem_statement": "format_number puts a comma after the minus sign",
			"FAIL_TO_PASS": f2p, "PASS_TO_PASS": []string{"tests/test_arithmetic.py::test_mean"}, "version": "0.3"}
	}
	writeJSONL(t, filepath.Join(work, "instances.jsonl"), []map[string]any{inst("acme__calc-1"), inst("acme__calc-2"), inst("acme__calc-3")})
	writeJSONL(t, filepath.Join(work, "preds.jsonl"), []map[string]any{
		{"instance_id": "acme__calc-1", "model_patch": gold, "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-2", "model_patch": wrong, "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-3", "model_patch": "", "model_name_or_path": "model-x"},
	})
	suite := filepath.Join(work, "suite")
	out, errOut, code := runTender(t, "import", "swebench", "--instances", filepath.Join(work, "instances.jsonl"),
		"--predictions", filepath.Join(work, "preds.jsonl"), "--repo", "acme/calc="+clone, "--out", suite)
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"wrote suite", "3 pair(s) of model model-x", "empty model patch: acme__calc-3"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	manifest := readFile(t, filepath.Join(suite, "tender.yaml"))
	for _, want := range []string{"bundle: repos/acme__calc.bundle", "id: acme__calc-1", "base_commit: " + demoBase,
		"tests/test_formatting.py::test_format_number_negative_int", "reference_patch: pairs/acme__calc-1/reference.diff"} {
		if !strings.Contains(manifest, want) {
			t.Errorf("tender.yaml lacks %q:\n%s", want, manifest)
		}
	}

	bundle := filepath.Join(work, "graded")
	out, errOut, code = runTender(t, "grade", suite, "--out", bundle, "--concurrency", "2")
	if code != exitOK {
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
			t.Errorf("empty patch: empty_patch=%v with %d checks; it must be recorded and never run", r.EmptyPatch, len(r.Checks))
		}
	}
	want := map[string]report.Verdict{"acme__calc-1": report.Resolved, "acme__calc-2": report.Unresolved, "acme__calc-3": report.Unresolved}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: verdict %s, want %s", id, got[id], v)
		}
	}
	summary := readFile(t, filepath.Join(bundle, "swebench-summary.json"))
	if !strings.Contains(summary, `"empty_patch_ids": [`) || !strings.Contains(summary, "acme__calc-3") {
		t.Errorf("swebench-summary.json:\n%s", summary)
	}
}

// TestImportRefusesBadRecords: malformed SWE-bench input is refused with exit 2.
func TestImportRefusesBadRecords(t *testing.T) {
	work := t.TempDir()
	tests := []struct{ name, line, want string }{
		{"short commit", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"abc","patch":"","FAIL_TO_PASS":["t::x"]}`, "base_commit"},
		{"bad test list", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + demoBase + `","patch":"","FAIL_TO_PASS":"not json"}`, "JSON list"},
		{"empty FAIL_TO_PASS", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + demoBase + `","patch":"","FAIL_TO_PASS":"[]"}`, "FAIL_TO_PASS is empty"},
		{"path-like id", `{"instance_id":"../x","repo":"a/b","base_commit":"` + demoBase + `","patch":"","FAIL_TO_PASS":["t::x"]}`, "instance_id"},
		{"no clone for repo", `{"instance_id":"a__b-1","repo":"a/b","base_commit":"` + demoBase + `","patch":"","FAIL_TO_PASS":["t::x"]}`, "--repo a__b=PATH"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(work, "i"+string(rune('0'+i))+".jsonl")
			if err := os.WriteFile(in, []byte(tt.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runTender(t, "import", "swebench", "--instances", in, "--out", filepath.Join(work, "o"+string(rune('0'+i))))
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, tt.want)
			}
		})
	}
}
