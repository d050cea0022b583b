package github

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tender-grader/tender/report"
)

func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	var seen atomic.Int32
	var sawAuth atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.Header.Get("Authorization") != "" {
			sawAuth.Store(true)
		}
	}))
	defer other.Close()
	for _, status := range []int{301, 302, 307, 308} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFake(t)
			f.noRunYet(1)
			f.on("POST", "/repos/octo/grader/check-runs", 1, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				http.Redirect(w, r, other.URL+"/steal", status)
			})
			_, err := f.client(t, nil, nil).
				Publish(context.Background(), BuildPlan(resultsWith(1, report.Resolved), PlanInput{Target: target, Now: testNow}))
			if !errors.Is(err, ErrRedirect) {
				t.Errorf("error %v, want ErrRedirect", err)
			}
		})
	}
	if seen.Load() != 0 || sawAuth.Load() {
		t.Errorf("the other host saw %d requests (Authorization: %v)", seen.Load(), sawAuth.Load())
	}
}

func TestRedirectToSameHostIsRefusedToo(t *testing.T) {
	f := newFake(t)
	f.on(
		"GET",
		"/repos/octo/grader/actions/runs/9/approvals",
		1,
		func(w http.ResponseWriter, r *http.Request, _ []byte) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		},
	)
	_, err := f.client(t, nil, nil).
		CheckApproval(context.Background(), RunRef{Owner: "octo", Repo: "grader", ID: 9}, "publish")
	if !errors.Is(err, ErrRedirect) {
		t.Errorf("error %v, want ErrRedirect", err)
	}
}

// countingTransport fails any attempt to send: the client must refuse before dialing.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("dialed")
}

func TestInsecureAndForeignURLsRefusedBeforeDialing(t *testing.T) {
	for _, raw := range []string{"http://api.example.test/", "http://10.0.0.1/api/v3", "ftp://127.0.0.1/", "http://user:pw@127.0.0.1/", "http://127.0.0.1.example.test/"} {
		t.Run("base "+raw, func(t *testing.T) {
			ct := &countingTransport{}
			_, err := NewClient(ClientOptions{APIURL: raw, Token: testToken, Transport: ct})
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q leaks a credential", err)
			}
		})
	}
	ct := &countingTransport{}
	hc, _, err := NewHTTPClient(ClientOptions{APIURL: "https://api.example.test/", Token: testToken, Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]error{
		"http://api.example.test/repos": ErrInsecureURL,
		"http://203.0.113.9/repos":      ErrInsecureURL,
		"https://other.example.test/x":  ErrForeignHost,
		"https://api.example.test:8443": ErrForeignHost,
	} {
		if _, err := hc.Get(url); !errors.Is(err, want) {
			t.Errorf("GET %s: %v, want %v", url, err, want)
		}
	}
	if n := ct.n.Load(); n != 0 {
		t.Errorf("the transport was reached %d times", n)
	}
}

func TestLoopbackHTTPAllowed(t *testing.T) {
	for _, raw := range []string{"http://127.0.0.1:1/", "http://localhost:1/api/v3", "http://[::1]:1/"} {
		u, err := ParseAPIURL(raw)
		if err != nil || !strings.HasSuffix(u.Path, "/") {
			t.Errorf("ParseAPIURL(%q) = %v, %v", raw, u, err)
		}
	}
}

// TestRetries runs a create against answers GitHub gives and checks the waits it asks for:
// Retry-After and x-ratelimit-reset when given, at least a minute (doubling) after a secondary
// limit that names no wait, a short back-off after 5xx, and a bounded total. Before each retry
// of the create the client looks for the run the failed attempt may have made.
func TestRetries(t *testing.T) {
	reset := strconv.FormatInt(testNow.Add(30*time.Second).Unix(), 10)
	cases := []struct {
		name   string
		first  func(w http.ResponseWriter, r *http.Request, b []byte)
		failed int // answers before the success
		opts   ClientOptions
		waits  []time.Duration
		fails  string // a part of the error when the create gives up
	}{
		{
			"429 with Retry-After",
			withHeader("Retry-After", "7", 429, `{"message":"slow down"}`),
			1,
			ClientOptions{},
			[]time.Duration{7 * time.Second},
			"",
		},
		{
			"429 without headers waits a minute",
			withHeader("", "", 429, `{"message":"slow down"}`),
			1,
			ClientOptions{},
			[]time.Duration{time.Minute},
			"",
		},
		{
			"secondary rate limit by message",
			withHeader("", "", 403, `{"message":"You have exceeded a secondary rate limit."}`),
			2,
			ClientOptions{MaxWait: 5 * time.Minute},
			[]time.Duration{time.Minute, 2 * time.Minute},
			"",
		},
		{
			"403 with Retry-After",
			withHeader("Retry-After", "3", 403, `{"message":"abuse"}`),
			1,
			ClientOptions{},
			[]time.Duration{3 * time.Second},
			"",
		},
		{"primary limit until the reset", resetAt(reset), 1, ClientOptions{}, []time.Duration{31 * time.Second}, ""},
		{
			"502 backs off",
			withHeader("", "", 502, `bad gateway`),
			3,
			ClientOptions{},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			"",
		},
		{
			"500 beyond the bound",
			withHeader("", "", 500, `{}`),
			3,
			ClientOptions{MaxRetries: 2},
			[]time.Duration{time.Second, 2 * time.Second},
			"500",
		},
		{
			"Retry-After beyond MaxWait",
			withHeader("Retry-After", "3600", 429, `{}`),
			1,
			ClientOptions{},
			nil,
			"more than the 2m0s Tender waits at once",
		},
		{
			"secondary limits beyond the total",
			withHeader("", "", 403, `{"message":"You have exceeded a secondary rate limit."}`),
			2,
			ClientOptions{MaxWait: 5 * time.Minute, MaxTotalWait: 2 * time.Minute},
			[]time.Duration{time.Minute},
			"would pass the 2m0s total wait",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.noRunYet(1 + len(tc.waits))
			f.on("POST", "/repos/octo/grader/check-runs", tc.failed, tc.first)
			if tc.fails == "" {
				f.on("POST", "/repos/octo/grader/check-runs", 1, jsonReply(201, map[string]any{"id": 1}))
				f.on("PATCH", "/repos/octo/grader/check-runs/1", 1, jsonReply(200, map[string]any{"id": 1}))
			}
			s := &sleeps{}
			tc.opts.MutationInterval = -1
			var log bytes.Buffer
			_, err := f.clientWith(t, tc.opts, s, &log).
				Publish(context.Background(), BuildPlan(resultsWith(1, report.Resolved), PlanInput{Target: target, Now: testNow}))
			if (err != nil) != (tc.fails != "") || (err != nil && !strings.Contains(err.Error(), tc.fails)) {
				t.Fatalf("error %v, want one with %q", err, tc.fails)
			}
			if d := cmp.Diff(tc.waits, s.waits()); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
			if tc.fails != "" && Forbidden(err) {
				t.Errorf("a rate limit or 5xx was classed as a permission refusal: %v", err)
			}
			t.Logf("log:\n%s", log.String())
		})
	}
}

