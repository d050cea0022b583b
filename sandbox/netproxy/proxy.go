package netproxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proxy is a forward proxy for one build. Its zero value is not usable: call New.
type Proxy struct {
	allow  Allowlist
	who    string // names the allowlist in refusals, e.g. "environments.app.network.allow"
	rec    recorder
	client *http.Transport
	dialer *net.Dialer
	srv    *http.Server
	wg     sync.WaitGroup // tunnels still open
	mu     sync.Mutex
	open   map[net.Conn]bool // both ends of every open tunnel, closed by Close
	closed bool
}

// New returns a proxy that lets a build reach the hosts of allow; who names the allowlist for
// the person who reads a refusal.
func New(allow Allowlist, who string) *Proxy {
	p := &Proxy{allow: allow, who: who, open: map[net.Conn]bool{}}
	p.dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	p.client = &http.Transport{
		Proxy: nil, DialContext: p.dial, DisableCompression: true, ForceAttemptHTTP2: false,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 2 * time.Minute,
	}
	p.srv = &http.Server{
		Handler: p, ReadHeaderTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return p
}

// Serve answers the build's connections from ln until Close; it returns nil once closed.
func (p *Proxy) Serve(ln net.Listener) error {
	err := p.srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving, ends every open connection and tunnel, and waits for the tunnels.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// track keeps a tunnel's ends for Close; it is false once the proxy is closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.open[c] = true
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.open, c)
		c.Close()
	}
}

// Record is what the build asked for so far.
func (p *Proxy) Record() Record { return p.rec.record(p.allow) }

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	p.forward(w, r)
}

// refuse answers a request the proxy will not make, and records why.
func (p *Proxy) refuse(w http.ResponseWriter, q Request, code int, why string) {
	q.Refused = why
	p.rec.start(q)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "tender build proxy: %s %s%s refused: %s\n", q.Method, q.Host, q.Path, why)
}

// notAllowed says which allowlist to change.
func (p *Proxy) notAllowed(host string) string {
	return fmt.Sprintf("%s is not in %s (%s)", host, p.who, strings.Join(p.allow.Strings(), ", "))
}

// forward makes a plain http GET or HEAD for the build and streams the response back,
// digesting the body as it goes.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	q := Request{Method: r.Method, Host: r.Host, Path: r.URL.RequestURI()}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		p.refuse(w, q, http.StatusBadRequest,
			"not a proxy request; the proxy takes http://HOST/PATH, and CONNECT for https")
		return
	}
	host, port, err := hostPort(r.URL.Host, 80)
	if err != nil {
		p.refuse(w, q, http.StatusBadRequest, "bad host: "+err.Error())
		return
	}
	q.Host = net.JoinHostPort(host, fmt.Sprint(port))
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		p.refuse(w, q, http.StatusMethodNotAllowed, "a build fetches with GET or HEAD only")
		return
	}
	if _, ok := p.allow.match(host, port); !ok {
		p.refuse(w, q, http.StatusForbidden, p.notAllowed(q.Host))
		return
	}
	rec := p.rec.start(q)
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
	copyHeader(out.Header, r.Header)
	resp, err := p.client.RoundTrip(out)
	if err != nil {
		p.rec.finish(rec, func(q *Request) { q.Error = err.Error() })
		http.Error(w, "tender build proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	h := sha256.New()
	n, err := io.Copy(w, io.TeeReader(resp.Body, h))
	p.rec.finish(rec, func(q *Request) {
		q.Status, q.Bytes = resp.StatusCode, n
		if err != nil {
			q.Error = "body cut short: " + err.Error()
			return
		}
		q.SHA256 = hex.EncodeToString(h.Sum(nil))
	})
}

// hopHeaders are the hop-by-hop headers a proxy does not pass on (RFC 9110, 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyHeader(dst, src http.Header) {
	drop := map[string]bool{}
	for _, h := range hopHeaders {
		drop[h] = true
	}
	for _, v := range src.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			drop[http.CanonicalHeaderKey(strings.TrimSpace(f))] = true
		}
	}
	for k, vs := range src {
		if !drop[http.CanonicalHeaderKey(k)] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}

// tunnel opens a CONNECT tunnel to an allowed host:port and counts what it carries.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	q := Request{Method: http.MethodConnect, Host: r.Host}
	host, port, err := hostPort(r.Host, 0)
	if err != nil {
		p.refuse(w, q, http.StatusBadRequest, "CONNECT needs host:port")
		return
	}
	q.Host = net.JoinHostPort(host, fmt.Sprint(port))
	if _, ok := p.allow.match(host, port); !ok {
		p.refuse(w, q, http.StatusForbidden, p.notAllowed(q.Host))
		return
	}
	rec := p.rec.start(q)
	up, err := p.dial(r.Context(), "tcp", q.Host)
	if err != nil {
		p.rec.finish(rec, func(q *Request) { q.Error = err.Error() })
		http.Error(w, "tender build proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "tender build proxy: cannot tunnel on this connection", http.StatusInternalServerError)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(client, up) {
		client.Close()
		up.Close()
		return
	}
	go p.carry(rec, client, brw, up)
}

// carry copies both ways until both ends are done, then records the byte counts.
func (p *Proxy) carry(rec *Request, client net.Conn, brw *bufio.ReadWriter, up net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client, up)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	sent := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(up, brw.Reader) // bytes the client sent early are in brw's buffer
		closeWrite(up)
		sent <- n
	}()
	got, _ := io.Copy(client, up)
	closeWrite(client)
	n := <-sent
	p.rec.finish(rec, func(q *Request) { q.Bytes, q.Sent = got, n })
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// dial connects to an allowed host:port. A rule that names a host reaches only addresses
// fit for a name (reachableByName), checked on the address actually connected to, so a DNS
// answer that changes between the check and the connect cannot lead the build elsewhere.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := hostPort(addr, 0)
	if err != nil {
		return nil, err
	}
	rule, ok := p.allow.match(host, port)
	if !ok {
		return nil, errors.New(p.notAllowed(addr)) // the transport never asks for another host
	}
	d := *p.dialer
	if !rule.literal() {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !reachableByName(ap.Addr()) {
				return fmt.Errorf(
					"%s resolves to %s, which a build reaches only when the allowlist names that address itself",
					host,
					address,
				)
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}
