package netproxy

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// relaySource is the relay a build's network runs (see the package doc).
//
//go:embed relay.py
var relaySource string

// RelayPort is the port the relay listens on inside the build's network.
const RelayPort = 3128

// RelayArgv is the relay's command line for python3 (3.7 or later): it listens on addr:port
// (port 0: any free port, which its ready frame names).
func RelayArgv(python, addr string, port int) []string {
	return []string{python, "-I", "-u", "-c", relaySource, strconv.Itoa(port), addr}
}

// Frame kinds of the relay's protocol.
const (
	kindReady = 'R'
	kindOpen  = 'O'
	kindData  = 'D'
	kindEOF   = 'E'
	kindClose = 'C'
)

const (
	headerSize = 9
	maxFrame   = 1 << 20 // the relay sends at most 32 KiB; anything larger is not the relay
	chunk      = 32 << 10
)

// Mux is the host's end of a relay: a net.Listener whose connections are the ones the relay
// accepted. Close ends every connection; the relay's streams are the caller's to close.
type Mux struct {
	w     io.Writer
	wmu   sync.Mutex
	mu    sync.Mutex
	conns map[uint32]*muxConn
	queue chan *muxConn
	ready chan struct{}
	done  chan struct{}
	once  sync.Once
	err   error // why the relay's stream ended
	port  int   // the relay's, from its ready frame
}

// NewMux reads the relay's frames from r and writes Tender's to w.
func NewMux(r io.Reader, w io.Writer) *Mux {
	m := &Mux{w: w, conns: map[uint32]*muxConn{}, queue: make(chan *muxConn, 64), ready: make(chan struct{}),
		done: make(chan struct{})}
	go m.read(r)
	return m
}

// Ready is closed once the relay listens.
func (m *Mux) Ready() <-chan struct{} { return m.ready }

// Port is the port the relay listens on, once Ready is closed.
func (m *Mux) Port() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.port
}

// Done is closed once the relay's stream has ended (or Close was called); Err says why.
func (m *Mux) Done() <-chan struct{} { return m.done }

// Err is why the relay's stream ended: nil for a plain end of stream.
func (m *Mux) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *Mux) read(r io.Reader) {
	var hdr [headerSize]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			m.end(eofIsNil(err))
			return
		}
		kind, id, n := hdr[0], binary.BigEndian.Uint32(hdr[1:5]), binary.BigEndian.Uint32(hdr[5:9])
		if n > maxFrame {
			m.end(fmt.Errorf("the relay sent a frame of %d bytes; it is not the relay", n))
			return
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			m.end(fmt.Errorf("the relay's stream ended inside a frame: %w", err))
			return
		}
		if err := m.dispatch(kind, id, data); err != nil {
			m.end(err)
			return
		}
	}
}

func eofIsNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (m *Mux) dispatch(kind byte, id uint32, data []byte) error {
	switch kind {
	case kindReady:
		port, err := strconv.Atoi(string(data))
		select {
		case <-m.ready:
			return errors.New("the relay said it was ready twice")
		default:
		}
		if err != nil || port < 1 || port > 65535 {
			return fmt.Errorf("the relay's ready frame names no port: %q", data)
		}
		m.mu.Lock()
		m.port = port
		m.mu.Unlock()
		close(m.ready)
		return nil
	case kindOpen:
		c := &muxConn{m: m, id: id, notify: make(chan struct{}, 1)}
		m.mu.Lock()
		_, dup := m.conns[id]
		m.conns[id] = c
		m.mu.Unlock()
		if dup {
			return fmt.Errorf("the relay opened connection %d twice", id)
		}
		select {
		case m.queue <- c:
		case <-m.done:
		}
		return nil
	case kindData, kindEOF, kindClose:
		m.mu.Lock()
		c := m.conns[id]
		m.mu.Unlock()
		if c != nil {
			c.deliver(kind, data)
		}
		return nil
	}
	return fmt.Errorf("the relay sent a frame of unknown kind %q", kind)
}

