package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github"
	"github.com/tender-grader/tender/report/github/githubtest"
)

// baselinePair: the baseline batch of feedbackBundles, in which b was resolved and a was not.
func feedbackBundles(t *testing.T) (baseline, current string) {
	t.Helper()
	base := pubResults("demo", "", "a", "b", "c", "d") // a resolved, b unresolved, c iv, d error
	base.Pairs[0].Verdict, base.Pairs[1].Verdict = report.Unresolved, report.Resolved
	cur := pubResults("demo", "", "a", "b", "c", "d", "e")
	cur.Pairs[0].Verdict, cur.Pairs[1].Verdict = report.Resolved, report.Unresolved // a improved, b regressed
	return sealPubBundle(t, base, nil), sealPubBundle(t, cur, nil)
}

// approvedPublish routes the approval of run 4242 and a check run of octo/grader on sha, for
// n publications of the same bundle (the first creates the run, later ones find it).
func approvedPublish(f *githubtest.Fake, sha string, n int) *githubtest.CheckRuns {
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", n,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}))
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(sha), n, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), n+1, cr.Update) // one annotation batch, then a completion per publication
	return cr
}

// TestActionPublishCommentsOnceAndUpdates: publish with comment, baseline and an approval, run
// twice as a re-run would: the comment is created once and updated in place; the check run's
// text and the comment show what regressed and improved; the outputs carry the comment's URL
// and the comparison.
func TestActionPublishCommentsOnceAndUpdates(t *testing.T) {
	headSHA := strings.Repeat("9", 40)
	f := githubtest.New(t)
	cr := approvedPublish(f, headSHA, 2)
	cm := githubtest.NewComments("octo", "grader")
	f.On("GET", cm.ListPath(3), 2, cm.List)
	f.On("POST", cm.CreatePath(3), 1, cm.Create)
	f.On("PATCH", cm.UpdatePath(1), 1, cm.Update)
	baseDir, dir := feedbackBundles(t)
	event := map[string]any{"pull_request": map[string]any{"number": 3, "head": map[string]any{"sha": headSHA}}}
	inputs := map[string]string{"command": "publish", "bundle": dir, "publish": "true", "token": clitest.Token,
		"approval-environment": "publish", "fail-on": "never", "comment": "true", "baseline": baseDir}
	for run := 1; run <= 2; run++ {
		r := clitest.NewRunner(t, Main, f.URL, inputs, event)
		r.Env["GITHUB_EVENT_NAME"] = "pull_request"
		code, stdout, stderr := r.Run(t)
		if code != exitOK {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", run, code, stdout, stderr)
		}
		clitest.AssertNoToken(t, stdout, stderr, dir)
		got := r.Outputs(t)
		if got["comment-url"] != "https://github.example.test/octo/grader/pull/3#issuecomment-1" ||
			got["regressed"] != "1" || got["improved"] != "1" {
			t.Errorf("run %d: outputs %v", run, got)
		}
	}
	all := cm.All()
	if len(all) != 1 || all[0].Writes != 2 || !strings.HasPrefix(all[0].Body, github.CommentMarker("tender: demo")) {
		t.Fatalf("comments %+v: want one, created then updated", all)
	}
	for _, want := range []string{"| b | **regressed** | resolved | unresolved | same |",
		"| a | improved | unresolved | resolved | same |", "| e | new | — | resolved | — |"} {
		if !strings.Contains(all[0].Body, want) || !strings.Contains(cr.Runs()[0].Text, want) {
			t.Errorf("the comment or the check run's text lacks %q:\ncomment:\n%s\ntext:\n%s", want, all[0].Body,
				cr.Runs()[0].Text)
		}
	}
}

