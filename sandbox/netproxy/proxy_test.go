package netproxy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// upstream is a host a build may fetch from, or one it must never reach (hits counts both).
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func newUpstream(t *testing.T, tls bool, body string) *upstream {
	t.Helper()
	u := &upstream{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		io.WriteString(w, body)
	})
	if tls {
		u.Server = httptest.NewTLSServer(h)
	} else {
		u.Server = httptest.NewServer(h)
	}
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) hostPort() string {
	return strings.TrimPrefix(strings.TrimPrefix(u.URL, "http://"), "https://")
}

// serveProxy runs a proxy for allow on a loopback listener and returns it with its URL.
func serveProxy(t *testing.T, ln net.Listener, allow ...string) (*Proxy, *url.URL) {
	t.Helper()
	a, err := ParseAllowlist(allow)
	if err != nil {
		t.Fatal(err)
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	p := New(a, "environments.app.network.allow")
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, &url.URL{Scheme: "http", Host: ln.Addr().String()}
}

// through returns a client that sends everything through the proxy at u, trusting tlsHost's
// certificate when it is not nil.
func through(u *url.URL, tlsHost *upstream) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
	if tlsHost != nil {
		tr.TLSClientConfig = tlsHost.Client().Transport.(*http.Transport).TLSClientConfig
	}
	return &http.Client{Transport: tr}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestProxyFetchesAndRecords: plain http through an allowed host is forwarded and recorded
// with its path, bytes and digest; https is tunnelled and recorded with its byte counts.
func TestProxyFetchesAndRecords(t *testing.T) {
	index := newUpstream(t, false, "tinypkg-1.0-py3-none-any.whl bytes")
	tlsHost := newUpstream(t, true, "over tls")
	p, u := serveProxy(t, nil, index.hostPort(), tlsHost.hostPort())

	if code, body := get(t, through(u, nil), index.URL+"/files/tinypkg.whl?x=1"); code != 200 ||
		body != "tinypkg-1.0-py3-none-any.whl bytes" {
		t.Fatalf("GET through the proxy: %d %q", code, body)
	}
	if code, body := get(t, through(u, tlsHost), tlsHost.URL+"/simple/"); code != 200 || body != "over tls" {
		t.Fatalf("GET https through the proxy: %d %q", code, body)
	}
	p.Close() // the tunnel's counts are final once it is closed
	rec := p.Record()
	if len(rec.Requests) != 2 {
		t.Fatalf("record %+v: want 2 requests", rec)
	}
	g, c := rec.Requests[0], rec.Requests[1]
	want := Request{Method: "GET", Host: index.hostPort(), Path: "/files/tinypkg.whl?x=1", Status: 200,
		Bytes: int64(len("tinypkg-1.0-py3-none-any.whl bytes")), SHA256: digest("tinypkg-1.0-py3-none-any.whl bytes")}
	if g != want {
		t.Errorf("GET recorded as %+v\nwant %+v", g, want)
	}
	if c.Method != "CONNECT" || c.Host != tlsHost.hostPort() || c.Bytes == 0 || c.Sent == 0 || c.SHA256 != "" ||
		c.Path != "" || c.Refused != "" {
		t.Errorf("CONNECT recorded as %+v; want host:port and bytes both ways, no path or digest", c)
	}
	if got := rec.Allow; len(got) != 2 || got[0] != index.hostPort() {
		t.Errorf("record's allowlist %v", got)
	}
}

// TestProxyRefuses: a host off the list (plain or tunnelled), a name that resolves to
// loopback, a request not in proxy form and an upload are refused with a line that says why,
// and recorded; the hosts off the list are never reached.
func TestProxyRefuses(t *testing.T) {
	allowed := newUpstream(t, false, "ok")
	canary := newUpstream(t, false, "CANARY")
	tlsCanary := newUpstream(t, true, "CANARY")
	_, port, _ := net.SplitHostPort(canary.hostPort())
	p, u := serveProxy(t, nil, allowed.hostPort(), "localhost:"+port)
	c := through(u, nil)

	code, body := get(t, c, canary.URL+"/simple/")
	if code != http.StatusForbidden ||
		!strings.Contains(body, canary.hostPort()+" is not in environments.app.network.allow") {
		t.Errorf("a host off the list: %d %q", code, body)
	}
	if _, err := through(u, tlsCanary).Get(tlsCanary.URL); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a tunnel to a host off the list: %v; want 403 Forbidden", err)
	}
	code, body = get(t, c, "http://localhost:"+port+"/")
	if code != http.StatusBadGateway || !strings.Contains(body, "resolves to 127.0.0.1:"+port) {
		t.Errorf("a name that resolves to loopback: %d %q; want 502 saying where it resolves", code, body)
	}
	code, body = get(t, http.DefaultClient, u.String()+"/direct")
	if code != http.StatusBadRequest || !strings.Contains(body, "not a proxy request") {
		t.Errorf("a request not in proxy form: %d %q", code, body)
	}
	resp, err := c.Post(allowed.URL+"/upload", "text/plain", strings.NewReader("secret"))
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("an upload: %v %v; want 405", resp, err)
	}
	if n := canary.hits.Load() + tlsCanary.hits.Load() + allowed.hits.Load(); n != 0 {
		t.Errorf("the proxy reached a host %d time(s); it must reach none of these", n)
	}
	rec := p.Record()
	var refused []string
	for _, q := range rec.Requests {
		if q.Refused != "" || q.Error != "" {
			refused = append(refused, q.Method+" "+q.Host)
		}
	}
	if len(refused) != 5 || len(rec.Refused()) != 4 {
		t.Errorf("recorded %v (%d refused); want all 5 requests, 4 of them refused by the list", refused,
			len(rec.Refused()))
	}
	if !strings.Contains(rec.Summary(), "4 refused") {
		t.Errorf("summary %q", rec.Summary())
	}
}

// TestProxyCloseEndsTunnels: Close returns while a tunnel is open, and ends it.
func TestProxyCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			held <- c
		}
	}()
	p, u := serveProxy(t, nil, ln.Addr().String())
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT "+ln.Addr().String()+" HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\n\r\n")
	buf := make([]byte, 64)
	if n, _ := c.Read(buf); !strings.Contains(string(buf[:n]), "200") {
		t.Fatalf("CONNECT answered %q", buf[:n])
	}
	up := <-held
	defer up.Close()
	p.Close()
	if _, err := c.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("read after Close: %v; want the tunnel ended", err)
	}
}
