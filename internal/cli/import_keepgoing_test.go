package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tender-grader/tender/grader/suite"
	"github.com/tender-grader/tender/internal/clitest"
)

// importInstance is a demo instance whose test patch also adds calc/data.json, a file outside
// the default restored paths.
func importInstance(t *testing.T, id, base, version string) map[string]any {
	t.Helper()
	testPatch := clitest.ReadFile(t, repoRoot+"/fixtures/demo/shared/test.diff") +
		"diff --git a/calc/data.json b/calc/data.json\nnew file mode 100644\n--- /dev/null\n+++ b/calc/data.json\n@@ -0,0 +1 @@\n+{}\n"
	return map[string]any{"instance_id": id, "repo": "acme/calc", "base_commit": base,
		"patch": clitest.ReadFile(t, repoRoot+"/fixtures/demo/shared/reference.diff"), "test_patch": testPatch,
		"problem_statement": "format_number puts a comma after the minus sign", "version": version,
		"FAIL_TO_PASS": []string{"tests/test_formatting.py::test_group_digits_negative"}}
}

// TestImportKeepGoing: an instance whose base commit is not in the clone and a malformed
// record each get one line; without --keep-going nothing at all is written (not --out, not a
// temporary directory), and a rerun with --keep-going writes a suite that loads, records the
// model, the instances left out and the restored paths the test patch owns.
func TestImportKeepGoing(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	missing := strings.Repeat("ab", 20)
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{
		importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3"),
		importInstance(t, "acme__calc-2", missing, "0.3"),
		{
			"instance_id":  "acme__calc-3",
			"repo":         "acme/calc",
			"base_commit":  clitest.DemoBase,
			"FAIL_TO_PASS": "not a list",
		},
		importInstance(t, "acme__calc-4", clitest.DemoBase, "0.3"),
		importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3"),
	})
	preds := filepath.Join(work, "preds.jsonl")
	clitest.WriteJSONL(t, preds, []map[string]any{
		{"instance_id": "acme__calc-1", "model_patch": "", "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-2", "model_patch": "", "model_name_or_path": "model-x"},
		{"instance_id": "acme__calc-3", "model_patch": "", "model_name_or_path": "model-x"},
	})
	out := filepath.Join(work, "suites", "s")
	args := []string{
		"import",
		"swebench",
		"--instances",
		insts,
		"--predictions",
		preds,
		"--repo",
		"acme__calc=" + clone,
		"--out",
		out,
	}

	_, stderr, code := runTender(t, args...)
	lines := errorLines(stderr)
	want := []string{
		"cannot import acme__calc-3: instances record 3: bad SWE-bench record",
		"cannot import acme__calc-1: instances record 5: bad SWE-bench record: instance_id \"acme__calc-1\" appears twice",
		"cannot import acme__calc-2: base commit " + missing + " is not in the clone",
		"tender: bad suite: 3 instance(s) cannot be imported (listed above); nothing was written",
	}
	if code != exitUsage || len(lines) != len(want) {
		t.Fatalf("exit %d, want %d with %d lines:\n%s", code, exitUsage, len(want), stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], w)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Fatalf("a failed import left %v behind", entries)
	}

	stdout, stderr, code := runTender(t, append(args, "--keep-going")...)
	if code != exitOK {
		t.Fatalf("--keep-going: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, w := range []string{"wrote suite " + out + ": 1 pair(s) of model model-x", "no prediction: acme__calc-4", "skipped: 3 record(s)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "skipped acme__calc-2: base commit") {
		t.Errorf("stderr does not name the skipped instance:\n%s", stderr)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Import.Model != "model-x" || s.Import.SWEBench == nil ||
		!slices.Equal(s.Import.SWEBench.NoPrediction, []string{"acme__calc-4"}) ||
		!slices.Equal(s.Import.SWEBench.NotImported, []string{"acme__calc-2", "acme__calc-3"}) {
		t.Errorf("suite records model %q and %+v", s.Import.Model, s.Import.SWEBench)
	}
	if !slices.Contains(s.RestoredPaths, "calc/data.json") || !s.Restored.Match("calc/data.json") ||
		s.Restored.Match("calc/formatting.py") {
		t.Errorf(
			"restored_paths %v: want the test patch's calc/data.json added to the defaults, and no source file",
			s.RestoredPaths,
		)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("want only the suite beside it, got %v", entries)
	}
}

// TestImportEnvSpec: --env maps each repository and version to a suite environment (one
// shared environment, OWNER__NAME-any, for the versions "*" covers), copies a Dockerfile's build context into the suite, and fails an
// instance whose repository has no entry; the written suite loads with each pair's verifier.
func TestImportEnvSpec(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	clitest.Must(t, os.MkdirAll(filepath.Join(work, "envs", "calc"), 0o755))
	clitest.WriteFile(t, filepath.Join(work, "envs", "calc", "Dockerfile"), "FROM tender-verifier/pytest\n")
	clitest.Must(t, os.WriteFile(filepath.Join(work, "envs", "calc", "requirements.txt"), []byte("wrapt\n"), 0o644))
	spec := filepath.Join(work, "env.yaml")
	clitest.Must(t, os.WriteFile(spec, []byte(`acme/calc:
  "0.3": {debian: {packages: [python3-wrapt]}, python_path: [src], setup: [["python3", "-c", "pass"]]}
  "0.4": {dockerfile: envs/calc/Dockerfile}
  "*": {image: "sha256:`+strings.Repeat("a", 64)+`"}
`), 0o644))
	other := importInstance(t, "other__x-1", clitest.DemoBase, "1")
	other["repo"] = "other/x"
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3"),
		importInstance(t, "acme__calc-2", clitest.DemoBase, "0.4"),
		importInstance(t, "acme__calc-3", clitest.DemoBase, "7.0"),
		importInstance(t, "acme__calc-4", clitest.DemoBase, "8.0"), other})
	out := filepath.Join(work, "suite")
	stdout, stderr, code := runTender(t, "import", "swebench", "--instances", insts, "--env", spec, "--keep-going",
		"--repo", "acme/calc="+clone, "--repo", "other__x="+clone, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "skipped other__x-1: --env "+spec+" has no entry for repository other/x") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout, "4 pair(s) in 3 environment(s): acme__calc-0.3, acme__calc-0.4, acme__calc-any") {
		t.Errorf("stdout:\n%s", stdout)
	}
	s, err := suite.Load(out, suite.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*suite.Pair{}
	for _, p := range s.Pairs {
		byID[p.ID] = p
	}
	wantEnv := map[string]string{
		"acme__calc-1": "acme__calc-0.3",
		"acme__calc-2": "acme__calc-0.4",
		"acme__calc-3": "acme__calc-any",
		"acme__calc-4": "acme__calc-any",
	}
	for id, env := range wantEnv {
		if p := byID[id]; p == nil || p.Environment != env {
			t.Errorf("%s: environment %v, want %s", id, p, env)
		}
	}
	v := s.VerifierFor(byID["acme__calc-1"])
	if !slices.Equal(v.PythonPath, []string{"src"}) || len(v.Setup) != 1 {
		t.Errorf("acme__calc-1 verifier: python_path %v, setup %v", v.PythonPath, v.Setup)
	}
	if e := s.Environments["acme__calc-0.4"]; e == nil || e.Kind != suite.EnvDockerfile ||
		e.Dockerfile != "envs/acme__calc-0.4/Dockerfile" {
		t.Errorf("dockerfile environment: %+v", e)
	}
	if got := clitest.ReadFile(t, filepath.Join(out, "envs", "acme__calc-0.4", "requirements.txt")); got != "wrapt\n" {
		t.Errorf("build context not copied: %q", got)
	}
	if e := s.Environments["acme__calc-any"]; e == nil || e.Kind != suite.EnvImage {
		t.Errorf("image environment: %+v", e)
	}
}