func resetAt(epoch string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Reset", epoch)
		w.WriteHeader(403)
		w.Write([]byte(`{"message":"API rate limit exceeded"}`))
	}
}

// TestSecondaryLimitThatOutlastsRetriesIsNotAPermissionRefusal: a 403 secondary limit without
// GitHub's documentation URL (so go-github does not recognise it) must not trigger the
// fork fallback when the retries run out.
func TestSecondaryLimitThatOutlastsRetriesIsNotAPermissionRefusal(t *testing.T) {
	f := newFake(t)
	f.noRunYet(2)
	f.on(
		"POST",
		"/repos/octo/grader/check-runs",
		2,
		withHeader("", "", 403, `{"message":"You have exceeded a secondary rate limit."}`),
	)
	s := &sleeps{}
	_, err := f.clientWith(t, ClientOptions{MaxRetries: 1, MutationInterval: -1}, s, nil).
		Publish(context.Background(), BuildPlan(resultsWith(1, report.Resolved), PlanInput{Target: target, Now: testNow}))
	var ae *APIError
	if !errors.As(err, &ae) || !ae.RateLimited || Forbidden(err) || !strings.Contains(err.Error(), "rate limited") {
		t.Fatalf("error %v: want a rate limit, not a refusal, and a message that says so", err)
	}
}

// TestMutationsPaced checks that the client leaves GitHub's second between mutating requests
// and does not pace reads.
func TestMutationsPaced(t *testing.T) {
	f := newFake(t)
	cr := f.model(1, 1, 4, 0)
	s := &sleeps{}
	if _, err := f.client(t, s, nil).Publish(context.Background(), BuildPlan(resultsWith(120, report.Unresolved), PlanInput{Target: target, Now: testNow})); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, time.Second, time.Second, time.Second} // before each of the 4 PATCHes
	if d := cmp.Diff(want, s.waits()); d != "" {
		t.Errorf("pacing (-want +got):\n%s", d)
	}
	if runs := cr.Runs(); len(runs) != 1 || runs[0].Annotations != 120 {
		t.Errorf("runs %+v", runs)
	}
}

func withHeader(k, v string, status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if k != "" {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func TestRetryLogNeverCarriesTheToken(t *testing.T) {
	f := newFake(t)
	f.on("GET", "/repos/octo/grader/actions/runs/1/approvals", 2, withHeader("", "", 503, testToken))
	f.on("GET", "/repos/octo/grader/actions/runs/1/approvals", 1, jsonReply(200, []any{}))
	var log bytes.Buffer
	_, err := f.client(t, nil, &log).
		CheckApproval(context.Background(), RunRef{Owner: "octo", Repo: "grader", ID: 1}, "publish")
	if !errors.Is(err, ErrNotApproved) {
		t.Errorf("error %v, want ErrNotApproved", err)
	}
	if strings.Count(log.String(), "retry") != 2 || strings.Contains(log.String(), testToken) {
		t.Errorf("retry log %q: want two retries and no token", log.String())
	}
}

func TestHeaderWait(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"seconds", http.Header{"Retry-After": {"12"}}, 12 * time.Second, true},
		{
			"http date",
			http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}},
			90 * time.Second,
			true,
		},
		{
			"primary reset",
			http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1767225630"}},
			31 * time.Second,
			true,
		},
		{"remaining left", http.Header{"X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {"1767225630"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := headerWait(tc.h, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("headerWait = %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
