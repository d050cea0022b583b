package report

import (
	"strings"
	"unicode"
)

// mdText makes untrusted text safe inside a Markdown table cell: every ASCII punctuation
// character is backslash-escaped (CommonMark renders an escaped character literally, so no
// emphasis, link, image, code span, HTML tag, entity or cell break can start), and line
// breaks and other control characters become spaces, so the text stays in its cell. The
// result holds at most about n bytes of the original.
func mdText(s string, n int) string {
	s = clipText(s, n)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for _, r := range s {
		switch {
		case r < 0x80 && unicode.IsPunct(r) || r < 0x80 && unicode.IsSymbol(r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
