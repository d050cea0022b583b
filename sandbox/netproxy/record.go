package netproxy

import (
	"fmt"
	"strings"
	"sync"
)

// MaxRequests caps the requests a record lists; later ones are counted in Dropped.
const MaxRequests = 10000

// Request is one request a build made through the proxy, in the order they started.
type Request struct {
	Method string `json:"method"`           // GET, HEAD or CONNECT (or the method refused)
	Host   string `json:"host"`             // host:port as the build asked for it
	Path   string `json:"path,omitempty"`   // plain http: path and query
	Status int    `json:"status,omitempty"` // plain http: the host's status code
	// Bytes is what reached the build: the body of a plain http response, or what a CONNECT
	// tunnel carried from the host. Sent is what a tunnel carried to the host.
	Bytes int64 `json:"bytes"`
	Sent  int64 `json:"sent,omitempty"`
	// SHA256 is the digest of a plain http response body as it was transferred (compressed if
	// the host sent it so), set only when the whole body was read.
	SHA256  string `json:"sha256,omitempty"`
	Refused string `json:"refused,omitempty"` // why the proxy refused it; nothing was fetched
	Error   string `json:"error,omitempty"`   // why it failed at the host or midway
}

// Record is what a build fetched: its allowlist and every request, allowed or refused.
type Record struct {
	Allow    []string  `json:"allow"`
	Requests []Request `json:"requests"`
	Dropped  int       `json:"dropped,omitempty"` // requests past MaxRequests, counted but not listed
}

// Refused lists the refused requests, one short phrase each.
func (r Record) Refused() []string {
	var out []string
	for _, q := range r.Requests {
		if q.Refused != "" {
			out = append(out, fmt.Sprintf("%s %s%s (%s)", q.Method, q.Host, q.Path, q.Refused))
		}
	}
	return out
}

// Summary is one line on a record: how many requests, bytes and refusals.
func (r Record) Summary() string {
	var bytes int64
	refused := 0
	for _, q := range r.Requests {
		bytes += q.Bytes
		if q.Refused != "" {
			refused++
		}
	}
	s := fmt.Sprintf("%d request(s), %d byte(s) fetched", len(r.Requests)+r.Dropped, bytes)
	if refused > 0 {
		s += fmt.Sprintf(", %d refused: %s", refused, strings.Join(r.Refused(), "; "))
	}
	return s
}

// recorder collects requests as they start and finish.
type recorder struct {
	mu      sync.Mutex
	reqs    []*Request
	dropped int
}

// start adds a request and returns it, or nil past MaxRequests (callers fill it through
// finish, which takes nil).
func (c *recorder) start(q Request) *Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) >= MaxRequests {
		c.dropped++
		return nil
	}
	p := &q
	c.reqs = append(c.reqs, p)
	return p
}

// finish updates a request under the lock.
func (c *recorder) finish(q *Request, f func(*Request)) {
	if q == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f(q)
}

func (c *recorder) record(allow Allowlist) Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Record{Allow: allow.Strings(), Requests: make([]Request, len(c.reqs)), Dropped: c.dropped}
	for i, q := range c.reqs {
		r.Requests[i] = *q
	}
	return r
}
