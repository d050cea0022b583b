package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report/github/githubtest"
)

func TestActionVerifyFromEnvironmentAlone(t *testing.T) {
	f := githubtest.New(t)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b", "c", "d", "e"), nil)
	cases := []struct {
		failOn string
		code   int
	}{{"never", exitOK}, {"error", exitFailure}, {"unresolved", exitFailure}}
	for _, tc := range cases {
		t.Run("fail-on "+tc.failOn, func(t *testing.T) {
			inputs := map[string]string{"command": "verify", "bundle": dir, "fail-on": tc.failOn}
			r := clitest.NewRunner(t, Main, f.URL, inputs, map[string]any{})
			code, stdout, stderr := r.Run(t)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			results := filepath.Join(dir, "results.json")
			want := map[string]string{"resolved": "2", "unresolved": "1", "integrity-violation": "1", "error": "1",
				"total": "5", "bundle": dir, "conclusion": "failure", "results-file": results, "regressed": "",
				"improved": "", "json": `{"bundle":"` + dir + `","results_file":"` + results + `","total":5,` +
					`"counts":{"error":1,"integrity_violation":1,"resolved":2,"unresolved":1},"conclusion":"failure",` +
					`"comparison":null,"truncated":false}`}
			if d := cmp.Diff(want, r.Outputs(t)); d != "" {
				t.Errorf("outputs (-want +got):\n%s", d)
			}
			if !strings.Contains(stdout, "::group::tender verify "+dir) || !strings.Contains(stdout, "::endgroup::") {
				t.Errorf("no log group:\n%s", stdout)
			}
			if s, _ := os.ReadFile(r.Summary); !strings.Contains(string(s), "## Tender: demo") {
				t.Errorf("job summary %q lacks summary.md", s)
			}
		})
	}
}

func TestActionPublishFromEnvironmentAlone(t *testing.T) {
	headSHA := strings.Repeat("9", 40)
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
	)
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(headSHA), 1, cr.List)
	var created []byte
	f.On("POST", cr.CreatePath(), 1, func(w http.ResponseWriter, r *http.Request, body []byte) {
		created = body
		cr.Create(w, r, body)
	})
	f.On("PATCH", cr.UpdatePath(1), 2, cr.Update)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	event := map[string]any{"pull_request": map[string]any{"number": 3, "head": map[string]any{"sha": headSHA}}}
	r := clitest.NewRunner(t, Main, f.URL, map[string]string{"command": "publish", "bundle": dir, "publish": "true",
		"token": clitest.Token, "approval-environment": "publish", "fail-on": "never"}, event)
	r.Env["GITHUB_EVENT_NAME"] = "pull_request"
	code, stdout, stderr := r.Run(t)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var body struct {
		HeadSHA string `json:"head_sha"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal(created, &body); err != nil || body.HeadSHA != headSHA || body.Status != "in_progress" {
		t.Errorf("created %s (%v): want head_sha from the pull request's head and in_progress", created, err)
	}
	if !strings.HasPrefix(stdout, "::add-mask::"+clitest.Token+"\n") {
		t.Errorf("the token is not masked before anything else is logged:\n%s", stdout)
	}
	clitest.AssertNoToken(t, stdout, stderr, dir)
	for _, path := range []string{r.Output, r.Summary} {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(clitest.Token)) {
			t.Errorf("%s carries the token", path)
		}
	}
	got := r.Outputs(t)
	if got["conclusion"] != "failure" || got["check-run-url"] != "https://github.example.test/octo/grader/runs/1" {
		t.Errorf("outputs %v: want conclusion failure and the check run's URL", got)
	}
	if run := cr.Runs()[0]; run.DetailsURL != "https://github.example.test/octo/grader/actions/runs/4242" ||
		run.ExternalID != bundleDigest(t, dir) {
		t.Errorf("run %+v: want the workflow run as details_url and the bundle digest as external_id", run)
	}
}

func TestActionPublishWithoutApprovalIsDryRun(t *testing.T) {
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "staging")}),
	)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	r := clitest.NewRunner(t, Main, f.URL, map[string]string{"command": "publish", "bundle": dir, "publish": "true",
		"token": clitest.Token, "approval-environment": "publish", "fail-on": "never"}, map[string]any{})
	code, stdout, stderr := r.Run(t)
	if code != exitOK || !strings.Contains(stderr, "dry run") || !strings.Contains(stdout, `"method": "POST"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, req := range f.Requests() {
		if req.Method != "GET" {
			t.Errorf("sent %s %s without approval", req.Method, req.Path)
		}
	}
}

