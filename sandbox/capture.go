package sandbox

import "fmt"

// Capture is one output stream, bounded: the first and last bytes are kept, and the total
// is counted. When nothing was dropped, Head holds everything and Tail is empty.
type Capture struct {
	Head, Tail []byte
	Total      int64
	Truncated  bool
}

// String joins head and tail with a marker saying how much was dropped between them.
func (c Capture) String() string {
	if !c.Truncated {
		return string(c.Head) + string(c.Tail)
	}
	omitted := c.Total - int64(len(c.Head)) - int64(len(c.Tail))
	return fmt.Sprintf("%s\n…[%d bytes omitted]…\n%s", c.Head, omitted, c.Tail)
}

// CapWriter keeps at most limit bytes of what is written to it: half at the head and half in
// a ring for the tail. It never fails a write, so the process on the other side is never
// blocked or told that its output was cut. Memory grows only with what is kept.
type CapWriter struct {
	head    []byte
	headCap int
	ring    []byte // grows to tailCap, then wraps at pos
	tailCap int
	pos     int
	total   int64
}

// NewCapWriter keeps at most limit bytes (at least 2).
func NewCapWriter(limit int64) *CapWriter {
	limit = max(limit, 2)
	h := int(limit / 2)
	return &CapWriter{headCap: h, tailCap: int(limit) - h}
}

func (w *CapWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	if room := w.headCap - len(w.head); room > 0 {
		take := min(room, len(p))
		w.head = append(w.head, p[:take]...)
		p = p[take:]
	}
	w.writeTail(p)
	return n, nil
}

func (w *CapWriter) writeTail(p []byte) {
	if len(p) >= w.tailCap {
		w.ring = append(w.ring[:0], p[len(p)-w.tailCap:]...)
		w.pos = 0
		return
	}
	if room := w.tailCap - len(w.ring); room > 0 {
		take := min(room, len(p))
		w.ring = append(w.ring, p[:take]...)
		p = p[take:]
	}
	for len(p) > 0 {
		k := copy(w.ring[w.pos:], p)
		p = p[k:]
		w.pos = (w.pos + k) % w.tailCap
	}
}

// Capture returns the kept bytes in order.
func (w *CapWriter) Capture() Capture {
	tail := make([]byte, 0, len(w.ring))
	tail = append(tail, w.ring[w.pos:]...)
	tail = append(tail, w.ring[:w.pos]...)
	c := Capture{Total: w.total, Truncated: w.total > int64(len(w.head)+len(tail))}
	if c.Truncated {
		c.Head, c.Tail = append([]byte(nil), w.head...), tail
		return c
	}
	c.Head = append(append([]byte(nil), w.head...), tail...)
	return c
}