// TestActionCommentNeedsTheApproval: without an approval, publish with comment is a dry run
// whose payload shows the comment's requests, and nothing is written.
func TestActionCommentNeedsTheApproval(t *testing.T) {
	f := githubtest.New(t)
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", 1, githubtest.JSON(200, []any{}))
	_, dir := feedbackBundles(t)
	event := map[string]any{"pull_request": map[string]any{"number": 3,
		"head": map[string]any{"sha": strings.Repeat("9", 40)}}}
	r := clitest.NewRunner(t, Main, f.URL, map[string]string{"command": "publish", "bundle": dir, "publish": "true",
		"token": clitest.Token, "approval-environment": "publish", "fail-on": "never", "comment": "true"}, event)
	r.Env["GITHUB_EVENT_NAME"] = "pull_request"
	code, stdout, stderr := r.Run(t)
	payload := stdout[strings.Index(stdout, "\n[\n")+1 : strings.LastIndex(stdout, "\n]\n")+3]
	steps := dryRunSteps(t, []byte(payload))
	last := steps[len(steps)-1]
	if code != exitOK || !strings.Contains(stderr, "dry run") || last.Method != "POST" ||
		last.Path != "/repos/octo/grader/issues/3/comments" {
		t.Fatalf("exit %d, last step %s %s\nstderr:\n%s", code, last.Method, last.Path, stderr)
	}
	for _, req := range f.Requests() {
		if req.Method != "GET" {
			t.Errorf("sent %s %s without approval", req.Method, req.Path)
		}
	}
}

// TestActionFailOnRegressionAndEmpty: fail-on regression fails on a regression and only then;
// without a baseline it warns and passes; fail-on-empty fails an empty bundle.
func TestActionFailOnRegressionAndEmpty(t *testing.T) {
	baseDir, dir := feedbackBundles(t)
	same := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	empty := sealPubBundle(t, pubResults("demo", ""), nil)
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		code   int
		says   string
	}{
		{"a regression", map[string]string{"bundle": dir, "baseline": baseDir, "fail-on": "regression"}, exitFailure,
			"::error::fail-on regression: 1 pair(s) regressed since the baseline, first b (resolved, now unresolved)"},
		{"no regression", map[string]string{"bundle": same, "baseline": same, "fail-on": "regression"}, exitOK, ""},
		{"no baseline", map[string]string{"bundle": dir, "fail-on": "regression"}, exitOK,
			"::warning::fail-on regression: there is no baseline"},
		{"an empty bundle", map[string]string{"bundle": empty, "fail-on": "never", "fail-on-empty": "true"},
			exitFailure, "::error::fail-on-empty: the bundle holds no pair"},
		{"an empty bundle, allowed", map[string]string{"bundle": empty, "fail-on": "error"}, exitOK, ""},
		{"a baseline that is no bundle", map[string]string{"bundle": dir, "baseline": t.TempDir() + "/nope"},
			exitUsage, "--baseline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.inputs["command"] = "verify"
			r := clitest.NewRunner(t, Main, "https://api.example.test", tc.inputs, map[string]any{})
			code, stdout, stderr := r.Run(t)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.says) {
				t.Fatalf("exit %d, want %d saying %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.says, stdout, stderr)
			}
		})
	}
}

// TestActionJSONOutput: the json output is one line that later steps can read with fromJSON.
func TestActionJSONOutput(t *testing.T) {
	baseDir, dir := feedbackBundles(t)
	r := clitest.NewRunner(t, Main, "https://api.example.test", map[string]string{"command": "verify",
		"bundle": dir, "baseline": baseDir, "fail-on": "never"}, map[string]any{})
	if code, stdout, stderr := r.Run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	raw := r.Outputs(t)["json"]
	var got jsonSummary
	if err := json.Unmarshal([]byte(raw), &got); err != nil || strings.Contains(raw, "\n") {
		t.Fatalf("json output %q: %v", raw, err)
	}
	want := map[report.Change][]string{report.Regressed: {"b"}, report.Improved: {"a"}, report.New: {"e"}}
	if got.Comparison == nil || got.Total != 5 || got.Truncated {
		t.Fatalf("json output %s", raw)
	}
	if d := cmp.Diff(want, got.Comparison.Pairs); d != "" {
		t.Errorf("changed pairs (-want +got):\n%s", d)
	}
	if b, err := os.ReadFile(r.Outputs(t)["results-file"]); err != nil || !json.Valid(b) {
		t.Errorf("results-file: %v", err)
	}
}