func TestActionMergeFromEnvironmentAlone(t *testing.T) {
	whole := pubResults("demo", "", mergeIDs(8)...)
	dirs := shardBundles(t, whole, 2)
	f := githubtest.New(t)
	inputs := map[string]string{"command": "merge", "bundle": strings.Join(dirs, "\n") + "\n", "fail-on": "never"}
	r := clitest.NewRunner(t, Main, f.URL, inputs, map[string]any{})
	out := filepath.Join(r.Workdir, "merged")
	r.Env["INPUT_OUT"] = out
	if code, stdout, stderr := r.Run(t); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := clitest.ReadResults(t, out)
	if len(got.Pairs) != 8 || r.Outputs(t)["total"] != "8" || r.Outputs(t)["bundle"] != out {
		t.Errorf("merged %d pairs, outputs %v", len(got.Pairs), r.Outputs(t))
	}
}

func TestActionRejectsBadInputs(t *testing.T) {
	cases := map[string]map[string]string{
		"unknown command":       {"command": "deploy"},
		"unknown fail-on":       {"command": "verify", "fail-on": "sometimes"},
		"grade without a suite": {"command": "grade"},
		"bad concurrency":       {"command": "grade", "suite": repoRoot + "/fixtures/demo", "concurrency": "0"},
		"bad publish":           {"command": "publish", "publish": "yes please"},
		"merge of one bundle":   {"command": "merge", "bundle": "a"},
		"short sha":             {"command": "publish", "sha": "abc123"},
		"bad annotations":       {"command": "publish", "annotations": "0"},
		"bad job-summary":       {"command": "verify", "job-summary": "maybe"},
		"reruns over the cap":   {"command": "grade", "suite": repoRoot + "/fixtures/demo", "reruns": "11"},
		"negative reruns":       {"command": "grade", "suite": repoRoot + "/fixtures/demo", "reruns": "-1"},
	}
	for name, inputs := range cases {
		t.Run(name, func(t *testing.T) {
			r := clitest.NewRunner(t, Main, "https://api.example.test", inputs, map[string]any{})
			code, stdout, _ := r.Run(t)
			if code != exitUsage || !strings.Contains(stdout, "::error::") {
				t.Errorf("exit %d, want %d with an ::error:: line; stdout:\n%s", code, exitUsage, stdout)
			}
		})
	}
}

func TestActionArgs(t *testing.T) {
	in := actionInputs{Command: "grade", Suite: "fixtures/demo", Out: "out", Concurrency: "3", Shard: "2/3",
		Repos: []string{"calc=../calc", "web=/src/web"}, Reruns: "3", Durations: "last"}
	args, dir := in.args()
	want := []string{"grade", "fixtures/demo", "--out", "out", "--concurrency", "3", "--shard", "2/3",
		"--durations", "last", "--reruns", "3", "--repo", "calc=../calc", "--repo", "web=/src/web"}
	if d := cmp.Diff(want, args); d != "" || dir != "out" {
		t.Errorf("args (-want +got):\n%s\nbundle %s", d, dir)
	}
	sub := in.subInvocation(&invocation{Getenv: func(k string) string { return "secret-" + k }})
	for _, k := range []string{"GITHUB_TOKEN", "INPUT_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "INPUT_SIGNING-KEY"} {
		if v := sub.Getenv(k); v != "" {
			t.Errorf("grade sees %s=%q", k, v)
		}
	}
	if v := sub.Getenv("HOME"); v != "secret-HOME" {
		t.Errorf("grade does not see HOME: %q", v)
	}
}
