package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v93/github"
)

// Client talks to the GitHub API with the token client. Every error it returns has the token
// replaced by "***", even when a hostile server echoes it back in a message.
type Client struct {
	gh    *gh.Client
	token string
	now   func() time.Time
}

// NewClient builds a Client for o (see NewHTTPClient for what the client refuses).
func NewClient(o ClientOptions) (*Client, error) {
	hc, base, err := NewHTTPClient(o)
	if err != nil {
		return nil, err
	}
	api := base.String()
	c, err := gh.NewClient(gh.WithHTTPClient(hc), gh.WithURLs(&api, &api))
	if err != nil {
		return nil, fmt.Errorf("GitHub client for api-url %s: %w", api, err)
	}
	return &Client{gh: c, token: o.Token, now: o.withDefaults().Now}, nil
}

// APIError is an error from the API with the token redacted from its text. Status is the HTTP
// status when there was a response, else 0.
type APIError struct {
	Op          string
	Status      int
	RateLimited bool // a primary or secondary rate limit that outlasted the retries
	msg         string
	err         error
}

func (e *APIError) Error() string { return e.Op + ": " + e.msg }

// Unwrap exposes the sentinel errors of this package (ErrRedirect and the like) to errors.Is,
// but never the raw upstream error, whose text may hold the token.
func (e *APIError) Unwrap() error { return e.err }

// Forbidden reports whether err is a 403 from the API that is not a rate limit.
func Forbidden(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden && !ae.RateLimited
}

var sentinels = []error{ErrRedirect, ErrInsecureURL, ErrForeignHost, ErrRetriesExhausted,
	context.Canceled, context.DeadlineExceeded}

func (c *Client) wrap(op string, resp *gh.Response, err error) error {
	if err == nil {
		return nil
	}
	ae := &APIError{Op: op, msg: Redact(err.Error(), c.token)}
	if resp != nil && resp.Response != nil {
		ae.Status = resp.StatusCode
		ae.RateLimited = resp.Header.Get(rateLimitedHeader) != ""
	}
	var rl *gh.RateLimitError
	var arl *gh.AbuseRateLimitError
	ae.RateLimited = ae.RateLimited || errors.As(err, &rl) || errors.As(err, &arl)
	if ae.RateLimited {
		ae.msg += " (rate limited: GitHub asked Tender to slow down for longer than its retries allow; try again later)"
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			ae.err = s
			break
		}
	}
	return ae
}

// Redact replaces every occurrence of secret in s by "***".
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "***")
}

// do sends one request built by go-github's NewRequest and decodes the answer into v. It is
// for endpoints go-github has no method for.
func (c *Client) do(ctx context.Context, op, method, path string, body, v any) error {
	req, err := c.gh.NewRequest(ctx, method, path, body)
	if err != nil {
		return c.wrap(op, nil, err)
	}
	resp, err := c.gh.Do(req, v)
	return c.wrap(op, resp, err)
}

func (c *Client) String() string { return fmt.Sprintf("github.Client{%s}", c.gh.BaseURL()) }
