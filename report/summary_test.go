package report

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzMdText checks that escaped text never leaves its table cell and reads back as the
// original: removing the escapes gives the input with control characters turned to spaces.
func FuzzMdText(f *testing.F) {
	for _, s := range []string{hostile, "a|b", "<b>x</b>", "[l](u)", "line\nbreak", `\|`, "ünï\u2028", "&#124;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := mdText(s, 1<<20)
		if strings.ContainsAny(got, "\n\r") {
			t.Fatalf("line break in %q", got)
		}
		if n := countUnescapedPipes(got); n != 0 {
			t.Fatalf("%d cell separators in %q", n, got)
		}
		var back strings.Builder
		for i := 0; i < len(got); i++ {
			if got[i] == '\\' && i+1 < len(got) {
				i++
			} else if got[i] < 0x80 && (unicode.IsPunct(rune(got[i])) || unicode.IsSymbol(rune(got[i]))) {
				t.Fatalf("unescaped %q in %q", got[i], got)
			}
			back.WriteByte(got[i])
		}
		want := strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
				return ' '
			}
			return r
		}, s)
		if back.String() != want {
			t.Fatalf("mdText(%q) reads back as %q, want %q", s, back.String(), want)
		}
	})
}
