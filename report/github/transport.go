package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sentinel errors of the token client. Test them with errors.Is.
var (
	ErrRedirect         = errors.New("redirect refused: the token client never follows redirects")
	ErrInsecureURL      = errors.New("refused: the API URL must be HTTPS unless the host is loopback")
	ErrForeignHost      = errors.New("refused: the token is only sent to the configured API host")
	ErrRetriesExhausted = errors.New("gave up after retries")
)

// Defaults of ClientOptions. The rate-limit figures are GitHub's: after a secondary rate
// limit that names no wait, wait at least a minute, then exponentially longer; leave at least
// a second between mutating requests.
const (
	DefaultAPIURL           = "https://api.github.com/"
	DefaultTimeout          = 30 * time.Second
	DefaultMaxRetries       = 4
	DefaultMaxWait          = 2 * time.Minute
	DefaultMaxTotalWait     = 5 * time.Minute
	DefaultMutationInterval = time.Second
	SecondaryLimitWait      = time.Minute
	maxBufferedBody         = 64 << 10
)

// ClientOptions configures the token client. Only Token is required.
type ClientOptions struct {
	APIURL     string        // GITHUB_API_URL; empty means DefaultAPIURL
	Token      string        // sent as a bearer token to the API host only
	Timeout    time.Duration // per attempt, headers and body included; 0 means DefaultTimeout
	MaxRetries int           // retries after the first attempt; 0 means DefaultMaxRetries, <0 none
	MaxWait    time.Duration // longest single wait honoured; a longer Retry-After gives up
	// MaxTotalWait bounds every retry wait of the client added up; 0 means DefaultMaxTotalWait.
	MaxTotalWait time.Duration
	// MutationInterval is the least time between the end of one POST/PATCH/PUT/DELETE and the
	// start of the next; 0 means DefaultMutationInterval, <0 none.
	MutationInterval time.Duration
	// Transport is the base round tripper; nil means a clone of http.DefaultTransport with
	// dial, TLS and header timeouts. Tests pass one that counts dials.
	Transport http.RoundTripper
	// Sleep waits between attempts; nil means a timer that honours ctx. Tests record waits.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time // nil means time.Now; tests pass a clock that Sleep advances
	Log   io.Writer        // one line per retry; never carries the token
}

func (o ClientOptions) withDefaults() ClientOptions {
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.MaxTotalWait == 0 {
		o.MaxTotalWait = DefaultMaxTotalWait
	}
	if o.MutationInterval == 0 {
		o.MutationInterval = DefaultMutationInterval
	}
	if o.Transport == nil {
		o.Transport = defaultTransport()
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

func defaultTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// The proxy from the environment stays: self-hosted runners often need one, and for HTTPS
	// it sees only the CONNECT host, never the token.
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ResponseHeaderTimeout = 30 * time.Second
	return t
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ParseAPIURL parses a GITHUB_API_URL value, refusing anything but HTTPS unless the host is
// loopback. The result always ends in a slash, as go-github requires.
func ParseAPIURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultAPIURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL %q: %w", raw, err)
	}
	if u.User != nil || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q: want scheme://host[/path] without credentials", u.Redacted())
	}
	if err := checkSecure(u); err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL %q: %w", u.Redacted(), err)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

func checkSecure(u *url.URL) error {
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return ErrInsecureURL
}

// isLoopback reports whether host names the loopback interface without asking any resolver.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewHTTPClient returns the token client for o and the parsed API base URL. The client refuses
// every redirect, refuses insecure URLs before dialing, adds the token only to requests for the
// API host, paces mutating requests, and retries 5xx and rate-limited answers within a bound.
func NewHTTPClient(o ClientOptions) (*http.Client, *url.URL, error) {
	o = o.withDefaults()
	base, err := ParseAPIURL(o.APIURL)
	if err != nil {
		return nil, nil, err
	}
	rt := &tokenTransport{opts: o, base: base}
	c := &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return ErrRedirect },
	}
	return c, base, nil
}