func TestActionFeedbackArgs(t *testing.T) {
	in := actionInputs{Command: "publish", Out: "out", PublicKey: "k.pub", Bundles: []string{"b"}, JobSummary: true,
		Feedback: feedbackInputs{Baseline: "last", Comment: true, EventPR: 12}}
	args, _ := in.args()
	want := []string{"publish", "b", "--key", "k.pub", "--baseline", "last", "--baseline-key", "k.pub",
		"--comment", "--pr", "12"}
	if d := cmp.Diff(want, args); d != "" {
		t.Errorf("publish args (-want +got):\n%s", d)
	}
	in.Feedback.PR = "40" // the input wins over the event
	if args, _ := in.args(); args[len(args)-1] != "40" {
		t.Errorf("args %v: want --pr 40", args)
	}
	in.Feedback = feedbackInputs{Comment: true} // no pull request: no comment
	if args, _ := in.args(); strings.Contains(strings.Join(args, " "), "--comment") {
		t.Errorf("args %v: a comment without a pull request", args)
	}
	grade := actionInputs{Command: "grade", Suite: "s", Out: "out", Feedback: feedbackInputs{Baseline: "last"}}
	if args, _ := grade.args(); strings.Join(args, " ") != "grade s --out out --baseline last" {
		t.Errorf("grade args %v", args)
	}
}

// TestFeedbackFlagRefusals: the baseline and comment flags refuse what cannot work, before
// anything runs, with one line naming the flag.
func TestFeedbackFlagRefusals(t *testing.T) {
	bundleDir := sealPubBundle(t, pubResults("demo", "", "a"), nil)
	nope := t.TempDir() + "/nope"
	checkBadInputs(t, []badInput{
		{name: "grade --baseline with --shard", args: []string{"grade", repoRoot + "/fixtures/demo", "--out",
			t.TempDir() + "/o", "--shard", "1/2", "--baseline", bundleDir}, want: []string{"--baseline", "--shard",
			"merge --baseline"}},
		{name: "grade --baseline not a bundle", args: []string{"grade", repoRoot + "/fixtures/demo", "--out",
			t.TempDir() + "/o", "--baseline", nope}, want: []string{"--baseline " + nope, "not a bundle directory"}},
		{name: "--baseline-key alone", args: []string{"publish", bundleDir, "--baseline-key", "k.pub"},
			want: []string{"--baseline-key needs --baseline"}},
		{name: "--comment without --pr", args: []string{"publish", bundleDir, "--comment"},
			want: []string{"--comment and --pr"}},
		{name: "--pr without --comment", args: []string{"publish", bundleDir, "--pr", "3"},
			want: []string{"--comment and --pr 3"}},
		{name: "merge --baseline not a bundle", args: []string{"merge", "--out", t.TempDir() + "/m", bundleDir,
			"--baseline", nope}, want: []string{"--baseline"}},
	})
}

// TestMergeAndPublishCompare: merge --baseline writes the comparison into the merged bundle's
// results.json and summary.md; publish --baseline puts it in the dry run's check-run text.
func TestMergeAndPublishCompare(t *testing.T) {
	base := pubResults("demo", "", mergeIDs(6)...)
	baseDir := sealPubBundle(t, base, nil)
	whole := pubResults("demo", "", mergeIDs(6)...)
	// pair-01 regressed, pair-02 improved
	whole.Pairs[0].Verdict, whole.Pairs[1].Verdict = report.Unresolved, report.Resolved
	dirs := shardBundles(t, whole, 2)
	out := t.TempDir() + "/merged"
	stdout, stderr, code := runTender(t, append([]string{"merge", "--out", out, "--baseline", baseDir}, dirs...)...)
	if code != exitOK || !strings.Contains(stdout, "1 regressed, 1 improved, 0 changed, 0 new, 0 gone, 4 unchanged") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	got := clitest.ReadResults(t, out)
	if got.Comparison == nil || len(got.Comparison.Of(report.Regressed)) != 1 {
		t.Fatalf("merged results.json comparison %+v", got.Comparison)
	}
	if s := clitest.ReadFile(t, out+"/summary.md"); !strings.Contains(s, "## Compared with the baseline") {
		t.Errorf("summary.md:\n%s", s)
	}
	stdout, stderr, code = runTender(t, "publish", dirs[0], "--baseline", baseDir)
	if code != exitOK || !strings.Contains(stdout, `## Compared with the baseline`) {
		t.Errorf("publish --baseline dry run: exit %d\n%s%s", code, stdout, stderr)
	}
}
