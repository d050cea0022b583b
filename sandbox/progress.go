package sandbox

import (
	"bufio"
	"fmt"
	"io"
)

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// prefixed writes each line it is given with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// relayLines copies r to w one line per Write, until r ends.
func relayLines(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		w.Write(append(sc.Bytes(), '\n'))
	}
	io.Copy(io.Discard, r)
}

// countingReader reports progress every so many bytes.
type countingReader struct {
	r        io.Reader
	progress io.Writer
	every    int64
	n, next  int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n >= c.next {
		fmt.Fprintf(c.progress, "import: %d MiB streamed\n", c.n>>20)
		c.next = c.n + c.every
	}
	return n, err
}
