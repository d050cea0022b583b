package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github/githubtest"
)

var testNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func resultsWith(n int, v report.Verdict) report.Results {
	r := report.Results{Schema: report.SchemaVersion, Suite: "demo", Shard: "2/3"}
	for i := range n {
		r.Pairs = append(r.Pairs, report.PairResult{ID: fmt.Sprintf("pair-%03d", i), Repository: "calc",
			Verdict: v, Reasons: []report.Reason{{Code: "test_failed", Detail: "tests/test_calc.py::test_add"}}})
	}
	return r
}

var target = Target{Owner: "octo", Repo: "grader", HeadSHA: strings.Repeat("a", 40)}

type checkBody struct {
	Name       string  `json:"name"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     struct {
		Title       string            `json:"title"`
		Summary     string            `json:"summary"`
		Text        *string           `json:"text"`
		Annotations []json.RawMessage `json:"annotations"`
	} `json:"output"`
}

func decodeCheck(t *testing.T, b []byte) checkBody {
	t.Helper()
	var c checkBody
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return c
}

func TestPublish120AnnotationsCreateThreePatchesFinal(t *testing.T) {
	f := newFake(t)
	f.noRunYet(1)
	f.on(
		"POST",
		"/repos/octo/grader/check-runs",
		1,
		jsonReply(201, map[string]any{"id": 77, "html_url": "https://example.test/c/77"}),
	)
	f.on("PATCH", "/repos/octo/grader/check-runs/77", 4, jsonReply(200, map[string]any{"id": 77}))
	plan := BuildPlan(resultsWith(120, report.Unresolved), PlanInput{Target: target, Now: testNow})
	out, err := f.client(t, nil, nil).Publish(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if out.CheckRunID != 77 {
		t.Errorf("check run id %d, want 77", out.CheckRunID)
	}
	reqs := f.requests()
	var got []string
	for _, r := range reqs[1:] {
		c := decodeCheck(t, r.Body)
		got = append(got, fmt.Sprintf("%s %s status=%s conclusion=%s annotations=%d",
			r.Method, c.Name, deref(c.Status), deref(c.Conclusion), len(c.Output.Annotations)))
		if r.Auth != "Bearer "+testToken {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	want := []string{
		"POST tender: demo (shard 2/3) status=in_progress conclusion= annotations=0",
		"PATCH tender: demo (shard 2/3) status= conclusion= annotations=50",
		"PATCH tender: demo (shard 2/3) status= conclusion= annotations=50",
		"PATCH tender: demo (shard 2/3) status= conclusion= annotations=20",
		"PATCH tender: demo (shard 2/3) status=completed conclusion=failure annotations=0",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestDryRunPrintsExactlyWhatPublishSends(t *testing.T) {
	f := newFake(t)
	f.noRunYet(1)
	f.on("POST", "/repos/octo/grader/check-runs", 1, jsonReply(201, map[string]any{"id": 5}))
	f.on("PATCH", "/repos/octo/grader/check-runs/5", 3, jsonReply(200, map[string]any{"id": 5}))
	plan := BuildPlan(resultsWith(60, report.IntegrityViolation), PlanInput{Target: target, Now: testNow})
	var dry bytes.Buffer
	if err := plan.WriteDryRun(&dry); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client(t, nil, nil).Publish(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	var steps []struct {
		Method, Path string
		Body         json.RawMessage
	}
	if err := json.Unmarshal(dry.Bytes(), &steps); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(steps) != len(reqs) {
		t.Fatalf("dry run has %d steps, publish sent %d requests", len(steps), len(reqs))
	}
	for i, s := range steps {
		wantPath, _, _ := strings.Cut(strings.ReplaceAll(s.Path, "{check_run_id}", "5"), "?")
		if s.Method != reqs[i].Method || wantPath != reqs[i].Path {
			t.Errorf("step %d: dry run %s %s, sent %s %s", i, s.Method, wantPath, reqs[i].Method, reqs[i].Path)
		}
		if s.Method == "GET" {
			continue
		}
		if d := cmp.Diff(canon(t, s.Body), canon(t, reqs[i].Body)); d != "" {
			t.Errorf("step %d body (-dry +sent):\n%s", i, d)
		}
	}
}

func canon(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSummaryTruncatedWithNote(t *testing.T) {
	long := strings.Repeat("é|", 40000) // 80,000 characters, 120,000 bytes
	plan := BuildPlan(resultsWith(1, report.Resolved), PlanInput{Target: target, Summary: long, Now: testNow})
	for name, s := range map[string]string{"create": *plan.Create.Output.Summary, "final": *plan.Final.Output.Summary} {
		if n := len(s); n > MaxOutputBytes || n < MaxOutputBytes-3 {
			t.Errorf(
				"%s summary has %d bytes, want at most %d and no more than a character short",
				name,
				n,
				MaxOutputBytes,
			)
		}
		if !strings.HasSuffix(s, TruncationNote) || !utf8.ValidString(s) {
			t.Errorf("%s summary does not end with the truncation note or is not UTF-8", name)
		}
	}
	if plan.Summary != long {
		t.Error("the fallback summary lost its uncapped text")
	}
}

// TestEveryFieldCappedInBytes builds a plan whose every free-text field is multi-byte and far
// too long, and checks each against GitHub's byte limits.
func TestEveryFieldCappedInBytes(t *testing.T) {
	r := resultsWith(1, report.Unresolved)
	r.Suite = strings.Repeat("名", 200)
	r.Pairs[0].ID = strings.Repeat("ü", 300)
	r.Pairs[0].Reasons = []report.Reason{{Code: "test_failed", Detail: strings.Repeat("😀", 40000)}}
	plan := BuildPlan(r, PlanInput{Target: target, Summary: strings.Repeat("€", 30000), Now: testNow})
	a := plan.Annotations[0]
	for _, f := range []struct {
		name string
		s    string
		max  int
	}{
		{"name", plan.Name, MaxTitleBytes},
		{"summary", *plan.Final.Output.Summary, MaxOutputBytes},
		{"text", *plan.Final.Output.Text, MaxOutputBytes},
		{"annotation title", a.GetTitle(), MaxTitleBytes},
		{"annotation message", a.GetMessage(), MaxMessageBytes},
	} {
		if len(f.s) > f.max || !utf8.ValidString(f.s) {
			t.Errorf("%s: %d bytes (max %d), valid UTF-8 %v", f.name, len(f.s), f.max, utf8.ValidString(f.s))
		}
	}
}

func TestCap(t *testing.T) {
	for _, tc := range capCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cap(tc.in, tc.n, tc.note); got != tc.want {
				t.Errorf("Cap(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

var capCases = []struct {
	name, in string
	n        int
	note     string
	want     string
}{
	{"fits", "abc", 3, "…", "abc"},
	{"cut", "abcdef", 5, "…", "ab…"},
	{"multibyte fits in bytes", "éé", 4, "!", "éé"},
	{"multibyte cut on a boundary", "ééééé", 6, "!", "éé!"},
	{"never splits a sequence", "€€€", 7, "", "€€"},
	{"note longer than room", "abcdef", 2, "……", ""},
	{"note as long as room", "abcdef", 3, "…x", "…"},
	{"empty", "", 0, "x", ""},
}

func FuzzCap(f *testing.F) {
	for _, tc := range capCases {
		f.Add(tc.in, tc.n, tc.note)
	}
	f.Fuzz(func(t *testing.T, in string, n int, note string) {
		if n < 0 || n > 1<<17 || !utf8.ValidString(in) || !utf8.ValidString(note) {
			return
		}
		got := Cap(in, n, note)
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Cap(%q, %d, %q) = %q: too long or invalid", in, n, note, got)
		}
		if len(in) <= n && got != in {
			t.Fatalf("Cap changed a string that fits")
		}
		if len(in) > n && len(note) < n && !strings.HasSuffix(got, note) {
			t.Fatalf("Cap(%q, %d, %q) = %q lost the note", in, n, note, got)
		}
	})
}

func TestForbiddenFallsBackToWorkflowCommands(t *testing.T) {
	f := newFake(t)
	f.noRunYet(1)
	f.on(
		"POST",
		"/repos/octo/grader/check-runs",
		1,
		jsonReply(403, map[string]any{"message": "Resource not accessible by integration"}),
	)
	summaryPath := filepath.Join(t.TempDir(), "step_summary.md")
	var log bytes.Buffer
	a := githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(stepSummaryEnv(summaryPath)))
	r := resultsWith(2, report.Unresolved)
	r.Pairs[0].Reasons = []report.Reason{{Code: "test_failed", Detail: "50% of a, b: c\nsecond line"}}
	plan := BuildPlan(r, PlanInput{Target: target, Summary: "## the summary", Now: testNow})
	out, err := f.client(t, nil, nil).
		PublishWithFallback(context.Background(), plan, Fallback{Action: a, JobSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	if !out.FellBack || !strings.Contains(out.Note, "403") {
		t.Errorf("outcome %+v does not say it fell back on a 403", out)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	want := []string{
		"::warning::tender: could not publish the check run (creating check run \"tender: demo (shard 2/3)\": POST " + f.srv.URL + "/repos/octo/grader/check-runs: 403 Resource not accessible by integration []); annotations follow as workflow commands and the results are in the job summary",
		"::warning endLine=1,file=tender.yaml,line=1,title=pair-000: unresolved::test_failed: 50%25 of a, b: c%0Asecond line",
		"::warning endLine=1,file=tender.yaml,line=1,title=pair-001: unresolved::test_failed: tests/test_calc.py::test_add",
	}
	want[1] = strings.Replace(want[1], "title=pair-000: unresolved", "title=pair-000%3A unresolved", 1)
	want[2] = strings.Replace(want[2], "title=pair-001: unresolved", "title=pair-001%3A unresolved", 1)
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("workflow commands (-want +got):\n%s", d)
	}
	got, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "Published as a job summary") ||
		!strings.Contains(string(got), "## the summary") {
		t.Errorf("job summary %q lacks the note or the summary", got)
	}
}

func TestAPIErrorsNeverCarryTheToken(t *testing.T) {
	f := newFake(t)
	echo := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.WriteHeader(422)
		fmt.Fprintf(
			w,
			`{"message":"bad credentials: %s","errors":[{"message":"%s"}]}`,
			r.Header.Get("Authorization"),
			r.Header.Get("Authorization"),
		)
	}
	f.noRunYet(1)
	f.on("POST", "/repos/octo/grader/check-runs", 1, echo)
	var log bytes.Buffer
	_, err := f.client(t, nil, &log).
		Publish(context.Background(), BuildPlan(resultsWith(1, report.Resolved), PlanInput{Target: target, Now: testNow}))
	if err == nil {
		t.Fatal("publish succeeded against a 422")
	}
	for name, s := range map[string]string{"error": err.Error(), "error %+v": fmt.Sprintf("%+v", err), "log": log.String()} {
		if strings.Contains(s, testToken) || strings.Contains(s, "CANARY") {
			t.Errorf("%s carries the token: %s", name, s)
		}
	}
	if !strings.Contains(err.Error(), "bad credentials: Bearer ***") {
		t.Errorf("error %q does not show the redacted echo", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 422 {
		t.Errorf("error %v is not an APIError with status 422", err)
	}
}

// TestFallbackCannotBeHijackedByCandidateText plants workflow commands in a reason detail and a
// title; none may reach the log as a command of its own.
func TestFallbackCannotBeHijackedByCandidateText(t *testing.T) {
	var log bytes.Buffer
	a := githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(func(string) string { return "" }))
	r := resultsWith(1, report.Unresolved)
	r.Pairs[0].Reasons = []report.Reason{{Code: "test_failed", Path: "x,line=9::evil", Line: 1,
		Detail: "ok\n::stop-commands::CANARY\r\n::add-mask::CANARY\n::set-env name=X::CANARY"}}
	plan := BuildPlan(r, PlanInput{Target: target, Now: testNow})
	if _, err := (Fallback{Action: a}).Write(plan, errors.New("403")); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "CANARY") && !strings.HasPrefix(l, "::warning endLine=1,file=tender.yaml,line=1,") {
			t.Errorf("candidate text escaped into its own line: %q", l)
		}
	}
	if n := strings.Count(log.String(), "\n"); n != 2 {
		t.Errorf("want 2 log lines (the note and one annotation), got %d:\n%s", n, log.String())
	}
}

// TestByteLimitAgainstTheValidatingFake sends summaries straight through the client: 65,535
// bytes of three-byte characters are accepted, one byte more is refused with GitHub's 422.
func TestByteLimitAgainstTheValidatingFake(t *testing.T) {
	euro := strings.Repeat("€", 21845) // 65,535 bytes
	for _, tc := range []struct {
		name    string
		summary string
		status  int
	}{{"65,535 bytes", euro, 0}, {"65,536 bytes", euro + "a", 422}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			cr := githubtest.NewCheckRuns("octo", "grader")
			f.on("GET", cr.ListPath(target.HeadSHA), 1, cr.List)
			f.on("POST", cr.CreatePath(), 1, cr.Create)
			if tc.status == 0 {
				f.on("PATCH", cr.UpdatePath(1), 2, cr.Update)
			}
			plan := BuildPlan(resultsWith(1, report.Unresolved), PlanInput{Target: target, Now: testNow})
			plan.Create.Output.Summary = &tc.summary // past the cap, as a client that counts characters would send
			_, err := f.client(t, nil, nil).Publish(context.Background(), plan)
			var ae *APIError
			switch {
			case tc.status == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.status != 0 && (!errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(err.Error(), "maximum bytesize of 65535")):
				t.Fatalf("error %v, want %d with GitHub's bytesize message", err, tc.status)
			}
			t.Logf("summary of %d bytes (%d characters): %v", len(tc.summary), utf8.RuneCountInString(tc.summary), err)
		})
	}
}

func stepSummaryEnv(path string) func(string) string {
	return func(k string) string {
		if k == "GITHUB_STEP_SUMMARY" {
			return path
		}
		return ""
	}
}

// TestFallbackCapsAtGitHubsPerStepLimits: GitHub shows 10 workflow-command annotations per
// level per step. The fallback writes no more than that (the warning that explains the
// fallback counts as one, the pointer at the job summary as another), then one notice, and
// lists every annotation in the job summary.
func TestFallbackCapsAtGitHubsPerStepLimits(t *testing.T) {
	var r report.Results
	r.Suite = "demo"
	add := func(n int, prefix string, v report.Verdict, code report.Code) {
		for i := range n {
			r.Pairs = append(
				r.Pairs,
				report.PairResult{
					ID:      fmt.Sprintf("%s-%02d", prefix, i),
					Verdict: v,
					Reasons: []report.Reason{{Code: code}},
				},
			)
		}
	}
	add(15, "a-integrity", report.IntegrityViolation, "protected_path")
	add(25, "b-unresolved", report.Unresolved, "test_failed")
	add(12, "c-flaky", report.Resolved, report.CodeFlaky)
	summaryPath := filepath.Join(t.TempDir(), "step_summary.md")
	var log bytes.Buffer
	a := githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(stepSummaryEnv(summaryPath)))
	plan := BuildPlan(r, PlanInput{Target: target, Now: testNow})
	shown, err := Fallback{Action: a, JobSummary: true}.Write(plan, errors.New("403"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "::"), " ")
		name, _, _ = strings.Cut(name, ":")
		count[name]++
	}
	want := map[string]int{"error": 10, "warning": 10, "notice": 10}
	if d := cmp.Diff(want, count); d != "" || shown != 28 {
		t.Errorf("commands per level (-want +got):\n%s\n%d annotations shown, want 28", d, shown)
	}
	if !strings.Contains(log.String(), "::notice::tender: 24 more annotation(s) are not shown here") {
		t.Errorf("no pointer at the job summary:\n%s", log.String())
	}
	s, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Count(
		string(s),
		"\n| failure |",
	) + strings.Count(
		string(s),
		"\n| warning |",
	) + strings.Count(
		string(s),
		"\n| notice |",
	)
	if rows != 52 || !strings.Contains(string(s), "### Annotations (52)") {
		t.Errorf("the job summary lists %d annotations, want all 52:\n%s", rows, s)
	}
	t.Logf(
		"per level %v, shown %d of %d; last line: %s",
		count,
		shown,
		len(plan.All),
		log.String()[strings.LastIndex(strings.TrimSpace(log.String()), "\n")+1:],
	)
}
