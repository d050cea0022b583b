package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
)

// TestRealWorld runs what a user runs on real projects, with no edit between the commands:
// fixtures/realworld holds projects from Debian's source packages as git bundles, with SWE-bench
// instances made from their upstream fixes (see its README). The test clones the bundle,
// imports the instances without --env, validates them in real verifiers, then grades the
// reference patches (resolved) and empty predictions (unresolved, never run). parse 1.20.2 and
// boltons 25.0.0 need no environment; async-lru 2.0.5 gets its environment from Tender's table
// of known environments (Debian's pytest-asyncio and pytest-timeout, their plugins and the ini
// options of its setup.cfg), built offline the first time. boltons' formatargspec instance
// requires two test IDs that SWE-bench cut at a space: each must be resolved to the one
// collected test it names.
func TestRealWorld(t *testing.T) {
	t.Run("parse", func(t *testing.T) {
		realWorldRun(t, "parse", "r1chardj0n3s__parse", nil)
	})
	t.Run("async-lru", func(t *testing.T) {
		start := time.Now()
		realWorldRun(t, "async-lru", "aio-libs__async-lru", nil)
		t.Logf("async-lru, with its environment (built the first time): %s", time.Since(start).Round(time.Second))
	})
	t.Run("boltons", func(t *testing.T) {
		const cut = "tests/test_funcutils_fb.py::test_get_invocation_sig_str["
		realWorldRun(t, "boltons", "mahmoud__boltons", map[string]map[string]string{
			"mahmoud__boltons-formatargspec": {
				cut + "None-args-kwargs-None-*args,": cut + "None-args-kwargs-None-*args, **kwargs-(*args, **kwargs)]",
				cut + "args0-None-None-None-a,":      cut + "args0-None-None-None-a, b-(a, b)]",
			},
		})
	})
}

// realWorldRun imports fixtures/realworld/DIR with --repo ID=clone of its bundle, validates it,
// grades the reference patches and empty predictions, and wants every pair's resolved_test_ids
// to be as given (none when a pair is not named).
func realWorldRun(t *testing.T, dir, id string, resolvedIDs map[string]map[string]string) {
	fixture := filepath.Join(repoRoot, "fixtures", "realworld", dir)
	instances := filepath.Join(fixture, "instances.jsonl")
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	bundle, err := filepath.Abs(filepath.Join(fixture, id+".bundle"))
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
		"--repo", id+"="+clone, "--out", suite)
	if code != cli.ExitOK || !strings.Contains(out, "wrote suite") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if env, ok := realWorldEnvs[dir]; ok != strings.Contains(out, "from Tender's table of known environments") ||
		ok && !strings.Contains(out, "in 1 environment(s): "+env) {
		t.Fatalf("import of %s: want the environment %q from the table (none: %v):\n%s", dir, env, !ok, out)
	}

	out, errOut, code = runTender(t, "validate", "--run", suite)
	if code != cli.ExitOK {
		t.Fatalf("validate --run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, pair := range ids {
		if !strings.Contains(out, "sound   "+pair) {
			t.Errorf("validate --run does not call %s sound:\n%s", pair, out)
		}
	}

	results, bundle := gradeOK(t, suite, "--concurrency", "2")
	checkVerdicts(t, "gold", results, ids, report.Resolved)
	checkSWEBenchAgrees(t, bundle, results)
	for _, r := range results {
		if len(r.Checks) != 2 || !r.TestedAsSubmitted {
			t.Errorf("gold %s: %d checks, tested_as_submitted %v; want the target and regression checks of the "+
				"patch as submitted", r.ID, len(r.Checks), r.TestedAsSubmitted)
		}
		want := resolvedIDs[r.ID]
		if len(r.ResolvedTestIDs) != len(want) {
			t.Errorf("gold %s: resolved_test_ids %v, want %v", r.ID, r.ResolvedTestIDs, want)
		}
		for cut, full := range want {
			if r.ResolvedTestIDs[cut] != full {
				t.Errorf("gold %s: %q resolved to %q, want %q", r.ID, cut, r.ResolvedTestIDs[cut], full)
			}
		}
	}

	var preds []map[string]any
	for _, pair := range ids {
		preds = append(preds, map[string]any{"instance_id": pair, "model_patch": "", "model_name_or_path": "empty"})
	}
	clitest.WriteJSONL(t, filepath.Join(work, "empty.jsonl"), preds)
	emptySuite := filepath.Join(work, "empty-suite")
	out, errOut, code = runTender(t, "import", "swebench", "--instances", instances, "--predictions",
		filepath.Join(work, "empty.jsonl"), "--repo", id+"="+clone, "--out", emptySuite)
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

// realWorldEnvs are the environments the import must write from Tender's table, by project.
var realWorldEnvs = map[string]string{"async-lru": "aio-libs__async-lru-any"}

// checkSWEBenchAgrees wants the SWE-bench column of each pair's report.json to agree with
// Tender's verdict (RESOLVED_FULL where Tender resolved), and summary.md to name no pair where
// the rules differ.
func checkSWEBenchAgrees(t *testing.T, bundle string, results []report.PairResult) {
	t.Helper()
	for _, r := range results {
		var rep map[string]struct {
			Resolved   bool   `json:"resolved"`
			Resolution string `json:"swebench_resolution"`
		}
		if err := json.Unmarshal([]byte(clitest.ReadFile(t, filepath.Join(bundle, "pairs", r.ID, "report.json"))),
			&rep); err != nil {
			t.Fatal(err)
		}
		if got := rep[r.ID]; got.Resolved != (r.Verdict == report.Resolved) ||
			(got.Resolution == "RESOLVED_FULL") != got.Resolved {
			t.Errorf("%s: report.json resolved %v, swebench_resolution %s; Tender's verdict %s", r.ID, got.Resolved,
				got.Resolution, r.Verdict)
		}
		t.Logf("%s: Tender %s, SWE-bench %s", r.ID, r.Verdict, rep[r.ID].Resolution)
	}
	if md := clitest.ReadFile(t, filepath.Join(bundle, "summary.md")); strings.Contains(md, "rules differ") {
		t.Errorf("summary.md names pairs where the rules differ:\n%s", md)
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
