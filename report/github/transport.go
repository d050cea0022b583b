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
