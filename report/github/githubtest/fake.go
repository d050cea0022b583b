// Package githubtest is an httptest fake of the GitHub API for tests. It fails the test on any
// request no stub expects and, at cleanup, reports every stub not called as often as declared.
// It validates every check-run write the way GitHub does (required fields, enums, byte limits,
// 50 annotations per request) and every issue-comment write (a non-blank body of at most 65,536
// characters), and answers an invalid one 422 without calling its stub, so a client cannot
// pass against a fake that shares its assumptions. CheckRuns is a stateful model of the
// check-runs endpoints that can answer slowly, fail after creating, and fail a PATCH;
// Comments models a pull request's issue comments.
// It never forwards anything to a real host.
package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Fake is a running fake API; URL is its loopback base URL.
type Fake struct {
	URL   string
	t     testing.TB
	srv   *httptest.Server
	mu    sync.Mutex
	stubs []*stub
	log   []Request
}

// Reply answers one request; body is the request body already read.
type Reply func(w http.ResponseWriter, r *http.Request, body []byte)

type stub struct {
	method, path string
	want, calls  int
	reply        Reply
}

// Request is one request the fake received.
type Request struct {
	Method, Path, Auth string
	Body               []byte
}

// New starts a fake that is closed and checked when t ends.
func New(t testing.TB) *Fake {
	t.Helper()
	f := &Fake{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	t.Cleanup(f.close)
	return f
}

func (f *Fake) close() {
	f.srv.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.stubs {
		if s.calls != s.want {
			f.t.Errorf("fake GitHub: stub %s %s called %d times, want %d", s.method, s.path, s.calls, s.want)
		}
	}
}

// On expects n requests to method path, answered by reply. Stubs of the same route are used in
// the order they were declared.
func (f *Fake) On(method, path string, n int, reply Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stubs = append(f.stubs, &stub{method: method, path: path, want: n, reply: reply})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := f.match(r, body)
	if s == nil {
		f.t.Errorf("fake GitHub: unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"message":"unexpected request"}`, http.StatusTeapot)
		return
	}
	if msg := Validate(r.Method, r.URL.Path, body); msg != "" {
		JSON(http.StatusUnprocessableEntity, map[string]any{"message": msg,
			"documentation_url": "https://docs.github.com/rest"})(w, r, body)
		return
	}
	s.reply(w, r, body)
}

func (f *Fake) match(r *http.Request, body []byte) *stub {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, Request{r.Method, r.URL.Path, r.Header.Get("Authorization"), body})
	for _, s := range f.stubs {
		if s.method == r.Method && s.path == r.URL.Path && s.calls < s.want {
			s.calls++
			return s
		}
	}
	return nil
}

// Requests returns every request received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// JSON replies with status and v encoded as JSON.
func JSON(status int, v any) Reply {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
}

// Raw replies with status, an optional header and a literal body.
func Raw(status int, header, value, body string) Reply {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if header != "" {
			w.Header().Set(header, value)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// Review is one entry of the run-approvals endpoint.
func Review(state, login string, environments ...string) map[string]any {
	es := []map[string]any{}
	for i, e := range environments {
		es = append(es, map[string]any{"id": i + 1, "name": e})
	}
	return map[string]any{"state": state, "comment": "", "environments": es, "user": map[string]any{"login": login}}
}
