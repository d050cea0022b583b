package report

import (
	"fmt"
	"strings"
)

// ComparisonMarkdown renders c as a Markdown section under the heading (for example "## Compared
// with the baseline"): what the baseline was, one line of counts, and a table of every pair that
// changed, regressions first. It stays under limit bytes: rows that do not fit are left out, with
// a note that says how many and where they all are. Text that is not Tender's own is escaped.
func ComparisonMarkdown(c *Comparison, heading string, limit int) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n\n%s\n\n", heading, baselineLine(c.Baseline), countsLine(c))
	if len(c.Pairs) == 0 {
		b.WriteString("No pair changed.\n")
		return b.String()
	}
	b.WriteString("| Pair | Change | Baseline | Now | Patch |\n| --- | --- | --- | --- | --- |\n")
	const reserve = 200 // room for the note
	shown := 0
	for _, p := range c.Pairs {
		row := changeRow(p)
		if b.Len()+len(row) > limit-reserve {
			break // the order is by urgency: what is cut is the least urgent
		}
		b.WriteString(row)
		shown++
	}
	if shown < len(c.Pairs) {
		fmt.Fprintf(&b, "\n*%d of %d changed pairs are shown; every one is in `%s` (`comparison`).*\n",
			shown, len(c.Pairs), ResultsJSON)
	}
	return b.String()
}

func baselineLine(r BaselineRef) string {
	parts := []string{"Baseline: " + mdText(strings.TrimSpace(r.Suite+" "+r.SuiteVersion), maxCell)}
	if r.Tool != "" {
		parts = append(parts, mdText(r.Tool, maxCell))
	}
	if !r.Finished.IsZero() {
		parts = append(parts, "finished "+timestamp(r.Finished))
	}
	parts = append(parts, fmt.Sprintf("%d pairs", r.Pairs))
	if r.BundleSHA256 != "" {
		parts = append(parts, "bundle "+mdText(r.BundleSHA256[:min(12, len(r.BundleSHA256))], 12))
	}
	return strings.Join(parts, " · ")
}

func countsLine(c *Comparison) string {
	var parts []string
	for _, ch := range changeOrder {
		s := fmt.Sprintf("%d %s", c.Counts[ch], ch)
		if ch == Regressed && c.Counts[ch] > 0 {
			s = "**" + s + "**"
		}
		parts = append(parts, s)
	}
	return strings.Join(append(parts, fmt.Sprintf("%d unchanged", c.Unchanged)), " · ")
}

func changeRow(p PairChange) string {
	change := string(p.Change)
	if p.Change == Regressed {
		change = "**regressed**"
	}
	patch := "same"
	switch {
	case p.Change == New || p.Change == Gone:
		patch = "—"
	case p.PatchChanged:
		patch = "changed"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", mdText(p.ID, maxCell), change, comparedVerdict(p.Before),
		comparedVerdict(p.After), patch)
}

func comparedVerdict(v Verdict) string {
	if v == "" {
		return "—"
	}
	return mdText(string(v), 40)
}
