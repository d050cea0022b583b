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

// sleeps records the waits the client asked for instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

const testToken = "ghs_CANARY_tender_token_0123456789"

func (f *fakeAPI) client(t *testing.T, s *sleeps, log io.Writer) *Client {
	t.Helper()
	if s == nil {
		s = &sleeps{}
	}
	c, err := NewClient(ClientOptions{APIURL: f.URL, Token: testToken, Sleep: s.sleep, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
