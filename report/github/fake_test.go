package github

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeAPI is an httptest fake of the GitHub API. It fails the test on any request no stub
// expects, and at cleanup reports every stub that was not called as often as declared.
type fakeAPI struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	stubs []*stub
	log   []recorded
}

type stub struct {
	method, path string
	want, calls  int
	reply        func(w http.ResponseWriter, r *http.Request, body []byte)
}

type recorded struct {
	Method, Path, Auth string
	Body               []byte
}

func newFake(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, s := range f.stubs {
			if s.calls != s.want {
				t.Errorf("stub %s %s: called %d times, want %d", s.method, s.path, s.calls, s.want)
			}
		}
	})
	return f
}

// on expects n requests to method path, answered by reply, before any later stub of the same
// route is used.
func (f *fakeAPI) on(method, path string, n int, reply func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stubs = append(f.stubs, &stub{method: method, path: path, want: n, reply: reply})
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.log = append(f.log, recorded{r.Method, r.URL.Path, r.Header.Get("Authorization"), body})
	var s *stub
	for _, c := range f.stubs {
		if c.method == r.Method && c.path == r.URL.Path && c.calls < c.want {
			s = c
			break
		}
	}
	if s != nil {
		s.calls++
	}
	f.mu.Unlock()
	if s == nil {
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"message":"unexpected request"}`, http.StatusTeapot)
		return
	}
	s.reply(w, r, body)
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.log...)
}

func jsonReply(status int, v any) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
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
	c, err := NewClient(ClientOptions{APIURL: f.srv.URL, Token: testToken, Sleep: s.sleep, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
