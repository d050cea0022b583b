package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report/github/githubtest"
)

// runnerEnv is the environment the Actions runner gives a container action: INPUT_* with the
// input names upper-cased (hyphens kept), GITHUB_* and the files it collects outputs from.
type runnerEnv struct {
	env                      map[string]string
	output, summary, workdir string
}

func newRunnerEnv(t *testing.T, apiURL string, inputs map[string]string, event any) *runnerEnv {
	t.Helper()
	dir := t.TempDir()
	r := &runnerEnv{output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "step_summary"), workdir: dir}
	eventPath := filepath.Join(dir, "event.json")
	writeJSONFile(t, eventPath, event)
	r.env = actionsEnv(apiURL)
	delete(r.env, "GITHUB_TOKEN") // the runner does not export the token; the input carries it
	for k, v := range map[string]string{"GITHUB_OUTPUT": r.output, "GITHUB_STEP_SUMMARY": r.summary,
		"GITHUB_EVENT_PATH": eventPath, "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_WORKSPACE": dir,
		"RUNNER_TEMP": dir, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_RUN_NUMBER": "7"} {
		r.env[k] = v
	}
	for k, v := range inputs {
		r.env["INPUT_"+strings.ToUpper(k)] = v
	}
	return r
}

func (r *runnerEnv) environ() []string {
	var out []string
	for k, v := range r.env {
		out = append(out, k+"="+v)
	}
	return out
}

// run runs the binary's entry with no arguments, as the container's ENTRYPOINT is run.
func (r *runnerEnv) run(t *testing.T) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), "dev", nil, r.environ(), strings.NewReader(""), &stdout, &stderr)
	return exitCode(context.Background(), err), stdout.String(), stderr.String()
}

var outputRE = regexp.MustCompile(`(?m)^([a-z-]+)<<_GitHubActionsFileCommandDelimeter_\n(.*)\n_GitHubActionsFileCommandDelimeter_$`)

func (r *runnerEnv) outputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatalf("no outputs: %v", err)
	}
	got := map[string]string{}
	for _, m := range outputRE.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = m[2]
	}
	return got
}

func TestActionVerifyFromEnvironmentAlone(t *testing.T) {
	f := githubtest.New(t)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b", "c", "d", "e"), nil)
	cases := []struct {
		failOn string
		code   int
	}{{"never", exitOK}, {"error", exitFailure}, {"unresolved", exitFailure}}
	for _, tc := range cases {
		t.Run("fail-on "+tc.failOn, func(t *testing.T) {
			r := newRunnerEnv(t, f.URL, map[string]string{"command": "verify", "bundle": dir, "fail-on": tc.failOn}, map[string]any{})
			code, stdout, stderr := r.run(t)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			want := map[string]string{"resolved": "2", "unresolved": "1", "integrity-violation": "1", "error": "1",
				"total": "5", "bundle": dir, "conclusion": "failure"}
			if d := cmp.Diff(want, r.outputs(t)); d != "" {
				t.Errorf("outputs (-want +got):\n%s", d)
			}
			if !strings.Contains(stdout, "::group::tender verify "+dir) || !strings.Contains(stdout, "::endgroup::") {
				t.Errorf("no log group:\n%s", stdout)
			}
			if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), "## Tender: demo") {
				t.Errorf("job summary %q lacks summary.md", s)
			}
		})
	}
}

func TestActionPublishFromEnvironmentAlone(t *testing.T) {
	headSHA := strings.Repeat("9", 40)
	f := githubtest.New(t)
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", 1, githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}))
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
	r := newRunnerEnv(t, f.URL, map[string]string{"command": "publish", "bundle": dir, "publish": "true",
		"token": pubToken, "approval-environment": "publish", "fail-on": "never"}, event)
	r.env["GITHUB_EVENT_NAME"] = "pull_request"
	code, stdout, stderr := r.run(t)
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
	if !strings.HasPrefix(stdout, "::add-mask::"+pubToken+"\n") {
		t.Errorf("the token is not masked before anything else is logged:\n%s", stdout)
	}
	assertNoToken(t, &pubRun{stdout: *bytes.NewBufferString(stdout), stderr: *bytes.NewBufferString(stderr)}, dir)
	for _, path := range []string{r.output, r.summary} {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(pubToken)) {
			t.Errorf("%s carries the token", path)
		}
	}
	if got := r.outputs(t); got["conclusion"] != "failure" || got["check-run-url"] != "https://github.example.test/octo/grader/runs/1" {
		t.Errorf("outputs %v: want conclusion failure and the check run's URL", got)
	}
	if run := cr.Runs()[0]; run.DetailsURL != "https://github.example.test/octo/grader/actions/runs/4242" || run.ExternalID != bundleDigest(t, dir) {
		t.Errorf("run %+v: want the workflow run as details_url and the bundle digest as external_id", run)
	}
}

