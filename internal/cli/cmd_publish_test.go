package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/internal/clitest"
	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/bundle"
	"github.com/tender-grader/tender/report/github"
	"github.com/tender-grader/tender/report/github/githubtest"
)

func init() { publishClientOptions.MutationInterval = -1 }

// checkRunsModel routes a look-up on sha, one create and updates PATCHes of run 1 to a model
// of octo/grader's check runs.
func checkRunsModel(f *githubtest.Fake, sha string, updates int) *githubtest.CheckRuns {
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(sha), 1, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), updates, cr.Update)
	return cr
}

// pubResults is a small batch with one pair of each verdict.
func pubResults(suite, shard string, ids ...string) report.Results {
	r := report.Results{Schema: report.SchemaVersion, Tool: "tender test", Suite: suite, SuiteVersion: "1",
		SuiteDigest: strings.Repeat("d", 64), Shard: shard, Backend: "docker", Counts: map[report.Verdict]int{}}
	verdicts := []report.Verdict{report.Resolved, report.Unresolved, report.IntegrityViolation, report.Error}
	for i, id := range ids {
		v := verdicts[i%len(verdicts)]
		p := report.PairResult{Schema: report.SchemaVersion, ID: id, Repository: "calc", Verdict: v,
			RequestedCommit: strings.Repeat("c", 40), FailToPass: []string{"tests/test_calc.py::test_add"}}
		if v != report.Resolved {
			p.Reasons = []report.Reason{{Code: "test_failed", Detail: "tests/test_calc.py::test_add failed"}}
		}
		r.Pairs = append(r.Pairs, p)
		r.Counts[v]++
	}
	return r
}

// sealPubBundle writes r as a bundle in a new directory (results, summary and one log per pair)
// and seals it, signed when key is not nil.
func sealPubBundle(t *testing.T, r report.Results, key ed25519.PrivateKey) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	clitest.WriteJSONFile(t, filepath.Join(dir, "results.json"), r)
	clitest.WriteFile(t, filepath.Join(dir, "summary.md"), "## Tender: "+r.Suite+"\n")
	for _, p := range r.Pairs {
		clitest.WriteFile(t, filepath.Join(dir, "pairs", p.ID, "target.log"), "log of "+p.ID+"\n")
	}
	in := bundle.Inputs{Tool: r.Tool, Files: map[string]string{"suite/tender.yaml": strings.Repeat("e", 64)},
		Options: map[string]string{"backend": r.Backend, "shard": r.Shard}}
	if _, err := bundle.Seal(dir, in, key, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pubInvocation runs a command with env alone; stdin and TTY as given.
type pubRun struct {
	env            map[string]string
	stdin          string
	tty            bool
	stdout, stderr bytes.Buffer
}

func (p *pubRun) inv() *invocation {
	return &invocation{Stdin: strings.NewReader(p.stdin), Stdout: &p.stdout, Stderr: &p.stderr, TTY: p.tty,
		Getenv: func(k string) string { return p.env[k] }, Version: "tender test"}
}

func dryRunSteps(t *testing.T, stdout []byte) []github.Step {
	t.Helper()
	var steps []github.Step
	var payload []string // the Actions log interleaves workflow commands (::add-mask::)
	for _, l := range strings.Split(string(stdout), "\n") {
		if !strings.HasPrefix(l, "::") {
			payload = append(payload, l)
		}
	}
	if err := json.Unmarshal([]byte(strings.Join(payload, "\n")), &steps); err != nil {
		t.Fatalf("stdout is not the dry-run payload: %v\n%s", err, stdout)
	}
	return steps
}

func TestPublishWithoutFlagIsDryRun(t *testing.T) {
	f := githubtest.New(t) // no stubs: any request fails the test
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b", "c"), nil)
	p := &pubRun{env: clitest.ActionsEnv(f.URL)}
	if err := cmdPublish(context.Background(), p.inv(), []string{dir, "--approval-environment", "publish"}); err != nil {
		t.Fatal(err)
	}
	steps := dryRunSteps(t, p.stdout.Bytes())
	var got []string
	for _, s := range steps {
		got = append(got, s.Method+" "+s.Path)
	}
	want := []string{
		"GET /repos/octo/grader/commits/" + strings.Repeat(
			"a",
			40,
		) + "/check-runs?check_name=tender%3A+demo&filter=all&per_page=100",
		"POST /repos/octo/grader/check-runs",
		"PATCH /repos/octo/grader/check-runs/{check_run_id}",
		"PATCH /repos/octo/grader/check-runs/{check_run_id}",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if !strings.Contains(p.stderr.String(), "dry run") {
		t.Errorf("stderr %q does not say dry run", p.stderr.String())
	}
}

func TestPublishApprovalGate(t *testing.T) {
	approvals := "/repos/octo/grader/actions/runs/4242/approvals"
	cases := []struct {
		name    string
		env     string
		reply   githubtest.Reply
		publish bool
	}{
		{"approval missing", "publish", githubtest.JSON(200, []any{}), false},
		{
			"approval rejected",
			"publish",
			githubtest.JSON(200, []any{githubtest.Review("rejected", "bob", "publish")}),
			false,
		},
		{
			"approval for another environment",
			"publish",
			githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "staging")}),
			false,
		},
		{
			"approvals unreadable",
			"publish",
			githubtest.JSON(403, map[string]any{"message": "Resource not accessible"}),
			false,
		},
		{"no environment configured", "", nil, false},
		{"no token", "publish", nil, false},
		{"approved", "publish", githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := githubtest.New(t)
			if tc.reply != nil {
				f.On("GET", approvals, 1, tc.reply)
			}
			if tc.publish {
				checkRunsModel(f, strings.Repeat("a", 40), 2)
			}
			dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
			p := &pubRun{env: clitest.ActionsEnv(f.URL)}
			if tc.name == "no token" {
				delete(p.env, "GITHUB_TOKEN")
			}
			args := []string{dir, "--publish"}
			if tc.env != "" {
				args = append(args, "--approval-environment", tc.env)
			}
			if err := cmdPublish(context.Background(), p.inv(), args); err != nil {
				t.Fatal(err)
			}
			for _, r := range f.Requests() {
				if !tc.publish && r.Method != "GET" {
					t.Errorf("sent %s %s without approval", r.Method, r.Path)
				}
			}
			if !tc.publish {
				if len(dryRunSteps(t, p.stdout.Bytes())) != 4 {
					t.Error(
						"the dry run does not list the look-up, the create, one annotation batch and the completion",
					)
				}
			}
			clitest.AssertNoToken(t, p.stdout.String(), p.stderr.String(), dir)
		})
	}
}

