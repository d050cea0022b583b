package junit

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Encodings a report may declare besides UTF-8. Java and Python writers emit UTF-8;
// ISO-8859-1 and US-ASCII are the other two that JUnit writers are seen to declare, and
// both map byte for byte onto Unicode, so nothing is guessed. Any other label is refused by
// name rather than read as if it were UTF-8.
var latin1Labels = map[string]bool{
	"iso-8859-1": true, "iso8859-1": true, "iso_8859-1": true, "latin1": true, "latin-1": true, "l1": true,
}

var asciiLabels = map[string]bool{"us-ascii": true, "ascii": true}

// newDecoder returns a decoder that reads the encodings Tender accepts.
func newDecoder(data []byte) (*xml.Decoder, error) {
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return nil, fmt.Errorf("%w: the report is UTF-16 (it starts with a UTF-16 byte-order mark); "+
			"write it as UTF-8", ErrEncoding)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = charsetReader
	return dec, nil
}

// charsetReader is called by encoding/xml for any declared encoding other than "utf-8".
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	switch {
	case l == "utf8":
		return input, nil
	case latin1Labels[l]:
		return &latin1Reader{r: bufio.NewReader(input)}, nil
	case asciiLabels[l]:
		return &asciiReader{r: input}, nil
	}
	return nil, fmt.Errorf("%w: the report declares encoding=%q; Tender reads UTF-8, ISO-8859-1 and US-ASCII, "+
		"so write the report as UTF-8", ErrEncoding, clip(label, 40))
}

// latin1Reader turns ISO-8859-1 bytes into UTF-8: each byte is the code point of its value.
type latin1Reader struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		l.pending = utf8.AppendRune(l.pending[:0], rune(b))
	}
	return n, nil
}

// asciiReader passes US-ASCII through and refuses any byte outside it: a report that says
// it is ASCII and is not cannot be read honestly.
type asciiReader struct{ r io.Reader }

func (a *asciiReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	for _, b := range p[:n] {
		if b >= utf8.RuneSelf {
			return 0, fmt.Errorf("%w: the report declares encoding US-ASCII but holds the byte 0x%02X", ErrEncoding, b)
		}
	}
	return n, err
}
