package github

import (
	"fmt"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v93/github"

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
			Path: new(loc.Path), StartLine: new(loc.Line), EndLine: new(loc.Line),
			AnnotationLevel: new(level),
			Title:           new(Cap(fmt.Sprintf("%s: %s", p.ID, p.Verdict), MaxTitleBytes, "…")),
			Message:         new(Cap(message(p), MaxMessageBytes, "\n[truncated]")),
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
		if r.Code == report.CodeFlaky {
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
const TruncationNote = "\n\n---\n*Truncated to fit GitHub's size limit (65,535 bytes in a check run, 1 MiB in a job summary); the full report is summary.md in the evidence bundle.*\n"

// CapOutput cuts s to MaxOutputBytes bytes, the note included, when it is longer. GitHub
// documents the summary and text limits in characters, but counts bytes ("exceeds a maximum
// bytesize of 65535"): a summary of 65,535 characters that are not all ASCII is refused.
func CapOutput(s string) string { return Cap(s, MaxOutputBytes, TruncationNote) }

// Cap returns s when it has at most n bytes, else its longest prefix that leaves room for
// note, followed by note. It never splits a UTF-8 sequence, and it never returns more than n
// bytes, even when note alone is longer than n.
func Cap(s string, n int, note string) string {
	if len(s) <= n {
		return s
	}
	if len(note) >= n {
		return note[:runeBoundary(note, n)]
	}
	return s[:runeBoundary(s, n-len(note))] + note
}

// runeBoundary is the largest i <= n (and <= len(s)) at which s can be cut without splitting
// a UTF-8 sequence.
func runeBoundary(s string, n int) int {
	i := min(max(n, 0), len(s))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`,
	"#", `\#`, "|", `\|`, "!", `\!`, "~", `\~`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"\n", " ", "\r", " ",
)

// EscapeMarkdown makes untrusted text (reason details, candidate paths) inert in Markdown.
func EscapeMarkdown(s string) string { return mdEscaper.Replace(s) }
