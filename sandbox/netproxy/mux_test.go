package netproxy

import (
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tender-grader/tender/internal/hostpython"
)

// startRelay runs relay.py on the host's python3, listening on loopback, and returns its mux.
func startRelay(t *testing.T) (*Mux, *exec.Cmd) {
	t.Helper()
	argv := RelayArgv(hostpython.Find(t), "127.0.0.1", 0)
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the relay: %v\n%s", err, stderr.String())
		}
	})
	m := NewMux(stdout, stdin)
	select {
	case <-m.Ready():
	case <-m.Done():
		t.Fatalf("the relay ended before it was ready: %v\n%s", m.Err(), stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("the relay did not say it was ready in a minute\n%s", stderr.String())
	}
	return m, cmd
}

// TestRelayCarriesTheProxy: the proxy served over the real relay's frames fetches plain http
// and tunnels https, for many connections at once, and a large body arrives whole with its
// digest recorded.
func TestRelayCarriesTheProxy(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: many frames
	index := newUpstream(t, false, big)
	tlsHost := newUpstream(t, true, "over tls")
	m, _ := startRelay(t)
	p, _ := serveProxy(t, m, index.hostPort(), tlsHost.hostPort())
	u := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", m.Port())}

	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if code, body := get(t, through(u, nil), fmt.Sprintf("%s/f%d", index.URL, i)); code != 200 || body != big {
				errs <- fmt.Sprintf("GET %d: %d, %d bytes", i, code, len(body))
			}
		}()
		go func() {
			defer wg.Done()
			if code, body := get(t, through(u, tlsHost), tlsHost.URL); code != 200 || body != "over tls" {
				errs <- fmt.Sprintf("https %d: %d %q", i, code, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	p.Close()
	rec := p.Record()
	gets, tunnels := 0, 0
	for _, q := range rec.Requests {
		switch {
		case q.Method == "GET" && q.SHA256 == digest(big) && q.Bytes == int64(len(big)):
			gets++
		case q.Method == "CONNECT" && q.Bytes > 0 && q.Sent > 0:
			tunnels++
		}
	}
	if gets != 20 || tunnels != 20 {
		t.Errorf("recorded %d whole GETs and %d tunnels, want 20 of each: %s", gets, tunnels, rec.Summary())
	}
}

// TestMuxRefusesAStrangeStream: frames that are not the relay's end the mux with an error
// that says so, and a clean end of stream is no error.
func TestMuxRefusesAStrangeStream(t *testing.T) {
	for _, tt := range []struct{ name, stream, want string }{
		{"huge frame", "D\x00\x00\x00\x01\xff\xff\xff\xff", "not the relay"},
		{"unknown kind", "Z\x00\x00\x00\x01\x00\x00\x00\x00", "unknown kind"},
		{"cut frame", "D\x00\x00\x00\x01\x00\x00\x00\x09abc", "inside a frame"},
		{"no port", "R\x00\x00\x00\x00\x00\x00\x00\x02ab", "names no port"},
		{"clean end", "", ""},
	} {
		m := NewMux(strings.NewReader(tt.stream), io.Discard)
		<-m.Done()
		err := m.Err()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
		if _, err := m.Accept(); err == nil {
			t.Errorf("%s: Accept after the end succeeded", tt.name)
		}
	}
}
