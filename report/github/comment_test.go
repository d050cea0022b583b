package github

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
	"github.com/tender-grader/tender/report/github/githubtest"
)

// comparedResults is a batch of n pairs compared with a baseline in which pair 0 was
// unresolved (now resolved: improved) and pair 1 resolved (now unresolved: regressed).
func comparedResults(n int) report.Results {
	cur := resultsWith(n, report.Resolved)
	cur.Pairs[1].Verdict = report.Unresolved
	base := resultsWith(n, report.Resolved)
	base.Pairs[0].Verdict = report.Unresolved
	cur.Comparison = report.Compare(base, cur, bundleDigest)
	return cur
}

func commentInput() CommentInput {
	return CommentInput{Owner: "octo", Repo: "grader", PR: 7, Name: "tender: demo", HeadSHA: target.HeadSHA,
		CheckRunURL: "https://github.example.test/octo/grader/runs/1", Bundle: bundleDigest}
}

// record is the fake's log as lines: method, path and the comment body's first two lines.
func record(f *fakeAPI) []string {
	var out []string
	for _, r := range f.requests() {
		line := r.Method + " " + r.Path
		if len(r.Body) > 0 {
			body := strings.SplitN(string(r.Body), `\n`, 3)
			line += "  " + strings.Join(body[:min(2, len(body))], `\n`)
		}
		out = append(out, line)
	}
	return out
}

// TestCommentCreatedOnceThenUpdatedInPlace publishes the comment twice: the first creates it,
// the second finds it by its marker and updates it, so the pull request holds one. A person's
// comment that quotes the marker, and a bot's comment of another check run, are left alone.
func TestCommentCreatedOnceThenUpdatedInPlace(t *testing.T) {
	f := newFake(t)
	cm := githubtest.NewComments("octo", "grader")
	marker := CommentMarker("tender: demo")
	cm.Add(githubtest.Comment{PR: 7, Body: marker + " I quote the marker", Login: "octocat", Type: "User"})
	cm.Add(githubtest.Comment{PR: 7, Body: CommentMarker("tender: other") + " x", Login: githubtest.BotLogin,
		Type: "Bot"})
	f.on("GET", cm.ListPath(7), 2, cm.List)
	f.on("POST", cm.CreatePath(7), 1, cm.Create)
	f.on("PATCH", cm.UpdatePath(3), 1, cm.Update)
	c := f.client(t, nil, nil)

	first, err := c.UpsertComment(context.Background(), BuildComment(resultsWith(4, report.Resolved), commentInput()))
	if err != nil || first.Updated || first.ID != 3 {
		t.Fatalf("first publication: %+v, %v; want comment 3 created", first, err)
	}
	again := BuildComment(comparedResults(4), commentInput())
	second, err := c.UpsertComment(context.Background(), again)
	if err != nil || !second.Updated || second.ID != 3 {
		t.Fatalf("second publication: %+v, %v; want comment 3 updated", second, err)
	}
	all := cm.All()
	if len(all) != 3 || all[2].Writes != 2 || all[2].Body != again.Body || !strings.HasPrefix(all[0].Body, marker) ||
		all[0].Writes != 0 {
		t.Errorf("comments after two publications: %+v", all)
	}
	t.Logf("the fake's record:\n%s", strings.Join(record(f), "\n"))
	t.Logf("the comment body after the update:\n%s", all[2].Body)
}

// TestCommentLostCreateIsNotRepeated: GitHub creates the comment but the answer is a 502;
// before retrying, the client looks again, finds it, and updates it instead of posting twice.
func TestCommentLostCreateIsNotRepeated(t *testing.T) {
	f := newFake(t)
	cm := githubtest.NewComments("octo", "grader")
	f.on("GET", cm.ListPath(7), 2, cm.List)
	f.on("POST", cm.CreatePath(7), 1, func(w http.ResponseWriter, r *http.Request, body []byte) {
		cm.Create(httpDiscard{}, r, body) // applied, then the answer is lost
		githubtest.JSON(502, map[string]any{"message": "Bad Gateway"})(w, r, body)
	})
	f.on("PATCH", cm.UpdatePath(1), 1, cm.Update)
	out, err := f.client(t, nil, nil).UpsertComment(context.Background(), BuildComment(comparedResults(3),
		commentInput()))
	if err != nil || out.ID != 1 || !out.Updated {
		t.Fatalf("outcome %+v, %v: want comment 1, found again after the 502", out, err)
	}
	if all := cm.All(); len(all) != 1 || all[0].Writes != 2 {
		t.Errorf("want one comment written twice, got %+v", all)
	}
}

// httpDiscard is a ResponseWriter that drops the answer.
type httpDiscard struct{}

func (httpDiscard) Header() http.Header         { return http.Header{} }
func (httpDiscard) Write(b []byte) (int, error) { return len(b), nil }
func (httpDiscard) WriteHeader(int)             {}

// TestCommentRefusedNamesThePermission: a 403 (the token lacks pull-requests: write) is an
// error that says what failed, with the token redacted.
func TestCommentRefused(t *testing.T) {
	f := newFake(t)
	cm := githubtest.NewComments("octo", "grader")
	f.on("GET", cm.ListPath(7), 1, cm.List)
	f.on("POST", cm.CreatePath(7), 1, githubtest.JSON(403, map[string]any{
		"message": "Resource not accessible by integration " + testToken}))
	_, err := f.client(t, nil, nil).UpsertComment(context.Background(), BuildComment(comparedResults(3),
		commentInput()))
	if !Forbidden(err) || !strings.Contains(err.Error(), "commenting on pull request #7") ||
		strings.Contains(err.Error(), testToken) {
		t.Fatalf("got %v", err)
	}
}

func TestBuildComment(t *testing.T) {
	p := BuildComment(comparedResults(4), commentInput())
	lines := strings.Split(p.Body, "\n")
	if lines[0] != CommentMarker("tender: demo") || !strings.HasPrefix(p.Body, "<!-- tender-comment:") {
		t.Fatalf("the body does not start with its marker: %q", lines[0])
	}
	for _, want := range []string{"#### Compared with the baseline",
		"| pair\\-001 | **regressed** | resolved | unresolved |",
		"| pair\\-000 | improved | unresolved | resolved |", "[check run](https://github.example.test/octo/grader/runs/1)",
		"1 regressed, 1 improved"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the body lacks %q:\n%s", want, p.Body)
		}
	}
	if CommentMarker("tender: demo") == CommentMarker("tender: demo (shard 1/2)") {
		t.Error("two check runs share a marker")
	}
	none := BuildComment(resultsWith(2, report.Resolved), commentInput())
	if !strings.Contains(none.Body, "No baseline") {
		t.Errorf("without a comparison:\n%s", none.Body)
	}
	many := resultsWith(5000, report.Resolved)
	many.Comparison = report.Compare(resultsWith(5000, report.Unresolved), many, "") // 5000 improved
	big := BuildComment(many, commentInput())
	if len(big.Body) > MaxCommentBytes || !utf8.ValidString(big.Body) || !strings.Contains(big.Body, "are shown") {
		t.Errorf("a comparison of 5000 pairs: %d bytes", len(big.Body))
	}
	steps := p.Steps()
	got := []string{steps[0].Method + " " + steps[0].Path, steps[1].Method + " " + steps[1].Path}
	want := []string{"GET /repos/octo/grader/issues/7/comments?page=1&per_page=100",
		"POST /repos/octo/grader/issues/7/comments"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("dry-run steps (-want +got):\n%s", d)
	}
}