func bundleDigest(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bundle.EnvelopeName))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestPublishLocalConfirmation(t *testing.T) {
	cases := []struct {
		name    string
		tty     bool
		typed   func(digest string) string
		publish bool
	}{
		{"typed the digest", true, func(d string) string { return d[:12] + "\n" }, true},
		{"typed it in capitals", true, func(d string) string { return strings.ToUpper(d[:12]) + "\n" }, true},
		{"typed the wrong digits", true, func(d string) string { return "000000000000\n" }, false},
		{"typed too few", true, func(d string) string { return d[:11] + "\n" }, false},
		{"typed nothing", true, func(string) string { return "" }, false},
		{"no terminal", false, func(d string) string { return d[:12] + "\n" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := githubtest.New(t)
			if tc.publish {
				checkRunsModel(f, strings.Repeat("b", 40), 2)
			}
			dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
			env := map[string]string{"GITHUB_API_URL": f.URL, "GITHUB_TOKEN": clitest.Token}
			p := &pubRun{env: env, tty: tc.tty, stdin: tc.typed(bundleDigest(t, dir))}
			err := cmdPublish(
				context.Background(),
				p.inv(),
				[]string{dir, "--publish", "--repository", "octo/grader", "--sha", strings.Repeat("b", 40)},
			)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(f.Requests()) > 0; got != tc.publish {
				t.Errorf("published %v, want %v; stderr:\n%s", got, tc.publish, p.stderr.String())
			}
			if tc.tty && !strings.Contains(p.stderr.String(), bundleDigest(t, dir)) {
				t.Errorf("the prompt does not show the bundle digest:\n%s", p.stderr.String())
			}
			clitest.AssertNoToken(t, p.stdout.String(), p.stderr.String(), dir)
		})
	}
}