func TestActionPublishWithoutApprovalIsDryRun(t *testing.T) {
	f := githubtest.New(t)
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", 1, githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "staging")}))
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	r := newRunnerEnv(t, f.URL, map[string]string{"command": "publish", "bundle": dir, "publish": "true",
		"token": pubToken, "approval-environment": "publish", "fail-on": "never"}, map[string]any{})
	code, stdout, stderr := r.run(t)
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
	r := newRunnerEnv(t, f.URL, map[string]string{"command": "merge", "bundle": strings.Join(dirs, "\n") + "\n", "fail-on": "never"}, map[string]any{})
	out := filepath.Join(r.workdir, "merged")
	r.env["INPUT_OUT"] = out
	if code, stdout, stderr := r.run(t); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := readResults(t, out)
	if len(got.Pairs) != 8 || r.outputs(t)["total"] != "8" || r.outputs(t)["bundle"] != out {
		t.Errorf("merged %d pairs, outputs %v", len(got.Pairs), r.outputs(t))
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
			r := newRunnerEnv(t, "https://api.example.test", inputs, map[string]any{})
			code, stdout, _ := r.run(t)
			if code != exitUsage || !strings.Contains(stdout, "::error::") {
				t.Errorf("exit %d, want %d with an ::error:: line; stdout:\n%s", code, exitUsage, stdout)
			}
		})
	}
}

func TestActionArgs(t *testing.T) {
	in := actionInputs{Command: "grade", Suite: "fixtures/demo", Out: "out", Concurrency: "3", Shard: "2/3",
		Repos: []string{"calc=../calc", "web=/src/web"}, Reruns: "3"}
	args, dir := in.args()
	want := []string{"grade", "fixtures/demo", "--out", "out", "--concurrency", "3", "--shard", "2/3", "--reruns", "3", "--repo", "calc=../calc", "--repo", "web=/src/web"}
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

// TestActionGradeFromEnvironmentAlone grades shard 2/3 of fixtures/demo with the real Docker
// backend in Action mode, with a canary token in the inputs and the environment: the token
// is masked and reaches no output, no log line and no file of the bundle.
func TestActionGradeFromEnvironmentAlone(t *testing.T) {
	r := newRunnerEnv(t, "https://api.example.test", map[string]string{"command": "grade", "suite": repoRoot + "/fixtures/demo",
		"shard": "2/3", "concurrency": "2", "token": pubToken, "fail-on": "error"}, map[string]any{})
	out := filepath.Join(r.workdir, "bundle")
	r.env["INPUT_OUT"] = out
	r.env["GITHUB_TOKEN"] = pubToken
	r.env["PATH"], r.env["HOME"] = os.Getenv("PATH"), os.Getenv("HOME")
	code, stdout, stderr := r.run(t)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res := readResults(t, out)
	got := r.outputs(t)
	if res.Shard != "2/3" || got["total"] != fmt.Sprint(len(res.Pairs)) || got["bundle"] != out || got["conclusion"] != "success" {
		t.Errorf("shard %q, %d pairs, outputs %v", res.Shard, len(res.Pairs), got)
	}
	assertNoToken(t, &pubRun{stdout: *bytes.NewBufferString(stdout), stderr: *bytes.NewBufferString(stderr)}, out)
	for _, path := range []string{r.output, r.summary} {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(pubToken)) {
			t.Errorf("%s carries the token", path)
		}
	}
	if s, _ := os.ReadFile(r.summary); !strings.Contains(string(s), "demo") {
		t.Errorf("job summary %q", s)
	}
	// One log group per pair, opened and closed, with no candidate text in it.
	if opened, closed := strings.Count(stdout, "::group::["), strings.Count(stdout, "::endgroup::"); opened != len(res.Pairs) || closed != opened {
		t.Errorf("%d groups opened and %d closed for %d pairs:\n%s", opened, closed, len(res.Pairs), stdout)
	}
}