// tokenTransport adds the token to requests for the API host, paces mutations and retries
// within a bound. Its clock state is shared by every request of the client.
type tokenTransport struct {
	opts         ClientOptions
	base         *url.URL
	mu           sync.Mutex
	lastMutation time.Time     // when the last mutating request ended
	waited       time.Duration // retry waits so far, against MaxTotalWait
}

// rateLimitedHeader marks a response the transport judged a rate limit, so the error built
// from it is never taken for a permission refusal (go-github only recognises some forms).
const rateLimitedHeader = "X-Tender-Rate-Limited"

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkSecure(req.URL); err != nil {
		closeBody(req)
		return nil, err
	}
	if !sameHost(req.URL, t.base) {
		closeBody(req)
		return nil, ErrForeignHost
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	limited := 0 // rate-limited answers so far, for the exponential wait
	for attempt := 0; ; attempt++ {
		resp, err := t.send(req)
		d := t.decide(req, resp, err, attempt, limited)
		if d.limited && resp != nil {
			resp.Header.Set(rateLimitedHeader, "1")
		}
		if !d.retry || !replayable {
			return resp, err
		}
		if d.limited {
			limited++
		}
		if resp != nil {
			drain(resp)
		}
		if err := t.pause(req, d, attempt); err != nil {
			return nil, err
		}
		if hook, ok := req.Context().Value(beforeRetryKey{}).(BeforeRetry); ok {
			if err := hook(req.Context()); err != nil {
				return nil, err
			}
		}
	}
}

// BeforeRetry is called before each retry of a request whose context carries it (see
// WithBeforeRetry). A non-nil error stops the retries and is returned for the request: a
// create uses it to look for the run the failed attempt may have made after all.
type BeforeRetry func(ctx context.Context) error

type beforeRetryKey struct{}

// WithBeforeRetry returns ctx carrying hook for the requests made with it.
func WithBeforeRetry(ctx context.Context, hook BeforeRetry) context.Context {
	return context.WithValue(ctx, beforeRetryKey{}, hook)
}

func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// send sends one attempt, first waiting out the interval GitHub asks between mutations.
func (t *tokenTransport) send(req *http.Request) (*http.Response, error) {
	if !mutating(req.Method) || t.opts.MutationInterval < 0 {
		return t.once(req)
	}
	t.mu.Lock()
	var gap time.Duration
	if !t.lastMutation.IsZero() {
		gap = t.opts.MutationInterval - t.opts.Now().Sub(t.lastMutation)
	}
	t.mu.Unlock()
	if gap > 0 {
		if err := t.opts.Sleep(req.Context(), gap); err != nil {
			return nil, err
		}
	}
	resp, err := t.once(req)
	t.mu.Lock()
	t.lastMutation = t.opts.Now()
	t.mu.Unlock()
	return resp, err
}

func sameHost(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxBufferedBody))
	resp.Body.Close()
}

// once sends one attempt on a clone that carries the token. The response points back at the
// caller's request, so no error value built from it holds the Authorization header.
func (t *tokenTransport) once(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.opts.Timeout)
	r := req.Clone(ctx)
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		r.Body = body
	}
	if t.opts.Token != "" {
		r.Header.Set("Authorization", "Bearer "+t.opts.Token)
	}
	resp, err := t.opts.Transport.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := bufferBody(resp, cancel); err != nil {
		return nil, err
	}
	resp.Request = req
	return resp, nil
}

// bufferBody reads the (bounded) body so the per-attempt timeout covers it and the retry
// logic can look for a secondary rate limit message in it.
func bufferBody(resp *http.Response, cancel context.CancelFunc) error {
	defer cancel()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading the response of %s: %w", resp.Status, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return nil
}

// decision is what to do after one attempt.
type decision struct {
	retry   bool
	limited bool          // a rate limit, primary or secondary
	wait    time.Duration // before the retry
	why     string        // for the log line
}