// TestImportEnvSpecRefused: a spec that cannot be used is one line and exit 2.
func TestImportEnvSpecRefused(t *testing.T) {
	work := t.TempDir()
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3")})
	for i, tc := range []struct{ name, spec, want string }{
		{"not OWNER/NAME", "acme__calc: {\"*\": {image: x}}\n", `key "acme__calc" is not OWNER/NAME`},
		{"two recipes", "acme/calc: {\"*\": {image: x, dockerfile: D}}\n", "give exactly one of debian, dockerfile or image (it has 2)"},
		{"unknown key", "acme/calc: {\"*\": {debain: {}}}\n", "debain"},
		{"empty", "", "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := filepath.Join(work, "spec"+string(rune('a'+i))+".yaml")
			clitest.Must(t, os.WriteFile(spec, []byte(tc.spec), 0o644))
			_, stderr, code := runTender(
				t,
				"import",
				"swebench",
				"--instances",
				insts,
				"--env",
				spec,
				"--out",
				filepath.Join(work, "o"+string(rune('a'+i))),
			)
			if lines := errorLines(stderr); code != exitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and one line with %q:\n%s", code, tc.want, stderr)
			}
		})
	}
}

// TestRepoFlagKeyForms: OWNER__NAME is the canonical --repo key (the suite's repository ID,
// as for grade); OWNER/NAME is the same key, so giving both is a duplicate.
func TestRepoFlagKeyForms(t *testing.T) {
	repos, err := parseRepoFlags([]string{"acme/calc=/a", "calc=/b"})
	if err != nil || repos["acme__calc"] != "/a" || repos["calc"] != "/b" {
		t.Errorf("parseRepoFlags = %v, %v", repos, err)
	}
	if _, err := parseRepoFlags([]string{"acme/calc=/a", "acme__calc=/b"}); err == nil ||
		!strings.Contains(err.Error(), "--repo acme__calc is given twice") {
		t.Errorf("both spellings: %v, want a duplicate error", err)
	}
}

