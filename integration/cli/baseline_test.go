package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tender-grader/tender/integration/internal/e2e"
	"github.com/tender-grader/tender/internal/cli"
	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github/githubtest"
)

// TestBaselineComparisonOfTheDemo grades fixtures/demo, then a copy in which gold-fix carries
// wrong-fix's patch and wrong-fix gold-fix's, against the first bundle: gold-fix regressed
// and wrong-fix improved, in the grade's line, results.json and summary.md. Then the Action
// publishes the second bundle twice with a comment against the validating fake: the comment is
// created once, then updated in place.
func TestBaselineComparisonOfTheDemo(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "k")
	if _, stderr, code := e2e.RunTender(t, "keygen", "--out", keys); code != cli.ExitOK {
		t.Fatalf("keygen: %s", stderr)
	}
	_, base := e2e.GradeOK(t, repoRoot+"/fixtures/demo", "--signing-key", keys+".key")
	suiteDir := e2e.CopyDir(t, repoRoot+"/fixtures/demo")
	gold := filepath.Join(suiteDir, "pairs/gold-fix/patch.diff")
	wrong := filepath.Join(suiteDir, "pairs/wrong-fix/patch.diff")
	goldPatch, wrongPatch := clitest.ReadFile(t, gold), clitest.ReadFile(t, wrong)
	clitest.WriteFile(t, gold, wrongPatch)
	clitest.WriteFile(t, wrong, goldPatch)

	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := e2e.RunTender(t, "grade", suiteDir, "--out", out, "--signing-key", keys+".key",
		"--baseline", base, "--baseline-key", keys+".pub")
	counts := "1 regressed, 1 improved, 0 changed, 0 new, 0 gone, 4 unchanged"
	if code != cli.ExitMismatch || !strings.Contains(stdout, counts) {
		t.Fatalf("exit %d (want %d: the two swapped pairs miss their expect)\n%s%s", code, cli.ExitMismatch, stdout, stderr)
	}
	res := clitest.ReadResults(t, out)
	c := res.Comparison
	if c == nil || len(c.Of(report.Regressed)) != 1 || c.Of(report.Regressed)[0].ID != "gold-fix" ||
		len(c.Of(report.Improved)) != 1 || c.Of(report.Improved)[0].ID != "wrong-fix" || !c.Pairs[0].PatchChanged {
		t.Fatalf("comparison %+v", c)
	}
	summary := clitest.ReadFile(t, filepath.Join(out, "summary.md"))
	section := summary[strings.Index(summary, "## Compared with the baseline"):strings.Index(summary, "## Pairs")]
	for _, row := range []string{"| gold\\-fix | **regressed** | resolved | unresolved | changed |",
		"| wrong\\-fix | improved | unresolved | resolved | changed |"} {
		if !strings.Contains(section, row) {
			t.Errorf("summary.md lacks %q:\n%s", row, section)
		}
	}
	t.Logf("grade --baseline said: %s", lastLine(stdout))
	t.Logf("summary.md:\n%s", section)
	publishTwiceWithComment(t, out, keys+".pub")
}

// publishTwiceWithComment publishes bundle as the Action does on a pull request, approved, with
// a comment, twice (a re-run), and checks the comment was created once and updated in place.
func publishTwiceWithComment(t *testing.T, bundle, pub string) {
	t.Helper()
	headSHA := strings.Repeat("9", 40)
	f := githubtest.New(t)
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", 2,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}))
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(headSHA), 2, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), 3, cr.Update) // the annotations, then a completion per run
	cm := githubtest.NewComments("octo", "grader")
	f.On("GET", cm.ListPath(3), 2, cm.List)
	f.On("POST", cm.CreatePath(3), 1, cm.Create)
	f.On("PATCH", cm.UpdatePath(1), 1, cm.Update)
	event := map[string]any{"pull_request": map[string]any{"number": 3, "head": map[string]any{"sha": headSHA}}}
	inputs := map[string]string{"command": "publish", "bundle": bundle, "public-key": pub, "publish": "true",
		"token": clitest.Token, "approval-environment": "publish", "comment": "true", "fail-on": "never"}
	for run := 1; run <= 2; run++ {
		r := clitest.NewRunner(t, cli.Main, f.URL, inputs, event)
		r.Env["GITHUB_EVENT_NAME"] = "pull_request"
		code, stdout, stderr := r.Run(t)
		if code != cli.ExitOK {
			t.Fatalf("publish %d: exit %d\n%s%s", run, code, stdout, stderr)
		}
		clitest.AssertNoToken(t, stdout, stderr, bundle)
		t.Logf("publish %d: outputs regressed=%s improved=%s comment-url=%s", run, r.Outputs(t)["regressed"],
			r.Outputs(t)["improved"], r.Outputs(t)["comment-url"])
	}
	all := cm.All()
	if len(all) != 1 || all[0].Writes != 2 || !strings.Contains(all[0].Body, "| gold\\-fix | **regressed** |") {
		t.Fatalf("comments %+v: want one, created then updated, showing the regression", all)
	}
	var record []string
	for _, req := range f.Requests() {
		record = append(record, req.Method+" "+req.Path)
	}
	t.Logf("the fake's record:\n%s", strings.Join(record, "\n"))
	t.Logf("the comment (%d writes):\n%s", all[0].Writes, all[0].Body)
	if title := cr.Runs()[0].Title; !strings.HasSuffix(title, "; 1 regressed, 1 improved") {
		t.Errorf("check run title %q", title)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