// end stops the mux: every connection sees the end of its data.
func (m *Mux) end(err error) {
	m.once.Do(func() {
		m.mu.Lock()
		m.err = err
		conns := m.conns
		m.conns = map[uint32]*muxConn{}
		m.mu.Unlock()
		close(m.done)
		for _, c := range conns {
			c.deliver(kindClose, nil)
		}
	})
}

// Accept returns the next connection the relay accepted.
func (m *Mux) Accept() (net.Conn, error) {
	select {
	case c := <-m.queue:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and ends every connection.
func (m *Mux) Close() error {
	m.end(nil)
	return nil
}

// Addr is the relay's side, as far as Tender knows it.
func (m *Mux) Addr() net.Addr { return relayAddr{} }

func (m *Mux) send(kind byte, id uint32, data []byte) error {
	frame := make([]byte, headerSize+len(data))
	frame[0] = kind
	binary.BigEndian.PutUint32(frame[1:5], id)
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(data)))
	copy(frame[headerSize:], data)
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_, err := m.w.Write(frame)
	return err
}

func (m *Mux) forget(id uint32) {
	m.mu.Lock()
	delete(m.conns, id)
	m.mu.Unlock()
}

type relayAddr struct{}

func (relayAddr) Network() string { return "relay" }
func (relayAddr) String() string  { return "relay" }

// muxConn is one connection the relay accepted. Reads come from what the relay delivered
// (buffered, so one slow reader never holds up the others); writes go out as frames.
type muxConn struct {
	m      *Mux
	id     uint32
	mu     sync.Mutex
	buf    bytes.Buffer
	eof    bool // the relay's side sent all it will
	reset  bool // the relay's side is gone: writes fail
	closed bool // closed here
	rdl    time.Time
	notify chan struct{}
}

func (c *muxConn) deliver(kind byte, data []byte) {
	c.mu.Lock()
	switch kind {
	case kindData:
		c.buf.Write(data)
	case kindEOF:
		c.eof = true
	case kindClose:
		c.eof, c.reset = true, true
	}
	c.mu.Unlock()
	c.wake()
}

func (c *muxConn) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *muxConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return 0, net.ErrClosed
		case c.buf.Len() > 0:
			n, _ := c.buf.Read(p)
			c.mu.Unlock()
			return n, nil
		case c.eof:
			c.mu.Unlock()
			return 0, io.EOF
		}
		dl := c.rdl
		c.mu.Unlock()
		if err := c.wait(dl); err != nil {
			return 0, err
		}
	}
}

// wait blocks until something is delivered, the deadline changes, or it passes.
func (c *muxConn) wait(dl time.Time) error {
	if dl.IsZero() {
		<-c.notify
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.notify:
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

func (c *muxConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	gone := c.closed || c.reset
	c.mu.Unlock()
	if gone {
		return 0, net.ErrClosed
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), chunk)
		if err := c.m.send(kindData, c.id, p[:k]); err != nil {
			return n, err
		}
		n, p = n+k, p[k:]
	}
	return n, nil
}

// CloseWrite tells the relay that no more data comes: the build's side sees the end.
func (c *muxConn) CloseWrite() error { return c.m.send(kindEOF, c.id, nil) }

func (c *muxConn) Close() error {
	c.mu.Lock()
	was := c.closed
	c.closed = true
	c.mu.Unlock()
	c.wake()
	if was {
		return nil
	}
	c.m.forget(c.id)
	return c.m.send(kindClose, c.id, nil)
}

func (c *muxConn) LocalAddr() net.Addr  { return relayAddr{} }
func (c *muxConn) RemoteAddr() net.Addr { return relayAddr{} }

func (c *muxConn) SetDeadline(t time.Time) error {
	return c.SetReadDeadline(t)
}

func (c *muxConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	c.wake()
	return nil
}

// SetWriteDeadline is accepted and not enforced: a write waits for the relay's stream.
func (c *muxConn) SetWriteDeadline(time.Time) error { return nil }