func TestPublishRefusesABundleThatDoesNotVerify(t *testing.T) {
	keyFile, priv := pubKeyPair(t)
	_, otherPriv := pubKeyPair(t)
	cases := []struct {
		name   string
		key    ed25519.PrivateKey
		tamper func(dir string)
	}{
		{"results edited after sealing", priv, func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
			os.WriteFile(
				filepath.Join(dir, "results.json"),
				bytes.Replace(b, []byte(`"unresolved"`), []byte(`"resolved"`), 1),
				0o644,
			)
		}},
		{"file added", priv, func(dir string) { os.WriteFile(filepath.Join(dir, "extra.md"), []byte("x"), 0o644) }},
		{"log deleted", priv, func(dir string) { os.Remove(filepath.Join(dir, "pairs", "a", "target.log")) }},
		{"signed by another key", otherPriv, func(string) {}},
		{"unsigned", nil, func(string) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := githubtest.New(t)
			dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), tc.key)
			tc.tamper(dir)
			p := &pubRun{env: clitest.ActionsEnv(f.URL)}
			err := cmdPublish(
				context.Background(),
				p.inv(),
				[]string{dir, "--publish", "--key", keyFile, "--approval-environment", "publish"},
			)
			if err == nil || exitCode(context.Background(), err) != exitFailure {
				t.Fatalf("error %v, want a verification failure (exit 1)", err)
			}
			if p.stdout.Len() != 0 {
				t.Errorf("printed a payload for a bundle that does not verify:\n%s", p.stdout.String())
			}
		})
	}
}

