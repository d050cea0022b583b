// Package hosttest holds what tests of build networking need of the host: a web server on
// every IPv4 address, which counts the connections that do not come from loopback, and the
// list of those addresses. A build that could reach the host at all would reach the server;
// Tender's proxy dials it on loopback.
package hosttest

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// Server is a web server on every IPv4 address of the host.
type Server struct {
	Port int
	// Foreign counts the connections that came from off the host's loopback.
	Foreign atomic.Int64
}

// Serve starts h on a free port of every IPv4 address, until the test ends.
func Serve(t testing.TB, h http.Handler) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: h, ConnState: func(c net.Conn, st http.ConnState) {
		if ip := c.RemoteAddr().(*net.TCPAddr).IP; st == http.StateNew && !ip.IsLoopback() {
			s.Foreign.Add(1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// IPv4 lists the host's IPv4 addresses: loopback, its own, and its bridges' gateways.
func IPv4(t testing.TB) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			out = append(out, n.IP.String())
		}
	}
	return out
}
