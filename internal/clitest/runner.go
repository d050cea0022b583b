package clitest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Token is a canary GitHub token: a test hands it to the program and then looks for it in
// every log and file, where it must never be.
const Token = "ghs_CANARY_publish_token_9f8e7d6c5b4a"

// ActionsEnv is the environment of a workflow job on GitHub Actions, with apiURL as the API
// and Token as GITHUB_TOKEN.
func ActionsEnv(apiURL string) map[string]string {
	return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_API_URL": apiURL, "GITHUB_TOKEN": Token,
		"GITHUB_REPOSITORY": "octo/grader", "GITHUB_SHA": strings.Repeat("a", 40), "GITHUB_RUN_ID": "4242",
		"GITHUB_SERVER_URL": "https://github.example.test"}
}

// Runner is the environment the Actions runner gives a container action: INPUT_* with the
// input names upper-cased (hyphens kept), GITHUB_* and the files it collects outputs from.
type Runner struct {
	Env                      map[string]string
	Output, Summary, Workdir string
	entry                    Entry
}

// NewRunner writes event as the event file and returns a runner that runs entry with inputs.
func NewRunner(t testing.TB, entry Entry, apiURL string, inputs map[string]string, event any) *Runner {
	t.Helper()
	dir := t.TempDir()
	r := &Runner{Output: filepath.Join(dir, "output"), Summary: filepath.Join(dir, "step_summary"), Workdir: dir,
		entry: entry}
	eventPath := filepath.Join(dir, "event.json")
	WriteJSONFile(t, eventPath, event)
	r.Env = ActionsEnv(apiURL)
	delete(r.Env, "GITHUB_TOKEN") // the runner does not export the token; the input carries it
	for k, v := range map[string]string{"GITHUB_OUTPUT": r.Output, "GITHUB_STEP_SUMMARY": r.Summary,
		"GITHUB_EVENT_PATH": eventPath, "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_WORKSPACE": dir,
		"RUNNER_TEMP": dir, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_RUN_NUMBER": "7"} {
		r.Env[k] = v
	}
	for k, v := range inputs {
		r.Env["INPUT_"+strings.ToUpper(k)] = v
	}
	return r
}

// Environ is Env as KEY=VALUE lines.
func (r *Runner) Environ() []string {
	var out []string
	for k, v := range r.Env {
		out = append(out, k+"="+v)
	}
	return out
}

// Run runs the program with no arguments, as the container's ENTRYPOINT is run, and returns
// its exit code, stdout and stderr.
func (r *Runner) Run(t testing.TB) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := r.entry(context.Background(), "dev", nil, r.Environ(), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// outputRE is one output in the file GITHUB_OUTPUT names, as go-githubactions writes it.
var outputRE = regexp.MustCompile(
	`(?m)^([a-z-]+)<<_GitHubActionsFileCommandDelimeter_\n(.*)\n_GitHubActionsFileCommandDelimeter_$`)

// Outputs reads the step outputs the program wrote.
func (r *Runner) Outputs(t testing.TB) map[string]string {
	t.Helper()
	b, err := os.ReadFile(r.Output)
	if err != nil {
		t.Fatalf("no outputs: %v", err)
	}
	got := map[string]string{}
	for _, m := range outputRE.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = m[2]
	}
	return got
}

// AssertNoToken checks the canary token is nowhere in stdout but in its ::add-mask:: line,
// nowhere in stderr and in no file under dir.
func AssertNoToken(t testing.TB, stdout, stderr, dir string) {
	t.Helper()
	out := strings.ReplaceAll(stdout, "::add-mask::"+Token, "")
	for name, s := range map[string]string{"stdout": out, "stderr": stderr} {
		if strings.Contains(s, Token) || strings.Contains(s, "CANARY") {
			t.Errorf("%s carries the token:\n%s", name, s)
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(Token)) {
				t.Errorf("bundle file %s carries the token", path)
			}
		}
		return nil
	})
}
