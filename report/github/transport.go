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
	"time"
)

// Sentinel errors of the token client. Test them with errors.Is.
var (
	ErrRedirect         = errors.New("redirect refused: the token client never follows redirects")
	ErrInsecureURL      = errors.New("refused: the API URL must be HTTPS unless the host is loopback")
	ErrForeignHost      = errors.New("refused: the token is only sent to the configured API host")
	ErrRetriesExhausted = errors.New("gave up after retries")
)

// Defaults of ClientOptions.
const (
	DefaultAPIURL     = "https://api.github.com/"
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 4
	DefaultMaxWait    = 2 * time.Minute
	maxBufferedBody   = 64 << 10
)

// ClientOptions configures the token client. Only Token is required.
type ClientOptions struct {
	APIURL     string        // GITHUB_API_URL; empty means DefaultAPIURL
	Token      string        // sent as a bearer token to the API host only
	Timeout    time.Duration // per attempt, headers and body included; 0 means DefaultTimeout
	MaxRetries int           // retries after the first attempt; 0 means DefaultMaxRetries, <0 none
	MaxWait    time.Duration // longest single wait honoured; a longer Retry-After gives up
	// Transport is the base round tripper; nil means a clone of http.DefaultTransport with
	// dial, TLS and header timeouts. Tests pass one that counts dials.
	Transport http.RoundTripper
	// Sleep waits between attempts; nil means a timer that honours ctx. Tests record waits.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   io.Writer // one line per retry; never carries the token
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
	if o.Transport == nil {
		o.Transport = defaultTransport()
	}
	if o.Sleep == nil {
		o.Sleep = sleep
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
// API host, and retries 5xx and rate-limited answers within a bound.
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

// tokenTransport adds the token to requests for the API host and retries within a bound.
type tokenTransport struct {
	opts ClientOptions
	base *url.URL
}

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
	for attempt := 0; ; attempt++ {
		resp, err := t.once(req)
		wait, retry := t.retryAfter(resp, err, attempt)
		if !retry || !replayable {
			return resp, err
		}
		if resp != nil {
			drain(resp)
		}
		if err := t.pause(req, wait, attempt); err != nil {
			return nil, err
		}
	}
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

func (t *tokenTransport) pause(req *http.Request, wait time.Duration, attempt int) error {
	if wait > t.opts.MaxWait {
		return fmt.Errorf("%s %s: asked to wait %s, more than the %s bound: %w",
			req.Method, req.URL.Path, wait, t.opts.MaxWait, ErrRetriesExhausted)
	}
	fmt.Fprintf(t.opts.Log, "github: %s %s: retry %d of %d in %s\n",
		req.Method, req.URL.Path, attempt+1, t.opts.MaxRetries, wait)
	return t.opts.Sleep(req.Context(), wait)
}

// retryAfter decides whether to retry and how long to wait first. It retries transport
// errors other than refusals, 5xx, 429 and secondary rate limits; the wait honours
// Retry-After and x-ratelimit-reset and otherwise backs off exponentially from one second.
func (t *tokenTransport) retryAfter(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if attempt >= t.opts.MaxRetries {
		return 0, false
	}
	if err != nil {
		return backoff(attempt), retryableError(err)
	}
	switch {
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusForbidden && secondaryLimited(resp):
	default:
		return 0, false
	}
	if d, ok := headerWait(resp.Header, time.Now()); ok {
		return d, true
	}
	return backoff(attempt), true
}

func retryableError(err error) bool {
	return !errors.Is(err, ErrInsecureURL) && !errors.Is(err, ErrForeignHost) &&
		!errors.Is(err, context.Canceled)
}

func backoff(attempt int) time.Duration {
	return time.Second << min(attempt, 6)
}

// secondaryLimited reports whether a 403 is a rate limit rather than a permission refusal.
func secondaryLimited(resp *http.Response) bool {
	h := resp.Header
	if h.Get("Retry-After") != "" || h.Get("X-Ratelimit-Remaining") == "0" {
		return true
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(bytes.ToLower(b), []byte("secondary rate limit"))
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
