package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder captures what the fake reports instead of failing the outer test.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()                        {}
func (r *recorder) Cleanup(f func())               { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) { r.errs = append(r.errs, format) }

func TestFakeReportsUnexpectedAndUncalled(t *testing.T) {
	rec := &recorder{TB: t}
	f := New(rec)
	f.On("GET", "/expected", 1, JSON(200, map[string]any{}))
	f.On("POST", "/never", 1, JSON(201, map[string]any{}))
	resp, err := http.Get(f.URL + "/surprise")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("unexpected request answered %d", resp.StatusCode)
	}
	resp, err = http.Get(f.URL + "/expected")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range rec.cleanups {
		c()
	}
	want := []string{"fake GitHub: unexpected request %s %s", "fake GitHub: stub %s %s called %d times, want %d"}
	if d := cmp.Diff(want, rec.errs); d != "" {
		t.Errorf("reports (-want +got):\n%s", d)
	}
	if got := len(f.Requests()); got != 2 || !strings.HasPrefix(f.URL, "http://127.0.0.1:") {
		t.Errorf("%d requests recorded at %s", got, f.URL)
	}
}

func TestValidateLikeGitHub(t *testing.T) {
	sha := strings.Repeat("a", 40)
	euro := strings.Repeat("€", 21845) // 65,535 bytes, 21,845 characters
	ann := func(extra string) string {
		return `{"path":"a.go","start_line":1,"end_line":1,"annotation_level":"warning","message":"m"` + extra + `}`
	}
	many := strings.TrimSuffix(strings.Repeat(ann("")+",", 51), ",")
	out := func(fields string) string {
		return `{"name":"n","head_sha":"` + sha + `","output":{"title":"t",` + fields + `}}`
	}
	cases := []struct {
		name, method, path, body string
		refused                  bool
	}{
		{"minimal create", "POST", "/repos/o/r/check-runs", `{"name":"n","head_sha":"` + sha + `"}`, false},
		{"no name", "POST", "/repos/o/r/check-runs", `{"head_sha":"` + sha + `"}`, true},
		{"no head_sha", "POST", "/repos/o/r/check-runs", `{"name":"n"}`, true},
		{"short head_sha", "POST", "/repos/o/r/check-runs", `{"name":"n","head_sha":"abc"}`, true},
		{"update without name", "PATCH", "/repos/o/r/check-runs/7", `{"status":"in_progress"}`, false},
		{"unknown status", "PATCH", "/repos/o/r/check-runs/7", `{"status":"done"}`, true},
		{"unknown conclusion", "PATCH", "/repos/o/r/check-runs/7", `{"status":"completed","conclusion":"ok"}`, true},
		{"completed without conclusion", "PATCH", "/repos/o/r/check-runs/7", `{"status":"completed"}`, true},
		{
			"completed_at without conclusion",
			"PATCH",
			"/repos/o/r/check-runs/7",
			`{"completed_at":"2026-01-01T00:00:00Z"}`,
			true,
		},
		{
			"bad timestamp",
			"PATCH",
			"/repos/o/r/check-runs/7",
			`{"conclusion":"neutral","completed_at":"yesterday"}`,
			true,
		},
		{
			"output without summary",
			"POST",
			"/repos/o/r/check-runs",
			`{"name":"n","head_sha":"` + sha + `","output":{"title":"t"}}`,
			true,
		},
		{
			"summary of 65,535 bytes in 3-byte characters",
			"POST",
			"/repos/o/r/check-runs",
			out(`"summary":"` + euro + `"`),
			false,
		},
		{"summary of 65,536 bytes", "POST", "/repos/o/r/check-runs", out(`"summary":"` + euro + `a"`), true},
		{"text of 65,536 bytes", "POST", "/repos/o/r/check-runs", out(`"summary":"s","text":"` + euro + `a"`), true},
		{
			"50 annotations",
			"POST",
			"/repos/o/r/check-runs",
			out(`"summary":"s","annotations":[` + strings.Repeat(ann("")+",", 49) + ann("") + `]`),
			false,
		},
		{"51 annotations", "POST", "/repos/o/r/check-runs", out(`"summary":"s","annotations":[` + many + `]`), true},
		{
			"annotation without message",
			"POST",
			"/repos/o/r/check-runs",
			out(`"summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"notice"}]`),
			true,
		},
		{
			"annotation level error",
			"POST",
			"/repos/o/r/check-runs",
			out(
				`"summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"error","message":"m"}]`,
			),
			true,
		},
		{
			"columns across lines",
			"POST",
			"/repos/o/r/check-runs",
			out(
				`"summary":"s","annotations":[{"path":"a","start_line":1,"end_line":2,"start_column":1,"end_column":2,"annotation_level":"notice","message":"m"}]`,
			),
			true,
		},
		{
			"message over 64 KB",
			"POST",
			"/repos/o/r/check-runs",
			out(
				`"summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"notice","message":"` + strings.Repeat(
					"x",
					64<<10+1,
				) + `"}]`,
			),
			true,
		},
		{
			"title of 256 characters",
			"POST",
			"/repos/o/r/check-runs",
			out(`"summary":"s","annotations":[` + ann(`,"title":"`+strings.Repeat("é", 256)+`"`) + `]`),
			true,
		},
		{"not a check-run write", "POST", "/repos/o/r/issues", `{}`, false},
		{"comment", "POST", "/repos/o/r/issues/7/comments", `{"body":"hi"}`, false},
		{"comment without body", "POST", "/repos/o/r/issues/7/comments", `{"text":"hi"}`, true},
		{"comment body not a string", "POST", "/repos/o/r/issues/7/comments", `{"body":7}`, true},
		{"blank comment", "POST", "/repos/o/r/issues/7/comments", `{"body":"  "}`, true},
		{"comment of 65,536 characters (131,072 bytes)", "POST", "/repos/o/r/issues/7/comments",
			`{"body":"` + strings.Repeat("é", 65536) + `"}`, false},
		{"comment of 65,537 characters", "POST", "/repos/o/r/issues/7/comments",
			`{"body":"` + strings.Repeat("x", 65537) + `"}`, true},
		{"comment update without body", "PATCH", "/repos/o/r/issues/comments/3", `{}`, true},
		{"comment update", "PATCH", "/repos/o/r/issues/comments/3", `{"body":"new"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := Validate(tc.method, tc.path, []byte(tc.body))
			if (msg != "") != tc.refused {
				t.Errorf("Validate = %q, want refused %v", msg, tc.refused)
			}
		})
	}
}

// TestFakeAnswers422WithoutCallingTheStub sends an invalid create through the fake: the answer
// is GitHub's 422 and the stub's own reply never runs, though the request is counted.
func TestFakeAnswers422WithoutCallingTheStub(t *testing.T) {
	f := New(t)
	called := false
	f.On("POST", "/repos/o/r/check-runs", 1, func(w http.ResponseWriter, r *http.Request, b []byte) {
		called = true
		JSON(201, map[string]any{"id": 1})(w, r, b)
	})
	body := `{"name":"n","head_sha":"` + strings.Repeat(
		"a",
		40,
	) + `","output":{"title":"t","summary":"` + strings.Repeat(
		"é",
		32768,
	) + `"}}`
	resp, err := http.Post(f.URL+"/repos/o/r/check-runs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 422 || called || !strings.Contains(string(b), "maximum bytesize of 65535") {
		t.Errorf("status %d, stub called %v, body %s", resp.StatusCode, called, b)
	}
}

func TestCheckRunsListLatestAndAll(t *testing.T) {
	f := New(t)
	cr := NewCheckRuns("o", "r")
	sha := strings.Repeat("b", 40)
	cr.Add(Run{Name: "tender: demo", HeadSHA: sha, ExternalID: "x1"})
	cr.Add(Run{Name: "tender: demo", HeadSHA: sha, ExternalID: "x2"})
	cr.Add(Run{Name: "other", HeadSHA: sha})
	f.On("GET", cr.ListPath(sha), 2, cr.List)
	for query, want := range map[string]int{"?check_name=tender%3A+demo": 1, "?check_name=tender%3A+demo&filter=all": 2} {
		resp, err := http.Get(f.URL + cr.ListPath(sha) + query)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Total int `json:"total_count"`
		}
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if got.Total != want {
			t.Errorf("%s: %d runs, want %d", query, got.Total, want)
		}
	}
}

// TestCommentsModel: a create is the bot's, an update changes it in place, a comment someone
// else wrote cannot be updated, and the list pages by per_page.
func TestCommentsModel(t *testing.T) {
	f := New(t)
	c := NewComments("o", "r")
	human := c.Add(Comment{PR: 7, Body: "<!-- marker --> mine", Login: "octocat", Type: "User"})
	f.On("POST", c.CreatePath(7), 1, c.Create)
	f.On("PATCH", c.UpdatePath(2), 1, c.Update)
	f.On("PATCH", c.UpdatePath(human.ID), 1, c.Update)
	f.On("GET", c.ListPath(7), 2, c.List)
	send := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, f.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := send("POST", c.CreatePath(7), `{"body":"first"}`); code != 201 {
		t.Fatalf("create: %d", code)
	}
	if code, _ := send("PATCH", c.UpdatePath(2), `{"body":"second"}`); code != 200 {
		t.Fatalf("update: %d", code)
	}
	if code, _ := send("PATCH", c.UpdatePath(human.ID), `{"body":"overwritten"}`); code != 403 {
		t.Fatalf("updating a person's comment: %d, want 403", code)
	}
	want := []Comment{{ID: 1, PR: 7, Body: "<!-- marker --> mine", Login: "octocat", Type: "User"},
		{ID: 2, PR: 7, Body: "second", Login: BotLogin, Type: "Bot", Writes: 2}}
	if d := cmp.Diff(want, c.All()); d != "" {
		t.Errorf("comments (-want +got):\n%s", d)
	}
	_, page1 := send("GET", c.ListPath(7)+"?per_page=1&page=1", "")
	_, page2 := send("GET", c.ListPath(7)+"?per_page=1&page=2", "")
	var a, b []map[string]any
	json.Unmarshal([]byte(page1), &a)
	json.Unmarshal([]byte(page2), &b)
	if len(a) != 1 || len(b) != 1 || a[0]["id"] != float64(1) || b[0]["id"] != float64(2) {
		t.Errorf("pages: %s / %s", page1, page2)
	}
}
