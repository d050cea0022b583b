package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report/github/githubtest"
)

// workflowRunEvent is the payload of a workflow_run event, trimmed to what Tender reads and
// what distinguishes the cases: a pull request from a fork has an empty pull_requests list.
func workflowRunEvent(trigger, headSHA string, prs []any, headRepo string) map[string]any {
	return map[string]any{"action": "completed", "workflow_run": map[string]any{
		"id": 987, "name": "grade", "event": trigger, "status": "completed", "conclusion": "success",
		"head_branch": "fix-calc", "head_sha": headSHA, "run_attempt": 1, "pull_requests": prs,
		"head_repository": map[string]any{
			"full_name": headRepo,
		}, "repository": map[string]any{"full_name": "octo/grader"},
	}, "repository": map[string]any{"full_name": "octo/grader"}}
}

// publishFromEvent runs the Action's publish on a workflow_run event with GITHUB_SHA at the
// default branch's head, and returns the head_sha the check run was created with.
func publishFromEvent(t *testing.T, event map[string]any, inputs map[string]string, wantSHA string) (string, string) {
	t.Helper()
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
	)
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(wantSHA), 1, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), 2, cr.Update)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	in := map[string]string{"command": "publish", "bundle": dir, "publish": "true", "token": clitest.Token,
		"approval-environment": "publish", "fail-on": "never"}
	for k, v := range inputs {
		in[k] = v
	}
	r := clitest.NewRunner(t, Main, f.URL, in, event)
	r.Env["GITHUB_EVENT_NAME"] = "workflow_run"
	r.Env["GITHUB_SHA"] = strings.Repeat("d", 40) // the default branch's head, as under workflow_run
	code, stdout, stderr := r.Run(t)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	runs := cr.Runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	if got := r.Outputs(t)["check-run-url"]; got == "" {
		t.Errorf("no check-run-url output")
	}
	return runs[0].HeadSHA, stdout
}

func TestActionPublishFromWorkflowRunOfAForkPullRequest(t *testing.T) {
	prHead := strings.Repeat("f", 40)
	got, stdout := publishFromEvent(t, workflowRunEvent("pull_request", prHead, []any{}, "forker/grader"), nil, prHead)
	if got != prHead {
		t.Errorf("check run on %s, want the pull request's head %s (not GITHUB_SHA)", got, prHead)
	}
	line := "tender: the check run attaches to " + prHead + " (workflow_run: the head of run 987 (pull_request), a pull request from forker/grader)"
	if !strings.Contains(stdout, line) {
		t.Errorf("the log does not say which commit and why; want %q in:\n%s", line, stdout)
	}
	t.Logf("%s", line)
}

func TestActionPublishFromWorkflowRunOfASameRepositoryPullRequest(t *testing.T) {
	prHead := strings.Repeat("e", 40)
	prs := []any{
		map[string]any{
			"number": 5,
			"head":   map[string]any{"sha": prHead, "ref": "fix-calc"},
			"base":   map[string]any{"sha": strings.Repeat("d", 40)},
		},
	}
	got, stdout := publishFromEvent(t, workflowRunEvent("pull_request", prHead, prs, "octo/grader"), nil, prHead)
	if got != prHead || !strings.Contains(stdout, "(workflow_run: the head of pull request #5)") {
		t.Errorf("check run on %s; log:\n%s", got, stdout)
	}
}

func TestActionPublishShaInputWinsOverTheEvent(t *testing.T) {
	pinned := strings.Repeat("1", 40)
	got, stdout := publishFromEvent(
		t,
		workflowRunEvent("pull_request", strings.Repeat("f", 40), []any{}, "forker/grader"),
		map[string]string{"sha": pinned},
		pinned,
	)
	if got != pinned || !strings.Contains(stdout, "(the sha input)") {
		t.Errorf("check run on %s; log:\n%s", got, stdout)
	}
}

func TestActionPublishWorkflowRunFromPullRequestTargetNeedsTheShaInput(t *testing.T) {
	f := githubtest.New(t)
	dir := sealPubBundle(t, pubResults("demo", "", "a"), nil)
	inputs := map[string]string{"command": "publish", "bundle": dir, "publish": "true", "token": clitest.Token,
		"approval-environment": "publish"}
	event := workflowRunEvent("pull_request_target", strings.Repeat("d", 40), []any{}, "forker/grader")
	r := clitest.NewRunner(t, Main, f.URL, inputs, event)
	r.Env["GITHUB_EVENT_NAME"] = "workflow_run"
	code, stdout, _ := r.Run(t)
	if code != exitUsage || !strings.Contains(stdout, "pass the pull request's head commit in the sha input") {
		t.Errorf("exit %d, want %d and a message naming the sha input:\n%s", code, exitUsage, stdout)
	}
}

func TestActionPublishCheckNameAndAnnotationsInputs(t *testing.T) {
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
	)
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(strings.Repeat("a", 40)), 1, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	var batch []byte
	f.On(
		"PATCH",
		cr.UpdatePath(1),
		1,
		func(w http.ResponseWriter, r *http.Request, b []byte) { batch = b; cr.Update(w, r, b) },
	)
	f.On("PATCH", cr.UpdatePath(1), 1, cr.Update)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b", "c", "d"), nil)
	inputs := map[string]string{"command": "publish", "bundle": dir, "publish": "true", "token": clitest.Token,
		"approval-environment": "publish", "fail-on": "never", "check-name": "grading / nightly", "annotations": "1"}
	r := clitest.NewRunner(t, Main, f.URL, inputs, map[string]any{})
	if code, stdout, stderr := r.Run(t); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	run := cr.Runs()[0]
	var b struct {
		Output struct {
			Annotations []any `json:"annotations"`
		} `json:"output"`
	}
	json.Unmarshal(batch, &b)
	if run.Name != "grading / nightly" || run.Annotations != 1 || len(b.Output.Annotations) != 1 ||
		!strings.Contains(run.Text, "1 of 3 annotations are shown") {
		t.Errorf("run %+v: want the check-name input and one annotation of three", run)
	}
}

func TestActionJobSummaryInput(t *testing.T) {
	f := githubtest.New(t)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	for _, tc := range []struct {
		value string
		wrote bool
	}{{"true", true}, {"", true}, {"false", false}} {
		t.Run("job-summary="+tc.value, func(t *testing.T) {
			inputs := map[string]string{"command": "verify", "bundle": dir, "fail-on": "never", "job-summary": tc.value}
			r := clitest.NewRunner(t, Main, f.URL, inputs, map[string]any{})
			if code, stdout, stderr := r.Run(t); code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			s, _ := os.ReadFile(r.Summary)
			if got := strings.Contains(string(s), "## Tender: demo"); got != tc.wrote {
				t.Errorf("job summary written %v, want %v: %q", got, tc.wrote, s)
			}
		})
	}
}
