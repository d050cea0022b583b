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

// TestSummaryDifferences: a pair on which the two rules disagree gets one line before the
// table, naming each rule, with the pair's and the rule's text escaped; the lines stay within
// their share of the summary and the rest are counted. A pair applied by a fallback of apply:
// swebench says so in its verdict cell.
func TestSummaryDifferences(t *testing.T) {
	r := normalized(fixtureResults())
	r.Pairs[0].ApplyMethod = "fuzz"
	differ := func(p PairResult) []RuleDifference {
		if p.Verdict == Resolved {
			return nil
		}
		return []RuleDifference{{Rule: "skipped test", Detail: "a | b <b>x</b>"}, {Rule: "integrity", Detail: "c"}}
	}
	swe := sweView{grade: func(PairResult) string { return "FULL" }, differ: differ}
	md := string(summaryMarkdown(r, SummaryMaxBytes, swe))
	diffs, table, ok := strings.Cut(md, "## Pairs")
	if !ok || !strings.Contains(diffs, "## Where the two rules differ") {
		t.Fatalf("no differences section before the table:\n%s", md)
	}
	want := "- wrong\\-fix: Tender's rule unresolved, SWE-bench's rule FULL. " +
		"**skipped test**: a \\| b \\<b\\>x\\<\\/b\\>; " +
		"**integrity**: c\n"
	if !strings.Contains(diffs, want) || strings.Count(diffs, "\n- ") != len(r.Pairs)-1 {
		t.Errorf("differences section lacks %q or has a line per pair but the resolved one:\n%s", want, diffs)
	}
	if !strings.Contains(table, "| "+mdText(r.Pairs[0].ID, maxCell)+" | "+string(r.Pairs[0].Verdict)+
		" · patch applied by fuzz |") {
		t.Errorf("the fuzzed pair's verdict cell does not name the method:\n%s", table)
	}
	small := string(summaryMarkdown(r, 4*300, swe))
	if !strings.Contains(small, "- and ") || !strings.Contains(small, "more pairs; each pair's report.json") {
		t.Errorf("a small summary does not count the lines left out:\n%s", small)
	}
}
