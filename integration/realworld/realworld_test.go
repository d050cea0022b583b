package realworld

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tender-grader/tender/integration/internal/e2e"
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
	fixture := filepath.Join(e2e.RepoRoot, "fixtures", "realworld", dir)
	instances := filepath.Join(fixture, "instances.jsonl")
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	bundle, err := filepath.Abs(filepath.Join(fixture, id+".bundle"))
	if err != nil {
		t.Fatal(err)
	}
	e2e.GitIn(t, work, "", "clone", "-q", bundle, clone)

	ids := readInstanceIDs(t, instances)
	if len(ids) != 2 {
		t.Fatalf("%s: %d instances, want 2", instances, len(ids))
	}
	suite := filepath.Join(work, "suite")
	out, errOut, code := e2e.RunTender(t, "import", "swebench", "--instances", instances,
		"--repo", id+"="+clone, "--out", suite)
	if code != cli.ExitOK || !strings.Contains(out, "wrote suite") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if env, ok := realWorldEnvs[dir]; ok != strings.Contains(out, "from Tender's table of known environments") ||
		ok && !strings.Contains(out, "in 1 environment(s): "+env) {
		t.Fatalf("import of %s: want the environment %q from the table (none: %v):\n%s", dir, env, !ok, out)
	}

	out, errOut, code = e2e.RunTender(t, "validate", "--run", suite)
	if code != cli.ExitOK {
		t.Fatalf("validate --run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, pair := range ids {
		if !strings.Contains(out, "sound   "+pair) {
			t.Errorf("validate --run does not call %s sound:\n%s", pair, out)
		}
	}

	results, bundle := e2e.GradeOK(t, suite, "--concurrency", "2")
	e2e.CheckVerdicts(t, "gold", results, ids, report.Resolved)
	e2e.CheckSWEBenchAgrees(t, bundle, results)
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
	out, errOut, code = e2e.RunTender(t, "import", "swebench", "--instances", instances, "--predictions",
		filepath.Join(work, "empty.jsonl"), "--repo", id+"="+clone, "--out", emptySuite)
	if code != cli.ExitOK {
		t.Fatalf("import of empty predictions: exit %d\n%s%s", code, out, errOut)
	}
	results, _ = e2e.GradeOK(t, emptySuite)
	e2e.CheckVerdicts(t, "empty", results, ids, report.Unresolved)
	for _, r := range results {
		if !r.EmptyPatch || len(r.Checks) != 0 {
			t.Errorf("empty %s: empty_patch=%v with %d checks; an empty patch is recorded and never run",
				r.ID, r.EmptyPatch, len(r.Checks))
		}
	}
}

// realWorldEnvs are the environments the import must write from Tender's table, by project.
var realWorldEnvs = map[string]string{"async-lru": "aio-libs__async-lru-any"}

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
