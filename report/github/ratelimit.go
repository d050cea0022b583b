package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// The retry policy, after GitHub's "best practices for using the REST API": honour
// Retry-After, wait for x-ratelimit-reset when the primary limit is used up, otherwise wait at
// least a minute after a secondary limit and exponentially longer after each further one, and
// give up after a bounded number of retries and a bounded total wait.

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
		return fmt.Errorf(
			"%s %s: %s: waiting %s more would pass the %s total wait of this publication (%s waited already): %w",
			req.Method,
			req.URL.Path,
			d.why,
			d.wait,
			t.opts.MaxTotalWait,
			spent,
			ErrRetriesExhausted,
		)
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
			return decision{
				retry:   true,
				limited: true,
				wait:    w,
				why:     fmt.Sprintf("rate limited (%d, the headers name the wait)", resp.StatusCode),
			}
		}
		return decision{retry: true, limited: true, wait: SecondaryLimitWait << min(limited, 6),
			why: fmt.Sprintf(
				"secondary rate limit (%d without Retry-After: GitHub asks for at least a minute)",
				resp.StatusCode,
			)}
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