// pubKeyPair writes a key pair with bundle.GenerateKey and returns the public key file and the
// private key.
func pubKeyPair(t *testing.T) (string, ed25519.PrivateKey) {
	t.Helper()
	dir := t.TempDir()
	if err := bundle.GenerateKey(filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub")); err != nil {
		t.Fatal(err)
	}
	priv, err := bundle.LoadPrivateKey(filepath.Join(dir, "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "k.pub"), priv
}

func TestPublishFallsBackOn403InActions(t *testing.T) {
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
	)
	f.On(
		"GET",
		"/repos/octo/grader/commits/"+strings.Repeat("a", 40)+"/check-runs",
		1,
		githubtest.JSON(200, map[string]any{"total_count": 0, "check_runs": []any{}}),
	)
	f.On(
		"POST",
		"/repos/octo/grader/check-runs",
		1,
		githubtest.JSON(403, map[string]any{"message": "Resource not accessible by integration"}),
	)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b", "c"), nil)
	env := clitest.ActionsEnv(f.URL)
	env["GITHUB_STEP_SUMMARY"] = filepath.Join(t.TempDir(), "summary.md")
	p := &pubRun{env: env}
	t.Cleanup(func() { t.Logf("stdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String()) })
	if err := cmdPublish(context.Background(), p.inv(), []string{dir, "--publish", "--approval-environment", "publish"}); err != nil {
		t.Fatal(err)
	}
	out := p.stdout.String()
	for _, want := range []string{"::add-mask::" + clitest.Token, "::warning::tender: could not publish the check run",
		"::warning endLine=1,file=tender.yaml,line=1,title=b%3A unresolved::",
		"::error endLine=1,file=tender.yaml,line=1,title=c%3A integrity_violation::"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	summary, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	if err != nil || !strings.Contains(string(summary), "## Tender: demo") {
		t.Errorf("job summary %q, %v", summary, err)
	}
	if !strings.Contains(p.stderr.String(), "403") {
		t.Errorf("stderr does not say it fell back on a 403:\n%s", p.stderr.String())
	}
	clitest.AssertNoToken(t, p.stdout.String(), p.stderr.String(), dir)
}

func TestPublishUsage(t *testing.T) {
	dir := sealPubBundle(t, pubResults("demo", "", "a"), nil)
	cases := map[string][]string{
		"no bundle":      {},
		"two bundles":    {dir, dir},
		"unknown flag":   {dir, "--token", "x"},
		"no repository":  {dir, "--publish", "--sha", strings.Repeat("a", 40)},
		"suite outside":  {dir, "--suite", "../elsewhere"},
		"suite absolute": {dir, "--suite", filepath.Join(dir, "nope")},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			p := &pubRun{env: map[string]string{}}
			err := cmdPublish(context.Background(), p.inv(), args)
			if code := exitCode(context.Background(), err); code != exitUsage {
				t.Errorf("exit %d (%v), want %d", code, err, exitUsage)
			}
		})
	}
}

// TestPublishApprovalIsReadFromTheRunsRepository publishes to another repository with
// --repository: the approval is still looked up on this run, in GITHUB_REPOSITORY.
func TestPublishApprovalIsReadFromTheRunsRepository(t *testing.T) {
	f := githubtest.New(t)
	f.On(
		"GET",
		"/repos/octo/grader/actions/runs/4242/approvals",
		1,
		githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
	)
	cr := githubtest.NewCheckRuns("elsewhere", "target")
	f.On("GET", cr.ListPath(strings.Repeat("a", 40)), 1, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), 2, cr.Update)
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	p := &pubRun{env: clitest.ActionsEnv(f.URL)}
	if err := cmdPublish(context.Background(), p.inv(), []string{dir, "--publish", "--approval-environment", "publish", "--repository", "elsewhere/target"}); err != nil {
		t.Fatalf("%v\n%s", err, p.stderr.String())
	}
	if runs := cr.Runs(); len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Errorf("runs %+v", runs)
	}
}

// TestPublishOnARerunAfterARejection: attempt 2 of a run whose attempt 1 was rejected stays a
// dry run, and says why.
func TestPublishOnARerunAfterARejection(t *testing.T) {
	f := githubtest.New(t)
	f.On("GET", "/repos/octo/grader/actions/runs/4242/approvals", 1, githubtest.JSON(200, []any{
		githubtest.Review("rejected", "bob", "publish"), githubtest.Review("approved", "alice", "publish")}))
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	env := clitest.ActionsEnv(f.URL)
	env["GITHUB_RUN_ATTEMPT"] = "2"
	p := &pubRun{env: env}
	if err := cmdPublish(context.Background(), p.inv(), []string{dir, "--publish", "--approval-environment", "publish"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.stderr.String(), "dry run") ||
		!strings.Contains(p.stderr.String(), "attempt 2 of run 4242") {
		t.Errorf("stderr does not say it is a dry run because of the re-run's history:\n%s", p.stderr.String())
	}
	t.Logf("%s", strings.SplitN(p.stderr.String(), "\n", 2)[0])
}

// TestPublishLocallyWithAPersonalToken: GitHub refuses to create check runs with a personal
// access token; the error says a GitHub App installation token is needed.
func TestPublishLocallyWithAPersonalToken(t *testing.T) {
	f := githubtest.New(t)
	sha := strings.Repeat("b", 40)
	f.On(
		"GET",
		"/repos/octo/grader/commits/"+sha+"/check-runs",
		1,
		githubtest.JSON(200, map[string]any{"total_count": 0, "check_runs": []any{}}),
	)
	f.On(
		"POST",
		"/repos/octo/grader/check-runs",
		1,
		githubtest.JSON(403, map[string]any{"message": "You must authenticate via a GitHub App."}),
	)
	dir := sealPubBundle(t, pubResults("demo", "", "a"), nil)
	p := &pubRun{env: map[string]string{"GITHUB_API_URL": f.URL, "GITHUB_TOKEN": clitest.Token}, tty: true,
		stdin: bundleDigest(t, dir)[:12] + "\n"}
	err := cmdPublish(
		context.Background(),
		p.inv(),
		[]string{dir, "--publish", "--repository", "octo/grader", "--sha", sha},
	)
	if exitCode(context.Background(), err) != exitFailure ||
		!strings.Contains(err.Error(), "GitHub App installation token") {
		t.Fatalf("error %v: want exit 1 naming the GitHub App installation token", err)
	}
	clitest.AssertNoToken(t, p.stdout.String(), p.stderr.String(), dir)
	t.Logf("%v", err)
}

// TestPublishTwiceUpdatesOneRun publishes the same bundle twice: the second finds the run by
// the bundle digest (its external_id) and updates it.
func TestPublishTwiceUpdatesOneRun(t *testing.T) {
	f := githubtest.New(t)
	for range 2 {
		f.On(
			"GET",
			"/repos/octo/grader/actions/runs/4242/approvals",
			1,
			githubtest.JSON(200, []any{githubtest.Review("approved", "alice", "publish")}),
		)
	}
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.On("GET", cr.ListPath(strings.Repeat("a", 40)), 2, cr.List)
	f.On("POST", cr.CreatePath(), 1, cr.Create)
	f.On("PATCH", cr.UpdatePath(1), 2+1, cr.Update) // first: batch and final; second: final only
	dir := sealPubBundle(t, pubResults("demo", "", "a", "b"), nil)
	for i := range 2 {
		p := &pubRun{env: clitest.ActionsEnv(f.URL)}
		if err := cmdPublish(context.Background(), p.inv(), []string{dir, "--publish", "--approval-environment", "publish"}); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
		t.Logf("publish %d: %s", i+1, strings.TrimSpace(p.stderr.String()))
	}
	runs := cr.Runs()
	if len(runs) != 1 || runs[0].ExternalID != bundleDigest(t, dir) || runs[0].Annotations != 1 {
		t.Errorf("runs %+v: want one, with the bundle digest as external_id and its one annotation once", runs)
	}
}
