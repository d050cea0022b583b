package cli

import (
	"context"
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
	"github.com/tender-grader/tender/sandbox"
	"github.com/tender-grader/tender/sandbox/docker"
)

// TestRealWorldCutIDsNamingSeveralTests grades javaproperties-80 (fixtures/realworld), whose two
// required IDs SWE-bench cut at a space each name several collected tests, with its reference
// patch, as imported twice: by default the pair has no verdict (error, test_id_unresolved), an
// ambiguous failure in swebench-summary.json and a "cut ID" line in summary.md; with
// --ambiguous-ids all every stand-in is required and passes, the pair is resolved, and the
// SWE-bench column agrees (RESOLVED_FULL).
func TestRealWorldCutIDsNamingSeveralTests(t *testing.T) {
	const (
		id       = "jwodder__javaproperties"
		instance = "jwodder__javaproperties-80"
		f2pCut   = "test/test_loads_xml.py::test_loads_xml[<properties><entry"
		p2pCut   = "test/test_loads_xml.py::test_loads_xml[<properties>\\n"
	)
	work := t.TempDir()
	fixture := filepath.Join(repoRoot, "fixtures", "realworld", "javaproperties")
	bundle, err := filepath.Abs(filepath.Join(fixture, id+".bundle"))
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(work, "clone")
	e2e.GitIn(t, work, "", "clone", "-q", bundle, clone)
	instances := filepath.Join(work, "instances.jsonl")
	for _, line := range strings.Split(clitest.ReadFile(t, filepath.Join(fixture, "instances.jsonl")), "\n") {
		if strings.Contains(line, `"instance_id": "`+instance+`"`) {
			clitest.WriteFile(t, instances, line+"\n")
		}
	}
	// Its package is under src/; the tests of this instance need nothing beyond the pytest image,
	// so no plugin either (Tender's table would add pytest_mock, which that image lacks).
	env := filepath.Join(work, "env.yaml")
	clitest.WriteFile(t, env, "jwodder/javaproperties:\n  \"*\":\n    image: "+pytestImageID(t)+
		"\n    python_path: [src]\n    plugins: []\n")
	importSuite := func(name string, flags ...string) string {
		out := filepath.Join(work, name)
		args := append([]string{"import", "swebench", "--instances", instances, "--env", env,
			"--repo", id + "=" + clone, "--out", out}, flags...)
		if stdout, stderr, code := e2e.RunTender(t, args...); code != cli.ExitOK {
			t.Fatalf("import %v: exit %d\n%s%s", flags, code, stdout, stderr)
		}
		return out
	}

	results, out := e2e.GradeOK(t, importSuite("default"))
	r := results[0]
	if r.Verdict != report.Error || r.Reasons[0].Code != report.CodeTestIDUnresolved ||
		!strings.Contains(r.Reasons[0].Detail, "names 8 collected tests") {
		t.Errorf("default: %s %+v; want error, test_id_unresolved naming 8 tests", r.Verdict, r.Reasons)
	}
	var sum swebench.RunReport
	summary := clitest.ReadFile(t, filepath.Join(out, "swebench-summary.json"))
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sum.ErrorIDs, []string{instance}) || !slices.Equal(sum.AmbiguousFailureIDs, []string{instance}) ||
		sum.AmbiguousFailureInstances != 1 || sum.InfraFailureInstances != 0 ||
		sum.FailureReasons[instance] != "test_id_unresolved" {
		t.Errorf("default: swebench-summary.json %+v", sum)
	}
	if md := clitest.ReadFile(t, filepath.Join(out, "summary.md")); !strings.Contains(md, "**cut ID**") {
		t.Errorf("default: summary.md has no cut ID line:\n%s", md)
	}

	results, out = e2e.GradeOK(t, importSuite("all", "--ambiguous-ids", "all"))
	r = results[0]
	if r.Verdict != report.Resolved || len(r.StandInTestIDs[f2pCut]) != 8 || len(r.StandInTestIDs[p2pCut]) != 6 ||
		!slices.Equal(r.FailToPass, []string{f2pCut}) {
		t.Errorf("all: %s %+v, stand-ins %d and %d, fail_to_pass %q; want resolved with 8 and 6 stand-ins",
			r.Verdict, r.Reasons, len(r.StandInTestIDs[f2pCut]), len(r.StandInTestIDs[p2pCut]), r.FailToPass)
	}
	for _, c := range r.Checks {
		for _, standIn := range slices.Concat(r.StandInTestIDs[f2pCut], r.StandInTestIDs[p2pCut]) {
			if st, ok := c.Tests[standIn]; ok && st != report.TestPassed {
				t.Errorf("all: %s: stand-in %s %s", c.Name, standIn, st)
			}
		}
	}
	if len(r.Checks) == 0 || len(r.Checks[0].Tests) != 8 {
		t.Errorf("all: the target check required %d tests, want the 8 stand-ins", len(r.Checks[0].Tests))
	}
	e2e.CheckSWEBenchAgrees(t, out, results)
	t.Logf("all: %s, %d + %d stand-ins; notes %v", r.Verdict, len(r.StandInTestIDs[f2pCut]),
		len(r.StandInTestIDs[p2pCut]), report.DistinctCodes(r.Reasons))
}

// pytestImageID is the ID of the built-in pytest image, made when missing.
func pytestImageID(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	d, err := docker.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	id, err := d.EnsureImage(ctx, sandbox.ImagePytest, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