// pause waits d.wait, within the single-wait and total bounds, and logs why.
func (t *tokenTransport) pause(req *http.Request, d decision, attempt int) error {
	if d.wait > t.opts.MaxWait {
		return fmt.Errorf("%s %s: %s: GitHub asks to wait %s, more than the %s Tender waits at once: %w",
			req.Method, req.URL.Path, d.why, d.wait, t.opts.MaxWait, ErrRetriesExhausted)
	}
	t.mu.Lock()
	spent := t.waited
	if spent+d.wait > t.opts.MaxTotalWait {
		t.mu.Unlock()
		return fmt.Errorf("%s %s: %s: waiting %s more would pass the %s total wait of this publication (%s waited already): %w",
			req.Method, req.URL.Path, d.why, d.wait, t.opts.MaxTotalWait, spent, ErrRetriesExhausted)
	}
	t.waited += d.wait
	t.mu.Unlock()
	fmt.Fprintf(t.opts.Log, "github: %s %s: %s; retry %d of %d in %s\n",
		req.Method, req.URL.Path, d.why, attempt+1, t.opts.MaxRetries, d.wait)
	return t.opts.Sleep(req.Context(), d.wait)
}

// decide says whether to retry and how long to wait first. It retries transport errors other
// than refusals and cancellation, 5xx (backing off from one second), and rate limits: after
// Retry-After when given, after x-ratelimit-reset when the primary limit is used up, and
// otherwise after a minute, doubling on each further limit.
func (t *tokenTransport) decide(req *http.Request, resp *http.Response, err error, attempt, limited int) decision {
	d := t.classify(resp, err, attempt, limited)
	if attempt >= t.opts.MaxRetries || req.Context().Err() != nil {
		d.retry = false
	}
	return d
}

func (t *tokenTransport) classify(resp *http.Response, err error, attempt, limited int) decision {
	if err != nil {
		return decision{retry: retryableError(err), wait: backoff(attempt), why: "no answer (" + errorKind(err) + ")"}
	}
	limit := resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode == http.StatusForbidden && rateLimited(resp))
	switch {
	case limit:
		if w, ok := headerWait(resp.Header, t.opts.Now()); ok {
			return decision{retry: true, limited: true, wait: w, why: fmt.Sprintf("rate limited (%d, the headers name the wait)", resp.StatusCode)}
		}
		return decision{retry: true, limited: true, wait: SecondaryLimitWait << min(limited, 6),
			why: fmt.Sprintf("secondary rate limit (%d without Retry-After: GitHub asks for at least a minute)", resp.StatusCode)}
	case resp.StatusCode >= 500:
		return decision{retry: true, wait: backoff(attempt), why: resp.Status}
	}
	return decision{}
}

// errorKind names a transport error without its text, which may quote the URL.
func errorKind(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return "connection failed"
}

func retryableError(err error) bool {
	return !errors.Is(err, ErrInsecureURL) && !errors.Is(err, ErrForeignHost) &&
		!errors.Is(err, context.Canceled)
}

func backoff(attempt int) time.Duration {
	return time.Second << min(attempt, 6)
}

// rateLimited reports whether a 403 is a rate limit rather than a permission refusal.
func rateLimited(resp *http.Response) bool {
	h := resp.Header
	if h.Get("Retry-After") != "" || h.Get("X-Ratelimit-Remaining") == "0" {
		return true
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	lower := bytes.ToLower(b)
	return bytes.Contains(lower, []byte("secondary rate limit")) || bytes.Contains(lower, []byte("abuse detection"))
}

// headerWait reads Retry-After (seconds or an HTTP date) or, when the primary limit is used up,
// x-ratelimit-reset (epoch seconds).
func headerWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0), true
		}
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(s, 0).Sub(now), 0) + time.Second, true
		}
	}
	return 0, false
}
