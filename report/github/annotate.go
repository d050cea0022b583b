package github

import (
	"fmt"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"

	"github.com/tender-grader/tender/report"
)

// Annotations returns one annotation per pair that needs attention, sorted by pair id: failure
// for an integrity violation or an error, warning for unresolved, notice for a resolved pair
// with a flaky reason. Resolved pairs without one get none.
func Annotations(r report.Results, l *Locator) []*gh.CheckRunAnnotation {
	var out []*gh.CheckRunAnnotation
	for _, p := range sortedPairs(r) {
		level := Level(p)
		if level == "" {
			continue
		}
		loc := l.Locate(p)
		out = append(out, &gh.CheckRunAnnotation{
			Path: gh.String(loc.Path), StartLine: gh.Int(loc.Line), EndLine: gh.Int(loc.Line),
			AnnotationLevel: gh.String(level),
			Title:           gh.String(Cap(fmt.Sprintf("%s: %s", p.ID, p.Verdict), MaxTitleChars, "…")),
			Message:         gh.String(CapBytes(message(p), MaxMessageBytes, "\n[truncated]")),
		})
	}
	return out
}

// Level is the annotation level of p, or "" when p needs no annotation.
func Level(p report.PairResult) string {
	switch p.Verdict {
	case report.IntegrityViolation, report.Error:
		return LevelFailure
	case report.Unresolved:
		return LevelWarning
	}
	for _, r := range p.Reasons {
		if strings.Contains(string(r.Code), "flaky") {
			return LevelNotice
		}
	}
	return ""
}

func message(p report.PairResult) string {
	if len(p.Reasons) == 0 {
		return fmt.Sprintf("pair %s (repository %s) is %s", p.ID, p.Repository, p.Verdict)
	}
	lines := make([]string, 0, len(p.Reasons))
	for _, r := range p.Reasons {
		lines = append(lines, reasonText(r))
	}
	return strings.Join(lines, "\n")
}

// TruncationNote ends every output that was cut to fit the API's limits.
const TruncationNote = "\n\n---\n*Truncated to fit GitHub's 65,535-character limit; the full report is summary.md in the evidence bundle.*\n"

// CapOutput cuts s to MaxOutputChars characters, the note included, when it is longer.
func CapOutput(s string) string { return Cap(s, MaxOutputChars, TruncationNote) }

// Cap returns s when it has at most n characters, else its longest prefix that leaves room
// for note, followed by note. It never splits a character.
func Cap(s string, n int, note string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := max(n-utf8.RuneCountInString(note), 0)
	count := 0
	for j := range s {
		if count == keep {
			return s[:j] + note
		}
		count++
	}
	return s + note
}

// CapBytes is Cap counted in bytes, for the annotation message's 64 KB limit.
func CapBytes(s string, n int, note string) string {
	if len(s) <= n {
		return s
	}
	i := n - len(note)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + note
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`,
	"#", `\#`, "|", `\|`, "!", `\!`, "~", `\~`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"\n", " ", "\r", " ",
)

// EscapeMarkdown makes untrusted text (reason details, candidate paths) inert in Markdown.
func EscapeMarkdown(s string) string { return mdEscaper.Replace(s) }