// TestImportInfoRefused: the keys import writes are checked at load like any other: an
// instance listed as not a pair may not be a pair, nor an unusable id, and the model is one line.
func TestImportInfoRefused(t *testing.T) {
	clone := clitest.DemoClone(t, repoRoot)
	work := t.TempDir()
	insts := filepath.Join(work, "instances.jsonl")
	clitest.WriteJSONL(t, insts, []map[string]any{importInstance(t, "acme__calc-1", clitest.DemoBase, "0.3"),
		importInstance(t, "acme__calc-2", clitest.DemoBase, "0.3")})
	preds := filepath.Join(work, "preds.jsonl")
	clitest.WriteJSONL(t, preds,
		[]map[string]any{{"instance_id": "acme__calc-1", "model_patch": "", "model_name_or_path": "model-x"}})
	out := filepath.Join(work, "suite")
	if _, stderr, code := runTender(t, "import", "swebench", "--instances", insts, "--predictions", preds, "--repo", "acme__calc="+clone, "--out", out); code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	manifest := clitest.ReadFile(t, filepath.Join(out, "tender.yaml"))
	for _, tc := range []struct{ name, old, new, want string }{
		{"listed and a pair", "- acme__calc-2", "- acme__calc-1", `swebench.no_prediction[0]: "acme__calc-1" is also a pair`},
		{"bad id", "- acme__calc-2", "- ../x", `swebench.no_prediction[0]: "../x" is not a valid instance id`},
		{"two-line model", "model: model-x", "model: \"a\\nb\"", "model: must be one line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(manifest, tc.old) {
				t.Fatalf("tender.yaml lacks %q:\n%s", tc.old, manifest)
			}
			clitest.WriteFile(t, filepath.Join(out, "tender.yaml"), strings.Replace(manifest, tc.old, tc.new, 1))
			_, err := suite.Load(out, suite.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want %q", err, tc.want)
			}
		})
	}
}
