package integrity

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// defaultIgnorable is the Unicode Default_Ignorable_Code_Point property (DerivedCoreProperties):
// code points that render as nothing, and that some file systems and tools drop from names.
// The stdlib unicode package only has the Other_ part of it.
var defaultIgnorable = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00ad, Hi: 0x00ad, Stride: 1},
		{Lo: 0x034f, Hi: 0x034f, Stride: 1},
		{Lo: 0x061c, Hi: 0x061c, Stride: 1},
		{Lo: 0x115f, Hi: 0x1160, Stride: 1},
		{Lo: 0x17b4, Hi: 0x17b5, Stride: 1},
		{Lo: 0x180b, Hi: 0x180f, Stride: 1},
		{Lo: 0x200b, Hi: 0x200f, Stride: 1},
		{Lo: 0x202a, Hi: 0x202e, Stride: 1},
		{Lo: 0x2060, Hi: 0x206f, Stride: 1},
		{Lo: 0x3164, Hi: 0x3164, Stride: 1},
		{Lo: 0xfe00, Hi: 0xfe0f, Stride: 1},
		{Lo: 0xfeff, Hi: 0xfeff, Stride: 1},
		{Lo: 0xffa0, Hi: 0xffa0, Stride: 1},
		{Lo: 0xfff0, Hi: 0xfff8, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1bca0, Hi: 0x1bca3, Stride: 1},
		{Lo: 0x1d173, Hi: 0x1d17a, Stride: 1},
		{Lo: 0xe0000, Hi: 0xe0fff, Stride: 1},
	},
}

// canonical is the form in which fold matching compares text: ignorables removed, NFD so that
// case folding sees base letters, every rune case-folded, then NFC so that "?" and a character
// class match one composed character as they do without fold. It repeats until stable, so it
// is idempotent (the fuzz target checks canonical(canonical(s)) == canonical(s)).
func canonical(s string) string {
	for range 3 {
		next := canonicalOnce(s)
		if next == s {
			return s
		}
		s = next
	}
	return s
}

func canonicalOnce(s string) string {
	s = strings.Map(dropIgnorable, s)
	s = norm.NFD.String(s)
	s = strings.Map(foldRune, s)
	return norm.NFC.String(s)
}

func dropIgnorable(r rune) rune {
	if unicode.Is(defaultIgnorable, r) {
		return -1
	}
	return r
}

// foldRune maps every member of a case orbit to one representative. ToLower(ToUpper(r)) also
// joins letters that only meet through their upper case, such as dotless i and i.
func foldRune(r rune) rune {
	if r < 0x80 {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// canonicalPath folds each component and drops components that fold to nothing.
func canonicalPath(p string) string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		if c = canonical(c); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "/")
}
