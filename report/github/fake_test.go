package github

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tender-grader/tender/report/github/githubtest"
)

// fakeAPI adapts githubtest.Fake to the names these tests use.
type fakeAPI struct {
	*githubtest.Fake
	srv struct{ URL string }
}

type recorded = githubtest.Request

func newFake(t *testing.T) *fakeAPI {
	f := &fakeAPI{Fake: githubtest.New(t)}
	f.srv.URL = f.URL
	return f
}

func (f *fakeAPI) on(method, path string, n int, reply func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.On(method, path, n, reply)
}

func (f *fakeAPI) requests() []recorded { return f.Requests() }

func jsonReply(status int, v any) func(http.ResponseWriter, *http.Request, []byte) {
	return githubtest.JSON(status, v)
}

func reviewJSON(state, login string, envs ...string) map[string]any {
	return githubtest.Review(state, login, envs...)
}

// sleeps records the waits the client asked for instead of sleeping, and advances a fake
// clock by each, so rate-limit and pacing arithmetic is exact and no test really waits.
type sleeps struct {
	mu  sync.Mutex
	d   []time.Duration
	now time.Time
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	s.now = s.now.Add(d)
	return ctx.Err()
}

func (s *sleeps) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.now.IsZero() {
		s.now = testNow
	}
	return s.now
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

const testToken = "ghs_CANARY_tender_token_0123456789"

func (f *fakeAPI) client(t *testing.T, s *sleeps, log io.Writer) *Client {
	t.Helper()
	return f.clientWith(t, ClientOptions{}, s, log)
}

// clientWith builds a client for the fake from o, with the fake clock of s.
func (f *fakeAPI) clientWith(t *testing.T, o ClientOptions, s *sleeps, log io.Writer) *Client {
	t.Helper()
	if s == nil {
		s = &sleeps{}
	}
	o.APIURL, o.Token, o.Sleep, o.Now, o.Log = f.URL, testToken, s.sleep, s.clock, log
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noRunYet answers n look-ups of earlier runs on target's commit with an empty list.
func (f *fakeAPI) noRunYet(n int) {
	f.on("GET", "/repos/octo/grader/commits/"+target.HeadSHA+"/check-runs", n,
		jsonReply(200, map[string]any{"total_count": 0, "check_runs": []any{}}))
}

// model routes every check-run endpoint of octo/grader to a stateful model: n look-ups,
// creates, updates of run 1 and reads of run 1.
func (f *fakeAPI) model(lookups, creates, updates, gets int) *githubtest.CheckRuns {
	cr := githubtest.NewCheckRuns("octo", "grader")
	f.on("GET", cr.ListPath(target.HeadSHA), lookups, cr.List)
	f.on("POST", cr.CreatePath(), creates, cr.Create)
	f.on("PATCH", cr.UpdatePath(1), updates, cr.Update)
	f.on("GET", cr.UpdatePath(1), gets, cr.Get)
	return cr
}
